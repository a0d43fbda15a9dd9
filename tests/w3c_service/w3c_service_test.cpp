// The W3C Trace Context interoperability service (examples/w3c_service/),
// run as the W3C validation suite runs it: a separate process started with
// --port 0 (posix_spawn; LOUPE_W3C_SERVICE_PATH), sent POST /test with the
// suite's Level 1 header cases and a JSON array of calls that point at a
// recorder, an HTTP server in a thread of this test that keeps every request
// it receives (fields in order, as sent, and body). What the recorder got is
// what the suite would check: one traceparent, of the incoming trace or of a
// new one, a new parent id, the flags, the tracestate as the policy keeps it,
// and the arguments byte for byte.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/file_bytes.hpp"
#include "support/otlp_receiver.hpp"  // dead_port

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;
using field = std::pair<std::string, std::string>;

std::string lower(std::string s) {
    for (char& c : s) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
}

void send_all(int fd, const std::string& data) {
    std::size_t at = 0;
    while (at < data.size()) {
        const ssize_t n = ::send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
        if (n <= 0) return;
        at += static_cast<std::size_t>(n);
    }
}

// Reads from `fd` until `done(in)` or the peer closes or `until` passes.
template <class Done>
void read_until(int fd, std::string& in, clock_type::time_point until, Done&& done) {
    char buf[16384];
    while (!done(in)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now()).count();
        pollfd p{fd, POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) return;
        in.append(buf, static_cast<std::size_t>(n));
    }
}

// An HTTP message's head: the first line, then its fields in order, names as sent.
struct message_head {
    std::string first_line;
    std::vector<field> fields;

    std::vector<std::string> values(const std::string& name) const {
        std::vector<std::string> out;
        for (const field& f : fields) {
            if (lower(f.first) == lower(name)) out.push_back(f.second);
        }
        return out;
    }
    /// The one value of `name`; "" when absent (a repeated field fails the test).
    std::string value(const std::string& name) const {
        const std::vector<std::string> all = values(name);
        EXPECT_LE(all.size(), 1u) << "repeated field " << name;
        return all.empty() ? std::string() : all.front();
    }
};

message_head parse_head(const std::string& head) {
    message_head h;
    std::size_t pos = head.find("\r\n");
    h.first_line = head.substr(0, pos);
    while (pos != std::string::npos && pos + 2 <= head.size()) {
        const std::size_t next = head.find("\r\n", pos + 2);
        const std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
        pos = next;
        const std::size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::size_t v = colon + 1;
        while (v < line.size() && (line[v] == ' ' || line[v] == '\t')) ++v;
        h.fields.emplace_back(line.substr(0, colon), line.substr(v));
    }
    return h;
}

// The Content-Length body after the head that ends at `head_end`; waits for it.
std::string read_body(int fd, std::string& in, std::size_t head_end, const message_head& head,
                      clock_type::time_point until) {
    const std::vector<std::string> lengths = head.values("content-length");
    const std::size_t length = lengths.empty() ? 0 : std::stoul(lengths.front());
    read_until(fd, in, until, [&](const std::string& s) { return s.size() >= head_end + 4 + length; });
    return in.size() >= head_end + 4 ? in.substr(head_end + 4, length) : std::string();
}

/// A request the recorder received.
struct recorded_request : message_head {
    std::string body;
    std::string target() const {
        const std::size_t sp1 = first_line.find(' '), sp2 = first_line.rfind(' ');
        return first_line.substr(sp1 + 1, sp2 - sp1 - 1);
    }
};

/// An HTTP/1.1 server on 127.0.0.1 (an ephemeral port) in its own thread
/// that keeps each request (fields and Content-Length body) and answers 200.
class recorder {
public:
    recorder() {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::listen(listener_, 16) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            throw std::runtime_error("recorder: cannot listen on 127.0.0.1");
        }
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    recorder(const recorder&) = delete;
    recorder& operator=(const recorder&) = delete;
    ~recorder() {
        stop_ = true;
        thread_.join();
        ::close(listener_);
    }

    std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

