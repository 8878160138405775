// UMEM registration, AF_XDP socket setup and the ring loops with per-frame
// accounting. Setup talks to the kernel directly (see Umem::create for why);
// the rings are driven with libxdp's inline xsk_ring_* accessors.
#include "xoffload/xsk.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif
// Busy-poll socket options (asm-generic/socket.h, 5.11+), for older headers.
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

namespace xoffload::xsk {

namespace {

bool power_of_two(uint32_t v)
{
	return v && !(v & (v - 1));
}

unsigned log2u(uint32_t v)
{
	return 31u - static_cast<unsigned>(__builtin_clz(v));
}

// Owner of one mmap()ed range.
class Mapping {
public:
	Mapping() = default;
	Mapping(void *p, size_t len) : p_(p), len_(len) {}
	Mapping(Mapping &&o) noexcept : p_(std::exchange(o.p_, nullptr)), len_(o.len_) {}
	Mapping &operator=(Mapping &&o) noexcept
	{
		if (this != &o) {
			reset();
			p_ = std::exchange(o.p_, nullptr);
			len_ = o.len_;
		}
		return *this;
	}
	~Mapping() { reset(); }
	void reset()
	{
		if (p_)
			::munmap(p_, len_);
		p_ = nullptr;
	}
	void *get() const { return p_; }

private:
	void *p_ = nullptr;
	size_t len_ = 0;
};

Result<Mapping> map_ring(int fd, uint64_t pgoff, size_t len, const char *what)
{
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			 static_cast<off_t>(pgoff));
	if (p == MAP_FAILED)
		return errno_error(std::string("mmap AF_XDP ") + what + " ring", errno);
	return Mapping(p, len);
}

template <typename Ring>
void ring_init(Ring &r, void *map, const xdp_ring_offset &off, uint32_t size, bool producer)
{
	auto *base = static_cast<char *>(map);
	r.mask = size - 1;
	r.size = size;
	r.producer = reinterpret_cast<__u32 *>(base + off.producer);
	r.consumer = reinterpret_cast<__u32 *>(base + off.consumer);
	r.ring = base + off.desc;
	r.flags = reinterpret_cast<__u32 *>(base + off.flags);
	r.cached_prod = *r.producer;
	// A producer sees the whole ring free until the consumer says otherwise.
	r.cached_cons = *r.consumer + (producer ? size : 0);
}

} // namespace

// ---- Umem -----------------------------------------------------------------

struct UmemState {
	Mapping area;
	UniqueFd fd;			// registration fd; becomes the first socket
	uint32_t frame_size = 0;
	uint32_t frame_count = 0;
	uint32_t next_frame = 0;	// first frame not yet given to a socket
	uint32_t tx_md_len = 0;
	bool owner_taken = false;	// fd already carries a socket's rings
	std::string md_note;
};

const char *to_string(BindMode m) noexcept
{
	switch (m) {
	case BindMode::automatic:
		return "auto";
	case BindMode::zero_copy:
		return "zero-copy";
	case BindMode::copy:
		return "copy";
	}
	return "?";
}

Result<BindMode> parse_bind_mode(std::string_view s)
{
	if (s == "auto")
		return BindMode::automatic;
	if (s == "zero-copy" || s == "zc")
		return BindMode::zero_copy;
	if (s == "copy")
		return BindMode::copy;
	return usage_error("unknown AF_XDP mode '" + std::string(s) + "' (auto, zero-copy or copy)");
}

