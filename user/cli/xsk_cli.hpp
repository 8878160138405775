// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send / recv of offload-tool: their options, and what cmd_send.cpp,
// cmd_recv.cpp and xsk_output.cpp share. The engine is the library's
// (xoffload/xsk/engine.hpp, sender.hpp, receiver.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "commands.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/gro/gro.hpp"
#include "xoffload/gso/gso.hpp"
#include "xoffload/xsk/traffic.hpp"
#include "xoffload/xsk/engine.hpp"
#include "xoffload/xsk/napi.hpp"
#include "xoffload/xsk/prog.hpp"

namespace xoffload::cli {

struct XskOpts {
	std::string ifname;
	std::optional<uint32_t> queue;
	// queues 0..N-1 ("N"), a list ("0-3", "1,3") or "all"; recv --geneve:
	// a plain N is the older form of --sockets (N sockets on --queue)
	std::optional<std::string> queues;
	std::optional<uint32_t> sockets;	// recv --geneve: sockets per queue
	std::optional<uint64_t> count;
	std::optional<double> duration;
	double interval = 1.0;
	bool interval_given = false;	// --interval on the command line
	std::string format = "text";	// --format text|json|prometheus
	std::string pcap;
	std::string xsk_mode = "auto";
	uint32_t ring_size = 2048;
	uint32_t frames = 0;		// per queue; 0 = 2 * ring size
	uint32_t frame_size = 4096;
	uint32_t batch = 64;
	bool no_need_wakeup = false;
	// --busy-poll [BUDGET]: "" when not given, the budget's text when given
	std::string busy_poll;
	// with --busy-poll: the device's NAPI interrupt deferral for the run
	std::optional<uint64_t> napi_defer_hard_irqs, gro_flush_timeout;
	bool check_accounting = false;
	std::optional<std::string> cpus;	// --cpus: one worker thread per CPU, pinned
	// send
	std::string dst_mac, src_mac, src_ip, dst_ip, proto = "udp", vlan;
	uint16_t src_port = 40001, dst_port = 40002;
	uint32_t size = 64;
	std::optional<double> rate;
	bool tx_csum = false;
	bool no_tx_metadata = false;
	std::string kernel = "running";	// send: whose driver facts decide the checksum
	std::string gso;		// tso | uso | ufo: --size is a super-packet, segmented per send
	bool sw_csum = false;		// --gso: never leave the checksum to the queue
	uint16_t mss = 0;		// 0: from a 1500-byte MTU
	// send --geneve-vni: every frame in Geneve (RFC 8926) by the GSO engine
	std::string geneve_vni;
	std::optional<std::string> geneve_port;	// default 6081
	std::string outer_src_ip, outer_dst_ip, outer_src_mac, outer_dst_mac;
	bool geneve_csum = false;
	// recv
	std::string xdp_mode = "native";
	std::string multi_buffer = "auto";	// XDP_USE_SG: auto (when the MTU needs it), on, off
	std::optional<uint16_t> filter_port;
	std::optional<uint16_t> filter_vlan;
	bool keep_rx_vlan = false;	// recv --keep-rx-vlan
	std::optional<double> idle;
	bool xdp_mode_given = false;
	bool geneve = false;		// sockets in xdp_geneve's XSKMAP instead of xdp_xsk
	std::optional<std::string> vni;	// --geneve: take the socket count from this VNI's rule
	bool pcap_per_socket = false;	// FILE.<socket>.pcap each
	// recv --gro [KINDS]: "" (given bare) is every kind; --verify-csum
	std::optional<std::string> gro;
	bool verify_csum = false;
};

Status run_send(const Globals &g, const XskOpts &o);
Status run_recv(const Globals &g, const XskOpts &o);

// recv --geneve: --queues names the RX queues only as a list or "all"; a
// plain number there is the older form of --sockets.
bool queues_is_count(const XskOpts &o);
// The engine's binding options of the common ones.
xsk::EngineConfig engine_config(const XskOpts &o);
// A bad --queues list is a usage error before any device is looked at.
Status check_common(const XskOpts &o, unsigned queue_limit);
// --busy-poll's budget, 0 without --busy-poll (check_common vetted it).
uint32_t busy_poll_budget(const XskOpts &o);
// --busy-poll: --napi-defer-hard-irqs / --gro-flush-timeout written for the
// run (restored when @t goes), and one note on stderr where the device's
// interrupts will still run its NAPI beside the busy polls.
Status busy_poll_tuning(const Netdev &dev, const XskOpts &o, std::optional<xsk::NapiTuning> &t);
// --busy-poll: one note on stderr per socket that knows no NAPI instance to
// poll (napi id 0); the JSON start line's "busy_poll" object.
void busy_poll_notes(const Netdev &dev, const xsk::Engine &e, const XskOpts &o);
void busy_poll_json(Json &j, const xsk::Engine &e, const XskOpts &o, const std::optional<xsk::NapiTuning> &t);
// --cpus parsed (xsk::parse_cpus); empty without it.
Result<std::vector<int>> worker_cpus(const XskOpts &o);
// The queues the sockets go on (--queue, --queues; recv --geneve's count form
// of --queues names no queue).
Result<std::vector<uint32_t>> bound_queues(const Netdev &dev, const XskOpts &o, bool rx, unsigned limit);

// send's frame (@spec; the source MAC set later when not given) and Geneve
// encapsulation (@gnv, nullopt without --geneve-vni) of the command line.
Status parse_send_frame(const XskOpts &o, FrameSpec &spec, std::optional<GeneveEncap> &gnv);
// --gso, --mss, --sw-csum and the tags into @req (the tags leave @spec: they
// go in while each frame is copied); the frame checked before the system is.
Status parse_send_request(const XskOpts &o, FrameSpec &spec, GsoRequest &req);

// ---- printing (xsk_output.cpp) --------------------------------------------------

// One interval line (or JSON object); xc: xdp_xsk's counters (recv).
void print_interval(const Globals &g, const Netdev &dev, const xsk::Engine &e, bool rx, const xsk::Totals &now,
		    const xsk::Totals &prev, double dt, const xsk::XskProgCounters *xc);
// The summary; gnv: xdp_geneve's counters over the run (recv --geneve).
void print_summary(const Globals &g, const Netdev &dev, const xsk::Engine &e, bool rx, const xsk::Totals &t,
		   double secs, const xsk::XskProgCounters *xc, uint64_t pcap_frames, bool interrupted,
		   const GeneveCounterSet *gnv = nullptr, const GroStats *gro = nullptr);
// The "tx plan:" line (always, on stderr; the reasons behind it with -v).
void print_plan(const Globals &g, const xsk::Engine &e, const TxPlan &p, const char *gso,
		const features::KernelArg &k);

} // namespace xoffload::cli