    /// The requests received so far, and forgets them.
    std::vector<recorded_request> take() {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::exchange(requests_, {});
    }

private:
    void serve() {
        while (!stop_) {
            pollfd p{listener_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            handle(fd);
            ::close(fd);
        }
    }

    void handle(int fd) {
        const auto until = clock_type::now() + std::chrono::seconds(10);
        std::string in;
        read_until(fd, in, until, [](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
        const std::size_t head_end = in.find("\r\n\r\n");
        if (head_end == std::string::npos) return;
        recorded_request r;
        static_cast<message_head&>(r) = parse_head(in.substr(0, head_end));
        r.body = read_body(fd, in, head_end, r, until);
        {
            // Kept before the reply goes: once the service has its reply, the request is here.
            std::lock_guard<std::mutex> lock(mutex_);
            requests_.push_back(std::move(r));
        }
        send_all(fd,
                 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4\r\n"
                 "Connection: close\r\n\r\nnull");
    }

    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::vector<recorded_request> requests_;
    std::thread thread_;
};

/// A file name in the test binary directory, unique in this run.
std::string unique_log_path() {
    static std::atomic<int> count{0};
    return std::string(LOUPE_TEST_BINARY_DIR) + "/w3c_service_" + std::to_string(::getpid()) + "_" +
           std::to_string(++count) + ".log";
}

/// What a service_process did when it ended by itself.
struct process_exit {
    int code = -1;  ///< exit status; -1 when killed by a signal or hung
    std::string err;
};

/// The service as a child process (posix_spawn), its stdout on a pipe and
/// its stderr in a file. Killed and reaped at destruction.
class service_process {
public:
    explicit service_process(std::vector<std::string> args) : log_(unique_log_path()) {
        int out[2];
        if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_addopen(&actions, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        args.insert(args.begin(), LOUPE_W3C_SERVICE_PATH);
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, LOUPE_W3C_SERVICE_PATH, &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        out_ = out[0];
        if (rc != 0) {
            pid_ = -1;
            throw std::runtime_error("cannot start " + std::string(LOUPE_W3C_SERVICE_PATH));
        }
    }
    service_process(const service_process&) = delete;
    service_process& operator=(const service_process&) = delete;
    ~service_process() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(out_);
        std::remove(log_.c_str());
    }

    /// The first line the service printed, within 20 s ("" if none).
    std::string first_line() {
        std::string line;
        read_until(out_, line, clock_type::now() + std::chrono::seconds(20),
                   [](const std::string& s) { return s.find('\n') != std::string::npos; });
        return line.substr(0, line.find('\n'));
    }

    /// Whether the service is still running (it has not exited or crashed).
    bool running() {
        if (pid_ <= 0) return false;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
        pid_ = -1;
        return false;
    }

    /// Waits up to 20 s for the service to end by itself.
    process_exit wait() {
        process_exit e;
        int status = 0;
        const auto until = clock_type::now() + std::chrono::seconds(20);
        while (pid_ > 0) {
            const pid_t done = ::waitpid(pid_, &status, WNOHANG);
            if (done == pid_) {
                pid_ = -1;
                e.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
                break;
            }
            if (clock_type::now() > until) break;  // hung: the destructor kills it
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        e.err = loupe_test::slurp(log_);
        return e;
    }

    std::string log() const { return loupe_test::slurp(log_); }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::string log_;
};

/// A reply from the service.
struct reply : message_head {
    int status = 0;
    std::string body;
};

/// Sends `raw` (a whole request) to 127.0.0.1:`port` and reads the reply.
reply send_request(int port, const std::string& raw) {
    reply r;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        ADD_FAILURE() << "cannot connect to the service on port " << port;
        return r;
    }
    send_all(fd, raw);
    const auto until = clock_type::now() + std::chrono::seconds(60);
    std::string in;
    read_until(fd, in, until, [](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
    const std::size_t head_end = in.find("\r\n\r\n");
    if (head_end != std::string::npos) {
        static_cast<message_head&>(r) = parse_head(in.substr(0, head_end));
        if (r.first_line.size() >= 12) r.status = std::atoi(r.first_line.c_str() + 9);
        r.body = read_body(fd, in, head_end, r, until);
    }
    ::close(fd);
    EXPECT_NE(r.status, 0) << "no reply from the service to:\n" << raw;
    return r;
}

/// A request to the service: `fields` after Host, Content-Type and
/// Content-Length.
std::string request_text(const std::string& method, const std::string& target, const std::vector<field>& fields,
                         const std::string& body) {
    std::string raw = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
    raw += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    for (const field& f : fields) raw += f.first + ": " + f.second + "\r\n";
    return raw + "\r\n" + body;
}

/// The JSON array of calls to `urls`, each with arguments [].
std::string calls_to(const std::vector<std::string>& urls) {
    std::string body = "[";
    for (const std::string& u : urls)
        body += std::string(body.size() > 1 ? ", " : "") + "{\"url\": \"" + u + "\", \"arguments\": []}";
    return body + "]";
}

/// A traceparent as sent on by the service.
struct traceparent_fields {
    std::string version, trace_id, parent_id, flags;
};

/// Checks that `value` is a version-00 traceparent with non-zero ids (the
/// W3C suite's own pattern) and returns its fields.
traceparent_fields check_traceparent(const std::string& value) {
    static const std::regex format("^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$");
    std::smatch m;
    traceparent_fields f;
    if (!std::regex_match(value, m, format)) {
        ADD_FAILURE() << "not a traceparent: '" << value << "'";
        return f;
    }
    f = {m[1], m[2], m[3], m[4]};
    EXPECT_EQ(f.version, "00");
    EXPECT_NE(f.trace_id, std::string(32, '0'));
    EXPECT_NE(f.parent_id, std::string(16, '0'));
    return f;
}

const std::string trace_id = "12345678901234567890123456789012";
const std::string parent_id = "1234567890123456";
const std::string valid_traceparent = "00-" + trace_id + "-" + parent_id + "-01";

/// The service (with `args` besides --port 0) and a recorder for its calls.
class service_fixture {
public:
    explicit service_fixture(std::vector<std::string> args = {}) : service_(with_port_0(std::move(args))) {
        const std::string line = service_.first_line();
        static const std::regex listening("^listening on 127\\.0\\.0\\.1:([0-9]+)$");
        std::smatch m;
        if (!std::regex_match(line, m, listening)) {
            throw std::runtime_error("the service printed '" + line + "', expected 'listening on 127.0.0.1:PORT'");
        }
        port_ = std::stoi(m[1]);
    }
    ~service_fixture() { EXPECT_TRUE(service_.running()) << "the service ended:\n" << service_.log(); }

    int port() const { return port_; }
    recorder& calls() { return recorder_; }
    std::string log() const { return service_.log(); }

    /// POST /test with `fields` and `body`.
    reply post_test(const std::vector<field>& fields, const std::string& body) {
        return send_request(port_, request_text("POST", "/test", fields, body));
    }

    /// POST /test with `fields`, asking for one call to the recorder; the
    /// request the recorder got (the test fails unless there is exactly one).
    recorded_request one_call(const std::vector<field>& fields) {
        const reply r = post_test(fields, calls_to({recorder_.url("/callback.0")}));
        EXPECT_EQ(r.status, 200) << r.body;
        std::vector<recorded_request> got = recorder_.take();
        EXPECT_EQ(got.size(), 1u);
        return got.empty() ? recorded_request{} : got.front();
    }

private:
    static std::vector<std::string> with_port_0(std::vector<std::string> args) {
        args.insert(args.begin(), {"--port", "0"});
        return args;
    }

    recorder recorder_;
    service_process service_;
    int port_ = 0;
};

class W3cService : public ::testing::Test {
protected:
    service_fixture service_;

    /// One call with `fields`; checks the call is a new trace and that
    /// nothing of `sent` (the incoming traceparent) was passed on.
    void expect_restarted(const std::vector<field>& fields, const std::string& sent) {
        SCOPED_TRACE("incoming: " + sent);
        const recorded_request call = service_.one_call(fields);
        ASSERT_EQ(call.values("traceparent").size(), 1u);
        const traceparent_fields out = check_traceparent(call.value("traceparent"));
        EXPECT_NE(out.trace_id, trace_id);
        EXPECT_NE(out.trace_id, lower(sent.size() >= 35 ? sent.substr(3, 32) : sent));
        for (const field& f : call.fields) EXPECT_EQ(f.second.find(sent), std::string::npos) << f.first;
        EXPECT_TRUE(call.values("tracestate").empty()) << "a tracestate without a valid traceparent is dropped";
    }

    /// One call with `fields`; checks it continues trace_id with a new parent id.
    recorded_request expect_continued(const std::vector<field>& fields) {
        recorded_request call = service_.one_call(fields);
        EXPECT_EQ(call.values("traceparent").size(), 1u);
        const traceparent_fields out = check_traceparent(call.value("traceparent"));
        EXPECT_EQ(out.trace_id, trace_id);
        EXPECT_NE(out.parent_id, parent_id);
        return call;
    }
};

// ---- traceparent -------------------------------------------------------------

TEST_F(W3cService, AValidTraceparentIsContinuedWithANewParentIdTheFlagsAndTheTracestate) {
    const reply r = service_.post_test(
        {{"traceparent", valid_traceparent}, {"tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"}},
        calls_to({service_.calls().url("/callback.0")}));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "");
    EXPECT_EQ(r.value("failed-calls"), "0");
    const std::vector<recorded_request> calls = service_.calls().take();
    ASSERT_EQ(calls.size(), 1u);
    const recorded_request& call = calls[0];
    EXPECT_EQ(call.first_line, "POST /callback.0 HTTP/1.1");
    EXPECT_EQ(call.value("content-type"), "application/json");
    EXPECT_EQ(call.body, "[]");
    ASSERT_EQ(call.values("traceparent").size(), 1u);
    const traceparent_fields out = check_traceparent(call.value("traceparent"));
    EXPECT_EQ(out.trace_id, trace_id);
    EXPECT_NE(out.parent_id, parent_id);
    EXPECT_EQ(out.flags, "01");
    EXPECT_EQ(call.value("tracestate"), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");

    // The service's own call (Level 2's traceresponse): the same trace, an id
    // of its own, which is neither the caller's nor that of the call it made.
    const traceparent_fields own = check_traceparent(r.value("traceresponse"));
    EXPECT_EQ(own.trace_id, trace_id);
    EXPECT_NE(own.parent_id, parent_id);
    EXPECT_NE(own.parent_id, out.parent_id);
}

TEST_F(W3cService, TheSampledFlagIsPassedOnAndUnknownFlagBitsAreZeroed) {
    EXPECT_EQ(check_traceparent(
                  expect_continued({{"traceparent", "00-" + trace_id + "-" + parent_id + "-00"}}).value("traceparent"))
                  .flags,
              "00");
    EXPECT_EQ(check_traceparent(
                  expect_continued({{"traceparent", "00-" + trace_id + "-" + parent_id + "-01"}}).value("traceparent"))
                  .flags,
              "01");
    // Level 1: "Vendors MUST set those to zero" (the bits it does not define).
    EXPECT_EQ(check_traceparent(
                  expect_continued({{"traceparent", "00-" + trace_id + "-" + parent_id + "-09"}}).value("traceparent"))
                  .flags,
              "01");
}

TEST_F(W3cService, NoTraceparentNorTracestateStartsANewTrace) {
    const recorded_request call = service_.one_call({});
    ASSERT_EQ(call.values("traceparent").size(), 1u);
    check_traceparent(call.value("traceparent"));
    EXPECT_TRUE(call.values("tracestate").empty());
}

TEST_F(W3cService, HeaderNamesMatchInAnyCase) {
    for (const char* name : {"TraceParent", "TrAcEpArEnT", "TRACEPARENT"}) {
        SCOPED_TRACE(name);
        expect_continued({{name, valid_traceparent}});
    }
    for (const char* name : {"TraceState", "TrAcEsTaTe", "TRACESTATE"}) {
        SCOPED_TRACE(name);
        EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent}, {name, "foo=1"}}).value("tracestate"), "foo=1");
    }
}

TEST_F(W3cService, OtherHeaderNamesAreNotTraceContext) {
    expect_restarted({{"trace-parent", valid_traceparent}}, valid_traceparent);
    expect_restarted({{"trace.parent", valid_traceparent}}, valid_traceparent);
    for (const char* name : {"trace-state", "trace.state"}) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(
            expect_continued({{"traceparent", valid_traceparent}, {name, "foo=1"}}).values("tracestate").empty());
    }
}

