// app_server: the loupe demo. A small HTTP/1.1 shop server on 127.0.0.1 with
// a worker pool, driven by a built-in load generator (users alice, bob and
// carol, two sessions each). Every request is annotated with its user,
// session, request id, app and endpoint. Mid-run, while the load goes on, a
// profiling session filtered to one user starts, records that user's
// requests only, and stops; the program then writes demo.loupe (for the
// loupe CLI) and demo.pftrace (open it in ui.perfetto.dev) and prints what
// an operator asks: that user's slowest requests, where their time went,
// their I/O by file and socket (the shop's files and the client sockets
// were opened before the session started; loupe's handle registry still
// names them), and what their requests cost besides wall time: the session
// records CPU time, allocations (every operator new/delete is counted, see
// LOUPE_COUNT_GLOBAL_ALLOCATIONS below) and the shop's own metric, items
// priced, each zone charged what its own thread did. Last, which parameter
// values made that user's calls slow: the session carries parameter specs
// (method parameter tracing) for the shop's traced methods — the table of
// every SQL statement (db::execute_sql, a compile-time chain selected with
// chain=@table) and the number of lines of every order priced
// (pricing::price, a runtime chain call(line_count) through the reflection
// registry) — and the program prints their time by value. Each request is
// also a flow from its client thread to the worker that serves it and back
// (its id travels in an X-Loupe-Flow header): the Perfetto trace draws the
// arrows, and the program prints how long each hop took.
// Finishes by itself in about a second.
//
// usage: app_server [--user NAME] [--requests-per-client N] [--out FILE]
//        (the Perfetto trace goes next to FILE, with .pftrace for .loupe)
#include <loupe/metrics/allocations.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/call_tree.hpp>
#include <loupe/report/flow_stats.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/report/param_stats.hpp>
#include <loupe/report/slowest.hpp>
#include <loupe/report/zone_stats.hpp>
#include <loupe/sinks/perfetto_sink.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "load_generator.hpp"
#include "server.hpp"

// Every operator new/delete of the demo counts into alloc_bytes and
// alloc_count, charged to the thread that allocates (exactly one TU).
LOUPE_COUNT_GLOBAL_ALLOCATIONS()

namespace {

struct options {
    std::string user = "alice";
    int requests_per_client = 2000;
    std::string out = "demo.loupe";
};

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "app_server: '%s' needs a value\n", arg.c_str());
            return false;
        }
        if (arg == "--user") {
            o.user = argv[++i];
        } else if (arg == "--requests-per-client") {
            o.requests_per_client = std::atoi(argv[++i]);
            if (o.requests_per_client < 3) {
                std::fprintf(stderr, "app_server: --requests-per-client '%s': expected a number >= 3\n", argv[i]);
                return false;
            }
        } else if (arg == "--out") {
            o.out = argv[++i];
        } else {
            std::fprintf(stderr, "app_server: unknown option '%s'\n", arg.c_str());
            return false;
        }
    }
    return true;
}

// The directory of `out` ("." when it has none): where the shop's files go.
std::string directory_of(const std::string& out) {
    const std::size_t slash = out.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : out.substr(0, slash);
}

// demo.loupe -> demo.pftrace; any other name gets .pftrace appended.
std::string perfetto_path(const std::string& out) {
    const std::string ext = ".loupe";
    if (out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0) {
        return out.substr(0, out.size() - ext.size()) + ".pftrace";
    }
    return out + ".pftrace";
}

