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

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
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
	std::vector<Bytes> packets;		// each packet gathered (GroPacket::gather): copy mode's buffer
	std::vector<xoffload::GroPacket> meta;	// data and frags not kept
	std::vector<size_t> frags;		// each packet's GroPacket::frags count
	std::vector<xoffload::GroVerdict> verdicts;
	xoffload::GroStats stats;
};

// A zero-copy engine's frame buffers, which gro_run spoils when the
// contract lets the caller reuse them (gro.hpp): a frame neither held nor
// merged once receive() returns, every frame once flush() returns. An
// engine that kept a reference would then emit the spoilt bytes (compared
// with copy mode's by trip_diff), or, under ASan, read freed ones (the
// buffers are freed when the trip ends, before an engine reused reads more).
inline void spoil(std::vector<std::vector<std::byte>> &bufs, size_t k0, size_t k1)
{
	for (size_t k = k0; k < k1 && k < bufs.size(); k++)
		std::fill(bufs[k].begin(), bufs[k].end(), std::byte{0xa5});
}

// The frames (after nic_complete) through a fresh engine in one receive()
// at now and a flush() (unless !flush); each frame split into up to three
// buffers at split[k] (0: one buffer), each buffer its own heap block.
// engine: one to reuse (flushed after), or null for a fresh one of cfg.
inline int gro_run(const std::vector<Bytes> &frames, const xoffload::GroConfig &cfg, GroTrip &trip,
		   const std::vector<std::pair<size_t, size_t>> &splits = {}, xoffload::GroEngine *engine = nullptr,
		   uint64_t now = 1000, bool flush = true)
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
	// buffer 3k + j: frame k's piece j
	std::vector<std::vector<std::byte>> bufs(3 * frames.size());
	for (size_t k = 0; k < frames.size(); k++) {
		const auto *all = reinterpret_cast<const std::byte *>(frames[k].data());
		const size_t n = frames[k].size();
		size_t a = k < splits.size() ? std::min(splits[k].first, n) : 0;
		size_t b = k < splits.size() ? std::min(std::max(splits[k].second, a), n) : 0;
		const bool one = a == 0;
		if (one)
			a = b = n;
		bufs[3 * k].assign(all, all + a);
		bufs[3 * k + 1].assign(all + a, all + b);
		bufs[3 * k + 2].assign(all + b, all + n);
		in[k].data = {bufs[3 * k].data(), a};
		if (one)
			continue;
		more[k][0] = {bufs[3 * k + 1].data(), b - a};
		more[k][1] = {bufs[3 * k + 2].data(), n - b};
		in[k].more = std::span<const std::span<const std::byte>>(more[k].data(), 2);
	}
	trip.verdicts.assign(frames.size(), xoffload::GroVerdict::passed);
	auto sink = [&trip](const xoffload::GroPacket &p) {
		Bytes b(p.size());
		p.gather(std::as_writable_bytes(std::span<uint8_t>(b)));
		trip.packets.push_back(std::move(b));
		trip.frags.push_back(p.frags.size());
		trip.meta.push_back(p);
		trip.meta.back().data = {};
		trip.meta.back().frags = {};
	};
	int r = e->receive(in, now, trip.verdicts, xoffload::gro_sink(sink));
	if (r < 0)
		return r;
	const bool zc = e->config().zero_copy;
	if (zc)
		for (size_t k = 0; k < frames.size(); k++)
			if (trip.verdicts[k] != xoffload::GroVerdict::held && trip.verdicts[k] != xoffload::GroVerdict::merged)
				spoil(bufs, 3 * k, 3 * k + 3);
	if (!flush) {
		trip.stats = e->stats();
		return 0;
	}
	e->flush(xoffload::gro_sink(sink));
	if (zc)
		spoil(bufs, 0, bufs.size());
	trip.stats = e->stats();
	return 0;
}