// libxdp 1.3.1's xsk_umem__create() fills its own struct xdp_umem_reg from
// the build-time (6.1) header and its xsk_umem_config has no
// tx_metadata_len; xsk_umem__create_with_fd() registers again (the kernel
// answers EBUSY to a second XDP_UMEM_REG). TX metadata therefore needs our
// own registration, and one setup path serves every kernel: we register
// here and keep libxdp's inline ring accessors for the hot path.
Result<Umem> Umem::create(const UmemConfig &cfg)
{
	if (cfg.frame_size != 2048 && cfg.frame_size != 4096)
		return usage_error("UMEM frame size must be 2048 or 4096");
	if (!cfg.frame_count || cfg.frame_count > (1u << 22))
		return usage_error("UMEM frame count must be 1..4194304");
	if (cfg.headroom > cfg.frame_size / 2)
		return usage_error("UMEM headroom too large for the frame size");

	auto st = std::make_shared<UmemState>();
	st->frame_size = cfg.frame_size;
	st->frame_count = cfg.frame_count;
	size_t len = static_cast<size_t>(cfg.frame_count) * cfg.frame_size;
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return errno_error("mmap UMEM of " + std::to_string(len) + " bytes", errno);
	st->area = Mapping(p, len);

	st->fd.reset(::socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
	if (!st->fd.valid()) {
		int e = errno;
		if (e == EAFNOSUPPORT)
			return runtime_error("AF_XDP sockets are not supported by this kernel (CONFIG_XDP_SOCKETS)", e);
		return errno_error("create AF_XDP socket", e);
	}

	UmemReg reg{};
	reg.addr = reinterpret_cast<uintptr_t>(p);
	reg.len = len;
	reg.chunk_size = cfg.frame_size;
	reg.headroom = cfg.headroom;

	struct Try {
		uint32_t flags, md_len;
	};
	const uint32_t md = sizeof(TxMetadata);
	// SW_CSUM makes copy mode compute a requested checksum in software;
	// zero-copy drivers ignore it and let the NIC do it.
	const Try with_md[] = {{kXdpUmemTxMetadataLen | kXdpUmemTxSwCsum, md}, {kXdpUmemTxSwCsum, md}, {0, 0}};
	const Try without[] = {{0, 0}};
	std::span<const Try> tries = cfg.tx_metadata ? std::span<const Try>(with_md) : std::span<const Try>(without);
	int err = 0;
	for (const Try &t : tries) {
		reg.flags = t.flags;
		reg.tx_metadata_len = t.md_len;
		if (!::setsockopt(st->fd.get(), SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg))) {
			err = 0;
			st->tx_md_len = t.md_len;
			break;
		}
		err = errno;
		if (err != EINVAL)
			break;
	}
	if (err)
		return errno_error("register UMEM (" + std::to_string(cfg.frame_count) + " x " +
					   std::to_string(cfg.frame_size) + " bytes)",
				   err);
	if (!cfg.tx_metadata)
		st->md_note = "not requested";
	else if (!st->tx_md_len)
		st->md_note = "unsupported (kernel < 6.8: XDP_UMEM_REG refused tx_metadata_len)";
	return Umem(std::move(st));
}

Umem::~Umem() = default;
uint32_t Umem::frame_size() const noexcept { return s_->frame_size; }
uint32_t Umem::frame_count() const noexcept { return s_->frame_count; }
uint32_t Umem::frames_unassigned() const noexcept { return s_->frame_count - s_->next_frame; }
bool Umem::tx_metadata() const noexcept { return s_->tx_md_len != 0; }
uint32_t Umem::tx_metadata_len() const noexcept { return s_->tx_md_len; }
std::byte *Umem::area() const noexcept { return static_cast<std::byte *>(s_->area.get()); }
const std::string &Umem::tx_metadata_note() const noexcept { return s_->md_note; }

// ---- XskSocket --------------------------------------------------------------

struct XskSocket::Impl {
	std::shared_ptr<UmemState> umem;
	UniqueFd own_fd;		// invalid for the first socket (fd is umem's)
	int fd = -1;
	uint32_t queue = 0;
	bool zc = false, sg = false, need_wakeup = false;
	uint32_t tx_offset = 0;		// data offset of TX frames in a chunk
	uint32_t tx_md_len = 0;
	unsigned shift = 0;		// log2(frame size)
	std::byte *area = nullptr;

	Mapping fill_map, comp_map, rx_map, tx_map;
	xsk_ring_prod fill{};
	xsk_ring_cons comp{};
	xsk_ring_cons rx{};
	xsk_ring_prod tx{};
	bool has_rx = false, has_tx = false;

	// Frames [first, first + count) of the UMEM belong to this socket.
	uint32_t first = 0, count = 0;
	std::vector<uint64_t> free_list;	// stack of chunk addresses
	uint32_t nfree = 0;
	std::vector<FrameState> state;		// by frame index - first
	// by frame index - first: set while in TX when the chunk ends its frame,
	// so completions count frames, as submissions do
	std::vector<uint8_t> ends_frame;
	uint64_t in_state[4] = {};		// counters by FrameState
	uint64_t bad_addr = 0;

	XskStats st;

	// Moves a frame between states; false (and counted) when the address is
	// not ours or not in the expected state.
	bool move(uint64_t addr, FrameState from, FrameState to) noexcept
	{
		uint64_t idx = (addr >> shift);
		if (idx < first || idx - first >= count || state[idx - first] != from) {
			bad_addr++;
			return false;
		}
		state[idx - first] = to;
		in_state[static_cast<int>(from)]--;
		in_state[static_cast<int>(to)]++;
		return true;
	}
	uint64_t chunk(uint64_t addr) const noexcept { return addr & ~((uint64_t{1} << shift) - 1); }
	// Index of a chunk of ours (callers checked it with move()).
	uint64_t index(uint64_t chunk_addr) const noexcept { return (chunk_addr >> shift) - first; }
};

