// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// libFuzzer harness for the segmentation engine. The fuzz input chooses the
// packet (addresses, options, extension headers, tags, payload size), the
// request (type, mss, tags, Geneve, checksum mode), how the input is split
// into spans, the buffers, and an optional corruption of one header byte.
// Invariants: no out-of-bounds access (ASan/UBSan); on a clean packet every
// successful result passes the independent checker (payloads concatenate
// to the input, every checksum verifies); the one-pass plan of the common
// shape equals the general parser's and planner's wherever it is taken.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "../../user/src/gso/gso_internal.hpp"
#include "fuzz_geneve.hpp"
#include "gso_check.hpp"
#include "packet_builder.hpp"

using namespace xoffload;
using namespace xoffload::test;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider fdp(data, size);
	const bool v6 = fdp.ConsumeBool();
	const bool tcp = fdp.ConsumeBool();
	const int in_tags = fdp.ConsumeIntegralInRange(0, 2);
	const size_t payload = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<size_t>(0, 3000)
						 : fdp.ConsumeIntegralInRange<size_t>(0, 65000);

	PacketBuilder b;
	b.eth(kMacB, kMacA);
	for (int t = 0; t < in_tags; t++)
		b.vlan(t ? 0x8100 : 0x88a8, static_cast<uint16_t>(fdp.ConsumeIntegralInRange(1, 4094)));
	if (v6) {
		b.ipv6(kIp6A, kIp6B);
		if (fdp.ConsumeBool())
			b.ipv6_ext(0, {1, 4, 0, 0, 0, 0});
		if (fdp.ConsumeBool())
			b.ipv6_ext(60, {1, 4, 0, 0, 0, 0, 1, 6, 0, 0, 0, 0, 0, 0});
	} else {
		b.ipv4(kIpA, kIpB, 64, fdp.ConsumeIntegral<uint16_t>());
		if (fdp.ConsumeBool())
			b.ip_options({0x94, 0x04, 0x00, 0x00, 0x07, 0x07, 0x04, 0x00});
	}
	if (tcp) {
		b.tcp(kPortA, kPortB, fdp.ConsumeIntegral<uint8_t>(), fdp.ConsumeIntegral<uint32_t>());
		if (fdp.ConsumeBool())
			b.tcp_options({0x01, 0x01, 0x08, 0x0a, 0, 0, 0, 1, 0, 0, 0, 2});
	} else {
		b.udp(kPortA, kPortB);
	}
	Bytes pkt = b.payload(payload, fdp.ConsumeIntegral<uint8_t>()).build();
	if (pkt.size() > 65535 + 14 + 8)
		return 0;

	GsoRequest req;
	static const GsoType types[] = {GsoType::none, GsoType::tso4, GsoType::tso6, GsoType::uso4,
					GsoType::uso6, GsoType::ufo4, GsoType::ufo6};
	req.type = fdp.PickValueInArray(types);
	req.mss = fdp.ConsumeBool() ? fdp.ConsumeIntegral<uint16_t>() : fdp.ConsumeIntegralInRange<uint16_t>(1, 1500);
	req.ntags = fdp.ConsumeIntegralInRange<uint8_t>(0, 2);
	req.tags[0] = {0x88a8, 10, 1, true};
	req.tags[1] = {0x8100, 20, 2, false};
	req.fixed_ipid = fdp.ConsumeBool();
	req.csum = fdp.ConsumeBool() ? CsumMode::tx_metadata : CsumMode::software;
	GeneveEncap g;
	req.geneve = xo_test::consume_geneve(fdp, g);

	// optional corruption of one header byte: then only memory safety is judged
	bool corrupt = fdp.ConsumeIntegralInRange(0, 3) == 0;
	if (corrupt) {
		size_t at = fdp.ConsumeIntegralInRange<size_t>(0, std::min<size_t>(pkt.size() - 1, 120));
		pkt[at] ^= fdp.ConsumeIntegralInRange<uint8_t>(1, 255);
	}
	// truncation: never read past the end
	if (fdp.ConsumeIntegralInRange(0, 7) == 0)
		pkt.resize(fdp.ConsumeIntegralInRange<size_t>(0, pkt.size()));

	// the input as up to three spans, each its own heap block so ASan sees overreads
	size_t cut1 = fdp.ConsumeIntegralInRange<size_t>(0, pkt.size());
	size_t cut2 = fdp.ConsumeIntegralInRange<size_t>(cut1, pkt.size());
	std::vector<std::unique_ptr<std::byte[]>> blocks;
	std::vector<std::span<const std::byte>> spans;
	for (auto [a, z] : {std::pair{size_t{0}, cut1}, std::pair{cut1, cut2}, std::pair{cut2, pkt.size()}}) {
		// exactly the span's bytes (one for an empty span): a 1-byte overread shows
		blocks.emplace_back(new std::byte[z > a ? z - a : 1]);
		std::memcpy(blocks.back().get(), pkt.data() + a, z - a);
		spans.emplace_back(blocks.back().get(), z - a);
	}

	size_t nbufs = fdp.ConsumeIntegralInRange<size_t>(0, 64);
	uint32_t cap = fdp.ConsumeBool() ? 2048 : fdp.ConsumeIntegralInRange<uint32_t>(0, 9000);
	std::vector<std::unique_ptr<std::byte[]>> bufs;
	std::vector<GsoFrame> frames;
	for (size_t i = 0; i < nbufs; i++) {
		bufs.emplace_back(new std::byte[cap ? cap : 1]);
		frames.push_back(GsoFrame{bufs.back().get(), cap});
	}

	if (auto d = gso_detail::plans_differ(spans, req, frames); d && !d->empty()) {
		std::fprintf(stderr, "gso_fuzz: one-pass plan differs: %s\n", d->c_str());
		std::abort();
	}
	GsoError why{};
	int n = gso_segment(spans, req, frames, &why);
	if (n > 0 && !corrupt && pkt.size() == b.build().size()) {
		std::string e = xo_test::check(pkt, req, frames, n);
		if (!e.empty()) {
			std::fprintf(stderr, "gso_fuzz: %s (type %s mss %u tags %u)\n", e.c_str(), to_string(req.type),
				     req.mss, req.ntags);
			std::abort();
		}
	}
	return 0;
}
