// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// AF_XDP engine: a UMEM shared by several sockets (one per queue, or several
// on one queue), their fill/completion/rx/tx rings, and an exact account of
// every UMEM frame.
//
// Ownership: Umem and XskSocket are move-only handles; each socket keeps the
// UMEM registration alive, so destruction order does not matter. Each socket
// made by create() owns a disjoint slice of the UMEM frames and its own
// fill/completion rings, and must be driven by one thread. Sockets made by
// create_shared() share the slice and the fill/completion rings of the socket
// they were made from (one kernel buffer pool per queue): a whole group must
// be driven by one thread.
//
// Hot-path calls (refill, rx, tx_*, complete, kick) are noexcept and never
// allocate; a full ring is a normal return value (fewer frames moved), never
// an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "xoffload/core/fd.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload::xsk {

// ---- kernel ABI newer than Debian's 6.1 linux-libc-dev --------------------
// From include/uapi/linux/if_xdp.h (6.6 multi-buffer, 6.8 TX metadata, 6.11
// XDP_UMEM_TX_METADATA_LEN). Defined here, not in a copied header, so that
// the code builds with the 6.1 headers and probes the kernel at run time.
inline constexpr uint16_t kXdpUseSg = 1U << 4;			// bind flag XDP_USE_SG
inline constexpr uint32_t kXdpPktContd = 1U << 0;		// desc option XDP_PKT_CONTD
inline constexpr uint32_t kXdpTxMetadata = 1U << 1;		// desc option XDP_TX_METADATA
inline constexpr uint32_t kXdpUmemTxSwCsum = 1U << 1;		// umem flag XDP_UMEM_TX_SW_CSUM
inline constexpr uint32_t kXdpUmemTxMetadataLen = 1U << 2;	// umem flag XDP_UMEM_TX_METADATA_LEN
inline constexpr uint64_t kXdpTxmdFlagsChecksum = 1U << 1;	// XDP_TXMD_FLAGS_CHECKSUM

// struct xdp_umem_reg as of 6.8: tx_metadata_len took the former padding.
struct UmemReg {
	uint64_t addr;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
};
static_assert(sizeof(UmemReg) == 32);

// The request half of union xsk_tx_metadata (the completion half, a u64
// timestamp, overlays request). Later kernels append fields; the kernel
// reads only what tx_metadata_len covers.
struct TxMetadata {
	uint64_t flags;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint32_t pad;
};
static_assert(sizeof(TxMetadata) == 16);

// ---- configuration ---------------------------------------------------------

enum class BindMode { automatic, zero_copy, copy };
const char *to_string(BindMode m) noexcept;
Result<BindMode> parse_bind_mode(std::string_view s);

struct UmemConfig {
	uint32_t frame_count = 4096;	// total frames, shared out among the sockets
	uint32_t frame_size = 4096;	// chunk size: power of two, 2048..65536
	uint32_t headroom = 0;		// RX headroom the kernel leaves in each chunk
	bool tx_metadata = true;	// try to register tx_metadata_len (6.8+)
};

struct SocketConfig {
	uint32_t queue = 0;
	uint32_t frames = 2048;		// UMEM frames this socket owns
	uint32_t fill_size = 2048;	// ring sizes: powers of two
	uint32_t comp_size = 2048;
	uint32_t rx_size = 2048;	// 0 = no RX ring
	uint32_t tx_size = 2048;	// 0 = no TX ring
	BindMode mode = BindMode::automatic;
	bool need_wakeup = true;
	bool multi_buffer = false;	// XDP_USE_SG: frames spanning several chunks
	// With multi_buffer: where the kernel does not know XDP_USE_SG (< 6.6,
	// probe_xdp_use_sg()), bind without it instead of failing;
	// multi_buffer() tells which. Without this, such a request is a usage
	// error naming the feature (the flag is never handed to such a kernel).
	bool multi_buffer_if_supported = false;
	// SO_PREFER_BUSY_POLL + SO_BUSY_POLL + SO_BUSY_POLL_BUDGET (5.11+): the
	// application drives the queue's NAPI by its recvfrom()/sendto()
	// (kick() then always calls sendto()); where the socket has no NAPI id
	// (napi_id() 0) the kernel has nothing to poll.
	bool busy_poll = false;
	uint32_t busy_poll_usecs = 20;
	uint32_t busy_poll_budget = 64;
};

// ---- UMEM --------------------------------------------------------------------

struct UmemState;