XskSocket::XskSocket(std::unique_ptr<Impl> p) : p_(std::move(p)) {}
XskSocket::XskSocket(XskSocket &&) noexcept = default;
XskSocket &XskSocket::operator=(XskSocket &&) noexcept = default;
XskSocket::~XskSocket() = default;

Result<XskSocket> XskSocket::create(Umem &umem, const Netdev &dev, const SocketConfig &cfg)
{
	auto &us = umem.s_;
	for (uint32_t v : {cfg.fill_size, cfg.comp_size})
		if (!power_of_two(v))
			return usage_error("AF_XDP fill/completion ring sizes must be powers of two");
	for (uint32_t v : {cfg.rx_size, cfg.tx_size})
		if (v && !power_of_two(v))
			return usage_error("AF_XDP rx/tx ring sizes must be powers of two");
	if (!cfg.rx_size && !cfg.tx_size)
		return usage_error("an AF_XDP socket needs an RX or a TX ring");
	if (!cfg.frames || cfg.frames > us->frame_count - us->next_frame)
		return usage_error("not enough UMEM frames for queue " + std::to_string(cfg.queue) + " (" +
				   std::to_string(cfg.frames) + " wanted, " +
				   std::to_string(us->frame_count - us->next_frame) + " left)");

	auto p = std::make_unique<Impl>();
	p->umem = us;
	p->queue = cfg.queue;
	p->shift = log2u(us->frame_size);
	p->area = static_cast<std::byte *>(us->area.get());
	p->tx_md_len = us->tx_md_len;
	p->tx_offset = us->tx_md_len;
	const bool shared = us->owner_taken;
	if (shared) {
		p->own_fd.reset(::socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
		if (!p->own_fd.valid())
			return errno_error("create AF_XDP socket", errno);
		p->fd = p->own_fd.get();
	} else {
		p->fd = us->fd.get();
		us->owner_taken = true;	// its rings are set below, even if bind fails
	}
	const std::string where = dev.name + " queue " + std::to_string(cfg.queue);

	auto sockopt = [&](int opt, uint32_t v, const char *what) -> Status {
		if (::setsockopt(p->fd, SOL_XDP, opt, &v, sizeof(v)))
			return errno_error(std::string("set AF_XDP ") + what + " ring size " + std::to_string(v), errno);
		return ok();
	};
	if (auto s = sockopt(XDP_UMEM_FILL_RING, cfg.fill_size, "fill"); !s)
		return s.error();
	if (auto s = sockopt(XDP_UMEM_COMPLETION_RING, cfg.comp_size, "completion"); !s)
		return s.error();
	if (cfg.rx_size)
		if (auto s = sockopt(XDP_RX_RING, cfg.rx_size, "rx"); !s)
			return s.error();
	if (cfg.tx_size)
		if (auto s = sockopt(XDP_TX_RING, cfg.tx_size, "tx"); !s)
			return s.error();

	xdp_mmap_offsets off{};
	socklen_t olen = sizeof(off);
	if (::getsockopt(p->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &olen))
		return errno_error("get AF_XDP mmap offsets", errno);

	auto fm = map_ring(p->fd, XDP_UMEM_PGOFF_FILL_RING, off.fr.desc + cfg.fill_size * sizeof(uint64_t), "fill");
	if (!fm)
		return fm.error();
	p->fill_map = std::move(*fm);
	ring_init(p->fill, p->fill_map.get(), off.fr, cfg.fill_size, true);
	auto cm = map_ring(p->fd, XDP_UMEM_PGOFF_COMPLETION_RING, off.cr.desc + cfg.comp_size * sizeof(uint64_t),
			   "completion");
	if (!cm)
		return cm.error();
	p->comp_map = std::move(*cm);
	ring_init(p->comp, p->comp_map.get(), off.cr, cfg.comp_size, false);
	if (cfg.rx_size) {
		auto m = map_ring(p->fd, XDP_PGOFF_RX_RING, off.rx.desc + cfg.rx_size * sizeof(xdp_desc), "rx");
		if (!m)
			return m.error();
		p->rx_map = std::move(*m);
		ring_init(p->rx, p->rx_map.get(), off.rx, cfg.rx_size, false);
		p->has_rx = true;
	}
	if (cfg.tx_size) {
		auto m = map_ring(p->fd, XDP_PGOFF_TX_RING, off.tx.desc + cfg.tx_size * sizeof(xdp_desc), "tx");
		if (!m)
			return m.error();
		p->tx_map = std::move(*m);
		ring_init(p->tx, p->tx_map.get(), off.tx, cfg.tx_size, true);
		p->has_tx = true;
	}

	if (cfg.busy_poll) {
		int one = 1, usecs = static_cast<int>(cfg.busy_poll_usecs), budget = static_cast<int>(cfg.busy_poll_budget);
		if (::setsockopt(p->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
		    ::setsockopt(p->fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
		    ::setsockopt(p->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget)))
			return errno_error("enable busy polling on " + where, errno);
	}

	sockaddr_xdp sxdp{};
	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_ifindex = static_cast<uint32_t>(dev.ifindex);
	sxdp.sxdp_queue_id = cfg.queue;
	if (shared) {
		// The kernel takes mode, need_wakeup and SG from the UMEM owner.
		sxdp.sxdp_flags = XDP_SHARED_UMEM;
		sxdp.sxdp_shared_umem_fd = static_cast<uint32_t>(us->fd.get());
	} else {
		if (cfg.need_wakeup)
			sxdp.sxdp_flags |= XDP_USE_NEED_WAKEUP;
		if (cfg.multi_buffer)
			sxdp.sxdp_flags |= kXdpUseSg;
		if (cfg.mode == BindMode::zero_copy)
			sxdp.sxdp_flags |= XDP_ZEROCOPY;
		else if (cfg.mode == BindMode::copy)
			sxdp.sxdp_flags |= XDP_COPY;
	}
	// The kernel releases a closed socket's queue from a workqueue, so a
	// queue freed a moment ago can still say EBUSY: retry briefly.
	int rc = -1;
	for (int tries = 0; tries < 25; tries++) {
		rc = ::bind(p->fd, reinterpret_cast<sockaddr *>(&sxdp), sizeof(sxdp));
		if (!rc || errno != EBUSY)
			break;
		::usleep(20000);
	}
	if (rc) {
		int e = errno;
		if (e == EBUSY)
			return runtime_error(where + " is already in use by another AF_XDP socket "
						     "(another offload-tool send/recv running?)", e);
		if (e == EOPNOTSUPP && cfg.mode == BindMode::zero_copy)
			return runtime_error("bind AF_XDP on " + where + ": driver has no zero-copy support "
					     "(use --xsk-mode auto or copy)", e);
		if (e == EOPNOTSUPP && cfg.multi_buffer)
			return runtime_error("bind AF_XDP on " + where + ": multi-buffer (XDP_USE_SG) not supported", e);
		if (e == EINVAL)
			return runtime_error("bind AF_XDP on " + where + ": invalid queue or flags (does " + dev.name +
						     " have that many rx/tx queues?)", e);
		return errno_error("bind AF_XDP on " + where, e);
	}
	xdp_options opts{};
	socklen_t optlen = sizeof(opts);
	if (!::getsockopt(p->fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen))
		p->zc = (opts.flags & XDP_OPTIONS_ZEROCOPY) != 0;
	p->need_wakeup = shared ? false : cfg.need_wakeup;
	p->sg = cfg.multi_buffer && !shared;

	// Take the frame slice only now: a failed bind leaves it to others.
	p->first = us->next_frame;
	p->count = cfg.frames;
	us->next_frame += cfg.frames;
	p->free_list.resize(p->count);
	for (uint32_t i = 0; i < p->count; i++)
		p->free_list[i] = static_cast<uint64_t>(p->first + p->count - 1 - i) << p->shift;
	p->nfree = p->count;
	p->state.assign(p->count, FrameState::free);
	p->ends_frame.assign(p->count, 0);
	p->in_state[static_cast<int>(FrameState::free)] = p->count;
	return XskSocket(std::move(p));
}

int XskSocket::fd() const noexcept { return p_->fd; }
uint32_t XskSocket::queue() const noexcept { return p_->queue; }
bool XskSocket::zero_copy() const noexcept { return p_->zc; }
bool XskSocket::multi_buffer() const noexcept { return p_->sg; }
bool XskSocket::tx_metadata() const noexcept { return p_->tx_md_len != 0; }
uint32_t XskSocket::tx_data_offset() const noexcept { return p_->tx_offset; }
uint32_t XskSocket::tx_chunk_capacity() const noexcept { return p_->umem->frame_size - p_->tx_offset; }
std::byte *XskSocket::data(uint64_t addr) const noexcept { return p_->area + addr; }

uint32_t XskSocket::refill() noexcept
{
	Impl &s = *p_;
	if (!s.nfree)
		return 0;
	// reserve() is all-or-nothing: ask for what fits.
	uint32_t n = std::min(xsk_prod_nb_free(&s.fill, s.nfree), s.nfree);
	if (n < s.nfree)
		s.st.fill_ring_full++;
	uint32_t idx = 0;
	if (!n || xsk_ring_prod__reserve(&s.fill, n, &idx) != n)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = s.free_list[--s.nfree];
		*xsk_ring_prod__fill_addr(&s.fill, idx + i) = a;
		s.move(a, FrameState::free, FrameState::fill);
	}
	if (n)
		xsk_ring_prod__submit(&s.fill, n);
	return n;
}

uint32_t XskSocket::rx_peek(std::span<RxDesc> out) noexcept
{
	Impl &s = *p_;
	if (!s.has_rx || out.empty())
		return 0;
	uint32_t idx = 0;
	uint32_t n = xsk_ring_cons__peek(&s.rx, static_cast<uint32_t>(out.size()), &idx);
	for (uint32_t i = 0; i < n; i++) {
		const xdp_desc *d = xsk_ring_cons__rx_desc(&s.rx, idx + i);
		bool more = (d->options & kXdpPktContd) != 0;
		out[i] = RxDesc{d->addr, d->len, more};
		s.move(s.chunk(d->addr), FrameState::fill, FrameState::in_use);
		s.st.rx_descs++;
		s.st.rx_bytes += d->len;
		if (!more)
			s.st.rx_packets++;
	}
	if (n)
		xsk_ring_cons__release(&s.rx, n);
	return n;
}

void XskSocket::rx_release(std::span<const RxDesc> descs) noexcept
{
	Impl &s = *p_;
	for (const RxDesc &d : descs) {
		uint64_t a = s.chunk(d.addr);
		if (s.move(a, FrameState::in_use, FrameState::free))
			s.free_list[s.nfree++] = a;
	}
}

uint32_t XskSocket::tx_alloc(std::span<uint64_t> out) noexcept
{
	Impl &s = *p_;
	uint32_t n = static_cast<uint32_t>(std::min<size_t>(out.size(), s.nfree));
	if (n < out.size())
		s.st.no_free_frames++;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = s.free_list[--s.nfree];
		s.move(a, FrameState::free, FrameState::in_use);
		out[i] = a + s.tx_offset;
	}
	return n;
}

