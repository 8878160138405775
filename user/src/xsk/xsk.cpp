// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// UMEM registration, AF_XDP socket setup and the ring loops with per-frame
// accounting. Setup talks to the kernel directly (see Umem::create for why);
// the rings are driven with libxdp's inline xsk_ring_* accessors.
#include "xoffload/xsk/xsk.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "xoffload/core/kernel.hpp"
#include "sock_defs.hpp"

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

// Maps the ring at @pgoff, @size entries of @entry bytes after its header
// (@off), into @map and points @r at it.
template <typename Ring>
Status map_ring(int fd, uint64_t pgoff, const xdp_ring_offset &off, uint32_t size, size_t entry, bool producer,
		const char *what, Mapping &map, Ring &r)
{
	size_t len = off.desc + size * entry;
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			 static_cast<off_t>(pgoff));
	if (p == MAP_FAILED)
		return errno_error(std::string("mmap AF_XDP ") + what + " ring", errno);
	map = Mapping(p, len);
	ring_init(r, p, off, size, producer);
	return ok();
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
	// What the first socket bound with; XDP_SHARED_UMEM sockets inherit it
	// (the kernel takes SG from the UMEM and need_wakeup from its pool).
	bool sg = false, need_wakeup = false;
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
		st->md_note = "unsupported: " + kernel_lacks(kFeatXskTxMetadata);
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

// The frames one fill/completion ring pair serves, and where each one is. A
// socket made by create() has its own; create_shared() sockets join their
// peer's, as the kernel makes them share one buffer pool: a frame one
// socket's refill() put on the fill ring may come back on any member's RX
// ring.
struct FramePool {
	// Fill-ring room below which fill_from_free() reads the kernel's
	// consumer index again.
	static constexpr uint32_t kFillChunk = 64;

	Mapping fill_map, comp_map;
	xsk_ring_prod fill{};
	xsk_ring_cons comp{};
	unsigned shift = 0;		// log2(frame size)

	// Frames [first, first + count) of the UMEM belong to this pool.
	uint32_t first = 0, count = 0;
	std::vector<uint64_t> free_list;	// stack of chunk addresses
	uint32_t nfree = 0;
	std::vector<FrameState> state;		// by frame index - first
	// by frame index - first: set while in TX when the chunk ends its frame,
	// so completions count frames, as submissions do
	std::vector<uint8_t> ends_frame;
	uint64_t in_state[4] = {};		// counters by FrameState
	uint64_t bad_addr = 0;

	// Sockets on this pool, and the RX rings among them (frames ready there
	// are still in state fill for the accounting).
	uint32_t members = 0;
	std::vector<const xsk_ring_cons *> rx_rings;

	void assign(uint32_t first_frame, uint32_t n)
	{
		first = first_frame;
		count = n;
		free_list.resize(count);
		for (uint32_t i = 0; i < count; i++)
			free_list[i] = static_cast<uint64_t>(first + count - 1 - i) << shift;
		nfree = count;
		state.assign(count, FrameState::free);
		ends_frame.assign(count, 0);
		in_state[static_cast<int>(FrameState::free)] = count;
	}
	// Moves a frame between states; false (and counted) when the address is
	// not ours or not in the expected state.
	bool move(uint64_t addr, FrameState from, FrameState to) noexcept
	{
		if (!flip(addr, from, to))
			return false;
		moved(from, to, 1);
		return true;
	}
	// move() without the per-state counters, for the ring loops: they flip
	// a batch and then add it to the counters once with moved().
	bool flip(uint64_t addr, FrameState from, FrameState to) noexcept
	{
		uint64_t idx = (addr >> shift);
		if (idx < first || idx - first >= count || state[idx - first] != from) {
			bad_addr++;
			return false;
		}
		state[idx - first] = to;
		return true;
	}
	void moved(FrameState from, FrameState to, uint64_t n) noexcept
	{
		in_state[static_cast<int>(from)] -= n;
		in_state[static_cast<int>(to)] += n;
	}
	// Puts free frames on the fill ring, as many as fit; how many. @full
	// counts a ring with no free slot at all.
	uint32_t fill_from_free(uint64_t &full) noexcept
	{
		if (!nfree)
			return 0;
		// reserve() is all-or-nothing: ask for what fits. A UMEM larger
		// than the fill ring always leaves frames over; only a ring with
		// no room at all (the kernel took nothing since the last refill)
		// counts as full.
		// The consumer index is the kernel's (another CPU writes it): it
		// is read again only when the room known since the last read is
		// under a chunk, not on every call.
		uint32_t n = std::min(xsk_prod_nb_free(&fill, std::min(nfree, kFillChunk)), nfree);
		if (!n)
			full++;
		uint32_t idx = 0;
		if (!n || xsk_ring_prod__reserve(&fill, n, &idx) != n)
			return 0;
		// free-list entries are ours and free by construction; a slot
		// handed out twice would be the bug the recount finds
		uint64_t *top = free_list.data() + nfree;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t a = *--top;
			*xsk_ring_prod__fill_addr(&fill, idx + i) = a;
			state[(a >> shift) - first] = FrameState::fill;
		}
		nfree -= n;
		moved(FrameState::free, FrameState::fill, n);
		xsk_ring_prod__submit(&fill, n);
		return n;
	}
	uint64_t chunk(uint64_t addr) const noexcept { return addr & ~((uint64_t{1} << shift) - 1); }
	// Index of a chunk of ours (callers checked it with move()).
	uint64_t index(uint64_t chunk_addr) const noexcept { return (chunk_addr >> shift) - first; }
};

