// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// libFuzzer harness for the receive offload engine, two ways chosen by the
// first byte:
//  - round trip: the input chooses a super-packet (IP version, protocol,
//    tags, options, extension headers, payload) and a request (TSO/USO/UFO,
//    mss, inserted tags, Geneve, checksum mode, fixed IDs) within what the
//    kernel's rules merge into one packet; gso_segment cuts it, the engine
//    merges it back, and the result must equal the super-packet byte for
//    byte (tests/common/gro_check.hpp);
//  - hostile: the input is a stream of frames (fuzzed bytes, or valid TCP/
//    UDP segments and IPv4/IPv6 fragments with one field changed: offsets,
//    lengths, flags, IDs, a byte anywhere), cut into buffers, fed to an
//    engine with small bounds, with clock steps and flushes between them.
//    Invariants: no out-of-bounds access (ASan/UBSan), every frame counted
//    once (frames_in == held + merged + passed + frags_in), fragment memory
//    never past its bound, no emitted packet longer than the engine can
//    hold, nothing held after flush() and drop_fragments().
// Both ways run a zero-copy engine beside the copy-mode one, which must
// emit the same packets (gathered), metadata, verdicts and statistics. In
// the hostile way each frame's buffers are freed as soon as the contract
// lets the caller reuse them (a frame neither held nor merged: when
// receive_one returns; the others: when flush() returns), so ASan sees a
// reference the engine kept past that.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_geneve.hpp"
#include "gro_check.hpp"
#include "packet_builder.hpp"

using namespace xoffload;
using namespace xoffload::test;

