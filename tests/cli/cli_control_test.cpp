// `loupe ps|start|set|stop|status|record` against real processes: forked
// children of this test that listen (loupe::control::listen) and record
// zones for alice and bob.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <loupe/format/reader.hpp>
#include <loupe/format/trace_set.hpp>

#include "support/cli_process.hpp"
#include "support/control_child.hpp"

using namespace loupe_test;

TEST(CliControlFork, PsStartSetStopAgainstARunningProcess) {
    temp_folder runtime("cli_control");
    std::filesystem::create_directory(runtime / "out");
    const std::string sockets = runtime / "loupe";
    listening_child child(sockets, runtime / "out");
    const std::string pid = std::to_string(child.pid());

    const run_result ps = run_loupe_in(runtime.path(), "ps");
    ASSERT_EQ(ps.status, 0) << ps.err;
    EXPECT_NE(ps.out.find("PID"), std::string::npos) << ps.out;
    EXPECT_NE(ps.out.find(pid + " "), std::string::npos) << ps.out;

    const run_result start =
        run_loupe_in(runtime.path(), "start " + pid +
                                         " --name alice --kinds zones --filter 'user == \"alice\"' -o "
                                         "alice.loupe");
    ASSERT_EQ(start.status, 0) << start.err;
    EXPECT_NE(start.out.find("started session alice in process " + pid), std::string::npos) << start.out;

    const run_result status = run_loupe_in(runtime.path(), "status " + pid);
    ASSERT_EQ(status.status, 0) << status.err;
    EXPECT_NE(status.out.find("alice  running"), std::string::npos) << status.out;

    // --memory-budget reaches the process, which checks it.
    const run_result budget = run_loupe_in(runtime.path(), "start " + pid + " --name fixed --memory-budget 0 -o fixed.loupe");
    EXPECT_EQ(budget.status, 0) << budget.err;
    EXPECT_EQ(run_loupe_in(runtime.path(), "stop " + pid + " fixed").status, 0);
    const run_result bad_budget =
        run_loupe_in(runtime.path(), "start " + pid + " --name over --memory-budget 12x -o over.loupe");
    EXPECT_EQ(bad_budget.status, 1);
    EXPECT_NE(bad_budget.err.find("memory_budget '12x'"), std::string::npos) << bad_budget.err;

    const run_result bad_set = run_loupe_in(runtime.path(), "set " + pid + " alice --filter 'user =='");
    EXPECT_EQ(bad_set.status, 1);
    EXPECT_NE(bad_set.err.find("loupe: process " + pid + ": "), std::string::npos) << bad_set.err;
    const run_result set =
        run_loupe_in(runtime.path(), "set " + pid + " alice --filter 'user == \"alice\" || user == \"carol\"'");
    EXPECT_EQ(set.status, 0) << set.err;
    const run_result rules =
        run_loupe_in(runtime.path(), "set " + pid + " alice --task-rules 'tag peer=inventory*; skip all'");
    EXPECT_EQ(rules.status, 0) << rules.err;
    const run_result bad_rules = run_loupe_in(runtime.path(), "set " + pid + " alice --task-rules 'tag peer'");
    EXPECT_EQ(bad_rules.status, 1);
    EXPECT_NE(bad_rules.err.find("task rules, line 1 column 9"), std::string::npos) << bad_rules.err;

    const run_result stop = run_loupe_in(runtime.path(), "stop " + pid + " alice");
    ASSERT_EQ(stop.status, 0) << stop.err;
    EXPECT_NE(stop.out.find("stopped session alice"), std::string::npos) << stop.out;
    const loupe::trace t = loupe::read_trace_file(runtime / "out/alice.loupe");
    EXPECT_TRUE(t.complete);
    const std::vector<named_zone> zones = zones_of(t);
    EXPECT_FALSE(zones.empty());
    for (const named_zone& z : zones) EXPECT_EQ(z.name, "alice_work");

    // The file is readable by the trace commands too.
    const run_result stats = run_loupe_in(runtime.path(), "stats '" + (runtime / "out/alice.loupe") + "'");
    EXPECT_EQ(stats.status, 0) << stats.err;
    EXPECT_NE(stats.out.find("alice_work"), std::string::npos);
}