namespace {

// What map_rings() sets up: the socket's own rings.
struct SocketRings {
	int fd = -1;
	Netdev dev;
	uint32_t queue = 0;
	Mapping rx_map, tx_map;
	xsk_ring_cons rx{};
	xsk_ring_prod tx{};
	bool has_rx = false, has_tx = false;
};

Status set_ring_size(int fd, int opt, uint32_t v, const char *what)
{
	if (::setsockopt(fd, SOL_XDP, opt, &v, sizeof(v)))
		return errno_error(std::string("set AF_XDP ") + what + " ring size " + std::to_string(v), errno);
	return ok();
}

Status check_ring_sizes(const SocketConfig &cfg, bool fill_comp)
{
	if (fill_comp)
		for (uint32_t v : {cfg.fill_size, cfg.comp_size})
			if (!power_of_two(v))
				return usage_error("AF_XDP fill/completion ring sizes must be powers of two");
	for (uint32_t v : {cfg.rx_size, cfg.tx_size})
		if (v && !power_of_two(v))
			return usage_error("AF_XDP rx/tx ring sizes must be powers of two");
	if (!cfg.rx_size && !cfg.tx_size)
		return usage_error("an AF_XDP socket needs an RX or a TX ring");
	return ok();
}

// SO_PREFER_BUSY_POLL, SO_BUSY_POLL and SO_BUSY_POLL_BUDGET on @fd, with
// one line saying which option the kernel refused and why.
Status set_busy_poll(int fd, const SocketConfig &cfg, const std::string &where)
{
	if (cfg.busy_poll_budget < 1 || cfg.busy_poll_budget > 65535)
		return usage_error("busy-poll budget must be 1..65535");
	struct Opt {
		int name;
		int value;
		const char *what;
	};
	const Opt opts[] = {{SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL"},
			    {SO_BUSY_POLL, static_cast<int>(cfg.busy_poll_usecs), "SO_BUSY_POLL"},
			    {SO_BUSY_POLL_BUDGET, static_cast<int>(cfg.busy_poll_budget), "SO_BUSY_POLL_BUDGET"}};
	for (const Opt &o : opts) {
		if (!::setsockopt(fd, SOL_SOCKET, o.name, &o.value, sizeof(o.value)))
			continue;
		const int e = errno;
		const std::string head = std::string("busy polling on ") + where + ": " + o.what;
		if (e == ENOPROTOOPT)
			return runtime_error(head + " unknown to this kernel (" + running_kernel().text +
						     "; SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET are Linux 5.11+, "
						     "and it needs CONFIG_NET_RX_BUSY_POLL)",
					     e);
		if (e == EPERM)
			return runtime_error(head + " refused (EPERM): needs CAP_NET_ADMIN (run as root)", e);
		return errno_error(head, e);
	}
	return ok();
}

// Sets the ring sizes of p.fd and maps them: RX/TX into p, fill/completion
// into pool when given (create_shared sockets have none of their own).
Status map_rings(SocketRings &p, const SocketConfig &cfg, FramePool *pool)
{
	if (pool) {
		if (auto s = set_ring_size(p.fd, XDP_UMEM_FILL_RING, cfg.fill_size, "fill"); !s)
			return s;
		if (auto s = set_ring_size(p.fd, XDP_UMEM_COMPLETION_RING, cfg.comp_size, "completion"); !s)
			return s;
	}
	if (cfg.rx_size)
		if (auto s = set_ring_size(p.fd, XDP_RX_RING, cfg.rx_size, "rx"); !s)
			return s;
	if (cfg.tx_size)
		if (auto s = set_ring_size(p.fd, XDP_TX_RING, cfg.tx_size, "tx"); !s)
			return s;

	xdp_mmap_offsets off{};
	socklen_t olen = sizeof(off);
	if (::getsockopt(p.fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &olen))
		return errno_error("get AF_XDP mmap offsets", errno);

	if (pool) {
		if (auto s = map_ring(p.fd, XDP_UMEM_PGOFF_FILL_RING, off.fr, cfg.fill_size, sizeof(uint64_t), true, "fill",
				      pool->fill_map, pool->fill);
		    !s)
			return s;
		if (auto s = map_ring(p.fd, XDP_UMEM_PGOFF_COMPLETION_RING, off.cr, cfg.comp_size, sizeof(uint64_t), false,
				      "completion", pool->comp_map, pool->comp);
		    !s)
			return s;
	}
	if (cfg.rx_size) {
		if (auto s = map_ring(p.fd, XDP_PGOFF_RX_RING, off.rx, cfg.rx_size, sizeof(xdp_desc), false, "rx", p.rx_map,
				      p.rx);
		    !s)
			return s;
		p.has_rx = true;
	}
	if (cfg.tx_size) {
		if (auto s = map_ring(p.fd, XDP_PGOFF_TX_RING, off.tx, cfg.tx_size, sizeof(xdp_desc), true, "tx", p.tx_map,
				      p.tx);
		    !s)
			return s;
		p.has_tx = true;
	}

	if (cfg.busy_poll)
		return set_busy_poll(p.fd, cfg, p.dev.name + " queue " + std::to_string(p.queue));
	return ok();
}

// bind(); 0 or the errno. The kernel releases a closed socket's queue from a
// workqueue, so a queue freed a moment ago can still say EBUSY: retry briefly.
int bind_xsk(int fd, const sockaddr_xdp &sxdp)
{
	int rc = -1;
	for (int tries = 0; tries < 25; tries++) {
		rc = ::bind(fd, reinterpret_cast<const sockaddr *>(&sxdp), sizeof(sxdp));
		if (!rc || errno != EBUSY)
			break;
		::usleep(20000);
	}
	return rc ? errno : 0;
}

Error bind_error(const Netdev &dev, const SocketConfig &cfg, int e, bool tx_md = false)
{
	const std::string where = dev.name + " queue " + std::to_string(cfg.queue);
	// virtio_net of 7.x refuses a pool with tx_metadata_len in copy mode too
	if (e == EOPNOTSUPP && tx_md)
		return runtime_error("bind AF_XDP on " + where + ": the driver refuses a UMEM with TX metadata" +
					     (cfg.mode == BindMode::zero_copy ? " (or has no zero-copy support)" : ""),
				     e);
	if (e == EBUSY)
		return runtime_error(where + " is already in use by another AF_XDP socket "
					     "(another offload-tool send/recv running?)",
				     e);
	if (e == EOPNOTSUPP && cfg.mode == BindMode::zero_copy)
		return runtime_error("bind AF_XDP on " + where + ": driver has no zero-copy support "
				     "(use --xsk-mode auto or copy)",
				     e);
	if (e == EOPNOTSUPP && cfg.multi_buffer)
		return runtime_error("bind AF_XDP on " + where + ": multi-buffer (XDP_USE_SG) not supported", e);
	if (e == EINVAL)
		return runtime_error("bind AF_XDP on " + where + ": invalid queue or flags (does " + dev.name +
					     " have that many rx/tx queues?" +
					     (cfg.multi_buffer ? " XDP_USE_SG was asked for" : "") + ")",
				     e);
	return errno_error("bind AF_XDP on " + where, e);
}

bool query_zero_copy(int fd)
{
	xdp_options opts{};
	socklen_t optlen = sizeof(opts);
	return !::getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen) && (opts.flags & XDP_OPTIONS_ZEROCOPY);
}

} // namespace

