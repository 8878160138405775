// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The GRO engine (first cut: every frame passed as it is, counted; the
// merging follows).
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "xoffload/gro/gro.hpp"

namespace xoffload {

struct GroEngine::Impl {
	GroConfig cfg;
	GroStats stats;
	std::vector<std::byte> scratch;
};

GroEngine::GroEngine(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
GroEngine::~GroEngine() = default;

int GroEngine::create(const GroConfig &c, std::unique_ptr<GroEngine> *out) noexcept
{
	if (!c.max_flows || c.max_flows > 65536 || c.max_size < 128 || c.max_size > 65535 || c.frag_queues > 65536)
		return -EINVAL;
	std::unique_ptr<Impl> impl(new (std::nothrow) Impl);
	if (!impl)
		return -ENOMEM;
	impl->cfg = c;
	try {
		impl->scratch.resize(65536 + 256);
	} catch (...) {
		return -ENOMEM;
	}
	out->reset(new (std::nothrow) GroEngine(std::move(impl)));
	return *out ? 0 : -ENOMEM;
}

GroVerdict GroEngine::receive_one(const GroFrame &f, uint64_t, GroSink sink) noexcept
{
	Impl &m = *impl_;
	size_t len = f.data.size();
	for (auto b : f.more)
		len += b.size();
	m.stats.frames_in++;
	m.stats.bytes_in += len;
	GroPacket p;
	if (f.more.empty()) {
		p.data = f.data;
	} else {
		size_t n = len < m.scratch.size() ? len : m.scratch.size(), at = 0;
		std::memcpy(m.scratch.data(), f.data.data(), std::min(n, f.data.size()));
		at = std::min(n, f.data.size());
		for (auto b : f.more) {
			size_t k = std::min(n - at, b.size());
			std::memcpy(m.scratch.data() + at, b.data(), k);
			at += k;
		}
		p.data = {m.scratch.data(), at};
	}
	m.stats.passed++;
	m.stats.pass_by[static_cast<size_t>(GroPass::kind_off)]++;
	m.stats.packets_out++;
	m.stats.bytes_out += p.data.size();
	m.stats.flush_by[static_cast<size_t>(GroFlush::passed)]++;
	sink(p);
	return GroVerdict::passed;
}

int GroEngine::receive(std::span<const GroFrame> frames, uint64_t now_ns, std::span<GroVerdict> verdicts,
		       GroSink sink) noexcept
{
	if (!verdicts.empty() && verdicts.size() != frames.size())
		return -EINVAL;
	uint64_t before = impl_->stats.packets_out;
	for (size_t i = 0; i < frames.size(); i++) {
		GroVerdict v = receive_one(frames[i], now_ns, sink);
		if (!verdicts.empty())
			verdicts[i] = v;
	}
	return static_cast<int>(impl_->stats.packets_out - before);
}

int GroEngine::flush(GroSink) noexcept { return 0; }
int GroEngine::flush_expired(uint64_t, GroSink) noexcept { return 0; }
void GroEngine::drop_fragments() noexcept {}
const GroStats &GroEngine::stats() const noexcept { return impl_->stats; }
const GroConfig &GroEngine::config() const noexcept { return impl_->cfg; }
uint32_t GroEngine::held_flows() const noexcept { return 0; }
uint32_t GroEngine::frag_queues() const noexcept { return 0; }

} // namespace xoffload