void XskSocket::tx_free(std::span<const uint64_t> addrs) noexcept
{
	Impl &s = *p_;
	for (uint64_t addr : addrs) {
		uint64_t a = s.chunk(addr);
		if (s.move(a, FrameState::in_use, FrameState::free))
			s.free_list[s.nfree++] = a;
	}
}

uint32_t XskSocket::tx_submit(std::span<const TxDesc> descs) noexcept
{
	Impl &s = *p_;
	if (!s.has_tx || descs.empty())
		return 0;
	uint32_t want = static_cast<uint32_t>(descs.size());
	uint32_t room = xsk_prod_nb_free(&s.tx, want);
	uint32_t n = std::min(want, room);
	// Never split a multi-buffer frame across two submits.
	while (n && descs[n - 1].more)
		n--;
	if (n < want)
		s.st.tx_ring_full++;
	if (!n)
		return 0;
	uint32_t idx = 0;
	xsk_ring_prod__reserve(&s.tx, n, &idx);
	for (uint32_t i = 0; i < n; i++) {
		const TxDesc &d = descs[i];
		xdp_desc *x = xsk_ring_prod__tx_desc(&s.tx, idx + i);
		x->addr = d.addr;
		x->len = d.len;
		x->options = d.more ? kXdpPktContd : 0;
		if (d.csum && s.tx_md_len) {
			auto *md = reinterpret_cast<TxMetadata *>(s.area + d.addr - s.tx_md_len);
			md->flags = kXdpTxmdFlagsChecksum;
			md->csum_start = d.csum_start;
			md->csum_offset = d.csum_offset;
			x->options |= kXdpTxMetadata;
		}
		if (s.move(s.chunk(d.addr), FrameState::in_use, FrameState::tx))
			s.ends_frame[s.index(s.chunk(d.addr))] = !d.more;
		s.st.tx_bytes += d.len;
		if (!d.more)
			s.st.tx_packets++;
	}
	xsk_ring_prod__submit(&s.tx, n);
	return n;
}