struct XskSocket::Impl : SocketRings {
	std::shared_ptr<UmemState> umem;
	std::shared_ptr<FramePool> pool;
	FramePool *fp = nullptr;	// pool.get(), for the ring loops
	UniqueFd own_fd;		// invalid for the first socket (fd is umem's)
	bool zc = false, sg = false, need_wakeup = false, busy = false;
	uint32_t tx_offset = 0;		// data offset of TX frames in a chunk
	uint32_t tx_md_len = 0;
	std::byte *area = nullptr;

	XskStats st;

	Impl() = default;
	Impl(const Impl &) = delete;
	Impl &operator=(const Impl &) = delete;
	~Impl()
	{
		if (!pool)
			return;
		if (pool->members)
			pool->members--;
		auto &r = pool->rx_rings;
		r.erase(std::remove(r.begin(), r.end(), &rx), r.end());
	}
	// Joins pool (the socket's rings are mapped).
	void join(std::shared_ptr<FramePool> p)
	{
		pool = std::move(p);
		fp = pool.get();
		pool->members++;
		if (has_rx)
			pool->rx_rings.push_back(&rx);
	}
};

XskSocket::XskSocket(std::unique_ptr<Impl> p) : p_(std::move(p)) {}
XskSocket::XskSocket(XskSocket &&) noexcept = default;
XskSocket &XskSocket::operator=(XskSocket &&) noexcept = default;
XskSocket::~XskSocket() = default;