TEST_F(W3cService, AnInvalidTraceparentStartsANewTraceAndIsNotPassedOn) {
    const std::string t = trace_id, p = parent_id;
    const std::vector<std::string> invalid = {
        // version: illegal characters, too long, too short, ff, upper case
        ".0-" + t + "-" + p + "-01",
        "0.-" + t + "-" + p + "-01",
        "000-" + t + "-" + p + "-01",
        "0000-" + t + "-" + p + "-01",
        "0-" + t + "-" + p + "-01",
        "ff-" + t + "-" + p + "-01",
        "0A-" + t + "-" + p + "-01",
        // trace id: illegal characters, too long, too short, all zero, upper case
        "00-." + t.substr(1) + "-" + p + "-01",
        "00-" + t.substr(0, 31) + ".-" + p + "-01",
        "00-" + t + "3-" + p + "-01",
        "00-" + t.substr(0, 31) + "-" + p + "-01",
        "00-" + std::string(32, '0') + "-" + p + "-01",
        "00-1234567890ABCDEF1234567890abcdef-" + p + "-01",
        // parent id: illegal characters, too long, too short, all zero, upper case
        "00-" + t + "-." + p.substr(1) + "-01",
        "00-" + t + "-" + p.substr(0, 15) + ".-01",
        "00-" + t + "-" + p + "7-01",
        "00-" + t + "-" + p.substr(0, 15) + "-01",
        "00-" + t + "-" + std::string(16, '0') + "-01",
        "00-" + t + "-1234567890ABCDEF-01",
        // flags: illegal characters, too long, too short, upper case
        "00-" + t + "-" + p + "-.0",
        "00-" + t + "-" + p + "-0.",
        "00-" + t + "-" + p + "-001",
        "00-" + t + "-" + p + "-1",
        "00-" + t + "-" + p + "-0A",
        // version 00 with anything after the flags
        "00-" + t + "-" + p + "-01.",
        "00-" + t + "-" + p + "-01-what-the-future-will-be-like",
        // a later version whose flags are not followed by '-'
        "cc-" + t + "-" + p + "-01.what-the-future-will-be-like",
        // not a traceparent at all
        "garbage",
        "00-" + t,
    };
    for (const std::string& value : invalid) {
        expect_restarted({{"traceparent", value}, {"tracestate", "foo=1"}}, value);
    }
}