uint32_t XskSocket::complete() noexcept
{
	Impl &s = *p_;
	uint32_t idx = 0;
	uint32_t n = xsk_ring_cons__peek(&s.comp, s.comp.size, &idx);
	uint32_t frames = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = s.chunk(*xsk_ring_cons__comp_addr(&s.comp, idx + i));
		if (s.move(a, FrameState::tx, FrameState::free)) {
			frames += s.ends_frame[s.index(a)];
			s.free_list[s.nfree++] = a;
		}
	}
	if (n) {
		xsk_ring_cons__release(&s.comp, n);
		s.st.tx_completed += frames;
	}
	return n;
}

int XskSocket::kick() noexcept
{
	Impl &s = *p_;
	if (!s.has_tx || (s.need_wakeup && !xsk_ring_prod__needs_wakeup(&s.tx)))
		return 0;
	s.st.wakeups++;
	if (::sendto(s.fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) >= 0)
		return 0;
	int e = errno;
	if (e == EAGAIN || e == EBUSY || e == ENOBUFS)
		s.st.kick_busy++;
	else
		s.st.kick_errors++;
	return e;
}

bool XskSocket::fill_needs_wakeup() const noexcept
{
	return p_->need_wakeup && xsk_ring_prod__needs_wakeup(&p_->fill);
}

