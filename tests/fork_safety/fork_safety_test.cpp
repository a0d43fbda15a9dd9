// fork() while other threads are inside loupe: every child can start a
// session, record a zone (with a metric), an I/O read and a method call with
// a traced parameter, stop and exit.
// Its own process: main() sets the I/O registry's direct array to its
// smallest size before its first use, so that descriptors from 256 up take
// the registry's overflow map; the clock test re-runs this binary as a
// fresh process (--clock-race-helper) in which nothing calibrated the clock;
// and allocations are counted (a thread's first counted allocation attaches
// its metric block, under the metric registry's lock).
//
// Each child runs under a watchdog in the parent: a child that has not exited
// within child_timeout is counted as hung and killed.
#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/metrics.hpp>
#include <loupe/metrics/allocations.hpp>
#include <loupe/params.hpp>
#include <loupe/session.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

LOUPE_COUNT_GLOBAL_ALLOCATIONS()

namespace {

constexpr std::size_t registry_capacity = 256;  // the smallest: one chunk
constexpr int forks = 200;
constexpr int churn_threads = 4;
constexpr auto child_timeout = std::chrono::seconds(3);
constexpr int child_high_fd = 900;  // past the direct array: the overflow map

bool capacity_accepted = false;

void sleep_for_us(long us) {
    const timespec pause{us / 1000000, (us % 1000000) * 1000};
    ::nanosleep(&pause, nullptr);
}

// The traced code: a method whose parameters the sessions trace through the
// reflection registry (field), the type-name cache (type_of) and the hash key.
namespace forkshop {
struct Parcel {
    virtual ~Parcel() = default;
    int weight = 0;
    std::string label;
};
struct Crate : Parcel {};
struct Cart {
    int items = 0;
    int add(const Parcel& parcel, int count) {
        LOUPE_METHOD("forkshop::Cart::add(Parcel const&,int)", parcel, count);
        return items += count;
    }
};
constexpr const char* add_signature = "forkshop::Cart::add(Parcel const&,int)";
}  // namespace forkshop

const char* const parcel_specs =
    "method=forkshop::Cart::add(Parcel const&,int); param=1; chain=field(weight)\n"
    "method=forkshop::Cart::add(Parcel const&,int); param=1; chain=type_of\n"
    "method=forkshop::Cart::add(Parcel const&,int); param=1; chain=field(label)|hash\n";

void reflect_parcels() {
    loupe::reflect<forkshop::Parcel>("forkshop::Parcel")
        .field("weight", &forkshop::Parcel::weight)
        .field("label", &forkshop::Parcel::label);
    loupe::reflect<forkshop::Crate>("forkshop::Crate").base<forkshop::Parcel>();
}

struct child_results {
    int forked = 0;
    int hung = 0;    // killed by the watchdog
    int failed = 0;  // exited, but not with 0
    std::string first_failure;
};

// A scenario stops forking after this many hung children (the test fails
// anyway; each hung child costs child_timeout).
constexpr int enough_hung = 3;

// Waits for `pid` until `deadline`; kills it when it has not exited by then.
void await_child(pid_t pid, std::chrono::steady_clock::time_point deadline, child_results& out) {
    int status = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0) {
            ++out.failed;
            return;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            ++out.hung;
            return;
        }
        sleep_for_us(200);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ++out.failed;
        if (out.first_failure.empty()) {
            out.first_failure = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                                  : "signal " + std::to_string(WTERMSIG(status));
        }
    }
}

// What every child does: a descriptor dup'ed past the registry's array,
// then a session recording zones with a metric, I/O and methods with a
// parameter spec, one zone, a read of that descriptor, a traced call, stop.
// Exits with 0 when the session got the zone, the read and the call's value. (The dup comes first: growing the descriptor table of a process
// with several threads, the collector among them, waits for an RCU grace
// period, ~10 ms.)
[[noreturn]] void child_main() {
    int code = 0;
    try {
        const int low = loupe::io::open("/dev/zero", O_RDONLY);
        const int high = low >= 0 ? loupe::io::dup2(low, child_high_fd) : -1;
        auto mem = std::make_shared<loupe::sinks::memory_sink>();
        loupe::session_config cfg;
        cfg.name = "child";
        cfg.kinds = loupe::kinds::zones | loupe::kinds::io | loupe::kinds::methods;
        cfg.metrics = {"cpu_time", "alloc_bytes"};
        cfg.params = "method=forkshop::Cart::add(Parcel const&,int); param=1; chain=field(weight)";
        cfg.sinks = {mem};
        reflect_parcels();
        auto session = loupe::start_session(cfg);
        {
            LOUPE_ZONE("fork_safety.child");
        }
        {
            LOUPE_ZONE_NAMED(std::string("fork_safety.named"));  // the zone-name interner's lock
        }
        forkshop::Crate crate;
        crate.weight = 7;
        forkshop::Cart().add(crate, 1);
        char byte = 1;
        const bool read_ok = high >= 0 && loupe::io::read(high, &byte, 1) == 1 && byte == 0;
        if (high >= 0) loupe::io::close(high);
        if (low >= 0) loupe::io::close(low);
        session.stop();
        bool zone = false, read = false, call = false, named = false;
        for (const auto& e : mem->events()) {
            zone = zone || (e.kind == loupe::record_kind::zone && e.name == "fork_safety.child");
            named = named || (e.kind == loupe::record_kind::zone && e.name == "fork_safety.named");
            read = read || (e.kind == loupe::record_kind::io && e.io.op == loupe::io::op::read);
            call = call || (e.has_method && e.name == forkshop::add_signature && e.params.size() == 1 &&
                            loupe::format_value(e.params[0]) == "7");
        }
        if (!read_ok) code = 2;
        else if (!zone) code = 3;
        else if (!read) code = 4;
        else if (!call) code = 6;
        else if (!named) code = 7;
    } catch (...) {
        code = 5;
    }
    ::_exit(code);
}