TEST_F(W3cService, AFutureVersionIsReadByItsFirstFourFieldsAndSentAsVersion00) {
    for (const std::string& value : {"cc-" + trace_id + "-" + parent_id + "-01",
                                     "cc-" + trace_id + "-" + parent_id + "-01-what-the-future-will-be-like"}) {
        SCOPED_TRACE(value);
        const recorded_request call = expect_continued({{"traceparent", value}});
        const traceparent_fields out = check_traceparent(call.value("traceparent"));
        EXPECT_EQ(out.version, "00");
        EXPECT_EQ(out.flags, "01");
        EXPECT_EQ(call.value("traceparent").find("future"), std::string::npos);
    }
}

TEST_F(W3cService, WhitespaceAroundTheTraceparentIsIgnored) {
    for (const std::string& value : {" " + valid_traceparent, "\t" + valid_traceparent, valid_traceparent + " ",
                                     valid_traceparent + "\t", "\t " + valid_traceparent + " \t"}) {
        SCOPED_TRACE("'" + value + "'");
        expect_continued({{"traceparent", value}});
    }
}

TEST_F(W3cService, RepeatedTraceparentFieldsStartANewTrace) {
    const std::string first = "00-12345678901234567890123456789011-" + parent_id + "-01";
    const recorded_request call = service_.one_call({{"traceparent", first}, {"traceparent", valid_traceparent}});
    ASSERT_EQ(call.values("traceparent").size(), 1u);
    const traceparent_fields out = check_traceparent(call.value("traceparent"));
    EXPECT_NE(out.trace_id, "12345678901234567890123456789011");
    EXPECT_NE(out.trace_id, trace_id);
    // The same value twice is repeated too.
    expect_restarted({{"traceparent", valid_traceparent}, {"TraceParent", valid_traceparent}}, valid_traceparent);
}

