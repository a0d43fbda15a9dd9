// Test helper: a local OTLP/HTTP receiver. An HTTP/1.1 server on
// 127.0.0.1 (an ephemeral port) in its own thread that reads each request
// (head and Content-Length body), keeps it, and answers by a script: one
// reply per request, in order, then `otlp_receiver::reply{}` (200 with an
// empty ExportTraceServiceResponse) for the rest. Written from RFC 9112
// and the OTLP specification, sharing nothing with loupe's client.
//
// Bounded: each connection is given 5 s, the server stops by itself after
// `lifetime` (and at destruction), and a request body may be 64 MiB.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace loupe_test {

class otlp_receiver {
public:
    struct reply {
        enum kind_type {
            ok,                 ///< 200, application/x-protobuf, an empty ExportTraceServiceResponse
            partial,            ///< 200 with partial_success {rejected_spans, error_message}
            unavailable,        ///< 503 (Retry-After: retry_after when >= 0)
            too_many,           ///< 429 (Retry-After: retry_after when >= 0)
            bad_request,        ///< 400 with a google.rpc.Status {message}
            close_mid_request,  ///< reads the head and half the body, then closes (no reply)
            go_away             ///< reads the head, closes, and stops listening: connects are refused
        } kind = ok;
        std::int64_t rejected = 0;  ///< partial
        std::string message;        ///< partial, bad_request
        int retry_after = -1;
        bool chunked = false;  ///< send the body with Transfer-Encoding: chunked

        reply() = default;
        reply(kind_type k, int retry_after_seconds = -1) : kind(k), retry_after(retry_after_seconds) {}  // NOLINT
        static reply partial_success(std::int64_t rejected_spans, std::string error_message) {
            reply r(partial);
            r.rejected = rejected_spans;
            r.message = std::move(error_message);
            return r;
        }
        static reply bad(std::string status_message) {
            reply r(bad_request);
            r.message = std::move(status_message);
            return r;
        }
    };

    struct request {
        std::string method, path;
        std::map<std::string, std::string> headers;  ///< names in lower case
        std::string body;
        int status = 0;  ///< what was answered; 0: none (closed)
    };

    explicit otlp_receiver(std::vector<reply> script = {}, std::chrono::seconds lifetime = std::chrono::seconds(60))
        : script_(std::move(script)), deadline_(std::chrono::steady_clock::now() + lifetime) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listener_ < 0) throw std::runtime_error("otlp_receiver: socket failed");
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        socklen_t len = sizeof a;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 16) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            ::close(listener_);
            throw std::runtime_error("otlp_receiver: cannot listen on 127.0.0.1");
        }
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    otlp_receiver(const otlp_receiver&) = delete;
    otlp_receiver& operator=(const otlp_receiver&) = delete;
    ~otlp_receiver() {
        stop_ = true;
        thread_.join();
        if (listener_ >= 0) ::close(listener_);
    }

    int port() const noexcept { return port_; }
    std::string authority() const { return "127.0.0.1:" + std::to_string(port_); }
    std::string url(const std::string& path = "/v1/traces") const { return "http://" + authority() + path; }

    /// Forget bodies once answered (a benchmark's long run); requests()
    /// then holds their heads only. Default: keep.
    void keep_bodies(bool keep) {
        std::lock_guard<std::mutex> lock(mutex_);
        keep_bodies_ = keep;
    }
    /// Bytes of all request bodies read.
    std::uint64_t received_bytes() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return received_bytes_;
    }

    /// The requests read so far (complete ones: a closed one is not kept).
    std::vector<request> requests() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }
    /// The bodies answered 200.
    std::vector<std::string> accepted_bodies() const {
        std::vector<std::string> out;
        for (const request& r : requests()) {
            if (r.status == 200) out.push_back(r.body);
        }
        return out;
    }
    /// Connections accepted so far.
    int connections() const noexcept { return connections_.load(); }

    /// An ExportTraceServiceResponse with partial_success {rejected, message}.
    static std::string partial_success_body(std::int64_t rejected, const std::string& message) {
        std::string inner;
        inner.push_back(0x08);  // 1: rejected_spans, varint
        varint(inner, static_cast<std::uint64_t>(rejected));
        if (!message.empty()) {
            inner.push_back(0x12);  // 2: error_message
            varint(inner, message.size());
            inner += message;
        }
        std::string out;
        out.push_back(0x0a);  // 1: partial_success
        varint(out, inner.size());
        return out + inner;
    }

