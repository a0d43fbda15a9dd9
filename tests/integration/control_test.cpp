// The control endpoint (control/listen.hpp): sessions started, changed and
// stopped from outside the process through its socket, the security rules
// (owner only, a safe socket directory, outputs inside the output
// directory) and requests that are bad in every way.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <loupe/control/listen.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/remote/client.hpp>
#include <loupe/remote/protocol.hpp>
#include <loupe/remote/reply.hpp>

#include "support/control_child.hpp"
#include "support/otlp_reader.hpp"
#include "support/otlp_receiver.hpp"

using namespace loupe_test;
using loupe::remote::json_value;

namespace {

std::size_t open_descriptors() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

// Listens for the test's duration with the socket and outputs in a folder
// of its own.
class endpoint_fixture {
public:
    explicit endpoint_fixture(const std::string& tag, std::vector<std::string> names = {}) : folder_(tag) {
        std::filesystem::create_directory(folder_ / "out");
        loupe::control::listen_options o;
        o.names = std::move(names);
        o.socket_directory = folder_ / "sock";
        o.output_directory = folder_ / "out";
        o.io_timeout = std::chrono::milliseconds(300);
        endpoint_ = loupe::control::listen(o);
    }
    ~endpoint_fixture() { loupe::control::stop_listening(); }

    json_value ask(const std::string& line) {
        loupe::remote::connection c(::getpid(), folder_ / "sock");
        return loupe::remote::parse_reply(c.exchange(line));
    }
    std::string out(const std::string& name) const { return folder_ / ("out/" + name); }
    const temp_folder& folder() const { return folder_; }
    const loupe::control::endpoint& endpoint() const { return endpoint_; }

private:
    temp_folder folder_;
    loupe::control::endpoint endpoint_;
};

// Connects to `path` without the client's checks; -1 when it cannot.
int raw_connect(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Sends `bytes`, half-closes, and reads everything until the endpoint
// closes (at most 3 s).
std::string send_raw(const std::string& path, const std::string& bytes, bool half_close = true) {
    const int fd = raw_connect(path);
    if (fd < 0) return "<no connection>";
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    if (half_close) ::shutdown(fd, SHUT_WR);
    std::string reply;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            char buf[4096];
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            reply.append(buf, static_cast<std::size_t>(n));
        }
        if (std::chrono::steady_clock::now() > deadline) break;
    }
    ::close(fd);
    return reply;
}

std::vector<std::string> reply_lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t from = 0;
    for (std::size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
        out.push_back(text.substr(from, nl - from));
    }
    return out;
}

void expect_error(const json_value& r, const std::string& contains) {
    EXPECT_FALSE(r.flag("ok"));
    EXPECT_NE(r.str("error").find(contains), std::string::npos) << r.str("error");
}

}  // namespace

