// The front end's client for the demo's other processes (services.hpp): one
// keep-alive HTTP/1.1 connection to one service on 127.0.0.1, owned by one
// worker thread. A request is sent with its headers, and the response's
// status, headers and body are read back. A connection the service closed
// while it sat idle is reopened once; a service that does not answer within
// 5 s, or cannot be reached, fails the request (-1), so a dead or stuck
// child never hangs the front end. Sockets go through loupe::io, so they
// are named after their peer and an I/O session sees the calls.
//
// call_service() is the call as a task sees it: an outgoing_call around the
// request (CALL_OUT, the traceparent injected by the session's task rules,
// RETURN_IN with the traceresponse the service echoes).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/tasks.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "http.hpp"

namespace app_server {

using header_map = std::map<std::string, std::string>;

struct http_response {
    int status = -1;
    header_map headers;  ///< names lower-cased
    std::string body;
};

class service_client {
public:
    explicit service_client(int port) : port_(port) {}
    ~service_client() { disconnect(); }
    service_client(const service_client&) = delete;
    service_client& operator=(const service_client&) = delete;

    /// Sends `method target` with `headers` and an empty body, and reads the
    /// response into `out`. Returns its status, or -1 (the service cannot
    /// be reached, closed the connection, or gave no answer within 5 s).
    int send(const std::string& method, const std::string& target, const header_map& headers, http_response& out) {
        std::string text = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port_) + "\r\n";
        for (const auto& [name, value] : headers) text += name + ": " + value + "\r\n";
        text += "Content-Length: 0\r\n\r\n";
        for (int attempt = 0; attempt < 2; ++attempt) {
            const bool fresh = fd_ < 0;
            if (fresh && !connect()) return -1;
            errno = 0;
            http_request parsed;  // same framing: status line, headers, body
            if (send_all(fd_, text) && read_request(fd_, buffer_, parsed)) {
                out.status = std::atoi(parsed.target.c_str());  // "HTTP/1.1 200 OK": the second token
                out.headers = std::move(parsed.headers);
                out.body = std::move(parsed.body);
                return out.status;
            }
            const bool timed_out = errno == EAGAIN || errno == EWOULDBLOCK;
            disconnect();
            if (fresh || timed_out) return -1;  // only a kept-alive connection gets a second try
        }
        return -1;
    }

private:
    bool connect() {
        fd_ = loupe::io::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) return false;
        timeval timeout{5, 0};
        const int one = 1;
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(static_cast<std::uint16_t>(port_));
        if (::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0 ||
            ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0 ||
            ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
            loupe::io::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            disconnect();
            return false;
        }
        return true;
    }
    void disconnect() {
        if (fd_ >= 0) loupe::io::close(fd_);
        fd_ = -1;
        buffer_.clear();
    }

    int port_;
    int fd_ = -1;
    std::string buffer_;
};

/// One call of the current request's task to another process: `peer` and
/// `name` label it ("inventory", "GET /stock"; string literals: the call
/// scope keeps views of them). The session's task rules decide whether the
/// W3C traceparent goes along; the service's traceresponse comes back.
/// Returns the status (-1: no answer).
inline int call_service(service_client& client, const char* peer, const char* name, const std::string& method,
                        const std::string& target, header_map headers, http_response& response) {
    loupe::tasks::outgoing_call call(peer, name, headers);  // CALL_OUT; traceparent into headers when tagged
    const int status = client.send(method, target, headers, response);
    if (status < 0) {
        call.returned(status);
    } else {
        call.returned(response.headers, status);  // RETURN_IN; the echoed id from traceresponse
    }
    return status;
}

}  // namespace app_server