namespace {


[[noreturn]] void fail(const char *what, const std::string &detail)
{
	std::fprintf(stderr, "gro_fuzz: %s: %s\n", what, detail.c_str());
	std::abort();
}

std::span<const std::byte> bytes_of(const xo_test::Bytes &b)
{
	return {reinterpret_cast<const std::byte *>(b.data()), b.size()};
}

void round_trip(FuzzedDataProvider &fdp)
{
	const bool v6 = fdp.ConsumeBool(), tcp = fdp.ConsumeBool();
	const int in_tags = fdp.ConsumeIntegralInRange(0, 2);
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	for (int t = 0; t < in_tags; t++)
		b.vlan(t ? 0x8100 : 0x88a8, static_cast<uint16_t>(fdp.ConsumeIntegralInRange(1, 4094)));
	if (v6) {
		b.ipv6(kIp6A, kIp6B, fdp.ConsumeIntegralInRange<uint8_t>(1, 255));
		if (fdp.ConsumeBool())
			b.ipv6_ext(0, {1, 4, 0, 0, 0, 0});
		if (fdp.ConsumeBool())
			b.ipv6_ext(60, {1, 4, 0, 0, 0, 0, 1, 6, 0, 0, 0, 0, 0, 0});
	} else {
		b.ipv4(kIpA, kIpB, fdp.ConsumeIntegralInRange<uint8_t>(1, 255), fdp.ConsumeIntegral<uint16_t>());
		if (fdp.ConsumeBool())
			b.ip_options({0x94, 0x04, 0x00, 0x00, 0x07, 0x07, 0x04, 0x00});
	}
	GsoRequest req;
	const bool ufo = !tcp && fdp.ConsumeBool();
	if (tcp) {
		// SYN, RST and URG: the kernel merges none (test_gro's rule rows)
		b.tcp(fdp.ConsumeIntegralInRange<uint16_t>(1, 65535), kPortB, fdp.ConsumeIntegral<uint8_t>() & 0xd9,
		      fdp.ConsumeIntegral<uint32_t>());
		if (fdp.ConsumeBool())
			b.tcp_options({0x01, 0x01, 0x08, 0x0a, 0, 0, 0, 1, 0, 0, 0, 2});
		req.type = v6 ? GsoType::tso6 : GsoType::tso4;
	} else {
		b.udp(fdp.ConsumeIntegralInRange<uint16_t>(1, 65535), kPortB);
		req.type = ufo ? (v6 ? GsoType::ufo6 : GsoType::ufo4) : (v6 ? GsoType::uso6 : GsoType::uso4);
	}
	GeneveEncap g;
	req.geneve = xo_test::consume_geneve(fdp, g);
	req.ntags = fdp.ConsumeIntegralInRange<uint8_t>(0, static_cast<uint8_t>(req.geneve ? 2 : 2 - in_tags));
	req.tags[0] = {0x88a8, 10, 1, true};
	req.tags[1] = {0x8100, 20, 2, false};
	req.fixed_ipid = fdp.ConsumeBool();
	req.csum = fdp.ConsumeBool() ? CsumMode::tx_metadata : CsumMode::software;
	const size_t payload = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<size_t>(0, 3000)
						 : fdp.ConsumeIntegralInRange<size_t>(0, 64000);
	xo_test::Bytes pkt = b.payload(payload, fdp.ConsumeIntegral<uint8_t>()).build();
	const size_t outer = req.geneve ? 14 + 4 * size_t{req.ntags} + (g.ipv6 ? 40 : 20) + 16 + g.options.size()
					: 4 * size_t{req.ntags};
	// within the kernel's 65535 bytes from L3; UDP: 64 segments; UFO: kGroMaxFrags
	if (pkt.size() - 14 + outer > 65535)
		return;
	size_t mss = fdp.ConsumeIntegralInRange<size_t>(ufo ? 264 : 1, 1500);
	if (!ufo && !tcp && payload / mss >= 64)
		mss = payload / 63 + 1;
	if (tcp && payload / mss > 400)
		mss = payload / 400 + 1;	// TCP has no count bound: only the time of a run
	req.mss = static_cast<uint16_t>(mss);
	const GroCsumOut mode = fdp.ConsumeBool() ? GroCsumOut::partial : GroCsumOut::complete;

	const std::span<const std::byte> one[1] = {bytes_of(pkt)};
	const int want = gso_count(one, req);
	if (want <= 0)
		return;
	const uint32_t cap = static_cast<uint32_t>(std::min<size_t>(pkt.size(), 600 + mss) + outer + 64);
	std::vector<std::vector<std::byte>> mem(static_cast<size_t>(want));
	std::vector<GsoFrame> frames;
	for (auto &m : mem) {
		m.resize(cap);
		frames.push_back(GsoFrame{m.data(), cap});
	}
	const int n = gso_segment(bytes_of(pkt), req, frames);
	if (n != want)
		fail("gso_segment", std::to_string(n) + " != " + std::to_string(want));
	std::vector<std::pair<size_t, size_t>> splits;
	if (fdp.ConsumeBool())
		for (int k = 0; k < n; k++)
			splits.emplace_back(fdp.ConsumeIntegralInRange<size_t>(0, 200), fdp.ConsumeIntegralInRange<size_t>(0, 3000));
	std::string e = xo_test::gro_round_trip(pkt, req, frames, n, mode, splits);
	if (!e.empty())
		fail("round trip", e + " (" + to_string(req.type) + " mss " + std::to_string(req.mss) + ", " +
					   std::to_string(pkt.size()) + " B" + (req.geneve ? ", geneve" : "") + ")");
}

// A valid frame to start a hostile one from: a TCP segment, a UDP
// datagram, or a fragment of a UFO datagram (IPv4 or IPv6).
xo_test::Bytes seed_frame(FuzzedDataProvider &fdp)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	const int tags = fdp.ConsumeIntegralInRange(0, 2);
	for (int t = 0; t < tags; t++)
		b.vlan(t ? 0x8100 : 0x88a8, static_cast<uint16_t>(fdp.ConsumeIntegralInRange(1, 7)));
	const bool v6 = fdp.ConsumeBool();
	if (v6)
		b.ipv6(kIp6A, kIp6B);
	else
		b.ipv4(kIpA, kIpB, 64, fdp.ConsumeIntegralInRange<uint16_t>(0, 3));
	const int kind = fdp.ConsumeIntegralInRange(0, 2);
	if (kind == 0)
		b.tcp(kPortA, kPortB, fdp.ConsumeIntegral<uint8_t>(), fdp.ConsumeIntegralInRange<uint32_t>(0, 4) * 100);
	else
		b.udp(kPortA, static_cast<uint16_t>(fdp.ConsumeBool() ? kPortGeneve : kPortB));
	xo_test::Bytes pkt = b.payload(fdp.ConsumeIntegralInRange<size_t>(0, kind == 2 ? 4000 : 300), 7).build();
	if (kind != 2)
		return pkt;
	GsoRequest r;
	r.type = v6 ? GsoType::ufo6 : GsoType::ufo4;
	r.mss = static_cast<uint16_t>(fdp.ConsumeIntegralInRange(8, 1500));
	r.ipv6_frag_id = fdp.ConsumeIntegralInRange<uint32_t>(1, 3);
	const int nf = gso_count(std::span<const std::span<const std::byte>>(std::array{bytes_of(pkt)}), r);
	if (nf <= 0 || nf > 600)
		return pkt;
	std::vector<std::vector<std::byte>> mem(static_cast<size_t>(nf), std::vector<std::byte>(2048));
	std::vector<GsoFrame> fr;
	for (auto &m : mem)
		fr.push_back(GsoFrame{m.data(), 2048});
	if (gso_segment(bytes_of(pkt), r, fr) != nf)
		return pkt;
	const size_t k = fdp.ConsumeIntegralInRange<size_t>(0, static_cast<size_t>(nf - 1));
	return xo_test::frame_bytes(fr[k]);
}

