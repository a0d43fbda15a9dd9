// A per-thread bounded single-producer/single-consumer ring of fixed 32-byte
// records. The owning thread pushes without locks or allocation; the
// collector thread drains. Rings outlive their threads: a thread that exits
// marks its ring retired, the collector drains it and gives it back to a pool
// for the next thread, so memory is bounded by the number of threads that
// record at the same time.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "loupe/core/detail/hot_state.hpp"
#include "loupe/core/detail/write_prefetch.hpp"
#include "loupe/base/metric_types.hpp"
#include "loupe/base/site.hpp"
#include "loupe/core/unit_marker.hpp"

namespace loupe::detail {

/// What the hot path writes: one event, 32 bytes, no formatting.
struct raw_record {
    const site* where;       ///< call site (its kind says how to read the rest)
    std::uint64_t t0;        ///< ticks: zone begin, instant/counter time
    std::uint64_t t1;        ///< zone: end ticks; counter: the value's bits
    std::uint64_t sessions;  ///< session slots this event was captured for
};
static_assert(sizeof(raw_record) == 32, "a ring record is 32 bytes: two to a cache line");

namespace ring_detail {
inline std::size_t header_t1_bytes(const raw_record& header) noexcept { return static_cast<std::size_t>(header.t1); }
inline void skip_unit(unit_delivery&) noexcept {}
// Unread: the method call that left these slots behind may still be writing
// its values into them (open_frame), so the collector must not look at them.
inline constexpr unit_codec skipped_unit_codec{&header_t1_bytes, nullptr, &skip_unit, true};
}  // namespace ring_detail

/// Header marker of a unit the collector skips: the slots a method call had
/// opened in place (ring::open_frame) when its chains recorded events of
/// their own; `t1` is the payload size.
LOUPE_API inline constexpr unit_marker skipped_unit_marker = make_unit_marker("loupe.skipped", ring_detail::skipped_unit_codec);

/// Writes a multi-record unit into `out`: a header record (`marker`,
/// `ticks`, the payload size, `sessions`) followed by the `n` bytes at
/// `payload`, zero-padded to whole records (`payload` has room for that).
/// Returns how many records it wrote. Pushed with ring::try_push_n, the
/// collector sees all of them or none.
inline std::size_t pack_unit(const site* marker, std::uint64_t ticks, std::uint64_t sessions, unsigned char* payload,
                             std::size_t n, raw_record* out) noexcept {
    out[0].where = marker;
    out[0].t0 = ticks;
    out[0].t1 = n;
    out[0].sessions = sessions;
    const std::size_t records = (n + sizeof(raw_record) - 1) / sizeof(raw_record);
    std::memset(payload + n, 0, records * sizeof(raw_record) - n);
    std::memcpy(static_cast<void*>(out + 1), payload, records * sizeof(raw_record));
    return 1 + records;
}

class ring {
public:
    explicit ring(std::size_t capacity_records)
        : capacity_(capacity_for(capacity_records)),
          mask_(capacity_ - 1),
          slots_(static_cast<raw_record*>(::operator new[](capacity_ * sizeof(raw_record), slot_alignment))) {}
    ~ring() { ::operator delete[](slots_, slot_alignment); }
    ring(const ring&) = delete;
    ring& operator=(const ring&) = delete;

    static std::size_t records_for_bytes(std::uint64_t bytes) noexcept {
        std::uint64_t n = bytes / sizeof(raw_record);
        return static_cast<std::size_t>(n < 8 ? 8 : n);
    }
    /// The capacity a ring asked for `records` gets: rounded down to a power
    /// of two (so a ring never exceeds its byte budget), at least 8.
    static std::size_t capacity_for(std::size_t records) noexcept {
        std::size_t p = 8;
        while (p * 2 <= records) p <<= 1;
        return p;
    }
    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t bytes() const noexcept { return capacity_ * sizeof(raw_record); }

    /// Producer (owning thread) only. False when full. Takes the fields as
    /// scalars so callers keep them in registers and store them once, here.
    bool try_push(const site* where, std::uint64_t t0, std::uint64_t t1, std::uint64_t sessions) noexcept {
        if (LOUPE_UNLIKELY(!fits(1))) return false;
        const std::uint64_t h = producer_head_;
        raw_record& slot = slots_[h & mask_];
        slot.where = where;
        slot.t0 = t0;
        slot.t1 = t1;
        slot.sessions = sessions;
        publish(h + 1);
        return true;
    }