Result<XskSocket> XskSocket::create(Umem &umem, const Netdev &dev, const SocketConfig &cfg)
{
	auto &us = umem.s_;
	if (auto s = check_ring_sizes(cfg, true); !s)
		return s.error();
	if (!cfg.frames || cfg.frames > us->frame_count - us->next_frame)
		return usage_error("not enough UMEM frames for queue " + std::to_string(cfg.queue) + " (" +
				   std::to_string(cfg.frames) + " wanted, " +
				   std::to_string(us->frame_count - us->next_frame) + " left)");

	const bool shared = us->owner_taken;
	// never hand the kernel a flag it does not know: before 6.6 XDP_USE_SG
	// makes bind fail with the EINVAL of a bad queue
	bool want_sg = !shared && cfg.multi_buffer;
	if (want_sg && !probe_xdp_use_sg().ok) {
		if (!cfg.multi_buffer_if_supported)
			return usage_error("multi-buffer AF_XDP on " + dev.name + ": " + kernel_lacks(kFeatXdpUseSg));
		want_sg = false;
	}

	auto p = std::make_unique<Impl>();
	p->umem = us;
	p->dev = dev;
	p->queue = cfg.queue;
	p->area = static_cast<std::byte *>(us->area.get());
	p->tx_md_len = us->tx_md_len;
	p->tx_offset = us->tx_md_len;
	auto pool = std::make_shared<FramePool>();
	pool->shift = log2u(us->frame_size);
	if (shared) {
		p->own_fd.reset(::socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
		if (!p->own_fd.valid())
			return errno_error("create AF_XDP socket", errno);
		p->fd = p->own_fd.get();
	} else {
		p->fd = us->fd.get();
		us->owner_taken = true;	// its rings are set below, even if bind fails
	}
	if (auto s = map_rings(*p, cfg, pool.get()); !s)
		return s.error();

	// The frame slice, and for a receiving socket the fill ring filled
	// before bind: a zero-copy driver posts RX buffers when the pool is set
	// up at bind, and one whose wakeup cannot reach its RX interrupt never
	// looks at the fill ring again until a frame arrives, which it cannot
	// without buffers (igb before "igb: Fix trigger of incorrect irq in
	// igb_xsk_wakeup", 2026, with split RX/TX vectors: one channel, or two
	// CPUs). The slice is only taken from the UMEM once bind succeeds.
	pool->assign(us->next_frame, cfg.frames);
	uint64_t full_at_bind = 0;
	if (cfg.rx_size)
		(void)pool->fill_from_free(full_at_bind);

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
		if (want_sg)
			sxdp.sxdp_flags |= kXdpUseSg;
		if (cfg.mode == BindMode::zero_copy)
			sxdp.sxdp_flags |= XDP_ZEROCOPY;
		else if (cfg.mode == BindMode::copy)
			sxdp.sxdp_flags |= XDP_COPY;
	}
	bool sg = want_sg;
	int e = bind_xsk(p->fd, sxdp);
	// Kernels before 6.6 refuse the unknown XDP_USE_SG flag with EINVAL
	// before looking at anything else (the probe said so already; this
	// covers a probe that could only guess); a failed bind leaves the
	// socket as it was.
	if (e == EINVAL && sg && cfg.multi_buffer_if_supported) {
		sxdp.sxdp_flags &= static_cast<uint16_t>(~kXdpUseSg);
		if (!bind_xsk(p->fd, sxdp)) {
			e = 0;
			sg = false;
		}
	}
	if (e)
		return bind_error(dev, cfg, e, us->tx_md_len != 0);
	p->zc = query_zero_copy(p->fd);
	p->busy = cfg.busy_poll;
	if (!shared) {
		us->sg = sg;
		us->need_wakeup = cfg.need_wakeup;
	}
	p->sg = us->sg;
	p->need_wakeup = us->need_wakeup;

	// Take the frame slice only now: a failed bind leaves it to others.
	us->next_frame += cfg.frames;
	p->join(std::move(pool));
	return XskSocket(std::move(p));
}