TEST(ControlEndpoint, StartSetStopRecordsOnlyTheFilteredUserWhileTheSessionRuns) {
    endpoint_fixture ep("control_filter");
    alice_and_bob work;
    const json_value started = ep.ask(R"(start name=who; kinds=zones; filter="user == \"alice\""; output=who.loupe)");
    ASSERT_TRUE(started.flag("ok")) << started.str("error");
    EXPECT_EQ(started.str("output"), ep.out("who.loupe"));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));

    const json_value list = ep.ask("list");
    ASSERT_TRUE(list.flag("ok"));
    const json_value* sessions = list.find("sessions");
    ASSERT_NE(sessions, nullptr);
    ASSERT_EQ(sessions->items.size(), 1u);
    EXPECT_EQ(sessions->items[0].str("name"), "who");
    EXPECT_TRUE(sessions->items[0].flag("running"));

    const json_value set = ep.ask(R"(set who filter="user == \"bob\"")");
    ASSERT_TRUE(set.flag("ok")) << set.str("error");
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const json_value stopped = ep.ask("stop who");
    ASSERT_TRUE(stopped.flag("ok")) << stopped.str("error");
    EXPECT_GT(stopped.u64("delivered"), 0u);
    EXPECT_EQ(stopped.u64("dropped"), 0u);

    // Complete right after the reply, with alice's zones first, then bob's
    // only, per thread.
    const loupe::trace t = loupe::read_trace_file(ep.out("who.loupe"));
    ASSERT_TRUE(t.complete);
    std::size_t alice = 0, bob = 0;
    std::map<std::uint64_t, std::uint64_t> last_alice, first_bob;
    for (const named_zone& z : zones_of(t)) {
        if (z.name == "alice_work") {
            ++alice;
            last_alice[z.thread_id] = std::max(last_alice[z.thread_id], z.begin_ns);
        } else {
            ASSERT_EQ(z.name, "bob_work");
            ++bob;
            if (first_bob.count(z.thread_id) == 0 || z.begin_ns < first_bob[z.thread_id]) {
                first_bob[z.thread_id] = z.begin_ns;
            }
        }
    }
    EXPECT_GT(alice, 10u);
    EXPECT_GT(bob, 10u);
    for (const auto& [thread, begin] : first_bob) {
        if (last_alice.count(thread) != 0) {
            EXPECT_LT(last_alice[thread], begin) << "thread " << thread;
        }
    }
    // Stopped sessions stay listed with their final counts; set and stop
    // on them are refused.
    const json_value after = ep.ask("list");
    ASSERT_EQ(after.find("sessions")->items.size(), 1u);
    EXPECT_FALSE(after.find("sessions")->items[0].flag("running"));
    EXPECT_EQ(after.find("sessions")->items[0].u64("delivered"), stopped.u64("delivered"));
    expect_error(ep.ask("stop who"), "session 'who' has stopped");
    expect_error(ep.ask("set nosuch filter=\"\""), "no session named 'nosuch'");
}

// ring_bytes and memory_budget reach the session; list shows what each
// session runs with (the defaults when the request named none).
TEST(ControlEndpoint, StartTakesTheRingSizeAndTheMemoryBudget) {
    endpoint_fixture ep("control_budget");
    ASSERT_TRUE(ep.ask("start name=fixed; ring_bytes=4096; memory_budget=0").flag("ok"));
    ASSERT_TRUE(ep.ask("start name=defaults").flag("ok"));
    const json_value list = ep.ask("list");
    const json_value* sessions = list.find("sessions");
    ASSERT_NE(sessions, nullptr);
    ASSERT_EQ(sessions->items.size(), 2u);
    EXPECT_EQ(sessions->items[0].str("name"), "fixed");
    EXPECT_EQ(sessions->items[0].u64("ring_bytes"), 4096u);
    EXPECT_EQ(sessions->items[0].u64("memory_budget"), 0u);
    const loupe::session_config defaults;
    EXPECT_EQ(sessions->items[1].u64("ring_bytes"), defaults.ring_bytes);
    EXPECT_EQ(sessions->items[1].u64("memory_budget"), defaults.memory_budget);
    EXPECT_TRUE(ep.ask("stop fixed").flag("ok"));
    EXPECT_TRUE(ep.ask("stop defaults").flag("ok"));
}

// start ...; otlp=URL also sends the session to a collector, as the service
// the process's peers call it (listen_options::names) when OTEL_SERVICE_NAME
// does not name it; the replies carry the URL and the counts.
TEST(ControlEndpoint, OtlpSessionsGoToTheCollectorAsTheServiceThePeersCall) {
    if (std::getenv("OTEL_SERVICE_NAME") != nullptr) GTEST_SKIP() << "OTEL_SERVICE_NAME is set: it names the service";
    loupe_test::otlp_receiver receiver;
    endpoint_fixture ep("control_otlp", {"frontend", "shop"});
    alice_and_bob work(1);
    const json_value started = ep.ask("start name=live; kinds=zones; otlp=\"" + receiver.url() + "\"");
    ASSERT_TRUE(started.flag("ok")) << started.str("error");
    EXPECT_EQ(started.str("otlp"), receiver.url());
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const json_value stopped = ep.ask("stop live");
    ASSERT_TRUE(stopped.flag("ok")) << stopped.str("error");
    EXPECT_EQ(stopped.str("otlp"), receiver.url());
    EXPECT_GT(stopped.u64("otlp_spans"), 0u);
    EXPECT_EQ(stopped.u64("otlp_accepted"), stopped.u64("otlp_spans"));
    EXPECT_EQ(stopped.u64("sink_failures"), 0u);
    ASSERT_FALSE(receiver.accepted_bodies().empty());
    std::uint64_t spans = 0;
    for (const std::string& body : receiver.accepted_bodies()) {
        for (const loupe_test::otlp::resource_spans& r : loupe_test::otlp::read_request(body)) {
            EXPECT_EQ(r.resource.at("service.name").text, "frontend");
            spans += r.spans.size();
        }
    }
    EXPECT_EQ(spans, stopped.u64("otlp_spans"));
}