TEST_F(W3cService, EveryCallOfOneRequestSharesItsTraceWithAParentIdOfItsOwn) {
    const auto three_calls = [&](const std::vector<field>& fields) {
        const reply r = service_.post_test(
            fields, calls_to({service_.calls().url("/callback.0"), service_.calls().url("/callback.1"),
                              service_.calls().url("/callback.2")}));
        EXPECT_EQ(r.status, 200);
        std::set<std::string> traces, parents;
        for (const recorded_request& call : service_.calls().take()) {
            const traceparent_fields out = check_traceparent(call.value("traceparent"));
            traces.insert(out.trace_id);
            parents.insert(out.parent_id);
        }
        EXPECT_EQ(traces.size(), 1u);
        EXPECT_EQ(parents.size(), 3u);
        return traces.empty() ? std::string() : *traces.begin();
    };
    EXPECT_EQ(three_calls({{"traceparent", valid_traceparent}}), trace_id);
    const std::string fresh = three_calls({});
    const std::string restarted =
        three_calls({{"traceparent", "00-" + std::string(32, '0') + "-" + parent_id + "-01"}});
    EXPECT_NE(restarted, std::string(32, '0'));
    EXPECT_NE(fresh, restarted);  // each request that starts a trace starts its own
}

// ---- tracestate ----------------------------------------------------------------

std::string members(int from, int to) {  // "bar01=01,bar02=02,..."
    std::string out;
    char m[32];
    for (int i = from; i <= to; ++i) {
        std::snprintf(m, sizeof m, "%sbar%02d=%02d", out.empty() ? "" : ",", i, i);
        out += m;
    }
    return out;
}

TEST_F(W3cService, ATracestateWithoutAValidTraceparentIsDropped) {
    const recorded_request call = service_.one_call({{"tracestate", "foo=1,bar=2"}});
    check_traceparent(call.value("traceparent"));
    EXPECT_TRUE(call.values("tracestate").empty());
}

TEST_F(W3cService, RepeatedTracestateFieldsAreOneListInOrder) {
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent},
                                {"tracestate", "foo=1,bar=2"},
                                {"tracestate", "rojo=1,congo=2"},
                                {"tracestate", "baz=3"}})
                  .value("tracestate"),
              "foo=1,bar=2,rojo=1,congo=2,baz=3");
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent}, {"tracestate", "foo=1"}, {"tracestate", ""}})
                  .value("tracestate"),
              "foo=1");
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent}, {"tracestate", ""}, {"tracestate", "foo=1"}})
                  .value("tracestate"),
              "foo=1");
    // An empty list is not sent on.
    EXPECT_TRUE(
        expect_continued({{"traceparent", valid_traceparent}, {"tracestate", ""}}).values("tracestate").empty());
    // 32 members over four fields: all kept.
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent},
                                {"tracestate", members(1, 10)},
                                {"tracestate", members(11, 20)},
                                {"tracestate", members(21, 30)},
                                {"tracestate", members(31, 32)}})
                  .value("tracestate"),
              members(1, 32));
}

TEST_F(W3cService, TracestateWhitespaceIsDroppedAndEveryAllowedCharacterKept) {
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent}, {"tracestate", "foo=1 \t , \t bar=2, \t baz=3"}})
                  .value("tracestate"),
              "foo=1,bar=2,baz=3");
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent}, {"tracestate", "\t foo=1 \t"}}).value("tracestate"),
              "foo=1");
    std::string key;
    for (char c = 'a'; c <= 'z'; ++c) key += c;
    key += "0123456789_-*/";
    std::string value;
    for (int c = 0x20; c <= 0x7e; ++c) {
        if (c != ',' && c != '=') value += static_cast<char>(c);
    }
    for (const std::string& k : {key, key + "@a-z0-9_-*/"}) {
        SCOPED_TRACE(k);
        EXPECT_EQ(
            expect_continued({{"traceparent", valid_traceparent}, {"tracestate", k + "=" + value}}).value("tracestate"),
            k + "=" + value);
    }
    // Keys at their longest: 256 characters; a tenant of 241 and a system of 14.
    const std::string longest = std::string(256, 'z') + "=1";
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent}, {"tracestate", "foo=1"}, {"tracestate", longest}})
                  .value("tracestate"),
              "foo=1," + longest);
    const std::string tenant = std::string(241, 't') + "@" + std::string(14, 'v') + "=1";
    EXPECT_EQ(expect_continued({{"traceparent", valid_traceparent}, {"tracestate", "foo=1"}, {"tracestate", tenant}})
                  .value("tracestate"),
              "foo=1," + tenant);
}

// The lists that break Level 1's rules, as the W3C suite sends them (each a
// list of tracestate fields); the members of each that are valid and first
// of their key, within 32.
struct broken_tracestate {
    std::vector<std::string> fields;
    std::string valid_members;
};