// The rows of a tree report that belong to threads with zones under their
// root. A filtered session also records the push-metric totals of every
// thread that allocated while it ran (the load generator's clients, the
// workers serving other users): each a root alone, counted in `left_out`.
loupe::report::tree_report threads_with_zones(loupe::report::tree_report r, std::size_t& left_out) {
    std::vector<loupe::report::tree_row> kept;
    left_out = 0;
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
        const bool alone = r.rows[i].level == 0 && (i + 1 == r.rows.size() || r.rows[i + 1].level == 0);
        if (alone) {
            ++left_out;
        } else {
            kept.push_back(r.rows[i]);
        }
    }
    r.rows = std::move(kept);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: app_server [--user NAME] [--requests-per-client N] [--out FILE]\n");
        return 2;
    }
    LOUPE_THREAD_NAME("main");
    const auto started = std::chrono::steady_clock::now();
    try {
        app_server::server server(6, directory_of(o.out));
        std::printf("shop server on 127.0.0.1:%d, 6 workers; load: alice, bob, carol x 2 sessions x %d requests\n",
                    server.port(), o.requests_per_client);
        app_server::load_generator load(server.port(), o.requests_per_client);

        // Mid-run: profile one user's requests only, while everyone is served.
        // Every client pauses after a third of its requests; the session
        // starts there and stops when they have all done two thirds.
        load.wait_for_checkpoint(1);
        loupe::session_config config;
        config.name = "only-" + o.user;
        config.filter = (loupe::where::user == o.user).to_string();
        config.metrics = {"cpu_time", "alloc_bytes", "alloc_count", "shop.items_priced"};
        // Parameter specs (config.kinds is kinds::all, which includes
        // kinds::methods): the table of each statement, through the
        // compile-time chain registered at execute_sql's site, and the size
        // of each order priced, through a runtime chain that calls the getter
        // registered with loupe::reflect (shop.hpp).
        config.params =
            "method=app_server::db::execute_sql(std::string const&); chain=@table\n"
            "method=app_server::pricing::price(order const&); param=1; chain=call(line_count); name=lines\n";
        config.sinks = {std::make_shared<loupe::sinks::file_sink>(o.out),
                        std::make_shared<loupe::sinks::perfetto_sink>(perfetto_path(o.out))};
        loupe::session session = loupe::start_session(config);
        std::printf("session '%s' started after %llu requests, filter: %s\n", config.name.c_str(),
                    static_cast<unsigned long long>(load.completed()), config.filter.c_str());
        load.release(1);
        load.wait_for_checkpoint(2);
        const loupe::session_stats stats = session.stop();
        std::printf("session stopped after %llu requests: %llu events recorded, %llu dropped -> %s\n",
                    static_cast<unsigned long long>(load.completed()),
                    static_cast<unsigned long long>(stats.delivered), static_cast<unsigned long long>(stats.dropped),
                    o.out.c_str());
        std::printf("  and %s: open it in https://ui.perfetto.dev\n", perfetto_path(o.out).c_str());
        load.release(2);
        load.join();
        if (load.failed() != 0) {
            std::fprintf(stderr, "app_server: %llu requests failed\n", static_cast<unsigned long long>(load.failed()));
            return 1;
        }
        std::printf("served %llu requests in %.1f s\n\n", static_cast<unsigned long long>(server.requests_served()),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "app_server: %s\n", e.what());
        return 1;
    }

    try {
        const loupe::trace trace = loupe::read_trace_file(o.out);
        std::printf("== %s's slowest requests ==\n", o.user.c_str());
        std::fputs(loupe::report::format_slowest(loupe::report::slowest(trace, "handle_request", 5)).c_str(), stdout);
        std::printf("\n== where %s's time went, by endpoint (loupe stats %s --by component) ==\n", o.user.c_str(),
                    o.out.c_str());
        const auto by_endpoint = loupe::report::zone_stats(trace, loupe::report::group_by::component);
        std::fputs(loupe::report::format_zone_stats(by_endpoint).c_str(), stdout);
        std::printf("\n== %s's file I/O (loupe report %s --io) ==\n", o.user.c_str(), o.out.c_str());
        std::fputs(loupe::report::format_io_stats(loupe::report::io_stats(trace, loupe::report::io_group::file)).c_str(),
                   stdout);
        std::printf("\n== %s's I/O by zone (loupe report %s --io --by zone) ==\n", o.user.c_str(), o.out.c_str());
        std::fputs(loupe::report::format_io_stats(loupe::report::io_stats(trace, loupe::report::io_group::zone)).c_str(),
                   stdout);
        // What the user's requests cost besides wall time, each charged to
        // the thread that did the work (the session's metrics).
        const loupe::report::call_tree tree = loupe::report::build_call_tree(trace);
        std::printf("\n== %s's CPU time by routine (loupe report %s --flat --metric cpu_time) ==\n", o.user.c_str(),
                    o.out.c_str());
        std::fputs(loupe::report::format_flat_report(loupe::report::report_flat(tree, "cpu_time"),
                                                     loupe::report::time_format::human)
                       .c_str(),
                   stdout);
        std::printf("\n== %s's allocations by call path (loupe report %s --tree --metric alloc_bytes) ==\n",
                    o.user.c_str(), o.out.c_str());
        std::size_t other_threads = 0;
        const auto by_bytes = threads_with_zones(loupe::report::report_tree(tree, "alloc_bytes"), other_threads);
        std::fputs(loupe::report::format_tree_report(by_bytes).c_str(), stdout);
        if (other_threads != 0) {
            std::printf("(%zu more threads ran none of %s's zones: each a root alone, holding what it allocated)\n",
                        other_threads, o.user.c_str());
        }
        std::printf("\n== items priced at %s's checkouts (loupe report %s --flat --metric shop.items_priced) ==\n",
                    o.user.c_str(), o.out.c_str());
        auto items = loupe::report::report_flat(tree, "shop.items_priced");
        items.routines.erase(std::remove_if(items.routines.begin(), items.routines.end(),
                                            [](const loupe::report::cost_line& l) { return l.cum == 0; }),
                             items.routines.end());  // the routines that priced nothing
        if (items.routines.empty()) {
            std::printf("%s checked out nothing while the session ran\n", o.user.c_str());
        } else {
            std::fputs(loupe::report::format_flat_report(items).c_str(), stdout);
        }
        std::printf("\n== %s's time by parameter value (loupe stats %s --params) ==\n", o.user.c_str(), o.out.c_str());
        std::fputs(loupe::report::format_param_stats(loupe::report::param_stats(trace, 5)).c_str(), stdout);
        std::printf("\n== %s's requests from client to worker and back (loupe stats %s --flows) ==\n",
                    o.user.c_str(), o.out.c_str());
        std::fputs(loupe::report::format_flow_stats(loupe::report::flow_stats(trace)).c_str(), stdout);
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "app_server: %s\n", e.what());
        return 1;
    }
    return 0;
}
