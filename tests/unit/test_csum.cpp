// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Checksum primitives against a byte-by-byte RFC 1071 reference, for every
// implementation this CPU has, at every length and alignment that matters.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "csum_impls.hpp"
#include "xoffload/packet/csum.hpp"

using namespace xoffload;
using xo_test::for_each_impl;

namespace {

uint16_t reference(const uint8_t *p, size_t n, uint32_t init = 0)
{
	uint64_t s = init;
	for (size_t i = 0; i < n; i += 2)
		s += (uint64_t{p[i]} << 8) | (i + 1 < n ? p[i + 1] : 0);
	return csum_fold16(s);
}

} // namespace

TEST(Csum, FoldAndFinish)
{
	EXPECT_EQ(csum_fold16(0x1ffffu), 0x1u);
	EXPECT_EQ(csum_fold16(0xffffu), 0xffffu);
	EXPECT_EQ(csum_finish(0xffff), 0);
	// RFC 1071 example: 0001 f203 f4f5 f6f7 -> sum ddf2
	const uint8_t ex[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	EXPECT_EQ(csum_fold16(csum_partial(ex, sizeof(ex))), 0xddf2);
}

TEST(Csum, FoldEqualsRepeatedFolding)
{
	std::mt19937_64 rng(11);
	std::vector<uint64_t> vals = {0, 0xffff, 0x10000, 0x1fffe, 0xffffffff, 0x1fffffffe, ~uint64_t{0}};
	for (int i = 0; i < 100000; i++)
		vals.push_back(rng() >> (rng() % 64));
	for (uint64_t v : vals) {
		uint64_t r = v;
		while (r >> 16)
			r = (r & 0xffff) + (r >> 16);
		ASSERT_EQ(csum_fold16(v), r) << std::hex << v;
	}
}

TEST(Csum, AddWithOddOffsetSwaps)
{
	const uint8_t data[] = {0x12, 0x34, 0x56, 0x78, 0x9a};
	uint32_t whole = csum_partial(data, 5);
	uint32_t a = csum_partial(data, 3);
	uint32_t b = csum_partial(data + 3, 2);
	EXPECT_EQ(csum_fold16(csum_add(a, b, 3)), csum_fold16(whole));
}

TEST(Csum, EveryImplMatchesReferenceAtEveryLengthAndAlignment)
{
	std::mt19937 rng(7);
	std::vector<uint8_t> src(9000 + 64), dst(9000 + 64);
	for (auto &b : src)
		b = static_cast<uint8_t>(rng());
	int tried = for_each_impl([&](CsumImpl impl) {
		for (size_t align : {0, 1, 3, 31}) {
			for (size_t len = 0; len < 300; len++) {
				std::fill(dst.begin(), dst.end(), 0xee);
				uint32_t s = csum_copy(dst.data() + align, src.data() + align, len, 0x1234);
				ASSERT_EQ(csum_fold16(s), reference(src.data() + align, len, 0x1234))
					<< to_string(impl) << " len " << len << " align " << align;
				ASSERT_EQ(0, std::memcmp(dst.data() + align, src.data() + align, len));
				ASSERT_EQ(dst[align + len], 0xee) << "wrote past the end";
			}
			for (size_t len : {1448, 1500, 4096, 8999}) {
				uint32_t s = csum_partial(src.data() + align, len);
				ASSERT_EQ(csum_fold16(s), reference(src.data() + align, len)) << len;
			}
		}
	});
	EXPECT_GE(tried, 1);
}

// The copy aligns its stores to the destination: every pair of source and
// destination alignments, odd and even, short and frame-sized.
TEST(Csum, CopyWithSourceAndDestinationAlignedDifferently)
{
	std::mt19937 rng(9);
	alignas(64) static uint8_t src[2048 + 128], dst[2048 + 128];
	for (auto &b : src)
		b = static_cast<uint8_t>(rng());
	int tried = for_each_impl([&](CsumImpl impl) {
		for (size_t sa = 0; sa < 64; sa += 1 + sa / 8) {
			for (size_t da = 0; da < 64; da++) {
				for (size_t len : {63, 64, 65, 66, 127, 128, 130, 191, 200, 1448, 1480, 1501}) {
					std::memset(dst, 0xee, sizeof(dst));
					uint32_t s = csum_copy(dst + 64 + da, src + sa, len, 7);
					ASSERT_EQ(csum_fold16(s), reference(src + sa, len, 7))
						<< to_string(impl) << " len " << len << " src+" << sa << " dst+" << da;
					ASSERT_EQ(0, std::memcmp(dst + 64 + da, src + sa, len));
					ASSERT_EQ(dst[64 + da - 1], 0xee) << "wrote before the start";
					ASSERT_EQ(dst[64 + da + len], 0xee) << "wrote past the end";
				}
			}
		}
	});
	EXPECT_GE(tried, 1);
}

// All ones and all zeros are the lanes' largest positive and negative
// biased words, over several accumulation chunks.
TEST(Csum, ExtremeWordsDoNotOverflowLanes)
{
	for (uint8_t fill : {uint8_t{0xff}, uint8_t{0x00}}) {
		std::vector<uint8_t> src(2 * 1024 * 1024 + 7, fill), dst(src.size());
		for_each_impl([&](CsumImpl impl) {
			uint32_t s = csum_copy(dst.data(), src.data(), src.size(), 0x1234);
			EXPECT_EQ(csum_fold16(s), reference(src.data(), src.size(), 0x1234))
				<< to_string(impl) << " fill " << int{fill};
			s = csum_partial(src.data(), src.size(), 0x1234);
			EXPECT_EQ(csum_fold16(s), reference(src.data(), src.size(), 0x1234))
				<< to_string(impl) << " fill " << int{fill};
		});
	}
}

// The inline header sum: every multiple-of-4 length a header has, at odd
// and even addresses, random and extreme bytes.
TEST(Csum, HeaderSumMatchesReference)
{
	std::mt19937 rng(13);
	std::vector<uint8_t> buf(64 + 3);
	for (int round = 0; round < 200; round++) {
		for (auto &b : buf)
			b = round == 0 ? 0xff : round == 1 ? 0 : static_cast<uint8_t>(rng());
		for (size_t at : {0, 1, 2, 3})
			for (size_t len = 0; len <= 64; len += 4)
				ASSERT_EQ(csum_fold16(csum_hdr(buf.data() + at, len)), reference(buf.data() + at, len))
					<< "len " << len << " at " << at << " round " << round;
	}
}