Result<XskSocket> XskSocket::create_shared(XskSocket &peer, const SocketConfig &cfg)
{
	const Impl &q = *peer.p_;
	if (auto s = check_ring_sizes(cfg, false); !s)
		return s.error();

	auto p = std::make_unique<Impl>();
	p->umem = q.umem;
	p->dev = q.dev;
	p->queue = q.queue;
	p->area = q.area;
	p->tx_md_len = q.tx_md_len;
	p->tx_offset = q.tx_offset;
	p->own_fd.reset(::socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
	if (!p->own_fd.valid())
		return errno_error("create AF_XDP socket", errno);
	p->fd = p->own_fd.get();
	// no fill/completion ring: the kernel refuses them (EINVAL) for a socket
	// that shares the buffer pool of one on the same queue
	if (auto s = map_rings(*p, cfg, nullptr); !s)
		return s.error();

	sockaddr_xdp sxdp{};
	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_ifindex = static_cast<uint32_t>(q.dev.ifindex);
	sxdp.sxdp_queue_id = q.queue;
	sxdp.sxdp_flags = XDP_SHARED_UMEM;
	sxdp.sxdp_shared_umem_fd = static_cast<uint32_t>(q.fd);
	SocketConfig where = cfg;
	where.queue = q.queue;
	if (int e = bind_xsk(p->fd, sxdp))
		return bind_error(q.dev, where, e);
	p->zc = query_zero_copy(p->fd);
	p->busy = cfg.busy_poll;
	p->sg = q.sg;
	p->need_wakeup = q.need_wakeup;
	p->join(q.pool);
	return XskSocket(std::move(p));
}

int XskSocket::fd() const noexcept { return p_->fd; }
bool XskSocket::busy_poll() const noexcept { return p_->busy; }

uint32_t XskSocket::napi_id() const noexcept
{
	uint32_t id = 0;
	socklen_t len = sizeof(id);
	if (::getsockopt(p_->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &id, &len))
		return 0;
	return id;
}
uint32_t XskSocket::queue() const noexcept { return p_->queue; }
bool XskSocket::zero_copy() const noexcept { return p_->zc; }
bool XskSocket::multi_buffer() const noexcept { return p_->sg; }
bool XskSocket::tx_metadata() const noexcept { return p_->tx_md_len != 0; }
uint32_t XskSocket::tx_data_offset() const noexcept { return p_->tx_offset; }
uint32_t XskSocket::tx_chunk_capacity() const noexcept { return p_->umem->frame_size - p_->tx_offset; }
std::byte *XskSocket::data(uint64_t addr) const noexcept { return p_->area + addr; }

uint32_t XskSocket::refill() noexcept
{
	return p_->fp->fill_from_free(p_->st.fill_ring_full);
}

uint32_t XskSocket::rx_peek(std::span<RxDesc> out) noexcept
{
	uint32_t frames = 0;
	return rx_peek(out, frames);
}

// The per-frame work is what recv's rate rests on (tools/bench xsk): one
// descriptor read, one state flip that checks the address, one RxDesc
// written; the counters are added once a batch.
uint32_t XskSocket::rx_peek(std::span<RxDesc> out, uint32_t &frames) noexcept
{
	Impl &s = *p_;
	FramePool &fp = *s.fp;
	frames = 0;
	if (!s.has_rx || out.empty())
		return 0;
	uint32_t idx = 0;
	uint32_t n = xsk_ring_cons__peek(&s.rx, static_cast<uint32_t>(out.size()), &idx);
	if (!n)
		return 0;
	// The kernel publishes a frame's descriptors together; only our limit
	// can cut a chain (a socket bound without XDP_USE_SG gets none). Leave
	// the cut one on the ring, unless it is all we got.
	if (s.sg) {
		uint32_t whole = n;
		while (whole && (xsk_ring_cons__rx_desc(&s.rx, idx + whole - 1)->options & kXdpPktContd))
			whole--;
		if (whole && whole < n) {
			xsk_ring_cons__cancel(&s.rx, n - whole);
			n = whole;
		}
	}
	uint64_t bytes = 0;
	uint32_t contd = 0, flipped = 0;
	for (uint32_t i = 0; i < n; i++) {
		const xdp_desc *d = xsk_ring_cons__rx_desc(&s.rx, idx + i);
		const uint64_t addr = d->addr;
		const uint32_t len = d->len;
		const bool more = (d->options & kXdpPktContd) != 0;
		out[i] = RxDesc{addr, len, more};
		bytes += len;
		contd += more;
		flipped += fp.flip(fp.chunk(addr), FrameState::fill, FrameState::in_use);
	}
	xsk_ring_cons__release(&s.rx, n);
	fp.moved(FrameState::fill, FrameState::in_use, flipped);
	s.st.rx_descs += n;
	s.st.rx_bytes += bytes;
	s.st.rx_packets += n - contd;
	frames = n - contd;
	return n;
}

void XskSocket::rx_release(std::span<const RxDesc> descs) noexcept
{
	FramePool &fp = *p_->fp;
	uint64_t *top = fp.free_list.data() + fp.nfree;
	for (const RxDesc &d : descs) {
		const uint64_t a = fp.chunk(d.addr);
		if (fp.flip(a, FrameState::in_use, FrameState::free))
			*top++ = a;
	}
	const uint32_t n = static_cast<uint32_t>(top - (fp.free_list.data() + fp.nfree));
	fp.nfree += n;
	fp.moved(FrameState::in_use, FrameState::free, n);
}

uint32_t XskSocket::rx_recycle(std::span<const RxDesc> descs) noexcept
{
	FramePool &fp = *p_->fp;
	xsk_ring_prod &fill = fp.fill;
	const uint32_t want = static_cast<uint32_t>(descs.size());
	// As a minimal receiver does: the frames just read go straight back on
	// the fill ring (its consumer index, the kernel's, read again only when
	// the room known is less than that); past its room, to the free list.
	const uint32_t base = fill.cached_prod;
	const uint32_t room = std::min(xsk_prod_nb_free(&fill, want), want);
	if (!room && want)
		p_->st.fill_ring_full++;
	uint32_t idx = 0;
	if (room)
		(void)xsk_ring_prod__reserve(&fill, room, &idx);
	uint32_t put = 0, freed = 0;
	uint64_t *top = fp.free_list.data() + fp.nfree;
	for (const RxDesc &d : descs) {
		const uint64_t a = fp.chunk(d.addr);
		if (put < room) {
			if (fp.flip(a, FrameState::in_use, FrameState::fill))
				*xsk_ring_prod__fill_addr(&fill, base + put++) = a;
		} else if (fp.flip(a, FrameState::in_use, FrameState::free)) {
			*top++ = a;
			freed++;
		}
	}
	fp.nfree += freed;
	fp.moved(FrameState::in_use, FrameState::fill, put);
	fp.moved(FrameState::in_use, FrameState::free, freed);
	// Slots a bad address left unused go back; room known beyond what came
	// back (a UMEM larger than the ring keeps free frames) takes free ones,
	// without another read of the consumer index.
	fill.cached_prod = base + put;
	const uint32_t more = std::min(fill.cached_cons - fill.cached_prod, fp.nfree);
	for (uint32_t i = 0; i < more; i++) {
		const uint64_t a = fp.free_list[--fp.nfree];
		fp.state[fp.index(a)] = FrameState::fill;
		*xsk_ring_prod__fill_addr(&fill, base + put + i) = a;
	}
	fill.cached_prod += more;
	fp.moved(FrameState::free, FrameState::fill, more);
	if (put + more)
		xsk_ring_prod__submit(&fill, put + more);
	return put + more;
}

uint32_t XskSocket::tx_alloc(std::span<uint64_t> out) noexcept
{
	Impl &s = *p_;
	FramePool &fp = *s.fp;
	uint32_t n = static_cast<uint32_t>(std::min<size_t>(out.size(), fp.nfree));
	if (n < out.size())
		s.st.no_free_frames++;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = fp.free_list[--fp.nfree];
		fp.move(a, FrameState::free, FrameState::in_use);
		out[i] = a + s.tx_offset;
	}
	return n;
}