// Forks `forks` children one after the other while `churn_step` runs in a
// loop on churn_threads threads (each gets its index). The churn pauses
// while a child runs, so that the child gets the CPU, and resumes a little
// before the next fork.
template <class ChurnStep>
child_results fork_while(ChurnStep churn_step) {
    std::atomic<bool> stop{false}, paused{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < churn_threads; ++i) {
        threads.emplace_back([&, i] {
            while (!stop.load(std::memory_order_relaxed)) {
                if (paused.load(std::memory_order_relaxed)) {
                    sleep_for_us(100);
                    continue;
                }
                churn_step(i);
            }
        });
    }
    sleep_for_us(20000);  // the churn is under way
    child_results results;
    for (int i = 0; i < forks && results.hung < enough_hung; ++i) {
        const pid_t pid = ::fork();
        if (pid == 0) child_main();
        paused = true;
        ++results.forked;
        if (pid < 0) {
            ++results.failed;
        } else {
            await_child(pid, std::chrono::steady_clock::now() + child_timeout, results);
        }
        paused = false;
        sleep_for_us(500 + (i % 7) * 150);  // vary where in the churn the next fork lands
    }
    stop = true;
    for (auto& t : threads) t.join();
    return results;
}

// The registry's mutex: threads that attach and release metric blocks (short
// threads that add to a push metric), that define metrics, and that start and
// stop sessions recording metrics (their baselines and totals) and zones with
// new run-time names (the zone-name interner's lock).
TEST(ForkSafety, ChildrenForkedWhileThreadsUseTheMetricRegistryFinish) {
    const loupe::metric_id items = loupe::metric("fork_safety.items");
    std::atomic<int> named_zones{0};
    const child_results r = fork_while([&](int index) {
        if (index == 0) {  // attach a block, exit (the block is released)
            std::thread([&] { loupe::metric_add(items, 1); }).join();
        } else if (index == 1) {  // define (a lookup under the registry's mutex)
            for (int k = 0; k < 64; ++k) loupe::metric("fork_safety.items");
            std::thread([&] { loupe::metric_add(items, 1); }).join();
        } else {  // metric sessions: baselines at the start, totals at the stop
            auto mem = std::make_shared<loupe::sinks::memory_sink>();
            loupe::session_config cfg;
            cfg.name = "churn";
            cfg.kinds = loupe::kinds::zones;
            cfg.metrics = {"cpu_time", "alloc_bytes", "fork_safety.items"};
            cfg.sinks = {mem};
            auto session = loupe::start_session(cfg);
            {
                LOUPE_ZONE("fork_safety.churn");
                loupe::metric_add(items, 1);
            }
            for (int k = 0; k < 8; ++k) {  // new names take the interner's lock
                LOUPE_ZONE_NAMED("fork_safety.churn " + std::to_string(index) + "." + std::to_string(++named_zones));
            }
            session.stop();
        }
    });
    EXPECT_EQ(r.hung, 0) << "of " << r.forked << " children";
    EXPECT_EQ(r.failed, 0) << "of " << r.forked << " children; first: " << r.first_failure;
}

// The I/O registry's overflow map (descriptors from 256 up here) and its
// direct array: threads dup descriptors to high and low numbers and close
// them.
TEST(ForkSafety, ChildrenForkedWhileThreadsUseTheIoRegistryOverflowFinish) {
    ASSERT_TRUE(capacity_accepted);
    ASSERT_EQ(loupe::io::registry().capacity(), registry_capacity);
    int base[churn_threads];
    for (int& fd : base) {
        fd = loupe::io::open("/dev/null", O_RDONLY);
        ASSERT_GE(fd, 0);
    }
    const child_results r = fork_while([&](int index) {
        for (int k = 0; k < 16; ++k) {
            const int high = loupe::io::dup2(base[index], 300 + index * 16 + k);  // into the overflow map
            const int low = loupe::io::dup(base[index]);                          // into the direct array
            if (high >= 0) loupe::io::close(high);
            if (low >= 0) loupe::io::close(low);
        }
    });
    for (const int fd : base) loupe::io::close(fd);
    EXPECT_EQ(r.hung, 0) << "of " << r.forked << " children";
    EXPECT_EQ(r.failed, 0) << "of " << r.forked << " children; first: " << r.first_failure;
}

