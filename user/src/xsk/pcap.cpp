// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// PcapWriter and pcap_read_all over libpcap.
#include "xoffload/xsk/pcap.hpp"

#include <pcap/pcap.h>

#include <cstring>

namespace xoffload {

struct PcapWriter::State {
	pcap_t *dead = nullptr;
	pcap_dumper_t *dump = nullptr;
	uint32_t snaplen = 0;
	std::vector<std::byte> scratch;	// gathers multi-buffer frames
	~State()
	{
		if (dump)
			pcap_dump_close(dump);
		if (dead)
			pcap_close(dead);
	}
};

Result<PcapWriter> PcapWriter::open(const std::string &path, uint32_t snaplen)
{
	PcapWriter w;
	w.s_ = std::make_unique<State>();
	w.s_->snaplen = snaplen;
	w.s_->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(snaplen),
							  PCAP_TSTAMP_PRECISION_NANO);
	if (!w.s_->dead)
		return runtime_error("pcap: cannot create a capture handle");
	w.s_->dump = pcap_dump_open(w.s_->dead, path.c_str());
	if (!w.s_->dump)
		return runtime_error("pcap: cannot open " + path + ": " + pcap_geterr(w.s_->dead));
	w.s_->scratch.resize(snaplen);
	return w;
}

PcapWriter::PcapWriter(PcapWriter &&) noexcept = default;
PcapWriter &PcapWriter::operator=(PcapWriter &&) noexcept = default;
PcapWriter::~PcapWriter() = default;

void PcapWriter::write(std::span<const std::byte> frame, const timespec &ts) noexcept
{
	pcap_pkthdr h{};
	h.ts.tv_sec = ts.tv_sec;
	h.ts.tv_usec = ts.tv_nsec;	// nanosecond precision file: the field holds ns
	h.len = static_cast<bpf_u_int32>(frame.size());
	h.caplen = static_cast<bpf_u_int32>(std::min<size_t>(frame.size(), s_->snaplen));
	pcap_dump(reinterpret_cast<u_char *>(s_->dump), &h, reinterpret_cast<const u_char *>(frame.data()));
	frames_++;
}

void PcapWriter::write(std::span<const std::span<const std::byte>> pieces, const timespec &ts) noexcept
{
	size_t len = 0, cap = 0;
	for (auto p : pieces) {
		size_t n = std::min(p.size(), s_->scratch.size() - cap);
		std::memcpy(s_->scratch.data() + cap, p.data(), n);
		cap += n;
		len += p.size();
	}
	pcap_pkthdr h{};
	h.ts.tv_sec = ts.tv_sec;
	h.ts.tv_usec = ts.tv_nsec;
	h.len = static_cast<bpf_u_int32>(len);
	h.caplen = static_cast<bpf_u_int32>(cap);
	pcap_dump(reinterpret_cast<u_char *>(s_->dump), &h, reinterpret_cast<const u_char *>(s_->scratch.data()));
	frames_++;
}

Status PcapWriter::flush()
{
	if (s_ && s_->dump && pcap_dump_flush(s_->dump))
		return runtime_error("pcap: write failed");
	return ok();
}

Status PcapWriter::close()
{
	auto st = flush();
	s_.reset();
	return st;
}

Result<std::vector<std::vector<uint8_t>>> pcap_read_all(const std::string &path)
{
	char err[PCAP_ERRBUF_SIZE] = {};
	pcap_t *p = pcap_open_offline(path.c_str(), err);
	if (!p)
		return runtime_error("pcap: cannot read " + path + ": " + err);
	std::vector<std::vector<uint8_t>> out;
	pcap_pkthdr *h = nullptr;
	const u_char *data = nullptr;
	int rc;
	while ((rc = pcap_next_ex(p, &h, &data)) == 1)
		out.emplace_back(data, data + h->caplen);
	std::string why = rc == PCAP_ERROR ? pcap_geterr(p) : "";
	pcap_close(p);
	if (rc == PCAP_ERROR)
		return runtime_error("pcap: reading " + path + ": " + why);
	return out;
}

} // namespace xoffload