private:
    using clock = std::chrono::steady_clock;

    static void varint(std::string& out, std::uint64_t v) {
        while (v >= 0x80) {
            out.push_back(static_cast<char>((v & 0x7f) | 0x80));
            v >>= 7;
        }
        out.push_back(static_cast<char>(v));
    }

    void serve() {
        while (!stop_ && clock::now() < deadline_ && listener_ >= 0) {
            pollfd p{listener_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            ++connections_;
            handle(fd);
            ::close(fd);
        }
    }

    // Reads into `in` until it holds `want` bytes; false on close, error or timeout.
    static bool read_until(int fd, std::string& in, std::size_t want, clock::time_point until) {
        char buffer[65536];
        while (in.size() < want) {
            pollfd p{fd, POLLIN, 0};
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now()).count();
            if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) return false;
            in.append(buffer, static_cast<std::size_t>(n));
        }
        return true;
    }

    static void send_text(int fd, const std::string& s) {
        std::size_t at = 0;
        while (at < s.size()) {
            const ssize_t n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
            if (n <= 0) return;
            at += static_cast<std::size_t>(n);
        }
    }

    void handle(int fd) {
        const auto until = clock::now() + std::chrono::seconds(5);
        std::string in;
        std::size_t blank = std::string::npos;
        while ((blank = in.find("\r\n\r\n")) == std::string::npos) {
            if (in.size() > 65536 || !read_until(fd, in, in.size() + 1, until)) return;
        }
        request r;
        const std::string head = in.substr(0, blank);
        std::size_t eol = head.find("\r\n");
        const std::string line = head.substr(0, eol);
        const std::size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
        if (sp1 == std::string::npos || sp2 == sp1) return;
        r.method = line.substr(0, sp1);
        r.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
        while (eol != std::string::npos && eol < head.size()) {
            const std::size_t next = head.find("\r\n", eol + 2);
            const std::string h = head.substr(eol + 2, next == std::string::npos ? std::string::npos : next - eol - 2);
            eol = next;
            const std::size_t colon = h.find(':');
            if (colon == std::string::npos) continue;
            std::string name = h.substr(0, colon);
            for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            std::size_t v = colon + 1;
            while (v < h.size() && h[v] == ' ') ++v;
            r.headers[name] = h.substr(v);
        }
        std::size_t length = 0;
        if (r.headers.count("content-length")) length = std::stoul(r.headers["content-length"]);
        if (length > (64u << 20)) return;
        const std::size_t body_at = blank + 4;

        reply answer;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (next_ < script_.size()) answer = script_[next_];
            ++next_;
        }
        if (answer.kind == reply::go_away) {
            ::close(listener_);
            listener_ = -1;
            return;
        }
        if (answer.kind == reply::close_mid_request) {
            read_until(fd, in, body_at + length / 2, until);
            linger l{1, 0};  // a reset, as a crashed peer gives
            ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
            return;
        }
        if (!read_until(fd, in, body_at + length, until)) return;
        r.body = in.substr(body_at, length);

        std::string status, body, type = "application/x-protobuf";
        switch (answer.kind) {
            case reply::ok: status = "200 OK"; break;
            case reply::partial:
                status = "200 OK";
                body = partial_success_body(answer.rejected, answer.message);
                break;
            case reply::unavailable: status = "503 Service Unavailable"; break;
            case reply::too_many: status = "429 Too Many Requests"; break;
            case reply::bad_request: {
                status = "400 Bad Request";
                body.push_back(0x08);  // google.rpc.Status 1: code 3 (INVALID_ARGUMENT)
                body.push_back(0x03);
                body.push_back(0x12);  // 2: message
                varint(body, answer.message.size());
                body += answer.message;
                break;
            }
            default: break;
        }
        r.status = std::stoi(status);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            received_bytes_ += r.body.size();
            if (!keep_bodies_) r.body.clear();
            requests_.push_back(r);
        }
        std::string out = "HTTP/1.1 " + status + "\r\nContent-Type: " + type + "\r\nConnection: close\r\n";
        if (answer.retry_after >= 0) out += "Retry-After: " + std::to_string(answer.retry_after) + "\r\n";
        if (answer.chunked) {
            out += "Transfer-Encoding: chunked\r\n\r\n";
            // Two chunks and an empty trailer section.
            const std::size_t half = body.size() / 2;
            for (const std::string& part : {body.substr(0, half), body.substr(half)}) {
                if (part.empty()) continue;
                char size[32];
                std::snprintf(size, sizeof size, "%zx\r\n", part.size());
                out += size + part + "\r\n";
            }
            out += "0\r\n\r\n";
        } else {
            out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        }
        send_text(fd, out);
    }

    std::vector<reply> script_;
    clock::time_point deadline_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    mutable std::mutex mutex_;
    std::vector<request> requests_;
    bool keep_bodies_ = true;
    std::uint64_t received_bytes_ = 0;
    std::size_t next_ = 0;
    std::thread thread_;
};

/// A port on 127.0.0.1 that nobody listens on: bound, not listening, kept
/// while the test runs (so no other process takes it).
class dead_port {
public:
    dead_port() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
    }
    ~dead_port() { ::close(fd_); }
    dead_port(const dead_port&) = delete;
    dead_port& operator=(const dead_port&) = delete;
    int port() const noexcept { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/traces"; }
    std::string authority() const { return "127.0.0.1:" + std::to_string(port_); }

private:
    int fd_ = -1;
    int port_ = 0;
};

}  // namespace loupe_test