    /// Producer only: appends `n` records as one unit (the collector sees all
    /// or none of them). False when they do not fit now.
    bool try_push_n(const raw_record* records, std::size_t n) noexcept {
        if (!fits(n)) return false;
        const std::uint64_t h = producer_head_;
        for (std::size_t i = 0; i < n; ++i) slots_[(h + i) & mask_] = records[i];
        publish(h + n);
        return true;
    }

    /// Producer only: whether `n` slots from the head would wrap around the
    /// ring's end (try_reserve(n) then fails whatever the room).
    bool would_wrap(std::size_t n) const noexcept { return (producer_head_ & mask_) + n > capacity_; }
    /// Producer only: `n` free slots that follow each other in memory (no wrap
    /// inside), to be filled in place and published with `commit(n)`; null
    /// when they do not fit now or would wrap (then use try_push_n).
    raw_record* try_reserve(std::size_t n) noexcept {
        if (would_wrap(n) || !fits(n)) return nullptr;
        return &slots_[producer_head_ & mask_];
    }
    /// Producer only: publishes the `n` slots try_reserve(n) gave.
    void commit(std::size_t n) noexcept {
        publish(producer_head_ + n);
    }

    /// Records ahead of the head that prefetch_ahead_for_write() asks for.
    static constexpr std::size_t prefetch_distance_records = 32;  // 1 KiB
    /// Producer only: a hint (core/detail/write_prefetch.hpp) for the three
    /// cache lines 1 KiB past the head, for a producer that writes a line or
    /// more per event (a call between processes: 2.5; a method call with
    /// values: its frame). The collector on another core read those lines
    /// when it drained them; owned again before the records come, their
    /// stores need not wait for them (on a host that moves lines between
    /// cores slowly, that wait held such a producer to three times a zone's
    /// time). Never moves the head.
    void prefetch_ahead_for_write() const noexcept {
        const std::uint64_t at = producer_head_ + prefetch_distance_records;
        for (std::uint64_t line = 0; line < 3; ++line) prefetch_for_write(&slots_[(at + 2 * line) & mask_]);
    }

    // ---- a method call's unit built in place (params/method.hpp) ----
    //
    // A call's entry writes its values straight into slots at the head and
    // leaves them unpublished; if the call returns before anything else is
    // pushed (a call that records nothing inside itself), its exit writes the
    // header record in front of them and publishes the unit: no copy. Any
    // other push first sets the frame aside (set_frame_aside): a closed
    // frame's payload is copied to the place its entry named, and the call's
    // exit packs its unit from there as usual; an open one (its chains'
    // getters record events while the values are written) is left behind as
    // a skipped unit. One frame waits at a time: the innermost call's. While
    // it waits, limit_ is moved so that the room test of every push fails
    // and takes the slow path (fits): the other pushes pay nothing.

    /// Producer only: opens `n` slots at the head (no wrap inside) for a
    /// call's unit; null when they do not fit now.
    raw_record* open_frame(std::size_t n) noexcept {
        if (would_wrap(n) || !fits(n)) return nullptr;
        const std::uint64_t h = producer_head_;
        frame_end_ = h + n;
        frame_spill_ = nullptr;  // open
        frame_limit_ = limit_;
        limit_ = 0;  // every room test fails while the frame waits
        return &slots_[h & mask_];
    }

    enum class frame_state : std::uint8_t {
        in_place,     ///< waits in the ring; set aside to `spill` by the next push
        skipped,      ///< events came while it was open: its slots went out as skipped, its bytes are intact
        overwritten,  ///< so many events came that the ring wrapped over its bytes
    };
    /// Producer only: the values are written; the unit now takes `records`
    /// slots, and its payload (`bytes` from slot 1) goes to `spill` if
    /// something else is pushed before the call returns.
    frame_state close_frame(std::size_t records, std::size_t bytes, unsigned char* spill) noexcept {
        if (LOUPE_UNLIKELY(frame_end_ == 0)) {
            return producer_head_ - frame_start_ <= capacity_ ? frame_state::skipped : frame_state::overwritten;
        }
        frame_end_ = producer_head_ + records;
        frame_bytes_ = bytes;
        frame_spill_ = spill;
        return frame_state::in_place;
    }
    /// Producer only: whether a frame still waits in place (it was not set aside).
    bool frame_waits() const noexcept { return frame_end_ != 0; }
    /// Producer only: the slots of the frame that waits.
    raw_record* waiting_frame() noexcept { return &slots_[producer_head_ & mask_]; }
    /// Producer only: publishes the waiting frame, its header written.
    void commit_frame() noexcept {
        const std::uint64_t end = frame_end_;
        frame_end_ = 0;
        limit_ = frame_limit_;
        publish(end);
    }
    /// Producer only: sets a waiting frame aside now (see set_frame_aside).
    void set_aside_waiting_frame() noexcept {
        if (frame_end_ != 0) set_frame_aside();
    }

