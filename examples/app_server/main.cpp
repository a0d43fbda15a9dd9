// app_server: the loupe demo. A small HTTP/1.1 shop on 127.0.0.1 in three
// processes: the front end (this process: a server with a worker pool,
// driven by a built-in load generator, users alice, bob and carol, two
// sessions each), an inventory service and a payment service, the same
// binary run with --role (services.hpp, processes.hpp). A checkout calls
// both services over HTTP with the W3C traceparent header, so each request
// is a task across processes (loupe/tasks.hpp). Every request is annotated
// with its user, session, request id, app and endpoint, in the front end
// and in the inventory. Mid-run, while the load goes on, a profiling session
// filtered to one user starts in the front end and, through its control
// endpoint (loupe::control::listen, loupe::remote), in the inventory
// process; the payment process is not profiled. Both sessions record that
// user's requests only and stop; the program then prints what an operator
// asks: that user's slowest requests, where their time went, their I/O by
// file and socket (the shop's files and the client sockets were opened
// before the session started; loupe's handle registry still names them),
// and what their requests cost besides wall time: the session records CPU
// time, allocations (every operator new/delete is counted, see
// LOUPE_COUNT_GLOBAL_ALLOCATIONS below) and the shop's own metric, items
// priced, each zone charged what its own thread did. Then which parameter
// values made that user's calls slow: the session carries parameter specs
// (method parameter tracing) for the shop's traced methods — the table of
// every SQL statement (db::execute_sql, a compile-time chain selected with
// chain=@table) and the number of lines of every order priced
// (pricing::price, a runtime chain call(line_count) through the reflection
// registry) — and the program prints their time by value. Each request is
// also a flow from its client thread to the worker that serves it and back
// (its id travels in an X-Loupe-Flow header), and the program prints how
// long each hop took. Last, it joins the two processes' traces by task
// (loupe merge's library: report/task_join.hpp) and prints the user's
// slowest task as a tree across processes, the payment call opaque, and
// writes the merged Perfetto trace: both processes on one timeline, arrows
// from each call to the request it made in the other process.
// Finishes by itself in about a second.
//
// usage: app_server [--user NAME] [--requests-per-client N] [--out FILE]
//        (the inventory's trace goes next to FILE as inventory.loupe, the
//        Perfetto trace next to it with .pftrace for .loupe)
//        app_server --serve [--dir DIR]   the same three processes and a paced
//        load (six clients, a request each per millisecond or so), no session
//        of its own: the front end and the inventory listen for `loupe`
//        (traces under DIR, default the working directory) and serve until
//        SIGINT, SIGTERM or SIGHUP
//        app_server --serve --otlp URL   also sends alice's requests in the
//        front end and the inventory to an OpenTelemetry collector while they
//        serve (live_export.hpp), e.g. --otlp http://127.0.0.1:4318/v1/traces
//        app_server --role inventory|payment --dir DIR [--otlp URL]   (the front end runs these)
#include <loupe/metrics/allocations.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/call_tree.hpp>
#include <loupe/report/flow_stats.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/report/param_stats.hpp>
#include <loupe/report/slowest.hpp>
#include <loupe/report/task_join.hpp>
#include <loupe/report/task_report.hpp>
#include <loupe/report/task_slices.hpp>
#include <loupe/report/zone_stats.hpp>
#include <loupe/control/listen.hpp>
#include <loupe/remote/client.hpp>
#include <loupe/remote/protocol.hpp>
#include <loupe/export/otlp_http.hpp>
#include <loupe/remote/reply.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <optional>
#include <vector>

#include "live_export.hpp"
#include "load_generator.hpp"
#include "processes.hpp"
#include "server.hpp"
#include "services.hpp"

// Every operator new/delete of the demo counts into alloc_bytes and
// alloc_count, charged to the thread that allocates (exactly one TU).
LOUPE_COUNT_GLOBAL_ALLOCATIONS()