const std::vector<broken_tracestate>& broken_tracestates() {
    static const std::vector<broken_tracestate> cases = {
        {{"foo=1,foo=1"}, "foo=1"},
        {{"foo=1,foo=2"}, "foo=1"},
        {{"foo=1", "foo=2"}, "foo=1"},
        {{"foo =1"}, ""},
        {{"FOO=1"}, ""},
        {{"foo.bar=1"}, ""},
        {{"foo@=1,bar=2"}, "bar=2"},
        {{"@foo=1,bar=2"}, "bar=2"},
        {{"foo@@bar=1,bar=2"}, "bar=2"},
        {{"foo@bar@baz=1,bar=2"}, "bar=2"},
        {{"foo=bar=baz"}, ""},
        {{"foo=,bar=3"}, "bar=3"},
        {{"foo=1", std::string(257, 'z') + "=1"}, "foo=1"},
        {{"foo=1", std::string(242, 't') + "@v=1"}, "foo=1"},
        {{"foo=1", "t@" + std::string(15, 'v') + "=1"}, "foo=1"},
        {{members(1, 10), members(11, 20), members(21, 30), members(31, 33)}, members(1, 32)},
    };
    return cases;
}

TEST_F(W3cService, ByDefaultATracestateThatBreaksTheRulesIsDiscardedWholeButTheTraceGoesOn) {
    // discard_on_any_error: what the W3C suite checks at its default STRICT_LEVEL=2.
    for (const broken_tracestate& c : broken_tracestates()) {
        std::vector<field> fields = {{"traceparent", valid_traceparent}};
        for (const std::string& f : c.fields) fields.emplace_back("tracestate", f);
        SCOPED_TRACE(c.fields.front() + (c.fields.size() > 1 ? ", ..." : ""));
        EXPECT_TRUE(expect_continued(fields).values("tracestate").empty());
    }
}

TEST(W3cServiceDropInvalidMembers, OnlyTheOffendingMembersAreDropped) {
    service_fixture service({"--tracestate-policy", "drop-invalid-members"});
    for (const broken_tracestate& c : broken_tracestates()) {
        std::vector<field> fields = {{"traceparent", valid_traceparent}};
        for (const std::string& f : c.fields) fields.emplace_back("tracestate", f);
        SCOPED_TRACE(c.fields.front() + (c.fields.size() > 1 ? ", ..." : ""));
        const recorded_request call = service.one_call(fields);
        EXPECT_EQ(check_traceparent(call.value("traceparent")).trace_id, trace_id);
        EXPECT_EQ(call.value("tracestate"), c.valid_members);
    }
}

TEST_F(W3cService, ATracestateOver512CharactersIsCutByWholeMembersFromTheRight) {
    std::vector<std::string> list;  // ten members of 64 characters: 649 with the commas
    for (int i = 0; i < 10; ++i) list.push_back("k" + std::to_string(i) + "=" + std::string(61, 'a' + i));
    std::string sent, expected;
    for (const std::string& m : list) {
        sent += (sent.empty() ? "" : ",") + m;
        if (expected.size() + 1 + m.size() <= 512) expected += (expected.empty() ? "" : ",") + m;
    }
    ASSERT_GT(sent.size(), 512u);
    const std::string kept =
        expect_continued({{"traceparent", valid_traceparent}, {"tracestate", sent}}).value("tracestate");
    EXPECT_EQ(kept, expected);
    EXPECT_LE(kept.size(), 512u);
}

// ---- the calls -------------------------------------------------------------------

TEST_F(W3cService, EachCallGetsItsArgumentsByteForByteInOrder) {
    recorder& r = service_.calls();
    // The urls as JSON strings (one with escaped slashes), arguments of every
    // kind with their own spacing, a call with no arguments, an extra key.
    std::string escaped = r.url("/second");
    for (std::size_t at = escaped.find('/'); at != std::string::npos; at = escaped.find('/', at + 2)) {
        escaped.insert(at, "\\");
    }
    const std::vector<std::string> arguments = {
        "[ 1, -2.5e+3 ,{\"a\" : [true, false, null]}, \"\\u00e9\\n\\\"\", {\"url\": \"not this one\"} ]",
        "[]",
        "{\"k\":\"v\"}",
        "\"text\"",
    };
    const std::string body = "[\n  {\"url\": \"" + r.url("/first") + "\", \"arguments\": " + arguments[0] +
                             "},\n  {\"arguments\":" + arguments[1] + ",\"url\":\"" + escaped +
                             "\"},\n  {\"headers\": [[\"x\", \"y\"]], \"url\": \"" + r.url("/third") +
                             "\", \"arguments\": " + arguments[2] + "},\n  {\"url\": \"" + r.url("/fourth") +
                             "\", \"arguments\":" + arguments[3] + "},\n  {\"url\": \"" + r.url("/fifth") + "\"}\n]\n";
    const reply answer = service_.post_test({{"traceparent", valid_traceparent}}, body);
    EXPECT_EQ(answer.status, 200) << answer.body;
    EXPECT_EQ(answer.value("failed-calls"), "0");
    const std::vector<recorded_request> calls = r.take();
    ASSERT_EQ(calls.size(), 5u);
    const char* paths[] = {"/first", "/second", "/third", "/fourth", "/fifth"};
    std::set<std::string> parents;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        SCOPED_TRACE(paths[i]);
        EXPECT_EQ(calls[i].target(), paths[i]);
        EXPECT_EQ(calls[i].body, i < arguments.size() ? arguments[i] : "[]");
        EXPECT_EQ(calls[i].value("content-type"), "application/json");
        EXPECT_EQ(calls[i].value("content-length"), std::to_string(calls[i].body.size()));
        const traceparent_fields out = check_traceparent(calls[i].value("traceparent"));
        EXPECT_EQ(out.trace_id, trace_id);
        parents.insert(out.parent_id);
    }
    EXPECT_EQ(parents.size(), calls.size());
}