void XskSocket::tx_free(std::span<const uint64_t> addrs) noexcept
{
	FramePool &fp = *p_->fp;
	for (uint64_t addr : addrs) {
		uint64_t a = fp.chunk(addr);
		if (fp.move(a, FrameState::in_use, FrameState::free))
			fp.free_list[fp.nfree++] = a;
	}
}

uint32_t XskSocket::tx_submit(std::span<const TxDesc> descs) noexcept
{
	Impl &s = *p_;
	FramePool &fp = *s.fp;
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
		if (fp.move(fp.chunk(d.addr), FrameState::in_use, FrameState::tx))
			fp.ends_frame[fp.index(fp.chunk(d.addr))] = !d.more;
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
	FramePool &fp = *s.fp;
	uint32_t idx = 0;
	uint32_t n = xsk_ring_cons__peek(&fp.comp, fp.comp.size, &idx);
	uint32_t frames = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = fp.chunk(*xsk_ring_cons__comp_addr(&fp.comp, idx + i));
		if (fp.move(a, FrameState::tx, FrameState::free)) {
			frames += fp.ends_frame[fp.index(a)];
			fp.free_list[fp.nfree++] = a;
		}
	}
	if (n) {
		xsk_ring_cons__release(&fp.comp, n);
		s.st.tx_completed += frames;
	}
	return n;
}

