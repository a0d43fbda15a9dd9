// `loupe` against programs run as their users run them: a program that
// never calls listen() made to listen by LOUPE_CONTROL=1 (listening_program.cpp),
// 100 sessions started and stopped from the CLI while it serves load, and
// `app_server --serve` recorded from "another terminal" as the README shows.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <loupe/format/reader.hpp>
#include <loupe/format/trace_set.hpp>

#include "support/cli_process.hpp"
#include "support/control_child.hpp"
#include "support/spawned_program.hpp"

using namespace loupe_test;

namespace {

// listening_program with XDG_RUNTIME_DIR = `runtime` and `env` besides.
spawned_program listening_program(const temp_folder& runtime, std::vector<std::string> env) {
    env.push_back("XDG_RUNTIME_DIR=" + runtime.path());
    return spawned_program(LOUPE_LISTENING_PROGRAM_PATH, {}, env);
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// "delivered N, dropped M" in a `loupe stop` reply.
bool stop_counts(const std::string& out, unsigned long long& delivered, unsigned long long& dropped) {
    const std::size_t at = out.find("delivered ");
    return at != std::string::npos && std::sscanf(out.c_str() + at, "delivered %llu, dropped %llu", &delivered, &dropped) == 2;
}

}  // namespace

TEST(CliListening, LoupeControlOneMakesAProgramListenWithoutACodeChange) {
    temp_folder runtime("cli_env_listen");
    std::filesystem::create_directory(runtime / "out");
    spawned_program program = listening_program(
        runtime, {"LOUPE_CONTROL=1", "LOUPE_CONTROL_OUTPUT=" + (runtime / "out"), "OTEL_SERVICE_NAME=checkout"});
    const std::string pid = std::to_string(program.pid());
    const std::string socket = runtime / ("loupe/" + pid + ".sock");
    EXPECT_EQ(program.read_line(), socket);

    const run_result ps = run_loupe_in(runtime.path(), "ps");
    ASSERT_EQ(ps.status, 0) << ps.err;
    EXPECT_NE(ps.out.find(pid + " "), std::string::npos) << ps.out;
    EXPECT_NE(ps.out.find(" checkout"), std::string::npos) << ps.out;  // its name, from OTEL_SERVICE_NAME

    const std::string run = runtime / "run";
    const run_result r =
        run_loupe_in(runtime.path(), "record --pids " + pid + " --for 200ms --kinds zones --name rec -o '" + run + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    // The one process's name is the rules' profiled list.
    EXPECT_NE(r.out.find("task rules: profiled \"checkout\"; tag profiled"), std::string::npos) << r.out;
    const loupe::trace t = loupe::read_trace_file(run + "/checkout-" + pid + ".loupe");  // named by its name
    EXPECT_TRUE(t.complete);
    EXPECT_FALSE(zones_of(t).empty());
    // The process wrote it under LOUPE_CONTROL_OUTPUT first.
    EXPECT_TRUE(exists(runtime / ("out/rec-" + pid + ".loupe")));

    program.close_stdin();
    EXPECT_EQ(program.wait(), 0) << program.error_output();
    EXPECT_FALSE(exists(socket)) << "the socket is removed at exit";
    EXPECT_EQ(program.error_output(), "");
}

TEST(CliListening, BadLoupeControlValuesAreNamedAndTheProgramRunsOn) {
    temp_folder runtime("cli_env_bad");
    struct case_t {
        std::vector<std::string> env;
        std::string stderr_part;  // "" : nothing on stderr
    };
    const case_t cases[] = {
        {{"LOUPE_CONTROL=yes"}, "loupe: LOUPE_CONTROL='yes': expected 1 (listen) or 0; not listening\n"},
        {{"LOUPE_CONTROL=0"}, ""},
        {{"LOUPE_CONTROL="}, ""},
        {{"LOUPE_CONTROL=1", "LOUPE_CONTROL_OUTPUT=" + (runtime / "missing")},
         "loupe: LOUPE_CONTROL=1: output directory " + (runtime / "missing") + ": No such file or directory; not listening\n"},
        {{"LOUPE_CONTROL=1", "OTEL_SERVICE_NAME=bad\tname"}, "listen_options::names[0] ('bad\tname'): expected 1 to 255 printable bytes; not listening"},
    };
    for (const case_t& c : cases) {
        spawned_program program = listening_program(runtime, c.env);
        EXPECT_EQ(program.read_line(), "not listening") << c.env[0];
        program.close_stdin();
        EXPECT_EQ(program.wait(), 0) << c.env[0];
        if (c.stderr_part.empty()) {
            EXPECT_EQ(program.error_output(), "") << c.env[0];
        } else {
            EXPECT_NE(program.error_output().find(c.stderr_part), std::string::npos) << program.error_output();
        }
    }
}

// 100 sessions started and stopped from the CLI while the program records
// on two threads: every session's file is complete, holds what the stop
// reply says was delivered, and each thread's zones in it are a run of its
// sequence numbers whose gaps are no more than the drops it counts (the
// zones produced while the session ran = delivered + dropped).
TEST(CliListening, HundredStartStopCyclesUnderLoadLoseNothingUncounted) {
    temp_folder runtime("cli_cycles");
    std::filesystem::create_directory(runtime / "out");
    spawned_program program =
        listening_program(runtime, {"LOUPE_CONTROL=1", "LOUPE_CONTROL_OUTPUT=" + (runtime / "out")});
    ASSERT_NE(program.read_line(), "not listening") << program.error_output();
    const std::string pid = std::to_string(program.pid());
    unsigned long long total_delivered = 0, total_dropped = 0;
    for (int i = 0; i < 100; ++i) {
        const std::string name = "c" + std::to_string(i);
        const run_result start =
            run_loupe_in(runtime.path(), "start " + pid + " --name " + name + " --kinds zones -o " + name + ".loupe");
        ASSERT_EQ(start.status, 0) << i << ": " << start.err;
        const run_result stop = run_loupe_in(runtime.path(), "stop " + pid + " " + name);
        ASSERT_EQ(stop.status, 0) << i << ": " << stop.err;
        unsigned long long delivered = 0, dropped = 0;
        ASSERT_TRUE(stop_counts(stop.out, delivered, dropped)) << stop.out;
        const loupe::trace t = loupe::read_trace_file(runtime / ("out/" + name + ".loupe"));
        ASSERT_TRUE(t.complete) << name;
        // Delivered: the events routed to the file, each zone argument
        // counted as one (also those of a zone that ended after the stop).
        EXPECT_EQ(t.events.size() + t.zone_args.size() + t.zone_args_without_zone, delivered) << name;
        EXPECT_EQ(t.dropped_total(), dropped) << name;
        std::map<std::uint64_t, std::set<std::int64_t>> seqs;  // by thread
        for (const loupe::trace_event& e : t.events) {
            for (const loupe::trace_zone_argument& a : t.args_of(e)) {
                if (a.key == "seq") {
                    EXPECT_TRUE(seqs[e.thread_id].insert(a.value.as_int()).second) << "repeated";
                }
            }
        }
        std::uint64_t gaps = 0;
        for (const auto& [thread, s] : seqs) gaps += static_cast<std::uint64_t>(*s.rbegin() - *s.begin() + 1) - s.size();
        EXPECT_LE(gaps, dropped) << name;
        total_delivered += delivered;
        total_dropped += dropped;
    }
    EXPECT_GT(total_delivered, 0u);
    std::printf("100 cycles: %llu zones delivered, %llu dropped\n", total_delivered, total_dropped);
    const run_result status = run_loupe_in(runtime.path(), "status " + pid);
    EXPECT_EQ(status.status, 0) << status.err;
    EXPECT_EQ(status.out.find("running"), std::string::npos) << "no session left running";
    program.close_stdin();
    EXPECT_EQ(program.wait(), 0) << program.error_output();
}

// The README's tour: `app_server --serve` in one terminal, `loupe ps` and
// `loupe record` in another; the merged outputs join the front end's
// checkouts to the inventory's requests.
TEST(CliListening, RecordTheServingDemoFromAnotherTerminal) {
#ifndef LOUPE_APP_SERVER_PATH
    GTEST_SKIP() << "the examples are not built (LOUPE_BUILD_EXAMPLES=OFF)";
#else
    temp_folder runtime("cli_serve");
    std::filesystem::create_directory(runtime / "out");
    spawned_program server(LOUPE_APP_SERVER_PATH, {"--serve", "--dir", runtime / "out"},
                           {"XDG_RUNTIME_DIR=" + runtime.path()});
    long front = 0, inventory = 0, payment = 0;
    const std::string first = server.read_line();
    ASSERT_EQ(std::sscanf(first.c_str(), "serving: front end pid %ld on 127.0.0.1:%*d, inventory pid %ld, payment pid %ld",
                          &front, &inventory, &payment),
              3)
        << first;
    const run_result ps = run_loupe_in(runtime.path(), "ps");
    ASSERT_EQ(ps.status, 0) << ps.err;
    EXPECT_NE(ps.out.find(std::to_string(front) + " "), std::string::npos) << ps.out;
    EXPECT_NE(ps.out.find(" frontend"), std::string::npos) << ps.out;
    EXPECT_NE(ps.out.find(" inventory"), std::string::npos) << ps.out;
    EXPECT_EQ(ps.out.find(std::to_string(payment) + " "), std::string::npos) << "payment does not listen";

    const std::string run = runtime / "run";
    const run_result r =
        run_loupe_in(runtime.path(), "record --pids " + std::to_string(front) + "," + std::to_string(inventory) +
                                         " --filter 'user == \"alice\"' --for 1s -o '" + run + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("task rules: profiled \"frontend\", \"inventory\"; tag profiled"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("recorded 2 of 2 processes"), std::string::npos) << r.out;
    ASSERT_EQ(loupe::read_trace_set_file(run + "/merged.loupe").size(), 2u);
    EXPECT_TRUE(exists(run + "/frontend-" + std::to_string(front) + ".loupe"));
    EXPECT_TRUE(exists(run + "/inventory-" + std::to_string(inventory) + ".loupe"));
    EXPECT_GT(std::filesystem::file_size(run + "/merged.pftrace"), 1000u);
    // Only alice's requests, in both processes.
    for (const auto& entry : std::filesystem::directory_iterator(run)) {
        const std::string file = entry.path().filename().string();
        if (file.rfind("merged", 0) == 0) continue;
        const loupe::trace t = loupe::read_trace_file(entry.path().string());
        std::size_t with_user = 0;
        for (const loupe::trace_event& e : t.events) {
            const loupe::trace_context* c = t.context_of(e);
            if (c == nullptr || c->get(loupe::context_field::user).empty()) continue;
            EXPECT_EQ(c->get(loupe::context_field::user), "alice") << file;
            ++with_user;
        }
        EXPECT_GT(with_user, 0u) << file;
    }
    // The checkouts' calls to the inventory joined across the two processes;
    // the payment calls untagged (payment is not recorded).
    const run_result tasks = run_loupe_in(runtime.path(), "report '" + run + "/merged.loupe' --tasks");
    ASSERT_EQ(tasks.status, 0) << tasks.err;
    EXPECT_NE(tasks.out.find("GET /stock  from app_server"), std::string::npos) << tasks.out;

    // One session in the front end, its filter changed while it runs: alice,
    // then bob too; never carol.
    const std::string fe = std::to_string(front);
    const run_result start =
        run_loupe_in(runtime.path(), "start " + fe + " --name who --filter 'user == \"alice\"' -o who.loupe");
    ASSERT_EQ(start.status, 0) << start.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const run_result set = run_loupe_in(runtime.path(), "set " + fe + " who --filter 'user in [\"alice\", \"bob\"]'");
    ASSERT_EQ(set.status, 0) << set.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const run_result stop = run_loupe_in(runtime.path(), "stop " + fe + " who");
    ASSERT_EQ(stop.status, 0) << stop.err;
    const loupe::trace who = loupe::read_trace_file(runtime / "out/who.loupe");
    std::map<std::string, std::size_t> users;
    std::uint64_t first_bob = ~std::uint64_t{0}, last_alice = 0;
    for (const loupe::trace_event& e : who.events) {
        const loupe::trace_context* c = who.context_of(e);
        if (c == nullptr || c->get(loupe::context_field::user).empty()) continue;
        const std::string& user = c->get(loupe::context_field::user);
        ++users[user];
        if (user == "bob") first_bob = std::min<std::uint64_t>(first_bob, e.begin_ns);
        if (user == "alice") last_alice = std::max<std::uint64_t>(last_alice, e.begin_ns);
    }
    EXPECT_GT(users["alice"], 0u);
    EXPECT_GT(users["bob"], 0u);
    EXPECT_EQ(users.count("carol"), 0u);
    EXPECT_GT(first_bob - who.session.start_ns, 250'000'000u) << "bob only after the filter changed";
    EXPECT_GT(last_alice, first_bob) << "alice before and after";

    ASSERT_EQ(::kill(static_cast<pid_t>(front), SIGINT), 0);
    EXPECT_EQ(server.wait(), 0) << server.error_output();
#endif
}