// What two packets' metadata differ in ("" when nothing).
inline std::string meta_diff(const xoffload::GroPacket &a, const xoffload::GroPacket &b)
{
	auto num = [](const char *what, uint64_t x, uint64_t y) {
		return x == y ? std::string() : std::string(what) + " " + std::to_string(x) + " != " + std::to_string(y) + "; ";
	};
	std::string d;
	d += num("gso_type", uint64_t(a.gso_type), uint64_t(b.gso_type));
	d += num("gso_size", a.gso_size, b.gso_size);
	d += num("segs", a.segs, b.segs);
	d += num("hdr_len", a.hdr_len, b.hdr_len);
	d += num("csum_start", a.csum_start, b.csum_start);
	d += num("csum_offset", a.csum_offset, b.csum_offset);
	d += num("csum", uint64_t(a.csum), uint64_t(b.csum));
	d += num("csum_level", a.csum_level, b.csum_level);
	d += num("encap", a.encap, b.encap);
	d += num("encap_csum", a.encap_csum, b.encap_csum);
	d += num("flush", uint64_t(a.flush), uint64_t(b.flush));
	d += num("verdict", uint64_t(a.verdict), uint64_t(b.verdict));
	d += num("frame", a.frame, b.frame);
	return d;
}

// Zero-copy's trip against copy mode's of the same frames: the same packets
// byte for byte once gathered, the same metadata, verdicts and statistics
// ("" or the first difference). Copy mode emits no frags.
inline std::string trip_diff(const GroTrip &copy, const GroTrip &zc)
{
	static_assert(std::has_unique_object_representations_v<xoffload::GroStats>, "GroStats compared as bytes");
	if (copy.packets.size() != zc.packets.size())
		return "zero-copy: " + std::to_string(zc.packets.size()) + " packets, copy mode " +
		       std::to_string(copy.packets.size());
	for (size_t i = 0; i < copy.packets.size(); i++) {
		if (copy.frags[i])
			return "copy mode: packet " + std::to_string(i) + " has frags";
		if (copy.packets[i] != zc.packets[i]) {
			const Bytes &a = copy.packets[i], &b = zc.packets[i];
			size_t k = 0;
			while (k < a.size() && k < b.size() && a[k] == b[k])
				k++;
			return "zero-copy: packet " + std::to_string(i) + " differs at byte " + std::to_string(k) + " (" +
			       std::to_string(b.size()) + " B, copy mode " + std::to_string(a.size()) + " B, " +
			       std::to_string(zc.frags[i]) + " frags)";
		}
		if (std::string d = meta_diff(copy.meta[i], zc.meta[i]); !d.empty())
			return "zero-copy: packet " + std::to_string(i) + ": " + d;
	}
	if (copy.verdicts != zc.verdicts)
		return "zero-copy: verdicts differ";
	if (std::memcmp(&copy.stats, &zc.stats, sizeof copy.stats) != 0)
		return "zero-copy: statistics differ";
	return "";
}

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

// The same, zero-copy, with pieces shorter than min_span copied.
inline xoffload::GroConfig trip_config_zc(xoffload::GroCsumOut mode, uint32_t min_span)
{
	xoffload::GroConfig cfg = trip_config(mode);
	cfg.zero_copy = true;
	cfg.zc_min_span = min_span;
	return cfg;
}

// The round trip of one super-packet under req: "" or what went wrong.
// engine: null, or one of trip_config(mode) to reuse (nothing stays held in
// it); zc_engine: null, or one of trip_config_zc(mode, ...) to reuse: the
// same frames through it must give what trip_diff compares (null: through
// fresh ones, every piece referenced and pieces of 256 bytes or more).
inline std::string gro_round_trip(const Bytes &input, const xoffload::GsoRequest &req,
				  std::span<const xoffload::GsoFrame> out, int n, xoffload::GroCsumOut mode,
				  const std::vector<std::pair<size_t, size_t>> &splits = {},
				  xoffload::GroEngine *engine = nullptr, xoffload::GroEngine *zc_engine = nullptr)
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
	for (uint32_t min_span : {1u, 256u}) {
		GroTrip zc;
		if (int r = gro_run(frames, trip_config_zc(mode, min_span), zc, splits, zc_engine); r < 0)
			return "zero-copy engine: " + std::to_string(r);
		if (std::string e = trip_diff(trip, zc); !e.empty())
			return e + (zc_engine ? "" : " (zc_min_span " + std::to_string(min_span) + ")");
		if (zc_engine)
			break;
	}
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