TEST(ControlEndpoint, InfoNamesTheProcessAndDurationStopsASessionByItself) {
    endpoint_fixture ep("control_info");
    const json_value info = ep.ask("info");
    ASSERT_TRUE(info.flag("ok"));
    EXPECT_EQ(info.u64("pid"), static_cast<std::uint64_t>(::getpid()));
    EXPECT_FALSE(info.str("program").empty());
    EXPECT_EQ(info.str("loupe_version"), LOUPE_VERSION_STRING);
    EXPECT_EQ(info.u64("refused"), 0u);
    EXPECT_EQ(info.str("socket"), ep.endpoint().socket_path);
    EXPECT_GT(info.u64("started_unix_ms"), 1600000000000u);

    alice_and_bob work(1);
    const json_value started = ep.ask("start name=short; duration_ms=100");
    ASSERT_TRUE(started.flag("ok")) << started.str("error");
    EXPECT_EQ(started.str("output"), ep.out("short.loupe"));
    bool stopped = false;
    for (int i = 0; i < 100 && !stopped; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        stopped = !ep.ask("list").find("sessions")->items.at(0).flag("running");
    }
    ASSERT_TRUE(stopped);
    const loupe::trace t = loupe::read_trace_file(ep.out("short.loupe"));
    EXPECT_TRUE(t.complete);
    EXPECT_FALSE(zones_of(t).empty());
}

