// Sinks that take runs of plain events at once (sink::write_batch), sinks
// that decline them, and sinks that fail in a batch.
//
// Each test holds the collector in the session's `session_begin` record
// (batch_probe's gate) while the host records: everything recorded meanwhile
// waits in the ring, so the collector then finds it as one run.
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/captured_errors.hpp"
#include "support/recording.hpp"

using namespace loupe_test;

namespace {

class batch_probe final : public loupe::sink {
public:
    enum class mode { take, decline, throw_in_batch };
    explicit batch_probe(mode m = mode::take) : mode_(m) {}

    struct seen {
        record_kind kind;
        std::string name;
        std::string session;
        std::uint64_t thread_id;
        std::uint64_t begin_ns;
        std::uint64_t end_ns;
        double value;
        std::uint64_t flow_id;
        bool in_batch;
    };

    void write(const loupe::record& r) override {
        std::unique_lock<std::mutex> lock(mutex_);
        if (r.kind == record_kind::session_begin) gate_.wait(lock, [this] { return open_; });
        keep(r, false);
    }
    bool write_batch(const loupe::record* records, std::size_t count) override {
        std::lock_guard<std::mutex> lock(mutex_);
        ++batch_calls_;
        if (mode_ == mode::decline) return false;
        if (mode_ == mode::throw_in_batch) throw std::runtime_error("batch refused");
        batch_sizes_.push_back(count);
        for (std::size_t i = 0; i < count; ++i) keep(records[i], true);
        return true;
    }
    void flush() override {}
    void close() override {}

    /// Lets the collector past the session's begin record.
    void open_gate() {
        std::lock_guard<std::mutex> lock(mutex_);
        open_ = true;
        gate_.notify_all();
    }
    std::vector<seen> zones() const { return of(record_kind::zone); }
    /// Zones, instants, counters and flow points, in arrival order.
    std::vector<seen> events() const {
        std::vector<seen> out;
        std::lock_guard<std::mutex> lock(mutex_);
        for (const seen& s : seen_) {
            if (s.kind == record_kind::zone || s.kind == record_kind::instant || s.kind == record_kind::counter ||
                s.kind == record_kind::flow) {
                out.push_back(s);
            }
        }
        return out;
    }
    std::vector<std::size_t> batch_sizes() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return batch_sizes_;
    }
    int batch_calls() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return batch_calls_;
    }

private:
    std::vector<seen> of(record_kind kind) const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<seen> out;
        for (const seen& s : seen_) {
            if (s.kind == kind) out.push_back(s);
        }
        return out;
    }
    void keep(const loupe::record& r, bool in_batch) {
        seen_.push_back(seen{r.kind, r.where ? std::string(r.where->name) : std::string(),
                             std::string(r.session->name), r.thread ? r.thread->id : 0, r.begin_ns, r.end_ns,
                             r.value, r.flow_id, in_batch});
    }

    const mode mode_;
    mutable std::mutex mutex_;
    std::condition_variable gate_;
    bool open_ = false;
    std::vector<seen> seen_;
    std::vector<std::size_t> batch_sizes_;
    int batch_calls_ = 0;
};

loupe::session_config batch_config(std::string name, std::vector<std::shared_ptr<loupe::sink>> sinks) {
    loupe::session_config cfg;
    cfg.name = std::move(name);
    cfg.sinks = std::move(sinks);
    return cfg;
}

// Records `count` zones on a new thread (a ring of its own), alternating
// between the sites "even" and "odd".
void record_alternating_zones(int count) {
    std::thread([count] {
        for (int i = 0; i < count; ++i) {
            if (i % 2 == 0) {
                LOUPE_ZONE("even");
            } else {
                LOUPE_ZONE("odd");
            }
        }
    }).join();
}

// Starts session `name` with `sinks`, records `zones` alternating zones
// while the collector waits in `gate`'s session_begin, and stops it.
loupe::session_stats record_behind_gate(std::string name, std::vector<std::shared_ptr<loupe::sink>> sinks,
                                        batch_probe& gate, int zones) {
    auto session = loupe::start_session(batch_config(std::move(name), std::move(sinks)));
    record_alternating_zones(zones);
    gate.open_gate();
    return session.stop();
}