// What an engine emitted: each packet gathered and its metadata.
struct Emitted {
	std::vector<xo_test::Bytes> packets;
	std::vector<GroPacket> meta;
};

void hostile(FuzzedDataProvider &fdp)
{
	GroConfig cfg;
	cfg.kinds = {fdp.ConsumeBool(), fdp.ConsumeBool(), fdp.ConsumeBool(), fdp.ConsumeBool()};
	cfg.verify_csum = fdp.ConsumeBool();
	cfg.csum_out = fdp.ConsumeBool() ? GroCsumOut::partial : GroCsumOut::complete;
	cfg.ipv4_options = fdp.ConsumeBool();
	cfg.max_flows = fdp.ConsumeIntegralInRange<uint32_t>(1, 8);
	cfg.max_size = fdp.ConsumeBool() ? 65535 : fdp.ConsumeIntegralInRange<uint32_t>(128, 65535);
	cfg.max_segs_tcp = fdp.ConsumeIntegralInRange<uint16_t>(0, 8);
	cfg.frag_mem = fdp.ConsumeIntegralInRange<uint32_t>(0, 64 * 1024);
	cfg.frag_queues = fdp.ConsumeIntegralInRange<uint32_t>(1, 4);
	cfg.frag_timeout_ns = fdp.ConsumeIntegralInRange<uint64_t>(1, 100);
	cfg.flush_timeout_ns = fdp.ConsumeIntegralInRange<uint64_t>(1, 100);
	GroConfig zcfg = cfg;
	zcfg.zero_copy = true;
	zcfg.zc_min_span = fdp.ConsumeIntegralInRange<uint32_t>(0, 400);
	std::unique_ptr<GroEngine> e, z;
	if (GroEngine::create(cfg, &e) != 0 || GroEngine::create(zcfg, &z) != 0)
		fail("create", "a valid config refused");
	const size_t limit = 14 + cfg.max_size;
	Emitted ce, ze;
	auto check = [&](const GroPacket &p, Emitted &out) {
		const size_t len = p.size();
		// passed frames come out as they came (the fuzzer's frames stay under
		// 16 KiB); what the engine builds fits its buffers
		if (p.verdict == GroVerdict::held && len > limit)
			fail("emitted", "a super-packet of " + std::to_string(len) + " B");
		if (p.flush == GroFlush::reassembled && len > 65535 + 1024)
			fail("emitted", "a datagram of " + std::to_string(len) + " B");
		if (p.frags.size() > kGroMaxSpans)
			fail("emitted", std::to_string(p.frags.size()) + " frags");
		xo_test::Bytes b(len);
		p.gather(std::as_writable_bytes(std::span<uint8_t>(b)));	// every byte readable
		out.packets.push_back(std::move(b));
		out.meta.push_back(p);
		out.meta.back().data = {};
		out.meta.back().frags = {};
	};
	auto sink = [&](const GroPacket &p) {
		if (!p.frags.empty())
			fail("copy mode", "a packet with frags");
		check(p, ce);
	};
	auto zsink = [&](const GroPacket &p) { check(p, ze); };
	// the frames' buffers the zero-copy engine may still reference
	std::vector<std::unique_ptr<std::byte[]>> live;
	auto both_flush = [&] {
		e->flush(gro_sink(sink));
		z->flush(gro_sink(zsink));
		live.clear();	// nothing referenced once flush() returns
	};
	uint64_t now = 0, frames = 0;
	while (fdp.remaining_bytes() > 0 && frames < 64) {
		xo_test::Bytes f;
		if (fdp.ConsumeBool()) {
			f = fdp.ConsumeBytes<uint8_t>(fdp.ConsumeIntegralInRange<size_t>(0, 300));
		} else {
			f = seed_frame(fdp);
			const int edits = fdp.ConsumeIntegralInRange(0, 3);
			for (int k = 0; k < edits && !f.empty(); k++) {
				const size_t at = fdp.ConsumeIntegralInRange<size_t>(0, std::min<size_t>(f.size() - 1, 90));
				f[at] = fdp.ConsumeIntegral<uint8_t>();
			}
			if (fdp.ConsumeIntegralInRange(0, 7) == 0)
				f.resize(fdp.ConsumeIntegralInRange<size_t>(0, f.size()));
		}
		// the frame as one buffer or up to three, each its own heap block so
		// ASan sees overreads
		std::vector<std::unique_ptr<std::byte[]>> blocks;
		std::vector<std::span<const std::byte>> spans;
		GroFrame fr;
		auto block = [&](size_t a, size_t z2) {
			blocks.emplace_back(new std::byte[z2 > a ? z2 - a : 1]);
			if (z2 > a)
				std::memcpy(blocks.back().get(), f.data() + a, z2 - a);
			spans.emplace_back(blocks.back().get(), z2 - a);
		};
		if (fdp.ConsumeBool()) {
			block(0, f.size());
			fr.data = spans[0];
		} else {
			const size_t c1 = fdp.ConsumeIntegralInRange<size_t>(0, f.size());
			const size_t c2 = fdp.ConsumeIntegralInRange<size_t>(c1, f.size());
			for (auto [a, z2] : {std::pair{size_t{0}, c1}, std::pair{c1, c2}, std::pair{c2, f.size()}})
				block(a, z2);
			fr.data = spans[0];
			fr.more = std::span<const std::span<const std::byte>>(spans.data() + 1, 2);
		}
		const GroVerdict v = e->receive_one(fr, now, gro_sink(sink));
		const GroVerdict zv = z->receive_one(fr, now, gro_sink(zsink));
		if (v != zv)
			fail("zero-copy", std::string("verdict ") + to_string(zv) + ", copy mode " + to_string(v));
		// a frame held or merged stays referenced until a flush() returns
		if (v == GroVerdict::held || v == GroVerdict::merged)
			for (auto &b : blocks)
				live.push_back(std::move(b));
		blocks.clear();
		frames++;
		now += fdp.ConsumeIntegralInRange<uint64_t>(0, 20);
		switch (fdp.ConsumeIntegralInRange(0, 7)) {
		case 0:
			both_flush();
			break;
		case 1:
			e->flush_expired(now, gro_sink(sink));
			z->flush_expired(now, gro_sink(zsink));
			break;
		default:
			break;
		}
		const GroStats &st = e->stats();
		if (st.frag_mem > cfg.frag_mem || st.frag_mem_peak > cfg.frag_mem)
			fail("fragment memory", std::to_string(st.frag_mem_peak) + " > " + std::to_string(cfg.frag_mem));
		if (st.frames_in != st.held + st.merged + st.passed + st.frags_in)
			fail("accounting", "frames_in " + std::to_string(st.frames_in));
	}
	both_flush();
	e->drop_fragments();
	z->drop_fragments();
	const GroStats &st = e->stats();
	if (e->held_flows() || e->frag_queues() || st.frag_mem)
		fail("left held", std::to_string(e->held_flows()) + " flows, " + std::to_string(e->frag_queues()) + " queues");
	if (st.packets_out != ce.packets.size())
		fail("packets_out", std::to_string(st.packets_out) + " != " + std::to_string(ce.packets.size()));
	if (ze.packets.size() != ce.packets.size())
		fail("zero-copy", std::to_string(ze.packets.size()) + " packets, copy mode " +
					  std::to_string(ce.packets.size()));
	for (size_t i = 0; i < ce.packets.size(); i++) {
		if (ze.packets[i] != ce.packets[i])
			fail("zero-copy", "packet " + std::to_string(i) + " differs from copy mode's");
		if (std::string d = xo_test::meta_diff(ce.meta[i], ze.meta[i]); !d.empty())
			fail("zero-copy", "packet " + std::to_string(i) + ": " + d);
	}
	if (std::memcmp(&st, &z->stats(), sizeof st) != 0)
		fail("zero-copy", "statistics differ from copy mode's");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider fdp(data, size);
	if (fdp.ConsumeBool())
		round_trip(fdp);
	else
		hostile(fdp);
	return 0;
}
