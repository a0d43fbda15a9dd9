// A deliberately small HTTP/1.1 subset for the demo's processes: read one
// request (request line, headers, Content-Length body) from a socket and write
// one response (with extra headers, e.g. traceresponse). Enough for the
// built-in load generator and the calls between the demo's processes; not a
// general server.
// Socket reads and writes go through loupe::io, so an I/O session sees them.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <loupe/io.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace app_server {

struct http_request {
    std::string method;
    std::string target;  ///< path and query, e.g. "/search?q=lamp"
    std::map<std::string, std::string> headers;  ///< names lower-cased
    std::string body;

    std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
    std::string path() const { return target.substr(0, target.find('?')); }
    /// The value of query parameter `name` ("" when absent), as sent.
    std::string query(const std::string& name) const {
        std::size_t at = target.find('?');
        while (at != std::string::npos) {
            const std::size_t begin = at + 1;
            const std::size_t end = std::min(target.find('&', begin), target.size());
            if (target.compare(begin, name.size(), name) == 0 && begin + name.size() < end &&
                target[begin + name.size()] == '=') {
                return target.substr(begin + name.size() + 1, end - begin - name.size() - 1);
            }
            at = end < target.size() ? end : std::string::npos;
        }
        return {};
    }
};

/// Reads from `fd` until one whole request is in `buffer` (which may keep
/// bytes of the next one). False on EOF, error or a malformed request.
inline bool read_request(int fd, std::string& buffer, http_request& out) {
    std::size_t header_end;
    while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
        if (buffer.size() > 64 * 1024) return false;
        char chunk[4096];
        const ssize_t n = loupe::io::recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buffer.append(chunk, static_cast<std::size_t>(n));
    }
    const std::string_view head(buffer.data(), header_end);
    const std::size_t line_end = head.find("\r\n");
    const std::string_view request_line = head.substr(0, line_end);
    const std::size_t sp1 = request_line.find(' ');
    const std::size_t sp2 = request_line.find(' ', sp1 + 1);
    if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) return false;
    out = http_request{};
    out.method = std::string(request_line.substr(0, sp1));
    out.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
    std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
        std::size_t end = head.find("\r\n", pos);
        if (end == std::string_view::npos) end = head.size();
        const std::string_view line = head.substr(pos, end - pos);
        const std::size_t colon = line.find(':');
        if (colon != std::string_view::npos) {
            std::string name(line.substr(0, colon));
            for (auto& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            std::string_view value = line.substr(colon + 1);
            while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
            out.headers[name] = std::string(value);
        }
        pos = end + 2;
    }
    const std::size_t body_length = std::strtoul(out.header("content-length").c_str(), nullptr, 10);
    if (body_length > 1024 * 1024) return false;
    const std::size_t total = header_end + 4 + body_length;
    while (buffer.size() < total) {
        char chunk[4096];
        const ssize_t n = loupe::io::recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buffer.append(chunk, static_cast<std::size_t>(n));
    }
    out.body = buffer.substr(header_end + 4, body_length);
    buffer.erase(0, total);
    return true;
}

inline bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = loupe::io::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

inline const char* reason_phrase(int status) {
    switch (status) {
        case 200: return "OK";
        case 404: return "Not Found";
        case 502: return "Bad Gateway";
        default: return status >= 500 ? "Server Error" : "Bad Request";
    }
}

/// Writes one response; `headers` (e.g. traceresponse) go after the usual ones.
inline bool write_response(int fd, int status, std::string_view body,
                           const std::map<std::string, std::string>& headers = {}) {
    std::string response = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
                           "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: keep-alive\r\n";
    for (const auto& [name, value] : headers) response += name + ": " + value + "\r\n";
    response += "\r\n";
    response += body;
    return send_all(fd, response);
}

/// Reads one response's status and skips its body. -1 on failure.
inline int read_response(int fd, std::string& buffer) {
    http_request parsed;  // same framing: status line + headers + body
    if (!read_request(fd, buffer, parsed)) return -1;
    return std::atoi(parsed.target.c_str());  // "HTTP/1.1 200 OK": the second token
}

}  // namespace app_server
