// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The GRO round trip, shared by the unit tests and gro_fuzz: a super-packet
// segmented by gso_segment, the frames merged back by a GroEngine, and the
// one packet that comes out compared byte for byte with what the
// super-packet must be after the trip, computed here with the test's own
// checksum code (gso_check.hpp), none of the engines'.
//
// What "byte for byte" compares (GroCsumOut::complete): the super-packet
// handed to gso_segment, plus what segmentation adds for good: the VLAN tags
// it inserted (after the MACs), and under Geneve the outer headers of the
// first frame with their length fields, outer IPv4 checksum and outer UDP
// checksum (when non-zero) those of the whole; UFO that really fragments
// clears DF (as RFC 791 fragmentation and the kernel's do), so the
// reassembled IPv4 header has frag_off 0 and its checksum recomputed.
// Everything else is the input's: the first segment's IPv4 ID, TCP flags
// (FIN/PSH come back from the last segment, CWR stays on the first), the
// TCP/UDP checksum of the whole. GroCsumOut::partial: the same, but where
// more than one frame was merged the TCP/UDP checksum field (and a non-zero
// outer UDP one) holds the folded pseudo-header sum, as tcp_gro_complete and
// udp_gro_complete leave it.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "gso_check.hpp"
#include "xoffload/gro/gro.hpp"
#include "xoffload/gso/gso.hpp"