class Umem {
public:
	// Maps and registers the area. Tries, in order: tx_metadata_len with
	// XDP_UMEM_TX_METADATA_LEN (6.11+), tx_metadata_len alone (6.8-6.10),
	// and plain registration; tx_metadata() says which one the kernel took.
	static Result<Umem> create(const UmemConfig &cfg);

	Umem(Umem &&) noexcept = default;
	Umem &operator=(Umem &&) noexcept = default;
	~Umem();

	uint32_t frame_size() const noexcept;
	uint32_t frame_count() const noexcept;
	uint32_t frames_unassigned() const noexcept;
	bool tx_metadata() const noexcept;	// XDP_TX_METADATA usable
	uint32_t tx_metadata_len() const noexcept;
	std::byte *area() const noexcept;
	// Why tx metadata is off ("" when on).
	const std::string &tx_metadata_note() const noexcept;

private:
	friend class XskSocket;
	explicit Umem(std::shared_ptr<UmemState> s) : s_(std::move(s)) {}
	std::shared_ptr<UmemState> s_;
};

// ---- frame accounting ----------------------------------------------------------

enum class FrameState : uint8_t { free, fill, in_use, tx };

// Where every frame of one socket is. fill includes frames the kernel has
// consumed from the fill ring but not yet produced on RX (in the driver);
// rx counts those ready on the RX ring; tx/completion likewise.
struct Accounting {
	uint64_t total = 0;
	uint64_t free = 0, fill = 0, rx = 0, tx = 0, completion = 0, in_use = 0;
	uint64_t bad_addr = 0;		// addresses from the kernel in an impossible state
	uint32_t sockets = 1;		// sockets sharing these frames (create_shared)
	bool consistent = false;	// sum == total, recount matches, no bad_addr
};

struct XskStats {
	uint64_t rx_packets = 0, rx_bytes = 0, rx_descs = 0;	// packets: whole frames
	uint64_t tx_packets = 0, tx_bytes = 0;		// submitted to the TX ring
	uint64_t tx_completed = 0;			// frames back on the completion ring
	uint64_t tx_ring_full = 0;			// submit found no room for a frame
	uint64_t fill_ring_full = 0;			// refill found the fill ring without a free slot
	uint64_t no_free_frames = 0;			// alloc found the free list empty
	uint64_t wakeups = 0;				// sendto/recvfrom kicks
	uint64_t kick_busy = 0;				// kick got EAGAIN/EBUSY/ENOBUFS
	uint64_t kick_errors = 0;			// other kick errors (ENETDOWN, ...)
	int last_kick_errno = 0;			// errno of the latest such error
	// From getsockopt(XDP_STATISTICS): kernel-side drops by reason.
	uint64_t k_rx_dropped = 0, k_rx_invalid = 0, k_tx_invalid = 0;
	uint64_t k_rx_ring_full = 0, k_fill_empty = 0, k_tx_ring_empty = 0;
};

// One frame (or one chunk of a multi-buffer frame) to transmit.
struct TxDesc {
	uint64_t addr = 0;		// UMEM address of the first byte (from tx_alloc)
	uint32_t len = 0;
	bool more = false;		// another chunk of the same frame follows (XDP_PKT_CONTD)
	bool csum = false;		// request L4 checksum via TX metadata
	uint16_t csum_start = 0;	// from addr: where summing starts
	uint16_t csum_offset = 0;	// from csum_start: where the result goes
};

// One received descriptor.
struct RxDesc {
	uint64_t addr;
	uint32_t len;
	bool more;			// frame continues in the next descriptor
};

// Descriptors of the longest frame the kernel hands out: MAX_SKB_FRAGS (at
// most 45, CONFIG_MAX_SKB_FRAGS) + 1. An rx_peek span this long never cuts a
// frame.
inline constexpr uint32_t kMaxRxChain = 46;

// ---- socket --------------------------------------------------------------------

class XskSocket {
public:
	// Creates an AF_XDP socket on dev/queue over a slice of the UMEM. The
	// first socket of a UMEM uses its registration fd; later ones bind with
	// XDP_SHARED_UMEM and their own fill/completion rings. Mode automatic
	// lets the kernel fall back to copy; zero_copy fails where unsupported.
	// A queue already bound to an AF_XDP socket gives a clear "in use" error.
	static Result<XskSocket> create(Umem &umem, const Netdev &dev, const SocketConfig &cfg);
	// Creates another socket on peer's device and queue, bound with
	// XDP_SHARED_UMEM to peer: the kernel gives both one buffer pool, so the
	// new socket has no fill/completion ring and no frames of its own; it
	// shares peer's (any socket of the group may receive a frame another
	// one's refill() handed out, and accounting() covers the group). This is
	// how several sockets take turns on one queue (software RSS by an XDP
	// program's XSKMAP). From cfg only rx_size, tx_size and busy_poll* apply;
	// mode, need_wakeup and multi-buffer are the peer's.
	static Result<XskSocket> create_shared(XskSocket &peer, const SocketConfig &cfg);