// record: one session in each process, stopped together, the traces
// collected into one directory; a process that cannot be reached is named,
// the others are still recorded, and the exit status says so.
TEST(CliControlFork, RecordCollectsATraceFromEveryProcess) {
    temp_folder runtime("cli_record");
    std::filesystem::create_directory(runtime / "out1");
    std::filesystem::create_directory(runtime / "out2");
    const std::string sockets = runtime / "loupe";
    listening_child first(sockets, runtime / "out1");
    listening_child second(sockets, runtime / "out2");
    const std::string pids = std::to_string(first.pid()) + "," + std::to_string(second.pid());
    const std::string run = runtime / "run";

    const run_result r =
        run_loupe_in(runtime.path(), "record --pids " + pids +
                                         " --for 300ms --kinds zones --filter 'user == \"alice\"' -o '" + run + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("recorded 2 of 2 processes for 0.3 s"), std::string::npos) << r.out;
    std::size_t traces = 0;
    for (const auto& entry : std::filesystem::directory_iterator(run)) {
        const std::string name = entry.path().filename().string();
        if (name == "merged.loupe" || name == "merged.pftrace") continue;  // both joined by task, below
        ++traces;
        EXPECT_TRUE(name.find(std::to_string(first.pid())) != std::string::npos ||
                    name.find(std::to_string(second.pid())) != std::string::npos)
            << name;
        const loupe::trace t = loupe::read_trace_file(entry.path().string());
        EXPECT_TRUE(t.complete) << name;
        const std::vector<named_zone> zones = zones_of(t);
        EXPECT_FALSE(zones.empty()) << name;
        for (const named_zone& z : zones) EXPECT_EQ(z.name, "alice_work") << name;
    }
    EXPECT_EQ(traces, 2u);
    // The traces joined by task (loupe merge), next to them: a set of both.
    EXPECT_NE(r.err.find("loupe: merged 2 traces"), std::string::npos) << r.err;
    EXPECT_EQ(loupe::read_trace_set_file((std::filesystem::path(run) / "merged.loupe").string()).size(), 2u);
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(run) / "merged.pftrace"));

    const run_result partly = run_loupe_in(
        runtime.path(), "record " + std::to_string(first.pid()) + " 4194304 --for 100ms -o '" + run + "2'");
    EXPECT_EQ(partly.status, 1);
    EXPECT_EQ(partly.err.rfind("loupe: process 4194304: ", 0), 0u) << partly.err;
    EXPECT_NE(partly.out.find("recorded 1 of 2 processes"), std::string::npos) << partly.out;

    const run_result usage = run_loupe_in(runtime.path(), "record --pids " + pids + " -o '" + run + "'");
    EXPECT_EQ(usage.status, 2);
    EXPECT_EQ(usage.err, "loupe: record needs --for DURATION (e.g. 5s)\ntry 'loupe record --help'\n");
}

TEST(CliControlFork, AnUnreachableProcessIsNamedAndExitsOne) {
    temp_folder runtime("cli_control_gone");
    // A pid that cannot exist (above pid_max's limit).
    const run_result stop = run_loupe_in(runtime.path(), "stop 4194304 x");
    EXPECT_EQ(stop.status, 1);
    EXPECT_EQ(stop.err.rfind("loupe: process 4194304: ", 0), 0u) << stop.err;
    const run_result status = run_loupe_in(runtime.path(), "status 4194304");
    EXPECT_EQ(status.status, 1);
    EXPECT_NE(status.err.find("process 4194304"), std::string::npos) << status.err;
    // A stale socket (its process is gone) is skipped by ps.
    std::filesystem::create_directory(runtime / "loupe");
    ::chmod((runtime / "loupe").c_str(), 0700);
    { listening_child child(runtime / "loupe", runtime.path()); }  // killed: its socket stays behind
    const run_result ps = run_loupe_in(runtime.path(), "ps");
    EXPECT_EQ(ps.status, 0) << ps.err;
    EXPECT_EQ(ps.out, "PID      PROGRAM          SESSIONS NAMES\n");
    // Bad usage.
    const run_result usage = run_loupe_in(runtime.path(), "start 12");
    EXPECT_EQ(usage.status, 2);
    EXPECT_EQ(usage.err,
              "loupe: start needs -o FILE (inside the process's output directory)\ntry 'loupe start --help'\n");
}
