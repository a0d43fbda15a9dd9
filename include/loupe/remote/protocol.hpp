// The control protocol's requests (docs/control.md): one line of text per
// request, parsed into a `request`, and the text clients build them from.
// Shared by the endpoint in each process (control/) and by clients (the
// `loupe` CLI). Parsing is pure: no I/O, no state, so it can be fuzzed
// (tests/fuzz/fuzz_control.cpp).
//
//   info
//   list
//   start name=checkout; kinds=zones,io; filter="user == \"alice\""; output=alice.loupe; duration_ms=10000
//   start name=live; output=live.loupe; otlp="http://127.0.0.1:4318/v1/traces"
//   set checkout filter="user == \"bob\""
//   set checkout params="method=shop::Cart::add(Item const&,int); param=1"
//   stop checkout
//
// A config is `key=value` pairs separated by `;`. A value is bare (up to the
// next `;`, spaces around it dropped) or double-quoted with the escapes
// \" \\ \n \t \r (a quoted value may hold `;`; parameter specs separate
// their lines with \n).
//
// Errors: `request_error`, a loupe::error whose message names the command or
// key, the 1-based column in the line and what was expected.
// Cost: linear in the line. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/base/site.hpp"

namespace loupe::remote {

/// Longest request line an endpoint reads, newline excluded.
inline constexpr std::size_t max_request_bytes = 64 * 1024;
/// Longest session name: letters, digits, `_`, `-` and `.`.
inline constexpr std::size_t max_session_name = 64;
/// Longest `duration_ms` (7 days).
inline constexpr std::uint64_t max_duration_ms = 7ull * 24 * 3600 * 1000;
/// Largest `memory_budget` (1 TiB).
inline constexpr std::uint64_t max_memory_budget = std::uint64_t{1} << 40;

/// A request that could not be parsed: `column` is 1-based in the line (0
/// when the whole line is at fault).
class request_error : public error {
public:
    request_error(const std::string& message, std::size_t column) : error(message), column_(column) {}
    std::size_t column() const noexcept { return column_; }

private:
    std::size_t column_;
};

enum class command { info, list, start, set, stop };

/// What `start` asks for. Unset fields keep the endpoint's defaults.
struct start_request {
    std::string name;  ///< empty: the endpoint picks one
    std::uint32_t kinds = loupe::kinds::all;
    std::string filter;  ///< filter language (docs/filters.md)
    std::string params;  ///< parameter specs, one per line
    std::string task_rules;  ///< which calls carry the task's context (core/task_rules.hpp)
    std::vector<std::string> metrics;
    std::size_t ring_bytes = 0;     ///< 0: the session default
    bool set_memory_budget = false;  ///< memory_budget= given
    std::uint64_t memory_budget = 0;  ///< with set_memory_budget (0: rings never grow)
    bool overflow_block = false;    ///< overflow=block
    std::string output;             ///< empty: `<name>.loupe`
    std::uint64_t duration_ms = 0;  ///< 0: until `stop`
    /// Also send the spans, while the session runs, to this OTLP/HTTP
    /// endpoint (sinks/otlp_http_sink.hpp); empty: the file only.
    std::string otlp;
};

/// One parsed request line.
struct request {
    remote::command command = remote::command::info;
    std::string name;  ///< set, stop: the session
    start_request start;
    bool set_filter = false;  ///< set: filter= given (in start.filter)
    bool set_params = false;  ///< set: params= given (in start.params)
    bool set_task_rules = false;  ///< set: task_rules= given (in start.task_rules)
};

namespace detail {

inline std::string column_text(std::size_t column) { return "column " + std::to_string(column); }

inline bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
}

// A cursor over the request line; positions are 0-based, columns 1-based.
struct line_cursor {
    std::string_view line;
    std::size_t pos = 0;

    bool done() const { return pos >= line.size(); }
    char peek() const { return line[pos]; }
    void skip_spaces() {
        while (!done() && (peek() == ' ' || peek() == '\t')) ++pos;
    }
    std::string_view word() {  // up to the next space or tab
        const std::size_t from = pos;
        while (!done() && peek() != ' ' && peek() != '\t') ++pos;
        return line.substr(from, pos - from);
    }
    [[noreturn]] void fail(std::size_t at, const std::string& what) const {
        throw request_error(column_text(at + 1) + ": " + what, at + 1);
    }
};

inline void check_name(const line_cursor& c, std::size_t at, std::string_view name, const char* what) {
    if (name.empty()) c.fail(at, std::string("missing ") + what);
    if (name.size() > max_session_name) {
        c.fail(at, std::string(what) + " is " + std::to_string(name.size()) + " bytes; at most " +
                       std::to_string(max_session_name));
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (!name_char(name[i])) {
            c.fail(at + i,
                   std::string(what) + " '" + std::string(name) + "' may hold letters, digits, '_', '-' and '.' only");
        }
    }
}

inline std::uint64_t parse_number(const line_cursor& c, std::size_t at, std::string_view key, std::string_view v,
                                  std::uint64_t low, std::uint64_t high) {
    const std::string range = std::to_string(low) + " to " + std::to_string(high);
    if (v.empty()) c.fail(at, std::string(key) + ": expected a number, " + range);
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] < '0' || v[i] > '9') {
            c.fail(at + i, std::string(key) + " '" + std::string(v) + "': expected a number, " + range);
        }
        if (value > (high - static_cast<std::uint64_t>(v[i] - '0')) / 10) {
            c.fail(at, std::string(key) + " '" + std::string(v) + "' is out of range: expected " + range);
        }
        value = value * 10 + static_cast<std::uint64_t>(v[i] - '0');
    }
    if (value < low) c.fail(at, std::string(key) + " '" + std::string(v) + "' is out of range: expected " + range);
    return value;
}

