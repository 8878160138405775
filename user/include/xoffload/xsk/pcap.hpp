// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Writing frames to a pcap file (libpcap, DLT_EN10MB) that tcpdump and
// Wireshark read; and reading one back (tests, tools).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "xoffload/core/result.hpp"

namespace xoffload {

class PcapWriter {
public:
	static Result<PcapWriter> open(const std::string &path, uint32_t snaplen = 65535);
	PcapWriter(PcapWriter &&) noexcept;
	PcapWriter &operator=(PcapWriter &&) noexcept;
	~PcapWriter();

	// Appends one frame (buffered, no allocation); ts from the caller so a
	// whole batch can share one clock read.
	void write(std::span<const std::byte> frame, const timespec &ts) noexcept;
	// Appends a frame given as several pieces (multi-buffer).
	void write(std::span<const std::span<const std::byte>> pieces, const timespec &ts) noexcept;
	uint64_t frames() const noexcept { return frames_; }
	Status flush();
	Status close();

private:
	PcapWriter() = default;
	struct State;
	std::unique_ptr<State> s_;
	uint64_t frames_ = 0;
};

// Reads every frame of a pcap file.
Result<std::vector<std::vector<uint8_t>>> pcap_read_all(const std::string &path);

} // namespace xoffload