    /// Producer only: the next push looks at the collector's tail again even
    /// if the ring was full a moment ago (for a producer that waits for room).
    void recheck_room() noexcept { full_skips_ = 0; }

    /// Producer only: counts one event lost for each session in `sessions`.
    void count_dropped(std::uint64_t sessions) noexcept {
        while (sessions != 0) {
            int slot = __builtin_ctzll(sessions);
            sessions &= sessions - 1;
            dropped_[slot].store(dropped_[slot].load(std::memory_order_relaxed) + 1,
                                 std::memory_order_relaxed);
        }
    }

    /// Consumer (collector) only: hands the records pushed so far to `f` in
    /// order, as runs: `f(first, n)` sees the `n` (at least 1) records that
    /// follow each other in memory from `first` (up to the last pushed one or
    /// the ring's end) and returns how many of them it consumed, from the
    /// first; 0 leaves `first` and all after it for a later call. A unit
    /// (try_push_n, commit) is pushed whole, so its header is followed by its
    /// payload in the same run unless the unit wraps. Frees the space of the
    /// consumed records; returns their count.
    template <class F>
    std::size_t drain_runs(F&& f) {
        const std::uint64_t t = tail_.load(std::memory_order_relaxed);
        const std::uint64_t h = head_.load(std::memory_order_acquire);
        std::uint64_t i = t;
        while (i != h) {
            const std::size_t at = static_cast<std::size_t>(i & mask_);
            const std::size_t to_end = capacity_ - at;
            const std::size_t used = f(&slots_[at], h - i < to_end ? static_cast<std::size_t>(h - i) : to_end);
            if (used == 0) break;
            i += used;
        }
        tail_.store(i, std::memory_order_release);
        return static_cast<std::size_t>(i - t);
    }

    bool empty() const noexcept {
        return tail_.load(std::memory_order_acquire) == head_.load(std::memory_order_acquire);
    }
    std::uint64_t pushed() const noexcept { return head_.load(std::memory_order_acquire); }
    std::uint64_t dropped(int slot) const noexcept {
        return dropped_[slot].load(std::memory_order_relaxed);
    }

    /// Reuse by a new thread: the collector calls this after the ring was
    /// retired and drained, with no producer attached.
    void reset_for_reuse() noexcept {
        producer_head_ = 0;
        frame_end_ = frame_start_ = frame_limit_ = 0;
        full_skips_ = 0;
        head_.store(0, std::memory_order_relaxed);
        tail_.store(0, std::memory_order_relaxed);
        limit_ = 0;
        for (auto& d : dropped_) d.store(0, std::memory_order_relaxed);
        for (auto& s : seen_dropped) s = 0;
        collector_payload = pending_payload{};
        collector_zone_metrics = held_zone_metrics{};
        retired.store(false, std::memory_order_relaxed);
        successor.store(nullptr, std::memory_order_relaxed);
        adopted.store(false, std::memory_order_relaxed);
        predecessor = nullptr;
        growth_refused_epoch = 0;
    }

    // ---- identity of the thread that owns the ring now ----
    std::uint64_t thread_id = 0;  ///< loupe thread id, new for every owner
    std::uint64_t os_tid = 0;

    /// Name, written by the owning thread, read by the collector.
    void set_name(const char* name) {
        std::lock_guard<std::mutex> lock(name_mutex_);
        name_ = name;
        name_version_.fetch_add(1, std::memory_order_release);
    }
    std::uint32_t name_version() const noexcept { return name_version_.load(std::memory_order_acquire); }
    std::string name() const {
        std::lock_guard<std::mutex> lock(name_mutex_);
        return name_;
    }

