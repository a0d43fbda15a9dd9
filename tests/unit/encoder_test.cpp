// The encoder's EVENTS records: a thread's events are packed in place into
// one record until it reaches max_batch_bytes, then the next one opens; every
// event reads back exactly, whatever the size of its varints.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

#include <loupe/format/encoder.hpp>
#include <loupe/format/reader.hpp>

namespace {

// EVENTS records as the decoder frames them: where each starts, whose it is.
struct events_records : loupe::trace_visitor {
    std::vector<std::uint64_t> offsets;
    std::vector<std::uint64_t> threads;
    void on_events_begin(std::uint64_t at, std::uint64_t thread_id) override {
        offsets.push_back(at);
        threads.push_back(thread_id);
    }
};

// THREAD records in the order the decoder meets them.
struct thread_records : loupe::trace_visitor {
    std::vector<loupe::trace_thread> seen;
    void on_thread(std::uint64_t, const loupe::trace_thread& t) override { seen.push_back(t); }
};

// A session's first and last records, around what a test encodes.
void encode_session_begin(loupe::detail::trace_encoder& enc, const loupe::session_info& s) {
    loupe::record r;
    r.session = &s;
    r.kind = loupe::record_kind::session_begin;
    enc.encode(r);
}
void encode_session_end(loupe::detail::trace_encoder& enc, const loupe::session_info& s) {
    loupe::record end;
    end.session = &s;
    end.kind = loupe::record_kind::session_end;
    end.end_ns = 9000;
    enc.encode(end);
}

struct expected_event {
    const loupe::thread_info* thread;
    loupe::record_kind kind;
    std::uint64_t begin_ns, end_ns;
    double value;
};

}  // namespace

TEST(Encoder, ThreadsEventsFillSeveralEventsRecordsAndReadBackExactly) {
    static const loupe::site zone{"zone", "e.cpp", "f", 1, loupe::site_kind::zone};
    static const loupe::site gauge{"gauge", "e.cpp", "f", 2, loupe::site_kind::counter};
    loupe::session_info s{"encoder", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc,
                          nullptr, 0, {}, {}, {}, {}, 0};
    const loupe::thread_info a{1, 101, "a", 1}, b{2, 102, "b", 1};
    loupe::detail::trace_encoder enc;
    encode_session_begin(enc, s);

    // Long runs of one thread (zones whose begin goes back and forth by up to
    // 2^62 ns and whose durations take 1 to 10 varint bytes, and counters),
    // then a few events of the other thread, over and over.
    std::vector<expected_event> expected;
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    for (std::uint64_t i = 0; i < 12000; ++i) {
        const loupe::thread_info* th = (i / 3000) % 2 == 0 || i % 3000 < 2990 ? &a : &b;
        loupe::record e;
        e.session = &s;
        e.thread = th;
        if (i % 7 == 3) {
            e.kind = loupe::record_kind::counter;
            e.where = &gauge;
            e.begin_ns = e.end_ns = 5000 + i;
            e.value = -0.25 * static_cast<double>(i);
        } else {
            e.kind = loupe::record_kind::zone;
            e.where = &zone;
            e.begin_ns = i % 2 ? (std::uint64_t{1} << 62) + i : 1000 + i;
            e.end_ns = i % 5 == 0 ? max : e.begin_ns + (std::uint64_t{1} << (i % 64)) - 1;
        }
        enc.encode(e);
        expected.push_back({th, e.kind, e.begin_ns, e.end_ns, e.value});
    }
    encode_session_end(enc, s);
    const std::vector<unsigned char>& bytes = enc.bytes();

    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    ASSERT_EQ(t.events.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const loupe::trace_event& got = t.events[i];
        ASSERT_EQ(got.thread_id, expected[i].thread->id) << "event " << i;
        ASSERT_EQ(got.begin_ns, expected[i].begin_ns) << "event " << i;
        if (expected[i].kind == loupe::record_kind::zone) {
            ASSERT_EQ(got.type, loupe::event_type::zone) << "event " << i;
            ASSERT_EQ(got.end_ns, expected[i].end_ns) << "event " << i;
        } else {
            ASSERT_EQ(got.type, loupe::event_type::counter) << "event " << i;
            ASSERT_EQ(got.value, expected[i].value) << "event " << i;
        }
    }

    // Each record holds one thread's run, closed near max_batch_bytes (the
    // first one early: the counter's SITE came before the counter).
    events_records framing;
    loupe::decode_trace(bytes.data(), bytes.size(), framing);
    ASSERT_GT(framing.offsets.size(), 8u);
    for (std::size_t k = 1; k + 1 < framing.offsets.size(); ++k) {
        const std::uint64_t size = framing.offsets[k + 1] - framing.offsets[k];
        EXPECT_LE(size, loupe::detail::trace_encoder::max_batch_bytes + 64) << "EVENTS record " << k;
        if (framing.threads[k] == framing.threads[k + 1]) {
            EXPECT_GE(size, loupe::detail::trace_encoder::max_batch_bytes) << "EVENTS record " << k << " closed early";
        }
    }
}

// Records outside EVENTS (task points here) define their thread once, and
// again when it is renamed, also while the same thread's records follow
// one another.
TEST(Encoder, ThreadsAreDefinedOnceAndAgainWhenRenamed) {
    loupe::session_info s{"encoder", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc,
                          nullptr, 0, {}, {}, {}, {}, 0};
    const loupe::thread_info a{1, 101, "a", 1}, b{2, 102, "b", 1}, a_renamed{1, 101, "a2", 2};
    loupe::detail::trace_encoder enc;
    encode_session_begin(enc, s);
    const loupe::task_point call{loupe::task_point_kind::call_out, 7, 8, 9, 10, 0, 0, true, "peer", "name"};
    const loupe::thread_info* order[] = {&a, &a, &b, &b, &a, &a_renamed, &a_renamed, &b};
    std::uint64_t at = 2000;
    for (const loupe::thread_info* th : order) {
        loupe::record p;
        p.session = &s;
        p.kind = loupe::record_kind::task_point;
        p.thread = th;
        p.begin_ns = p.end_ns = at++;
        p.task = &call;
        enc.encode(p);
    }
    encode_session_end(enc, s);
    const std::vector<unsigned char>& bytes = enc.bytes();

    thread_records threads;
    loupe::decode_trace(bytes.data(), bytes.size(), threads);
    ASSERT_EQ(threads.seen.size(), 3u);
    EXPECT_EQ(threads.seen[0].id, 1u);
    EXPECT_EQ(threads.seen[0].name, "a");
    EXPECT_EQ(threads.seen[1].id, 2u);
    EXPECT_EQ(threads.seen[1].name, "b");
    EXPECT_EQ(threads.seen[2].id, 1u);
    EXPECT_EQ(threads.seen[2].name, "a2");
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    ASSERT_EQ(t.task_points.size(), std::size(order));
    for (std::size_t i = 0; i < std::size(order); ++i) EXPECT_EQ(t.task_points[i].thread_id, order[i]->id) << i;
}