	XskSocket(XskSocket &&) noexcept;
	XskSocket &operator=(XskSocket &&) noexcept;
	XskSocket(const XskSocket &) = delete;
	XskSocket &operator=(const XskSocket &) = delete;
	~XskSocket();

	int fd() const noexcept;
	uint32_t queue() const noexcept;
	bool busy_poll() const noexcept;
	// The NAPI instance busy polling drives (SO_INCOMING_NAPI_ID); 0: none
	// known to the socket (a driver that names no NAPI for the queue, or
	// one created after bind, as veth's for an XDP program attached later).
	uint32_t napi_id() const noexcept;
	bool zero_copy() const noexcept;
	bool multi_buffer() const noexcept;
	bool tx_metadata() const noexcept;
	// Largest frame one chunk holds at the TX data offset.
	uint32_t tx_chunk_capacity() const noexcept;

	// RX: gives free frames to the fill ring; returns how many.
	uint32_t refill() noexcept;
	// Takes up to out.size() descriptors off the RX ring (frames become
	// in_use); call rx_release for each once done with the bytes. Returns
	// whole frames only: a multi-buffer chain (more set on all but its last
	// descriptor) that does not fit stays on the ring for the next call,
	// unless out is too short for even one chain (see kMaxRxChain).
	uint32_t rx_peek(std::span<RxDesc> out) noexcept;
	// The same; @frames: how many whole frames the descriptors make (the
	// descriptors without `more`).
	uint32_t rx_peek(std::span<RxDesc> out, uint32_t &frames) noexcept;
	void rx_release(std::span<const RxDesc> descs) noexcept;
	// rx_release() and refill() in one pass, recv's loop: the frames of
	// @descs go straight back on the fill ring as far as it has room (the
	// rest to the free list), then free frames into the room already known.
	// Returns the frames put on the fill ring.
	uint32_t rx_recycle(std::span<const RxDesc> descs) noexcept;

	// TX: takes up to out.size() free frames (in_use); returns how many.
	uint32_t tx_alloc(std::span<uint64_t> out) noexcept;
	// Gives frames back unsent.
	void tx_free(std::span<const uint64_t> addrs) noexcept;
	// Queues descriptors on the TX ring: all of them, or the longest prefix
	// that fits and ends on a frame boundary. Returns descriptors queued;
	// the rest stay in_use for the caller to retry.
	uint32_t tx_submit(std::span<const TxDesc> descs) noexcept;
	// Reaps the completion ring (frames become free); returns how many.
	uint32_t complete() noexcept;
	// Tells the kernel there is TX work (when it asked to be woken, or
	// always without need_wakeup). Returns 0 or a negative errno (not fatal;
	// -EAGAIN, -EBUSY and -ENOBUFS count as kick_busy, the rest as kick_errors).
	int kick() noexcept;
	// Waits up to timeout_ms for RX (or TX room); 0 on timeout.
	int wait(int timeout_ms) noexcept;
	// True when the fill ring asked for a wakeup (RX path).
	bool fill_needs_wakeup() const noexcept;
	// recvfrom(MSG_DONTWAIT): wakes the RX path where the fill ring asked
	// for it, and with busy_poll runs the queue's NAPI in this thread.
	void rx_wakeup() noexcept;

	std::byte *data(uint64_t addr) const noexcept;
	// Where frames obtained with tx_alloc start their data (after the TX metadata).
	uint32_t tx_data_offset() const noexcept;

	const XskStats &stats() noexcept;	// refreshes the kernel counters
	const XskStats &stats_nosync() const noexcept;
	// Frames of this socket, or of its create_shared() group.
	Accounting accounting() const noexcept;
	// Frames currently in TX (submitted, not yet completed).
	uint64_t tx_outstanding() const noexcept;

private:
	struct Impl;
	explicit XskSocket(std::unique_ptr<Impl> p);
	std::unique_ptr<Impl> p_;
};

} // namespace xoffload::xsk