// A comma-separated list: each item with its position.
inline std::vector<std::pair<std::string_view, std::size_t>> split_list(std::string_view v, std::size_t at) {
    std::vector<std::pair<std::string_view, std::size_t>> items;
    std::size_t from = 0;
    for (std::size_t i = 0; i <= v.size(); ++i) {
        if (i == v.size() || v[i] == ',') {
            std::size_t b = from, e = i;
            while (b < e && v[b] == ' ') ++b;
            while (e > b && v[e - 1] == ' ') --e;
            items.emplace_back(v.substr(b, e - b), at + b);
            from = i + 1;
        }
    }
    return items;
}

inline std::uint32_t parse_kinds(const line_cursor& c, std::size_t at, std::string_view v) {
    std::uint32_t mask = 0;
    for (const auto& [item, where] : split_list(v, at)) {
        if (item == "zones")
            mask |= loupe::kinds::zones;
        else if (item == "instants")
            mask |= loupe::kinds::instants;
        else if (item == "counters")
            mask |= loupe::kinds::counters;
        else if (item == "io")
            mask |= loupe::kinds::io;
        else if (item == "methods")
            mask |= loupe::kinds::methods;
        else if (item == "flows")
            mask |= loupe::kinds::flows;
        else if (item == "tasks")
            mask |= loupe::kinds::tasks;
        else if (item == "all")
            mask |= loupe::kinds::all;
        else {
            c.fail(where, "kinds: unknown kind '" + std::string(item) +
                              "'; expected zones, instants, counters, io, methods, flows, tasks or all (comma-separated)");
        }
    }
    return mask;
}

// One value after `key=`: quoted or bare. Leaves the cursor after it and the
// spaces that follow.
inline std::string read_value(line_cursor& c, std::string_view key) {
    c.skip_spaces();
    std::string value;
    if (!c.done() && c.peek() == '"') {
        const std::size_t open = c.pos++;
        for (;;) {
            if (c.done()) {
                c.fail(open, std::string(key) + ": the quote opened here is not closed");
            }
            const char ch = c.line[c.pos++];
            if (ch == '"') break;
            if (ch != '\\') {
                value += ch;
                continue;
            }
            if (c.done()) c.fail(c.pos - 1, std::string(key) + ": '\\' at the end of the line");
            const char e = c.line[c.pos++];
            switch (e) {
                case '"':
                    value += '"';
                    break;
                case '\\':
                    value += '\\';
                    break;
                case 'n':
                    value += '\n';
                    break;
                case 't':
                    value += '\t';
                    break;
                case 'r':
                    value += '\r';
                    break;
                default:
                    c.fail(c.pos - 2, std::string(key) + ": unknown escape '\\" + std::string(1, e) +
                                          "'; expected \\\" \\\\ \\n \\t or \\r");
            }
        }
        c.skip_spaces();
        if (!c.done() && c.peek() != ';') {
            c.fail(c.pos, std::string(key) + ": expected ';' or the end of the line after the quoted value");
        }
        return value;
    }
    const std::size_t from = c.pos;
    while (!c.done() && c.peek() != ';') {
        if (c.peek() == '"') c.fail(c.pos, std::string(key) + ": a quote inside a bare value; quote the whole value");
        ++c.pos;
    }
    std::string_view v = c.line.substr(from, c.pos - from);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return std::string(v);
}