    /// Set by the owner's thread-exit hook, or when the owner moves to the
    /// ring's successor; the collector recycles the ring once it is drained.
    std::atomic<bool> retired{false};

    // ---- growth (core/recorder.hpp: adopt_successor) ----
    /// A larger ring the collector made for this busy one; the owner moves its
    /// pushes there when this one is full. Null: none.
    std::atomic<ring*> successor{nullptr};
    /// Set by the owner when it moves to this ring, before it retires the one
    /// before: a successor never adopted was left by a thread that exited.
    std::atomic<bool> adopted{false};
    /// Collector only: the ring this one succeeds, drained to its end first
    /// (its records are older); null once that ring is recycled.
    ring* predecessor = nullptr;
    /// Owner only: the runtime's ring_room_epoch when the budget had no room
    /// for a successor the owner asked for (runtime::grow_full_ring); it asks
    /// again only once rings were freed or the budget changed. 0: never refused.
    std::uint64_t growth_refused_epoch = 0;
    /// The predecessor's name_version() when the collector copied its name.
    std::uint32_t name_source_version = 0;

    // ---- collector-private bookkeeping ----
    std::uint64_t seen_dropped[max_sessions] = {};  ///< drops already reported, per slot
    std::string collector_name;                    ///< the collector's copy of the name
    std::uint32_t collector_name_version = ~0u;
    /// A multi-record unit (core/unit_codec.hpp) being reassembled from its
    /// payload records, or a zone's metric deltas (zone_metrics_marker).
    struct pending_payload {
        const site* marker = nullptr;  ///< the header's marker: what the payload is
        const unit_codec* codec = nullptr;  ///< the marker's codec (null: zone metric deltas)
        bool sized = true;  ///< false until the payload's first record gave its real size
        std::uint64_t sessions = 0;
        std::uint64_t ticks = 0;
        std::uint64_t end_ticks = 0;   ///< the header record's t1
        std::size_t bytes = 0;       ///< payload size
        std::size_t received = 0;    ///< payload bytes copied so far
        unsigned char data[max_unit_payload] = {};  ///< the largest unit: a method call (params/detail/method_wire.hpp)

        /// The unit whose header is `header` begins: its payload has the size
        /// the header announces (the collector reads at most `data`'s), or,
        /// when `c` says so, the size its first payload record gives.
        void start(const raw_record& header, const unit_codec& c) noexcept {
            marker = header.where;
            codec = &c;
            sessions = header.sessions;
            ticks = header.t0;
            end_ticks = header.t1;
            received = 0;
            bytes = announced_bytes(header, c);
            sized = c.bytes_from_first == nullptr;
        }
        /// The payload's first record, `first`, gives its real size.
        void size_from_first(const raw_record& first) noexcept {
            bytes = bytes_from_first(first, *codec);
            sized = true;
        }
        /// The payload size a unit's header announces, and the one its first
        /// payload record gives (when `c.bytes_from_first` is set): what the
        /// collector reads of it, at most `data`'s size.
        static std::size_t announced_bytes(const raw_record& header, const unit_codec& c) noexcept {
            return at_most_data(c.announced_bytes(header));
        }
        static std::size_t bytes_from_first(const raw_record& first, const unit_codec& c) noexcept {
            return at_most_data(c.bytes_from_first(first));
        }
        static std::size_t at_most_data(std::size_t n) noexcept { return n < sizeof data ? n : sizeof data; }
    } collector_payload;
    /// The deltas of the zone record that follows (from a zone-with-metrics unit).
    struct held_zone_metrics {
        const metric_plan* plan = nullptr;  ///< null: none held
        std::int64_t delta[max_zone_metrics] = {};
    } collector_zone_metrics;

private:
    // While the ring is full, the producer drops this many events between two
    // looks at the collector's tail: an overloaded producer then drops
    // without fetching the collector's cache line for every event.
    static constexpr unsigned full_skip_events = 15;