TEST_F(W3cService, AnEmptyArrayMakesNoCall) {
    const reply r = service_.post_test({{"traceparent", valid_traceparent}}, " [ ] ");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.value("failed-calls"), "0");
    EXPECT_TRUE(service_.calls().take().empty());
}

TEST_F(W3cService, UnreachableAndUnsupportedUrlsAreSkippedAndTheOthersStillCalled) {
    recorder& r = service_.calls();
    const loupe_test::dead_port dead;  // bound, not listening: connections are refused
    const std::string dead_url = "http://" + dead.authority() + "/nobody";
    const reply answer = service_.post_test(
        {{"traceparent", valid_traceparent}},
        calls_to({r.url("/0"), dead_url, r.url("/1"), "https://127.0.0.1:1/tls", r.url("/2"), "ftp://127.0.0.1/file",
                  "", "http://", "http://127.0.0.1:99999/x", "http://user@127.0.0.1/x", r.url("/3")}));
    EXPECT_EQ(answer.status, 200) << answer.body;
    EXPECT_EQ(answer.value("failed-calls"), "7");
    const std::vector<recorded_request> calls = r.take();
    ASSERT_EQ(calls.size(), 4u);
    for (std::size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(calls[i].target(), "/" + std::to_string(i));
        EXPECT_EQ(check_traceparent(calls[i].value("traceparent")).trace_id, trace_id);
    }
    const std::string log = service_.log();
    EXPECT_NE(log.find("call 2 of 11 (" + dead_url + ") failed: " + dead.authority() + ": connect: Connection refused"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("call 4 of 11 (https://127.0.0.1:1/tls) failed: scheme 'https' is not supported"),
              std::string::npos)
        << log;
}

TEST_F(W3cService, ATargetThatNeverAnswersIsGivenUpOnAndTheNextOneStillCalled) {
    // Listening but never accepting: the connection completes in the backlog,
    // the request goes out, and no reply ever comes. The service gives up
    // after its call timeout (5 s).
    const int silent = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(silent, 4), 0);
    ASSERT_EQ(::getsockname(silent, reinterpret_cast<sockaddr*>(&a), &len), 0);
    const std::string silent_url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/silent";
    const reply r = service_.post_test({{"traceparent", valid_traceparent}},
                                       calls_to({silent_url, service_.calls().url("/after")}));
    ::close(silent);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.value("failed-calls"), "1");
    const std::vector<recorded_request> calls = service_.calls().take();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].target(), "/after");
    EXPECT_NE(service_.log().find("call 1 of 2 (" + silent_url + ") failed: "), std::string::npos) << service_.log();
    EXPECT_NE(service_.log().find(": no whole reply within 5000 ms"), std::string::npos) << service_.log();
}

// ---- refused requests ------------------------------------------------------------

TEST_F(W3cService, ABodyThatIsNotAnArrayOfCallsIsRefusedWith400NamingTheByteAndWhatWasExpected) {
    struct bad_body {
        std::string body;
        std::size_t position;
        std::string expected;
    };
    const std::string u = "\"url\": \"" + service_.calls().url("/never") + "\"";
    const std::string deep = "[{" + u + ", \"arguments\": " + std::string(100, '[') + std::string(100, ']') + "}]";
    const std::vector<bad_body> cases = {
        {"", 0, "expected '[' (the body is a JSON array of calls), found the end of the body"},
        {"{" + u + "}", 0, "expected '['"},
        {"[1]", 1, "expected '{' (each call is an object"},
        {"[{" + u + "}", 3 + u.size(), "expected ',' or ']' after a call, found the end of the body"},
        {"[{" + u + " \"arguments\": []}]", 3 + u.size(),
         "expected ',' or '}' after a member of a call object, found '\"'"},
        {"[{\"url\": 5}]", 9, "expected a string (the url to call), found '5'"},
        {"[{\"arguments\": []}]", 1, "expected a \"url\" member"},
        {"[{" + u + ", " + u + "}]", 4 + u.size(), "expected one \"url\" per call"},
        {"[{" + u + ", \"arguments\": [1,]}]", 20 + u.size(), "expected a JSON value"},
        {"[{" + u + ", \"arguments\": tru}]", 20 + u.size(), "expected 'e' (the literal true), found '}'"},
        {"[{" + u + ", \"arguments\": [01]}]", 19 + u.size(), "expected ',' or ']' after an array element, found '1'"},
        {"[{" + u + ", \"arguments\": [\"a\x01\"]}]", 20 + u.size(), "control characters must be escaped"},
        {"[{" + u + ", \"arguments\": [\"\\x\"]}]", 20 + u.size(), "expected an escape"},
        {deep, 2 + u.size() + 15 + 62, "at most 64 levels of nesting"},
        {"[] x", 3, "expected the end of the body after the array, found 'x'"},
    };
    for (const bad_body& c : cases) {
        SCOPED_TRACE(c.body);
        const reply r = service_.post_test({{"traceparent", valid_traceparent}}, c.body);
        EXPECT_EQ(r.status, 400);
        EXPECT_NE(r.body.find("at byte " + std::to_string(c.position) + ": "), std::string::npos) << r.body;
        EXPECT_NE(r.body.find(c.expected), std::string::npos) << r.body;
    }
    EXPECT_TRUE(service_.calls().take().empty()) << "a refused body makes no call";
    // And the service goes on serving.
    expect_continued({{"traceparent", valid_traceparent}});
}