void expect_alternating_in_order(const std::vector<batch_probe::seen>& zones, int count, const std::string& session) {
    ASSERT_EQ(zones.size(), static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const auto& z = zones[static_cast<std::size_t>(i)];
        EXPECT_EQ(z.name, i % 2 == 0 ? "even" : "odd") << "zone " << i;
        EXPECT_EQ(z.session, session) << "zone " << i;
        EXPECT_EQ(z.thread_id, zones[0].thread_id) << "zone " << i;
        if (i > 0) {
            EXPECT_GT(z.begin_ns, zones[static_cast<std::size_t>(i) - 1].begin_ns) << "zone " << i;
        }
    }
}

}  // namespace

TEST(SinkBatch, ARunOfZonesArrivesInBatchesOfAtMostTheLimitInOrder) {
    auto probe = std::make_shared<batch_probe>();
    constexpr int zones = 1000;
    const auto stats = record_behind_gate("batched", {probe}, *probe, zones);

    EXPECT_EQ(stats.delivered, static_cast<std::uint64_t>(zones));
    EXPECT_EQ(stats.dropped, 0u);
    const auto seen = probe->zones();
    expect_alternating_in_order(seen, zones, "batched");
    for (const auto& z : seen) EXPECT_TRUE(z.in_batch) << z.name;
    const auto sizes = probe->batch_sizes();
    std::size_t total = 0;
    for (std::size_t n : sizes) {
        EXPECT_GE(n, 1u);
        EXPECT_LE(n, loupe::sink::max_batch_records);
        total += n;
    }
    EXPECT_EQ(total, static_cast<std::size_t>(zones));
    // Full batches, but for the last one and one cut where the ring wraps.
    const std::size_t full = loupe::sink::max_batch_records;
    EXPECT_LE(sizes.size(), (zones + full - 1) / full + 1);
}

TEST(SinkBatch, InstantsCountersAndFlowPointsRideInTheSameBatchesWithTheirValues) {
    auto probe = std::make_shared<batch_probe>();
    auto session = loupe::start_session(batch_config("mixed", {probe}));
    constexpr int events = 400;
    const std::uint64_t flow = loupe::new_flow_id();
    std::thread([flow] {
        for (int i = 0; i < events; ++i) {
            switch (i % 5) {
                case 0: {
                    LOUPE_ZONE("zone");
                    break;
                }
                case 1: LOUPE_INSTANT("instant"); break;
                case 2: LOUPE_COUNTER("counter", i + 0.5); break;
                case 3: LOUPE_FLOW("step", flow); break;
                default: LOUPE_FLOW_END("last", flow); break;
            }
        }
    }).join();
    probe->open_gate();
    EXPECT_EQ(session.stop().delivered, static_cast<std::uint64_t>(events));

    const auto seen = probe->events();
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(events));
    for (int i = 0; i < events; ++i) {
        const auto& e = seen[static_cast<std::size_t>(i)];
        SCOPED_TRACE("event " + std::to_string(i));
        EXPECT_TRUE(e.in_batch);
        const int shape = i % 5;
        const record_kind kinds[] = {record_kind::zone, record_kind::instant, record_kind::counter,
                                     record_kind::flow, record_kind::flow};
        const char* names[] = {"zone", "instant", "counter", "step", "last"};
        EXPECT_EQ(e.kind, kinds[shape]);
        EXPECT_EQ(e.name, names[shape]);
        if (shape == 0) {
            EXPECT_GE(e.end_ns, e.begin_ns);
        } else {
            EXPECT_EQ(e.end_ns, e.begin_ns);
        }
        EXPECT_EQ(e.value, shape == 2 ? i + 0.5 : 0.0);
        EXPECT_EQ(e.flow_id, shape >= 3 ? flow : 0u);
    }
    std::size_t total = 0;
    for (std::size_t n : probe->batch_sizes()) total += n;
    EXPECT_EQ(total, static_cast<std::size_t>(events));
}

TEST(SinkBatch, ASinkThatDeclinesIsAskedOnceAndGetsEveryZoneOneByOne) {
    auto probe = std::make_shared<batch_probe>(batch_probe::mode::decline);
    constexpr int zones = 300;
    const auto stats = record_behind_gate("one-by-one", {probe}, *probe, zones);

    EXPECT_EQ(stats.delivered, static_cast<std::uint64_t>(zones));
    EXPECT_EQ(stats.records_undelivered, 0u);
    EXPECT_EQ(probe->batch_calls(), 1);
    const auto seen = probe->zones();
    expect_alternating_in_order(seen, zones, "one-by-one");
    for (const auto& z : seen) EXPECT_FALSE(z.in_batch) << z.name;
}