    // Producer only: true if `n` records fit after the head. The first test
    // passes up to limit_ (see fits_slow); a waiting frame fails it
    // (open_frame) and is set aside in fits_slow, first.
    bool fits(std::size_t n) noexcept {
        return LOUPE_LIKELY(producer_head_ + n <= limit_) || fits_slow(n);
    }
    // fits() past limit_: sets a waiting frame aside, then looks at the
    // collector's tail again. The limit it sets next is half the ring past
    // that tail while the ring is less than half full, so the producer looks
    // again (once per half ring, one read of the collector's line) when it
    // may have filled half: then, if the collector pauses between passes, it
    // is woken (hot_state::paused_collector_wake), so a thread that starts
    // recording flat out during a pause does not fill the ring before the
    // collector looks. Past half full the limit is the ring's end. Out of
    // line: every push site inlines fits(), so its rare part stays out.
    LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART bool fits_slow(std::size_t n) noexcept;

    // Producer only: a push comes while a frame waits in place. Open (its
    // chains are recording): its slots are left behind as a skipped unit
    // and the push goes after them. Closed: its payload is copied out.
    LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART void set_frame_aside() noexcept;

    // Producer only: the next head, published to the collector.
    void publish(std::uint64_t h) noexcept {
        producer_head_ = h;
        head_.store(h, std::memory_order_release);
    }

    // Each line below is written by one side only, so neither side's reads
    // wait for the other's writes: the producer's own copy of the head and
    // the last tail it saw; the published head (the producer only stores to
    // it); the tail (the collector's); the geometry (read-only); the drop
    // counters (the producer's, read by the collector now and then).
    alignas(64) std::uint64_t producer_head_ = 0;
    std::uint64_t limit_ = 0;  ///< heads up to this pass the first room test (0: look at the tail first)
    unsigned full_skips_ = 0;
    std::uint64_t frame_end_ = 0;   ///< a frame waits in place in [producer_head_, frame_end_) (0: none)
    std::uint64_t frame_limit_ = 0;  ///< limit_ while a frame waits
    unsigned char* frame_spill_ = nullptr;  ///< null while the frame is open
    std::size_t frame_bytes_ = 0;
    std::uint64_t frame_start_ = 0;  ///< where a frame set aside while open began
    alignas(64) std::atomic<std::uint64_t> head_{0};
    alignas(64) std::atomic<std::uint64_t> tail_{0};
    alignas(64) const std::size_t capacity_;
    const std::size_t mask_;
    // Cache-line aligned, so that no 32-byte record straddles two lines (the
    // default operator new gives large blocks at 16 bytes past a page).
    static constexpr std::align_val_t slot_alignment{64};
    raw_record* const slots_;
    alignas(64) std::atomic<std::uint64_t> dropped_[max_sessions] = {};
    alignas(64) mutable std::mutex name_mutex_;
    std::string name_;
    std::atomic<std::uint32_t> name_version_{0};
};

// The ring's shared out-of-line parts (base/config.hpp): inline, or
// compiled by the implementation file alone.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
bool ring::fits_slow(std::size_t n) noexcept {
    if (LOUPE_UNLIKELY(frame_end_ != 0)) {
        set_frame_aside();
        if (producer_head_ + n <= limit_) return true;
    }
    if (full_skips_ != 0) {
        --full_skips_;
        return false;
    }
    const std::uint64_t end = producer_head_ + n;
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    if (end - tail > capacity_) {
        full_skips_ = full_skip_events;
        return false;
    }
    const std::uint64_t half = tail + capacity_ / 2;
    if (end <= half) {
        limit_ = half;
    } else {
        limit_ = tail + capacity_;
        if (g_hot.paused_collector_wake.load(std::memory_order_relaxed) != nullptr) {
            if (auto* wake = g_hot.paused_collector_wake.exchange(nullptr, std::memory_order_acq_rel)) wake();
        }
    }
    return true;
}

void ring::set_frame_aside() noexcept {
    const std::uint64_t h = producer_head_;
    if (frame_spill_ == nullptr) {  // open
        raw_record& skipped = slots_[h & mask_];
        skipped.where = &skipped_unit_marker;
        skipped.t0 = 0;
        skipped.t1 = (frame_end_ - h - 1) * sizeof(raw_record);
        skipped.sessions = 0;
        frame_start_ = h;
        producer_head_ = frame_end_;
    } else {
        std::memcpy(frame_spill_, &slots_[(h + 1) & mask_], frame_bytes_);
    }
    frame_end_ = 0;
    limit_ = frame_limit_;
}
#endif

}  // namespace loupe::detail