int XskSocket::wait(int timeout_ms) noexcept
{
	Impl &s = *p_;
	if (fill_needs_wakeup())
		s.st.wakeups++;
	pollfd pfd{s.fd, static_cast<short>(s.has_rx ? POLLIN : POLLOUT), 0};
	int r = ::poll(&pfd, 1, timeout_ms);
	return r < 0 ? 0 : r;
}

const XskStats &XskSocket::stats() noexcept
{
	Impl &s = *p_;
	xdp_statistics k{};
	socklen_t len = sizeof(k);
	if (!::getsockopt(s.fd, SOL_XDP, XDP_STATISTICS, &k, &len)) {
		s.st.k_rx_dropped = k.rx_dropped;
		s.st.k_rx_invalid = k.rx_invalid_descs;
		s.st.k_tx_invalid = k.tx_invalid_descs;
		s.st.k_rx_ring_full = k.rx_ring_full;
		s.st.k_fill_empty = k.rx_fill_ring_empty_descs;
		s.st.k_tx_ring_empty = k.tx_ring_empty_descs;
	}
	return s.st;
}

const XskStats &XskSocket::stats_nosync() const noexcept
{
	return p_->st;
}

uint64_t XskSocket::tx_outstanding() const noexcept
{
	return p_->in_state[static_cast<int>(FrameState::tx)];
}

Accounting XskSocket::accounting() const noexcept
{
	const Impl &s = *p_;
	Accounting a;
	a.total = s.count;
	uint64_t recount[4] = {};
	for (FrameState f : s.state)
		recount[static_cast<int>(f)]++;
	// Ready entries the kernel produced and we have not consumed yet.
	uint32_t rx_ready = 0, comp_ready = 0;
	if (s.has_rx)
		rx_ready = __atomic_load_n(s.rx.producer, __ATOMIC_ACQUIRE) - *s.rx.consumer;
	comp_ready = __atomic_load_n(s.comp.producer, __ATOMIC_ACQUIRE) - *s.comp.consumer;
	const uint64_t fill = s.in_state[static_cast<int>(FrameState::fill)];
	const uint64_t tx = s.in_state[static_cast<int>(FrameState::tx)];
	a.free = s.in_state[static_cast<int>(FrameState::free)];
	a.in_use = s.in_state[static_cast<int>(FrameState::in_use)];
	a.rx = std::min<uint64_t>(rx_ready, fill);
	a.fill = fill - a.rx;
	a.completion = std::min<uint64_t>(comp_ready, tx);
	a.tx = tx - a.completion;
	a.bad_addr = s.bad_addr;
	bool recount_ok = true;
	for (int i = 0; i < 4; i++)
		recount_ok = recount_ok && recount[i] == s.in_state[i];
	a.consistent = recount_ok && s.nfree == a.free && a.bad_addr == 0 && rx_ready <= fill &&
		       comp_ready <= tx && a.free + a.fill + a.rx + a.tx + a.completion + a.in_use == a.total;
	return a;
}

} // namespace xoffload::xsk