TEST(ControlEndpoint, BadRequestsGetAOneLineErrorAndTheSessionsGoOn) {
    endpoint_fixture ep("control_bad");
    alice_and_bob work(1);
    ASSERT_TRUE(ep.ask("start name=keep").flag("ok"));

    expect_error(ep.ask("frobnicate now"), "unknown command 'frobnicate'");
    expect_error(ep.ask("start name=x; kind=zones"), "column 15: unknown key 'kind'");
    expect_error(ep.ask("start name=x; kinds=zones,sparks"), "unknown kind 'sparks'");
    expect_error(ep.ask("start name=x; ring_bytes=12ab"), "ring_bytes '12ab'");
    expect_error(ep.ask("start name=x; memory_budget=-1"), "column 29: memory_budget '-1': expected a number");
    expect_error(ep.ask("start name=x; memory_budget=1099511627777"),
                 "memory_budget '1099511627777' is out of range: expected 0 to 1099511627776");
    expect_error(ep.ask("start name=x; overflow=maybe"), "overflow 'maybe': expected drop or block");
    expect_error(ep.ask("start name=x; filter=\"user == \\\"a"), "the quote opened here is not closed");
    expect_error(ep.ask("start name=keep"), "a session named 'keep' is running");
    expect_error(ep.ask("start name=bad/name"), "may hold letters");
    expect_error(ep.ask("start name=x; metrics=no_such_metric"), "no_such_metric");
    const json_value bad_filter = ep.ask(R"(start name=x; filter="user == ")");
    expect_error(bad_filter, "filter");
    expect_error(ep.ask("set keep filter=\"user ==== 1\""), "column");
    // A set with a good filter and bad specs changes neither.
    expect_error(ep.ask(R"(set keep filter="user == \"x\""; params="not a spec")"), "");
    EXPECT_EQ(ep.ask("list").find("sessions")->items.at(0).str("filter"), "");
    expect_error(ep.ask(R"(start name=x; task_rules="tag peer")"), "task rules, line 1 column 9: expected '='");
    expect_error(ep.ask(R"(set keep task_rules="tag nothing")"), "task rules, line 1 column 5");
    // Bad rules with good specs change neither.
    expect_error(ep.ask(R"(set keep params=""; task_rules="skip")"), "task rules");
    EXPECT_TRUE(ep.ask(R"(set keep task_rules="tag peer=inventory*; skip all")").flag("ok"));
    expect_error(ep.ask("set keep kinds=zones"), "expected filter, params or task_rules");
    expect_error(ep.ask(R"(start name=x; otlp="")"), "otlp: expected a URL");
    expect_error(ep.ask(R"(start name=x; otlp="htp://collector:4318")"),
                 "otlp_http_sink: endpoint 'htp://collector:4318': position 1");
    expect_error(ep.ask(R"(set keep otlp="http://127.0.0.1:4318/v1/traces")"), "expected filter, params or task_rules");
    expect_error(ep.ask("info please"), "unexpected text after 'info'");
    expect_error(ep.ask(std::string("li\x01st")), "control byte 0x01");
    const json_value column = ep.ask("start name=x; kinds=zones,sparks");
    EXPECT_EQ(column.u64("column"), 27u);
    EXPECT_EQ(column.str("command"), "start");
    EXPECT_EQ(column.str("request"), "start name=x; kinds=zones,sparks");

    // A line longer than 64 KiB, binary junk, a request without its newline.
    const std::string path = ep.endpoint().socket_path;
    const std::vector<std::string> big = reply_lines(send_raw(path, std::string(70000, 'a'), false));
    ASSERT_EQ(big.size(), 1u);
    expect_error(loupe::remote::parse_reply(big[0]), "longer than 65536 bytes");
    const std::vector<std::string> junk = reply_lines(send_raw(path, std::string("\x00\xff\x13\n", 4)));
    ASSERT_EQ(junk.size(), 1u);
    expect_error(loupe::remote::parse_reply(junk[0]), "control byte 0x00");
    const std::vector<std::string> half = reply_lines(send_raw(path, "info"));
    ASSERT_EQ(half.size(), 1u);
    expect_error(loupe::remote::parse_reply(half[0]), "without a newline");
    // A client that sends nothing is dropped after the I/O timeout, and
    // others are served then.
    const int idle = raw_connect(path);
    ASSERT_GE(idle, 0);
    const auto before = std::chrono::steady_clock::now();
    EXPECT_TRUE(ep.ask("info").flag("ok"));
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));
    ::close(idle);
    // Two requests on one connection, answered in order.
    const std::vector<std::string> two = reply_lines(send_raw(path, "info\nlist\n"));
    ASSERT_EQ(two.size(), 2u);
    EXPECT_TRUE(loupe::remote::parse_reply(two[1]).find("sessions") != nullptr);

    const json_value stopped = ep.ask("stop keep");
    ASSERT_TRUE(stopped.flag("ok")) << stopped.str("error");
    EXPECT_TRUE(loupe::read_trace_file(ep.out("keep.loupe")).complete);
}

TEST(ControlEndpoint, OutputsOutsideTheOutputDirectoryAreRefused) {
    endpoint_fixture ep("control_paths");
    std::filesystem::create_directory(ep.folder() / "elsewhere");
    std::filesystem::create_directory_symlink(ep.folder() / "elsewhere", ep.folder() / "out/link");
    std::filesystem::create_symlink(ep.folder() / "elsewhere/file.loupe", ep.folder() / "out/file_link.loupe");
    expect_error(ep.ask("start name=a; output=../a.loupe"), "'..'");
    expect_error(ep.ask("start name=a; output=sub/../../a.loupe"), "'..'");
    expect_error(ep.ask("start name=a; output=/etc/a.loupe"), "outside the output directory");
    expect_error(ep.ask("start name=a; output=link/a.loupe"), "through a symbolic link");
    expect_error(ep.ask("start name=a; output=file_link.loupe"), "is a symbolic link");
    expect_error(ep.ask("start name=a; output=nosuch/a.loupe"), "nosuch");
    expect_error(ep.ask("start name=a; output=sub/"), "expected a file name");
    EXPECT_TRUE(std::filesystem::is_empty(ep.folder() / "elsewhere"));
    // Inside, absolute or relative, is fine.
    std::filesystem::create_directory(ep.folder() / "out/sub");
    const json_value ok = ep.ask("start name=a; output=" + ep.out("sub/a.loupe"));
    ASSERT_TRUE(ok.flag("ok")) << ok.str("error");
    EXPECT_TRUE(ep.ask("stop a").flag("ok"));
    EXPECT_TRUE(std::filesystem::exists(ep.out("sub/a.loupe")));
}

TEST(ControlEndpoint, UnsafeSocketDirectoriesAreRefused) {
    temp_folder folder("control_dirs");
    std::filesystem::create_directory(folder / "real");
    ::chmod((folder / "real").c_str(), 0700);
    std::filesystem::create_directory_symlink(folder / "real", folder / "link");
    loupe::control::listen_options o;
    o.socket_directory = folder / "link";
    try {
        loupe::control::listen(o);
        FAIL() << "a symlinked socket directory was accepted";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("is a symbolic link; refused"), std::string::npos) << e.what();
    }
    std::filesystem::create_directory(folder / "open");
    ::chmod((folder / "open").c_str(), 0755);
    o.socket_directory = folder / "open";
    try {
        loupe::control::listen(o);
        FAIL() << "a socket directory open to others was accepted";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("has mode 0755"), std::string::npos) << e.what();
    }
    if (::geteuid() == 0) {  // only root can give a folder away
        std::filesystem::create_directory(folder / "foreign");
        ::chmod((folder / "foreign").c_str(), 0700);
        ASSERT_EQ(::chown((folder / "foreign").c_str(), 65534, 65534), 0);
        o.socket_directory = folder / "foreign";
        try {
            loupe::control::listen(o);
            FAIL() << "a socket directory of another user was accepted";
        } catch (const loupe::error& e) {
            EXPECT_NE(std::string(e.what()).find("is owned by uid 65534"), std::string::npos) << e.what();
        }
    }
    // The client checks the same rules.
    try {
        loupe::remote::connection c(::getpid(), folder / "link");
        FAIL() << "the client used a symlinked socket directory";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("process " + std::to_string(::getpid())), std::string::npos);
    }
    EXPECT_TRUE(loupe::control::listening_on().empty());
    // A second listen() while listening is refused.
    o.socket_directory = folder / "real";
    loupe::control::listen(o);
    EXPECT_THROW(loupe::control::listen(o), loupe::error);
    EXPECT_TRUE(loupe::control::stop_listening());
    EXPECT_FALSE(std::filesystem::exists(folder / ("real/" + std::to_string(::getpid()) + ".sock")));
    EXPECT_FALSE(loupe::control::stop_listening());
}