int XskSocket::kick() noexcept
{
	Impl &s = *p_;
	// busy polling: every sendto() runs the queue's NAPI, asked or not
	if (!s.has_tx || (s.need_wakeup && !s.busy && !xsk_ring_prod__needs_wakeup(&s.tx)))
		return 0;
	s.st.wakeups++;
	if (::sendto(s.fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) >= 0)
		return 0;
	int e = errno;
	if (e == EAGAIN || e == EBUSY || e == ENOBUFS)
		s.st.kick_busy++;
	else {
		s.st.kick_errors++;
		s.st.last_kick_errno = e;
	}
	return -e;
}

bool XskSocket::fill_needs_wakeup() const noexcept
{
	return p_->need_wakeup && xsk_ring_prod__needs_wakeup(&p_->fp->fill);
}

void XskSocket::rx_wakeup() noexcept
{
	p_->st.wakeups++;
	(void)::recvfrom(p_->fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
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
	return p_->fp->in_state[static_cast<int>(FrameState::tx)];
}

Accounting XskSocket::accounting() const noexcept
{
	const FramePool &fp = *p_->fp;
	Accounting a;
	a.total = fp.count;
	a.sockets = fp.members;
	uint64_t recount[4] = {};
	for (FrameState f : fp.state)
		recount[static_cast<int>(f)]++;
	// Ready entries the kernel produced and we have not consumed yet, on
	// every RX ring the pool's frames can reach.
	uint64_t rx_ready = 0;
	for (const xsk_ring_cons *r : fp.rx_rings)
		rx_ready += __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) - *r->consumer;
	uint32_t comp_ready = __atomic_load_n(fp.comp.producer, __ATOMIC_ACQUIRE) - *fp.comp.consumer;
	const uint64_t fill = fp.in_state[static_cast<int>(FrameState::fill)];
	const uint64_t tx = fp.in_state[static_cast<int>(FrameState::tx)];
	a.free = fp.in_state[static_cast<int>(FrameState::free)];
	a.in_use = fp.in_state[static_cast<int>(FrameState::in_use)];
	a.rx = std::min<uint64_t>(rx_ready, fill);
	a.fill = fill - a.rx;
	a.completion = std::min<uint64_t>(comp_ready, tx);
	a.tx = tx - a.completion;
	a.bad_addr = fp.bad_addr;
	bool recount_ok = true;
	for (int i = 0; i < 4; i++)
		recount_ok = recount_ok && recount[i] == fp.in_state[i];
	a.consistent = recount_ok && fp.nfree == a.free && a.bad_addr == 0 && rx_ready <= fill &&
		       comp_ready <= tx && a.free + a.fill + a.rx + a.tx + a.completion + a.in_use == a.total;
	return a;
}

} // namespace xoffload::xsk