// Parameter tracing's locks: threads that start, change and stop sessions
// with parameter specs (the method registry, the sessions' spec logs), that
// register classes and bases (the reflection registry, the class graph; each
// registration makes every site rebind) and that make traced calls on
// receivers of two classes (binding, the receiver cache, type names).
TEST(ForkSafety, ChildrenForkedWhileThreadsTraceParametersFinish) {
    reflect_parcels();
    const child_results r = fork_while([&](int index) {
        forkshop::Cart cart;
        forkshop::Crate crate;
        forkshop::Parcel parcel;
        if (index == 0) {
            auto mem = std::make_shared<loupe::sinks::memory_sink>();
            loupe::session_config cfg;
            cfg.name = "churn";
            cfg.kinds = loupe::kinds::methods;
            cfg.params = parcel_specs;
            cfg.sinks = {mem};
            auto session = loupe::start_session(cfg);
            cart.add(crate, 1);
            session.set_params("method=forkshop::Cart::add(Parcel const&,int); param=2");
            cart.add(parcel, 2);
            session.stop();
        } else if (index == 1) {
            reflect_parcels();
        } else {
            for (int k = 0; k < 16; ++k) cart.add(k % 2 ? static_cast<const forkshop::Parcel&>(crate) : parcel, 1);
        }
    });
    EXPECT_EQ(r.hung, 0) << "of " << r.forked << " children";
    EXPECT_EQ(r.failed, 0) << "of " << r.forked << " children; first: " << r.first_failure;
}

// The clock's one calibration (~20 ms), run by the process's first wrapped
// open: a fresh process (this binary again, --clock-race-helper) starts
// threads that open files while its main thread forks children through the
// calibration. A helper exits with 1 when one of its children hung or
// failed, and says so on stderr.
constexpr int clock_helpers = 10;
constexpr int clock_forks_per_helper = forks / clock_helpers;

int clock_race_helper() {
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < churn_threads; ++i) {
        threads.emplace_back([&] {
            while (!go.load(std::memory_order_acquire)) {
            }
            const int fd = loupe::io::open("/dev/null", O_RDONLY);  // the first one calibrates
            if (fd >= 0) loupe::io::close(fd);
        });
    }
    go.store(true, std::memory_order_release);
    sleep_for_us(1000);  // a thread is calibrating now
    std::vector<pid_t> children;
    for (int i = 0; i < clock_forks_per_helper; ++i) {
        const pid_t pid = ::fork();
        if (pid == 0) child_main();
        if (pid > 0) children.push_back(pid);
        sleep_for_us(1000);  // spread over the calibration
    }
    const auto deadline = std::chrono::steady_clock::now() + child_timeout;
    child_results r;
    for (const pid_t pid : children) await_child(pid, deadline, r);
    r.failed += clock_forks_per_helper - static_cast<int>(children.size());
    for (auto& t : threads) t.join();
    if (r.hung + r.failed != 0) {
        std::fprintf(stderr, "clock race: %d of %d children hung, %d failed (first: %s)\n", r.hung,
                     clock_forks_per_helper, r.failed, r.first_failure.c_str());
    }
    return r.hung + r.failed;
}

TEST(ForkSafety, ChildrenForkedWhileTheClockCalibratesFinish) {
    int bad = 0;
    for (int h = 0; h < clock_helpers; ++h) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            char exe[] = "/proc/self/exe";
            char flag[] = "--clock-race-helper";
            char* argv[] = {exe, flag, nullptr};
            ::execv(exe, argv);
            ::_exit(127);
        }
        ASSERT_GT(pid, 0);
        child_results r;
        await_child(pid, std::chrono::steady_clock::now() + 2 * child_timeout + std::chrono::seconds(5), r);
        ASSERT_EQ(r.hung, 0) << "helper " << h << " did not finish";
        if (r.failed != 0) {
            bad = h + 1;
            break;  // the test fails anyway; each hung child costs child_timeout
        }
    }
    EXPECT_EQ(bad, 0) << "helper " << bad << " (of " << clock_helpers
                      << ") had children that hung or failed; see its line on stderr";
}

}  // namespace

int main(int argc, char** argv) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 1024 &&
        (limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= 1024)) {
        limit.rlim_cur = 1024;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
    if (argc == 2 && std::strcmp(argv[1], "--clock-race-helper") == 0) return clock_race_helper() == 0 ? 0 : 1;
    capacity_accepted = loupe::io::set_registry_capacity(registry_capacity);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