TEST(ControlEndpoint, RandomAndMutatedRequestsLeaveNoCrashAndNoDescriptor) {
    const std::size_t fds_before = open_descriptors();
    {
        endpoint_fixture ep("control_junk");
        const std::string path = ep.endpoint().socket_path;
        const std::vector<std::string> valid = {
            "info",
            "list",
            "start name=j; kinds=zones,io; filter=\"user == \\\"alice\\\"\"; duration_ms=50",
            "set j filter=\"user ~ \\\"a*\\\"\"",
            "stop j",
            "start name=k; params=\"method=f(); param=1\\nx\"",
            "start output=o.loupe; metrics=cpu_time; ring_bytes=4096; memory_budget=0; overflow=block"};
        std::mt19937 rng(2026);
        std::size_t replies = 0;
        for (int i = 0; i < 1000; ++i) {
            std::string line;
            if (i % 3 == 0) {
                const std::size_t n = rng() % 200;
                for (std::size_t k = 0; k < n; ++k) line += static_cast<char>(rng() % 256);
            } else {
                line = valid[rng() % valid.size()];
                const int edits = 1 + static_cast<int>(rng() % 4);
                for (int k = 0; k < edits && !line.empty(); ++k) {
                    const std::size_t at = rng() % line.size();
                    switch (rng() % 4) {
                        case 0:
                            line[at] = static_cast<char>(rng() % 256);
                            break;
                        case 1:
                            line.erase(at, 1 + rng() % 8);
                            break;
                        case 2:
                            line.insert(at, 1, "\";=\\, \n"[rng() % 7]);
                            break;
                        default:
                            line.insert(at, line.substr(0, rng() % line.size()));
                            break;
                    }
                }
            }
            const std::string reply = send_raw(path, line + "\n");
            for (const std::string& r : reply_lines(reply)) {
                EXPECT_NO_THROW((void)loupe::remote::parse_reply(r)) << r;
                ++replies;
            }
        }
        EXPECT_GE(replies, 1000u);
        const json_value info = ep.ask("info");
        EXPECT_TRUE(info.flag("ok"));
    }
    EXPECT_EQ(open_descriptors(), fds_before);
}