namespace {

struct options {
    bool serve = false;
    std::string dir = ".";  // --serve: where remote sessions write
    std::string user = "alice";
    int requests_per_client = 2000;
    std::string out = "demo.loupe";
    std::string otlp;  // --serve --otlp URL: the collector that live_export sends to
};

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--serve") {
            o.serve = true;
            continue;
        }
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
        } else if (arg == "--dir") {
            o.dir = argv[++i];
        } else if (arg == "--otlp") {
            o.otlp = argv[++i];
            const std::string problem = loupe::exporter::check_endpoint(o.otlp);
            if (!problem.empty()) {
                std::fprintf(stderr, "app_server: --otlp '%s': %s\n", o.otlp.c_str(), problem.c_str());
                return false;
            }
        } else {
            std::fprintf(stderr, "app_server: unknown option '%s'\n", arg.c_str());
            return false;
        }
    }
    if (!o.otlp.empty() && !o.serve) {
        std::fprintf(stderr, "app_server: --otlp goes with --serve\n");
        return false;
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

// `name` in the directory of `out` (no "./" when `out` has none).
std::string next_to(const std::string& out, const std::string& name) {
    const std::string dir = directory_of(out);
    return out.find('/') == std::string::npos ? name : dir == "/" ? "/" + name : dir + "/" + name;
}

// One request to the control endpoint of process `pid`; returns its reply.
// Throws loupe::error when it cannot be sent or the reply is an error.
loupe::remote::json_value control_request(pid_t pid, const std::string& line) {
    loupe::remote::connection endpoint(pid);
    loupe::remote::json_value reply = loupe::remote::parse_reply(endpoint.exchange(line));
    if (!reply.flag("ok")) throw loupe::error(reply.str("error", "failed"));
    return reply;
}

// The task that took longest among those that reached another process
// (else among all); forest.tasks.size() when there is none.
std::size_t slowest_task(const loupe::report::task_report& r) {
    std::size_t best = r.forest.tasks.size();
    const auto duration = [&](std::size_t t) { return r.forest.nodes[r.tasks[t].root].duration_ns(); };
    for (int pass = 0; pass < 2 && best == r.forest.tasks.size(); ++pass) {
        for (std::size_t t = 0; t < r.forest.tasks.size(); ++t) {
            if (r.tasks[t].root == loupe::report::no_task_node) continue;
            if (pass == 0 && r.forest.tasks[t].processes < 2) continue;
            if (best == r.forest.tasks.size() || duration(t) > duration(best)) best = t;
        }
    }
    return best;
}

// Writes `bytes` to `path`; throws loupe::error naming it.
void write_file(const std::string& path, const std::string& bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) throw loupe::error("cannot open '" + path + "' for writing: " + std::strerror(errno));
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const int e = errno;
    if (std::fclose(f) != 0 || !written) {
        throw loupe::error("cannot write '" + path + "': " + std::strerror(written ? errno : e));
    }
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

// Stops the two services (closes their stdin, reaps them); false, said on
// stderr, when one did not end well.
bool stop_services(app_server::child_process& inventory, app_server::child_process& payment) {
    for (app_server::child_process* child : {&inventory, &payment}) {
        const std::string how = child->stop();
        if (!how.empty()) {
            std::fprintf(stderr, "app_server: the %s process (pid %d) %s\n", child->role().c_str(),
                         static_cast<int>(child->pid()), how.c_str());
            return false;
        }
    }
    return true;
}

// `app_server --serve`: the shop and its load without a session, for
// `loupe ps` / `loupe record` from another terminal. Returns the exit status.
int serve(const options& o) {
    // The stop signals, taken with sigwait: blocked before any thread starts
    // (every thread inherits the mask; the services are spawned with none).
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, s);
    if (::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) != 0) {
        std::fprintf(stderr, "app_server: cannot block the stop signals\n");
        return 1;
    }
    try {
        const std::vector<std::string> inventory_args =
            o.otlp.empty() ? std::vector<std::string>{} : std::vector<std::string>{"--otlp", o.otlp};
        app_server::child_process inventory("inventory", o.dir, inventory_args);
        app_server::child_process payment("payment", o.dir);
        const int inventory_port = inventory.wait_until_listening(std::chrono::seconds(5));
        const int payment_port = payment.wait_until_listening(std::chrono::seconds(5));
        app_server::server server(6, o.dir, inventory_port, payment_port);
        loupe::control::listen_options control;
        control.output_directory = o.dir;
        control.names = {"frontend"};
        const loupe::control::endpoint e = loupe::control::listen(control);
        std::optional<app_server::live_export> live;
        if (!o.otlp.empty()) live.emplace(o.otlp, "frontend");
        app_server::load_generator load(server.port(), 0, std::chrono::milliseconds(1));
        const long front = static_cast<long>(::getpid());
        std::printf("serving: front end pid %ld on 127.0.0.1:%d, inventory pid %ld, payment pid %ld (not "
                    "profiled)\n  alice, bob and carol x 2 sessions, a request each per millisecond or so\n"
                    "  control endpoints: %s and the inventory's; traces go to %s\n"
                    "  try: loupe ps\n"
                    "       loupe record --pids %ld,%ld --filter 'user == \"alice\"' --for 3s -o run/\n"
                    "  stop with Ctrl-C\n",
                    front, server.port(), static_cast<long>(inventory.pid()), static_cast<long>(payment.pid()),
                    e.socket_path.c_str(), e.output_directory.c_str(), front, static_cast<long>(inventory.pid()));
        if (live) std::printf("  sending alice's requests in frontend and inventory to %s\n", o.otlp.c_str());
        std::fflush(stdout);
        int signal = 0;
        ::sigwait(&stop_signals, &signal);
        load.cancel();
        load.join();
        if (live) std::printf("%s\n", live->stop().c_str());
        loupe::control::stop_listening();  // sessions still running are stopped, their files complete
        std::printf("stopped by signal %d after %llu requests (%llu failed)\n", signal,
                    static_cast<unsigned long long>(load.completed()), static_cast<unsigned long long>(load.failed()));
        if (!stop_services(inventory, payment)) return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "app_server: %s\n", e.what());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "--role") == 0) return app_server::run_role(argc, argv);
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: app_server [--user NAME] [--requests-per-client N] [--out FILE]\n"
                             "       app_server --serve [--dir DIR] [--otlp URL]\n");
        return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);  // a service that goes away is an error to handle, not a signal
    LOUPE_THREAD_NAME("main");
    if (o.serve) return serve(o);
    const auto started = std::chrono::steady_clock::now();
    const std::string inventory_out = next_to(o.out, "inventory.loupe");
    try {
        // The other two processes first (before any thread of ours), then the front end.
        app_server::child_process inventory("inventory", directory_of(o.out));
        app_server::child_process payment("payment", directory_of(o.out));
        const int inventory_port = inventory.wait_until_listening(std::chrono::seconds(5));
        const int payment_port = payment.wait_until_listening(std::chrono::seconds(5));
        {
            app_server::server server(6, directory_of(o.out), inventory_port, payment_port);
            std::printf("shop front end on 127.0.0.1:%d, 6 workers; inventory (pid %d) on 127.0.0.1:%d, profiled; "
                        "payment (pid %d) on 127.0.0.1:%d, not profiled\n",
                        server.port(), static_cast<int>(inventory.pid()), inventory_port,
                        static_cast<int>(payment.pid()), payment_port);
            std::printf("load: alice, bob, carol x 2 sessions x %d requests\n", o.requests_per_client);
            app_server::load_generator load(server.port(), o.requests_per_client);

            // Mid-run: profile one user's requests only, while everyone is served.
            // Every client pauses after a third of its requests; the sessions
            // start there and stop when they have all done two thirds.
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
            // Which calls carry the task's context (kinds::tasks is in kinds::all):
            // those to the profiled inventory, and to payment, which is not
            // profiled but speaks W3C and could pass the task on.
            config.task_rules = "profiled inventory; tag profiled; tag peer=payment";
            config.sinks = {std::make_shared<loupe::sinks::file_sink>(o.out)};
            loupe::session session = loupe::start_session(config);
            std::printf("session '%s' started after %llu requests, filter: %s\n", config.name.c_str(),
                        static_cast<unsigned long long>(load.completed()), config.filter.c_str());
            std::printf("  task rules: %s\n", config.task_rules.c_str());
            // The same session in the inventory process, through its control endpoint.
            const std::string start_line = "start name=" + config.name +
                                           "; filter=" + loupe::remote::quote_value(config.filter) +
                                           "; output=inventory.loupe";
            // A failed request names the process, or how it died.
            const auto control = [&inventory](const std::string& line) {
                try {
                    return control_request(inventory.pid(), line);
                } catch (const loupe::error& e) {
                    const std::string how = inventory.exited_early();
                    throw loupe::error(
                        "the inventory process (pid " + std::to_string(inventory.pid()) + ") " +
                        (how.empty() ? "did not do '" + line + "': " + e.what() : how + " during the run"));
                }
            };
            control(start_line);
            std::printf("  and in the inventory process (pid %d), through its control endpoint: %s\n",
                        static_cast<int>(inventory.pid()), start_line.c_str());
            load.release(1);
            load.wait_for_checkpoint(2);
            const loupe::session_stats stats = session.stop();
            // The remote stop replies when the inventory's file is complete.
            const loupe::remote::json_value stopped = control("stop " + config.name);
            std::printf("sessions stopped after %llu requests: %llu events recorded, %llu dropped -> %s\n",
                        static_cast<unsigned long long>(load.completed()),
                        static_cast<unsigned long long>(stats.delivered),
                        static_cast<unsigned long long>(stats.dropped), o.out.c_str());
            std::printf("  inventory: %llu events recorded, %llu dropped -> %s\n",
                        static_cast<unsigned long long>(stopped.u64("delivered")),
                        static_cast<unsigned long long>(stopped.u64("dropped")), inventory_out.c_str());
            load.release(2);
            load.join();
            if (load.failed() != 0) {
                std::fprintf(stderr, "app_server: %llu requests failed\n",
                             static_cast<unsigned long long>(load.failed()));
                for (app_server::child_process* child : {&inventory, &payment}) {
                    const std::string how = child->exited_early();
                    if (!how.empty()) {
                        std::fprintf(stderr, "app_server: the %s process (pid %d) %s during the run\n",
                                     child->role().c_str(), static_cast<int>(child->pid()), how.c_str());
                    }
                }
                return 1;
            }
            std::printf("served %llu requests in %.1f s\n\n",
                        static_cast<unsigned long long>(server.requests_served()),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        }
        if (!stop_services(inventory, payment)) return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "app_server: %s\n", e.what());
        return 1;
    }

    try {
        loupe::trace trace = loupe::read_trace_file(o.out);
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

        // The two processes' traces joined by task, as `loupe merge` and
        // `loupe report --tasks` join them (report/task_join.hpp): the user's
        // slowest task as a tree across processes, with its critical path,
        // and the calls of all their tasks per process.
        loupe::trace inventory_trace = loupe::read_trace_file(inventory_out);
        const loupe::report::task_report tasks = loupe::report::report_tasks(
            loupe::report::join_tasks(std::vector<const loupe::trace*>{&trace, &inventory_trace}));
        std::printf("\n== %s's slowest task across processes (loupe report %s %s --tasks) ==\n", o.user.c_str(),
                    o.out.c_str(), inventory_out.c_str());
        const std::size_t slowest = slowest_task(tasks);
        if (slowest == tasks.forest.tasks.size()) {
            std::fputs(loupe::report::format_task_report(tasks).c_str(), stdout);  // says why there is none
        } else {
            loupe::report::task_report shown = tasks;  // that task only; the counts and the statistics of all
            shown.forest.tasks = {tasks.forest.tasks[slowest]};
            shown.tasks = {tasks.tasks[slowest]};
            std::fputs(loupe::report::format_task_report(shown).c_str(), stdout);
        }

        // The Perfetto trace, as `loupe merge demo.loupe inventory.loupe -o
        // demo.pftrace` writes it: each process's trace with its calls as
        // slices linked by flow arrows (report/task_slices.hpp), on one timeline.
        const std::vector<loupe::trace*> inputs = {&trace, &inventory_trace};
        std::string perfetto;
        loupe::viewer::perfetto_set_writer to_perfetto(perfetto);
        for (std::uint32_t input = 0; input < inputs.size(); ++input) {
            loupe::report::add_task_slices(*inputs[input], input, tasks.forest);
            to_perfetto.add(*inputs[input], {-tasks.forest.alignment.offset_of(input), tasks.forest.inputs[input].pid});
        }
        write_file(perfetto_path(o.out), perfetto);
        std::printf("\n%s: both processes on one timeline, an arrow from each call to the request it made; "
                    "open it in https://ui.perfetto.dev\n",
                    perfetto_path(o.out).c_str());
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "app_server: %s\n", e.what());
        return 1;
    }
    return 0;
}