// The config after `start` or `set NAME`. `set` allows filter and params
// only.
inline void parse_config(line_cursor& c, request& r, bool for_set) {
    std::vector<std::string> seen;
    for (;;) {
        c.skip_spaces();
        if (c.done()) break;
        if (c.peek() == ';') {
            ++c.pos;
            continue;
        }
        const std::size_t key_at = c.pos;
        while (!c.done() && c.peek() != '=' && c.peek() != ';' && c.peek() != ' ' && c.peek() != '\t') ++c.pos;
        const std::string key(c.line.substr(key_at, c.pos - key_at));
        c.skip_spaces();
        if (c.done() || c.peek() != '=') c.fail(key_at, "expected key=value, found '" + key + "' without '='");
        ++c.pos;
        const bool known = key == "name" || key == "kinds" || key == "filter" || key == "params" || key == "metrics" ||
                           key == "ring_bytes" || key == "memory_budget" || key == "overflow" || key == "output" ||
                           key == "duration_ms" || key == "task_rules" || key == "otlp";
        if (!known || (for_set && key != "filter" && key != "params" && key != "task_rules")) {
            c.fail(key_at, "unknown key '" + key + "'; expected " +
                               (for_set ? std::string("filter, params or task_rules")
                                        : std::string("name, kinds, filter, params, task_rules, metrics, ring_bytes, "
                                                      "memory_budget, overflow, output, duration_ms or otlp")));
        }
        for (const std::string& k : seen) {
            if (k == key) c.fail(key_at, "key '" + key + "' given twice");
        }
        seen.push_back(key);
        c.skip_spaces();
        const std::size_t value_at = c.pos;
        const std::string value = read_value(c, key);
        start_request& s = r.start;
        if (key == "name") {
            check_name(c, value_at, value, "name");
            s.name = value;
        } else if (key == "kinds") {
            s.kinds = parse_kinds(c, value_at, value);
            if (s.kinds == 0) c.fail(value_at, "kinds: expected at least one kind");
        } else if (key == "filter") {
            s.filter = value;
            r.set_filter = true;
        } else if (key == "params") {
            s.params = value;
            r.set_params = true;
        } else if (key == "task_rules") {
            s.task_rules = value;
            r.set_task_rules = true;
        } else if (key == "metrics") {
            for (const auto& [item, where] : split_list(value, value_at)) {
                if (item.empty()) c.fail(where, "metrics: an empty metric name");
                s.metrics.emplace_back(item);
            }
        } else if (key == "ring_bytes") {
            s.ring_bytes = static_cast<std::size_t>(parse_number(c, value_at, key, value, 256, std::uint64_t{1} << 32));
        } else if (key == "memory_budget") {
            s.memory_budget = parse_number(c, value_at, key, value, 0, max_memory_budget);
            s.set_memory_budget = true;
        } else if (key == "overflow") {
            if (value != "drop" && value != "block") {
                c.fail(value_at, "overflow '" + value + "': expected drop or block");
            }
            s.overflow_block = value == "block";
        } else if (key == "output") {
            if (value.empty()) c.fail(value_at, "output: expected a file name");
            s.output = value;
        } else if (key == "otlp") {
            if (value.empty()) c.fail(value_at, "otlp: expected a URL (http://HOST:PORT/v1/traces)");
            s.otlp = value;
        } else {
            s.duration_ms = parse_number(c, value_at, key, value, 1, max_duration_ms);
        }
    }
    if (for_set && !r.set_filter && !r.set_params && !r.set_task_rules) {
        c.fail(c.pos, "set: expected filter=..., params=... or task_rules=...");
    }
}

}  // namespace detail

/// Parses one request line (without its newline). Throws request_error
/// naming the column for an unknown command, a bad key or value, a control
/// byte (binary junk) or a line longer than max_request_bytes.
inline request parse_request(std::string_view line) {
    if (line.size() > max_request_bytes) {
        throw request_error(
            "request line of " + std::to_string(line.size()) + " bytes; at most " + std::to_string(max_request_bytes),
            0);
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    detail::line_cursor c{line};
    for (std::size_t i = 0; i < line.size(); ++i) {
        const auto b = static_cast<unsigned char>(line[i]);
        if ((b < 0x20 && b != '\t') || b == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", b);
            c.fail(i, std::string("control byte ") + hex + " in the request; expected text");
        }
    }
    c.skip_spaces();
    const std::size_t word_at = c.pos;
    const std::string_view word = c.word();
    request r;
    if (word == "info" || word == "list") {
        r.command = word == "info" ? command::info : command::list;
        c.skip_spaces();
        if (!c.done()) c.fail(c.pos, "unexpected text after '" + std::string(word) + "'");
        return r;
    }
    if (word == "stop" || word == "set") {
        r.command = word == "stop" ? command::stop : command::set;
        c.skip_spaces();
        const std::size_t name_at = c.pos;
        r.name = std::string(c.word());
        detail::check_name(c, name_at, r.name, "session name");
        if (r.command == command::stop) {
            c.skip_spaces();
            if (!c.done()) c.fail(c.pos, "unexpected text after 'stop " + r.name + "'");
        } else {
            detail::parse_config(c, r, true);
        }
        return r;
    }
    if (word == "start") {
        r.command = command::start;
        detail::parse_config(c, r, false);
        return r;
    }
    if (word.empty()) c.fail(word_at, "empty request; expected info, list, start, set or stop");
    c.fail(word_at,
           "unknown command '" + std::string(word.substr(0, 64)) + "'; expected info, list, start, set or stop");
}

/// `value` as a quoted config value (for clients building a request).
inline std::string quote_value(std::string_view value) {
    std::string out = "\"";
    for (const char ch : value) {
        switch (ch) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                out += ch;
        }
    }
    out += '"';
    return out;
}

}  // namespace loupe::remote