TEST(ControlEndpointFork, AChildProcessIsControlledThroughItsOwnEndpoint) {
    temp_folder folder("control_child");
    std::filesystem::create_directory(folder / "out");
    // The parent listens too: the child does not inherit its endpoint.
    loupe::control::listen_options o;
    o.socket_directory = folder / "sock";
    o.output_directory = folder / "out";
    loupe::control::listen(o);
    listening_child child(folder / "sock", folder / "out");
    std::vector<pid_t> pids = loupe::remote::endpoint_pids(folder / "sock");
    EXPECT_EQ(pids.size(), 2u);
    EXPECT_NE(std::find(pids.begin(), pids.end(), child.pid()), pids.end());

    auto ask = [&](const std::string& line) {
        loupe::remote::connection c(child.pid(), folder / "sock");
        return loupe::remote::parse_reply(c.exchange(line));
    };
    EXPECT_EQ(ask("info").u64("pid"), static_cast<std::uint64_t>(child.pid()));
    const json_value started = ask(R"(start name=alice; kinds=zones; filter="user == \"alice\""; output=alice.loupe)");
    ASSERT_TRUE(started.flag("ok")) << started.str("error");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const json_value stopped = ask("stop alice");
    ASSERT_TRUE(stopped.flag("ok")) << stopped.str("error");
    const loupe::trace t = loupe::read_trace_file(folder / "out/alice.loupe");
    ASSERT_TRUE(t.complete);
    const std::vector<named_zone> zones = zones_of(t);
    EXPECT_GT(zones.size(), 10u);
    for (const named_zone& z : zones) EXPECT_EQ(z.name, "alice_work");
    EXPECT_TRUE(loupe::control::stop_listening());
}

TEST(ControlEndpointFork, AnotherUserIsRefusedAndCounted) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a process as another user (uid 65534)";
    temp_folder folder("control_uid");
    ::chmod(folder.path().c_str(), 0711);
    for (const char* sub : {"sock", "out"}) {
        std::filesystem::create_directory(folder / sub);
        ::chmod((folder / sub).c_str(), 0700);
        ASSERT_EQ(::chown((folder / sub).c_str(), 65534, 65534), 0);
    }
    for (const bool allow_root : {false, true}) {
        int ready[2], done[2];
        ASSERT_EQ(::pipe(ready), 0);
        ASSERT_EQ(::pipe(done), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {  // the endpoint, as uid 65534
            ::close(ready[0]);
            ::close(done[1]);
            if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
            loupe::control::listen_options o;
            o.socket_directory = folder / "sock";
            o.output_directory = folder / "out";
            o.allow_root = allow_root;
            try {
                loupe::control::listen(o);
            } catch (...) {
                ::_exit(101);
            }
            char c = 'y';
            [[maybe_unused]] ssize_t n = ::write(ready[1], &c, 1);
            n = ::read(done[0], &c, 1);
            ::_exit(static_cast<int>(loupe::control::refusals()));
        }
        ::close(ready[1]);
        ::close(done[0]);
        char c = 0;
        ASSERT_EQ(::read(ready[0], &c, 1), 1);
        const std::string path = folder / ("sock/" + std::to_string(pid) + ".sock");
        const std::vector<std::string> reply = reply_lines(send_raw(path, "info\n"));
        ASSERT_EQ(reply.size(), 1u);
        const json_value r = loupe::remote::parse_reply(reply[0]);
        if (allow_root) {
            EXPECT_TRUE(r.flag("ok")) << reply[0];
        } else {
            expect_error(r, "refused: uid 0 is not the owner (uid 65534)");
        }
        // The client refuses an endpoint of another user by itself.
        try {
            loupe::remote::connection client(pid, folder / "sock");
            ADD_FAILURE() << "the client accepted a socket directory of uid 65534";
        } catch (const loupe::error& e) {
            EXPECT_NE(std::string(e.what()).find("owned by uid 65534"), std::string::npos) << e.what();
        }
        ASSERT_EQ(::write(done[1], &c, 1), 1);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), allow_root ? 0 : 1);  // the refusals counted
        ::close(ready[0]);
        ::close(done[1]);
    }
}