TEST(SinkBatch, TwoSessionsEachGetTheWholeRunUnderTheirOwnName) {
    auto first = std::make_shared<batch_probe>();
    auto second = std::make_shared<batch_probe>();
    auto a = loupe::start_session(batch_config("first", {first}));
    auto b = loupe::start_session(batch_config("second", {second}));
    constexpr int zones = 200;
    record_alternating_zones(zones);
    first->open_gate();
    second->open_gate();
    EXPECT_EQ(a.stop().delivered, static_cast<std::uint64_t>(zones));
    EXPECT_EQ(b.stop().delivered, static_cast<std::uint64_t>(zones));
    expect_alternating_in_order(first->zones(), zones, "first");
    expect_alternating_in_order(second->zones(), zones, "second");
}

TEST(SinkBatch, EachThreadsRunNamesItsOwnThread) {
    auto probe = std::make_shared<batch_probe>();
    auto session = loupe::start_session(batch_config("two-threads", {probe}));
    // Both rings wait behind the gate, so one collector pass drains both.
    constexpr int per_thread = 300;
    for (const char* name : {"first-thread", "second-thread"}) {
        std::thread([name] {
            for (int i = 0; i < per_thread; ++i) {
                if (name[0] == 'f') {
                    LOUPE_ZONE("first-thread");
                } else {
                    LOUPE_ZONE("second-thread");
                }
            }
        }).join();
    }
    probe->open_gate();
    EXPECT_EQ(session.stop().delivered, 2u * per_thread);
    std::map<std::string, std::set<std::uint64_t>> threads_of;
    for (const auto& z : probe->zones()) threads_of[z.name].insert(z.thread_id);
    ASSERT_EQ(threads_of["first-thread"].size(), 1u);
    ASSERT_EQ(threads_of["second-thread"].size(), 1u);
    EXPECT_NE(*threads_of["first-thread"].begin(), *threads_of["second-thread"].begin());
}

TEST(SinkBatch, AZoneBegunForAnEarlierSessionInTheSlotStaysOutOfTheNewSessionsBatch) {
    auto earlier = std::make_shared<loupe::sinks::memory_sink>();
    auto probe = std::make_shared<batch_probe>();
    auto x = loupe::start_session(memory_config(earlier, "earlier"));
    std::optional<loupe::session> y;
    {
        LOUPE_ZONE("begun-for-earlier");  // takes the slot's bit now
        x.stop();
        // Usually the slot `x` had: the zone's bit then names `y` too.
        y.emplace(loupe::start_session(batch_config("later", {probe})));
        for (int i = 0; i < 5; ++i) {
            LOUPE_ZONE("new");
        }
    }  // "begun-for-earlier" ends here: after the new zones, in the same run
    probe->open_gate();
    EXPECT_EQ(y->stop().delivered, 5u);
    const auto seen = probe->zones();
    ASSERT_EQ(seen.size(), 5u);
    for (const auto& z : seen) EXPECT_EQ(z.name, "new");
    EXPECT_TRUE(named(earlier->events(), "begun-for-earlier").empty());
}

TEST(SinkBatch, ASinkThatThrowsInABatchIsReportedOnceAndTheBatchCountsAsUndelivered) {
    captured_errors errors;
    auto failing = std::make_shared<batch_probe>(batch_probe::mode::throw_in_batch);
    auto healthy = std::make_shared<loupe::sinks::memory_sink>();
    constexpr int zones = 100;
    const auto stats = record_behind_gate("failing", {failing, healthy}, *failing, zones);

    EXPECT_EQ(stats.delivered, static_cast<std::uint64_t>(zones));
    EXPECT_EQ(of_kind(healthy->events(), record_kind::zone).size(), static_cast<std::size_t>(zones));
    EXPECT_EQ(stats.sink_failures, 1u);
    EXPECT_EQ(failing->batch_calls(), 1);
    EXPECT_TRUE(failing->zones().empty());
    // Everything after the begin record: the zones (the failed batch and
    // those after it) and the session's end.
    EXPECT_EQ(stats.records_undelivered, healthy->events().size() - 1);
    const auto messages = errors.messages();
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("session 'failing'"), std::string::npos) << messages[0];
    EXPECT_NE(messages[0].find("batch refused"), std::string::npos) << messages[0];
}