TEST_F(W3cService, OtherPathsAndMethodsAreRefused) {
    const reply get = send_request(service_.port(), request_text("GET", "/test", {}, ""));
    EXPECT_EQ(get.status, 405);
    EXPECT_EQ(get.value("allow"), "POST");
    EXPECT_EQ(send_request(service_.port(), request_text("POST", "/other", {}, "[]")).status, 404);
    EXPECT_EQ(send_request(service_.port(), request_text("GET", "/", {}, "")).status, 404);
    EXPECT_EQ(send_request(service_.port(), "NONSENSE\r\n\r\n").status, 400);
    EXPECT_TRUE(service_.calls().take().empty());
}

TEST_F(W3cService, AChunkedBodyAndExpect100ContinueAreRead) {
    const std::string body = calls_to({service_.calls().url("/chunked")});
    std::string raw =
        "POST /test HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\ntraceparent: " + valid_traceparent +
        "\r\n\r\n";
    char size[16];
    std::snprintf(size, sizeof size, "%zx", body.size() - 5);
    raw += std::string(size) + "\r\n" + body.substr(0, body.size() - 5) + "\r\n5;ext=1\r\n" +
           body.substr(body.size() - 5) + "\r\n0\r\n\r\n";
    EXPECT_EQ(send_request(service_.port(), raw).status, 200);

    // Expect: 100-continue: the body is sent after the interim reply.
    const std::string head = "POST /test HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\ntraceparent: " + valid_traceparent + "\r\n\r\n";
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(service_.port()));
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    send_all(fd, head);
    std::string in;
    read_until(fd, in, clock_type::now() + std::chrono::seconds(20),
               [](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
    EXPECT_EQ(in, "HTTP/1.1 100 Continue\r\n\r\n");
    send_all(fd, body);
    in.clear();
    read_until(fd, in, clock_type::now() + std::chrono::seconds(20),
               [](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
    ::close(fd);
    EXPECT_EQ(in.substr(0, 15), "HTTP/1.1 200 OK");

    const std::vector<recorded_request> calls = service_.calls().take();
    ASSERT_EQ(calls.size(), 2u);
    for (const recorded_request& call : calls) {
        EXPECT_EQ(call.body, "[]");
        EXPECT_EQ(check_traceparent(call.value("traceparent")).trace_id, trace_id);
    }
}

// ---- the command line -------------------------------------------------------------

TEST(W3cServiceCommandLine, BadArgumentsExitWith2NamingTheArgumentAndWhatWasExpected) {
    struct bad_arguments {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<bad_arguments> cases = {
        {{"--port", "abc"}, "--port 'abc': expected a port number from 0 to 65535"},
        {{"--port", "70000"}, "--port '70000': expected a port number from 0 to 65535"},
        {{"--port=-1"}, "--port '-1': expected a port number from 0 to 65535"},
        {{"--port"}, "--port needs a value: a port number from 0 to 65535"},
        {{"--verbose"}, "unknown argument '--verbose'; expected --port N or --tracestate-policy P"},
        {{"--tracestate-policy", "sometimes"},
         "--tracestate-policy 'sometimes': expected discard-on-any-error or drop-invalid-members"},
    };
    for (const bad_arguments& c : cases) {
        SCOPED_TRACE(c.args.front());
        service_process p(c.args);
        const process_exit e = p.wait();
        EXPECT_EQ(e.code, 2);
        EXPECT_NE(e.err.find("w3c_service: " + c.message), std::string::npos) << e.err;
        EXPECT_NE(e.err.find("usage: w3c_service"), std::string::npos) << e.err;
    }
}

TEST(W3cServiceCommandLine, APortInUseExitsWith1NamingTheAddress) {
    service_fixture first;
    service_process second({"--port", std::to_string(first.port())});
    const process_exit e = second.wait();
    EXPECT_EQ(e.code, 1);
    EXPECT_NE(e.err.find("cannot listen on 127.0.0.1:" + std::to_string(first.port()) + ": Address already in use"),
              std::string::npos)
        << e.err;
}

}  // namespace