namespace xo_test {

inline void put16(Bytes &b, size_t at, uint16_t v)
{
	b[at] = static_cast<uint8_t>(v >> 8);
	b[at + 1] = static_cast<uint8_t>(v);
}

inline uint16_t tci_of(const xoffload::GsoVlanTag &t)
{
	return static_cast<uint16_t>((t.pcp & 7) << 13 | (t.dei ? 1 : 0) << 12 | (t.vid & 0xfff));
}

// The super-packet the trip must give back (see the top).
inline std::string expected_super(const Bytes &input, const xoffload::GsoRequest &req,
				  std::span<const xoffload::GsoFrame> out, int n, Bytes &want)
{
	const bool ufo = req.type == xoffload::GsoType::ufo4 || req.type == xoffload::GsoType::ufo6;
	Bytes inner = input;
	if (!req.geneve) {
		for (int t = req.ntags - 1; t >= 0; t--) {
			const uint16_t tci = tci_of(req.tags[t]);
			const uint8_t tag[4] = {static_cast<uint8_t>(req.tags[t].tpid >> 8),
						static_cast<uint8_t>(req.tags[t].tpid), static_cast<uint8_t>(tci >> 8),
						static_cast<uint8_t>(tci)};
			inner.insert(inner.begin() + 12, tag, tag + 4);
		}
	}
	FrameView iv;
	if (std::string e = parse_frame(inner.data(), inner.size(), 0, iv); !e.empty())
		return "input: " + e;
	if (ufo && n > 1 && !iv.ipv6) {
		inner[iv.l3 + 6] = 0;
		inner[iv.l3 + 7] = 0;
		put16(inner, iv.l3 + 10, 0);
		size_t ihl = size_t(inner[iv.l3] & 15) * 4;
		put16(inner, iv.l3 + 10, static_cast<uint16_t>(~fold(sum_bytes(inner.data() + iv.l3, ihl))));
	}
	if (!req.geneve) {
		want = std::move(inner);
		return "";
	}
	// the outer headers of frame 0, lengths and checksums of the whole
	const uint8_t *f0 = reinterpret_cast<const uint8_t *>(out[0].data);
	FrameView ov;
	if (std::string e = parse_frame(f0, out[0].len, 0, ov); !e.empty())
		return "frame 0: " + e;
	const size_t outer_len = ov.l4 + 16 + req.geneve->options.size();
	want.assign(f0, f0 + outer_len);
	want.insert(want.end(), inner.begin(), inner.end());
	const size_t total = want.size();
	if (ov.ipv6) {
		put16(want, ov.l3 + 4, static_cast<uint16_t>(total - ov.l3 - 40));
	} else {
		put16(want, ov.l3 + 2, static_cast<uint16_t>(total - ov.l3));
		put16(want, ov.l3 + 10, 0);
		put16(want, ov.l3 + 10, static_cast<uint16_t>(~fold(sum_bytes(want.data() + ov.l3, 20))));
	}
	put16(want, ov.l4 + 4, static_cast<uint16_t>(total - ov.l4));
	if (be16(want.data() + ov.l4 + 6)) {
		put16(want, ov.l4 + 6, 0);
		uint16_t c = static_cast<uint16_t>(
			~fold(pseudo(want.data(), ov, 17, total - ov.l4) + sum_bytes(want.data() + ov.l4, total - ov.l4)));
		put16(want, ov.l4 + 6, c ? c : 0xffff);
	}
	return "";
}

// want with the checksum fields GroCsumOut::partial leaves (see the top).
inline std::string to_partial(Bytes &want, bool geneve)
{
	FrameView ov, v;
	if (std::string e = parse_frame(want.data(), want.size(), 0, ov); !e.empty())
		return e;
	size_t inner = 0;
	if (geneve) {
		if (be16(want.data() + ov.l4 + 6))
			put16(want, ov.l4 + 6, fold(pseudo(want.data(), ov, 17, want.size() - ov.l4)));
		inner = ov.l4 + 16 + size_t(want[ov.l4 + 8] & 63) * 4;
	}
	if (std::string e = parse_frame(want.data(), want.size(), inner, v); !e.empty())
		return e;
	const size_t co = v.proto == 6 ? 16 : 6;
	put16(want, v.l4 + co, fold(pseudo(want.data(), v, v.proto, want.size() - v.l4)));
	return "";
}

struct GroTrip {
	std::vector<Bytes> packets;
	std::vector<xoffload::GroPacket> meta;	// data not kept
	xoffload::GroStats stats;
};

// The frames (after nic_complete) through a fresh engine in one receive()
// and a flush(); each frame split into up to three buffers at split[k]
// (0: one buffer).
// engine: one to reuse (flushed after), or null for a fresh one of cfg.
inline int gro_run(const std::vector<Bytes> &frames, const xoffload::GroConfig &cfg, GroTrip &trip,
		   const std::vector<std::pair<size_t, size_t>> &splits = {}, xoffload::GroEngine *engine = nullptr)
{
	std::unique_ptr<xoffload::GroEngine> own;
	if (!engine) {
		if (int r = xoffload::GroEngine::create(cfg, &own); r < 0)
			return r;
		engine = own.get();
	}
	xoffload::GroEngine *e = engine;
	std::vector<std::array<std::span<const std::byte>, 2>> more(frames.size());
	std::vector<xoffload::GroFrame> in(frames.size());
	for (size_t k = 0; k < frames.size(); k++) {
		std::span<const std::byte> all(reinterpret_cast<const std::byte *>(frames[k].data()), frames[k].size());
		size_t a = k < splits.size() ? std::min(splits[k].first, all.size()) : 0;
		size_t b = k < splits.size() ? std::min(std::max(splits[k].second, a), all.size()) : 0;
		if (a == 0) {
			in[k].data = all;
			continue;
		}
		in[k].data = all.first(a);
		more[k][0] = all.subspan(a, b - a);
		more[k][1] = all.subspan(b);
		in[k].more = std::span<const std::span<const std::byte>>(more[k].data(), 2);
	}
	std::vector<xoffload::GroVerdict> verdicts(frames.size());
	auto sink = [&trip](const xoffload::GroPacket &p) {
		auto *b = reinterpret_cast<const uint8_t *>(p.data.data());
		trip.packets.emplace_back(b, b + p.data.size());
		trip.meta.push_back(p);
		trip.meta.back().data = {};
	};
	int r = e->receive(in, 1000, verdicts, xoffload::gro_sink(sink));
	if (r < 0)
		return r;
	e->flush(xoffload::gro_sink(sink));
	trip.stats = e->stats();
	return 0;
}

// The round trip of one super-packet under req: "" or what went wrong.
// The config the trip runs under: every kind, IPv4 options merged.
inline xoffload::GroConfig trip_config(xoffload::GroCsumOut mode)
{
	xoffload::GroConfig cfg;
	cfg.kinds = {true, true, true, true};
	cfg.ipv4_options = true;
	cfg.csum_out = mode;
	cfg.max_flows = 8;
	cfg.frag_queues = 8;
	return cfg;
}

// engine: null, or one of trip_config(mode) to reuse (nothing stays held in it).
inline std::string gro_round_trip(const Bytes &input, const xoffload::GsoRequest &req,
				  std::span<const xoffload::GsoFrame> out, int n, xoffload::GroCsumOut mode,
				  const std::vector<std::pair<size_t, size_t>> &splits = {},
				  xoffload::GroEngine *engine = nullptr)
{
	std::vector<Bytes> frames;
	for (int k = 0; k < n; k++) {
		frames.push_back(frame_bytes(out[k]));
		Bytes &f = frames.back();
		nic_complete(f, out[k]);
		// a NIC sends a UDP checksum that comes out 0 as 0xffff (0: none, which
		// IPv6 refuses); nic_complete leaves it 0
		const size_t at = size_t{out[k].csum_start} + out[k].csum_offset;
		if (out[k].csum_partial && out[k].csum_offset == 6 && f[at] == 0 && f[at + 1] == 0)
			f[at] = f[at + 1] = 0xff;
	}
	Bytes want;
	if (std::string e = expected_super(input, req, out, n, want); !e.empty())
		return e;
	GroTrip trip;
	if (int r = gro_run(frames, trip_config(mode), trip, splits, engine); r < 0)
		return "engine: " + std::to_string(r);
	if (trip.packets.size() != 1) {
		std::string e = std::to_string(n) + " frames came back as " + std::to_string(trip.packets.size()) +
				" packets:";
		for (const xoffload::GroPacket &m : trip.meta)
			e += std::string(" ") + std::to_string(m.segs) + " " + xoffload::to_string(m.flush) + "/" +
			     xoffload::to_string(m.verdict);
		return e;
	}
	const xoffload::GroPacket &m = trip.meta[0];
	if (m.segs != n)
		return "segs " + std::to_string(m.segs) + " != " + std::to_string(n);
	if (mode == xoffload::GroCsumOut::partial && n > 1 && m.flush != xoffload::GroFlush::reassembled) {
		if (std::string e = to_partial(want, req.geneve != nullptr); !e.empty())
			return "partial: " + e;
		if (m.csum != xoffload::GroCsum::partial)
			return std::string("csum state ") + xoffload::to_string(m.csum);
	} else if (m.csum != xoffload::GroCsum::unnecessary) {
		return std::string("csum state ") + xoffload::to_string(m.csum);
	}
	const Bytes &got = trip.packets[0];
	if (got != want) {
		size_t i = 0;
		while (i < got.size() && i < want.size() && got[i] == want[i])
			i++;
		return "bytes differ at " + std::to_string(i) + " (got " + std::to_string(got.size()) + " B, want " +
		       std::to_string(want.size()) + " B)";
	}
	const bool ufo = req.type == xoffload::GsoType::ufo4 || req.type == xoffload::GsoType::ufo6;
	if (n > 1 && !ufo) {
		if (m.gso_size != req.mss)
			return "gso_size " + std::to_string(m.gso_size);
		xoffload::GsoType t = req.type;
		if (m.gso_type != t)
			return std::string("gso_type ") + xoffload::to_string(m.gso_type);
	}
	if (m.encap != (req.geneve != nullptr))
		return "encap flag";
	return "";
}

} // namespace xo_test
