// The sessions a process's control endpoint started, and the commands that
// act on them: one request line in, one JSON reply line out
// (docs/control.md). Owned and used by the endpoint's thread only: no lock.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/base/version.hpp"
#include "loupe/control/detail/output_path.hpp"
#include "loupe/control/detail/process_info.hpp"
#include "loupe/core/filter.hpp"
#include "loupe/core/session.hpp"
#include "loupe/remote/protocol.hpp"
#include "loupe/sinks/file_sink.hpp"
#include "loupe/sinks/otlp_http_sink.hpp"
#include "loupe/text/json.hpp"

namespace loupe::control::detail {

namespace json = loupe::report::json;

/// At most this many sessions are listed (running ones, then the most
/// recently stopped); a start beyond it with all running is refused.
inline constexpr std::size_t max_listed_sessions = 64;

struct controlled_session {
    std::string name;
    std::string output;
    std::string filter;
    std::string task_rules;
    std::size_t ring_bytes = 0;     // the session's, as started
    std::size_t memory_budget = 0;  // the session's, as started
    std::shared_ptr<sinks::otlp_http_sink> otlp;  // start's otlp=, or null
    loupe::session handle;
    bool running = true;
    session_stats final_stats;
    bool has_deadline = false;
    std::chrono::steady_clock::time_point deadline{};
    std::uint64_t stopped_order = 0;  // when not running: larger is more recent
};

/// What `info` reports besides the sessions.
struct endpoint_facts {
    std::string socket_path;
    std::string output_root;
    const std::vector<std::string>* names = nullptr;  ///< listen_options::names
    const std::atomic<std::uint64_t>* refusals = nullptr;
    std::uint64_t requests = 0;
};

inline void add_stats(std::string& out, const session_stats& s) {
    out += ",\"delivered\":" + json::number(s.delivered);
    out += ",\"dropped\":" + json::number(s.dropped);
    out += ",\"sink_failures\":" + json::number(s.sink_failures);
    out += ",\"records_undelivered\":" + json::number(s.records_undelivered);
}

// A session's live OTLP export, when it has one: where, and its counts.
inline void add_otlp(std::string& out, const controlled_session& s) {
    if (!s.otlp) return;
    const sinks::otlp_http_sink_stats o = s.otlp->stats();
    out += ",\"otlp\":";
    json::append_string(out, s.otlp->options().http.endpoint);
    out += ",\"otlp_spans\":" + json::number(o.spans);
    out += ",\"otlp_accepted\":" + json::number(o.spans_accepted - o.spans_rejected);
    if (!o.first_error.empty()) {
        out += ",\"otlp_error\":";
        json::append_string(out, o.first_error);
    }
}

inline std::string error_reply(std::string_view command, const std::string& message, std::size_t column,
                               std::string_view line) {
    std::string out = "{\"ok\":false";
    if (!command.empty()) {
        out += ",\"command\":";
        json::append_string(out, command);
    }
    out += ",\"error\":";
    json::append_string(out, message);
    if (column != 0) out += ",\"column\":" + std::to_string(column);
    out += ",\"request\":";
    json::append_string(out, line.substr(0, 200));
    out += '}';
    return out;
}

class session_table {
public:
    explicit session_table(std::string output_root) : root_(std::move(output_root)) {}
    session_table(const session_table&) = delete;
    session_table& operator=(const session_table&) = delete;
    ~session_table() { stop_all(); }

    /// The reply (one line, no newline) to one request line. Never throws
    /// but bad_alloc.
    std::string handle(std::string_view line, const endpoint_facts& facts) {
        std::string_view command = line.substr(0, line.find_first_of(" \t"));
        if (command != "info" && command != "list" && command != "start" && command != "set" && command != "stop") {
            command = {};
        }
        try {
            const remote::request r = remote::parse_request(line);
            switch (r.command) {
                case remote::command::info:
                    return info(facts);
                case remote::command::list:
                    return list();
                case remote::command::start:
                    return start(r.start, facts);
                case remote::command::set:
                    return set(r);
                case remote::command::stop:
                    return stop(r.name);
            }
            return error_reply({}, "unhandled command", 0, line);
        } catch (const remote::request_error& e) {
            return error_reply(command, e.what(), e.column(), line);
        } catch (const std::bad_alloc&) {
            throw;
        } catch (const std::exception& e) {
            return error_reply(command, e.what(), 0, line);
        }
    }

    /// Stops the sessions whose duration ran out by `now`.
    void stop_expired(std::chrono::steady_clock::time_point now) {
        for (auto& s : sessions_) {
            if (s->running && s->has_deadline && s->deadline <= now) finish(*s);
        }
    }

    /// The earliest deadline of a running session; false when none.
    bool next_deadline(std::chrono::steady_clock::time_point& when) const {
        bool any = false;
        for (const auto& s : sessions_) {
            if (s->running && s->has_deadline && (!any || s->deadline < when)) {
                when = s->deadline;
                any = true;
            }
        }
        return any;
    }

    /// Stops every running session (files complete).
    void stop_all() noexcept {
        for (auto& s : sessions_) {
            if (s->running) {
                try {
                    finish(*s);
                } catch (...) {  // stop() throws only on the collector thread
                }
            }
        }
    }

    std::size_t running() const noexcept {
        return static_cast<std::size_t>(
            std::count_if(sessions_.begin(), sessions_.end(), [](const auto& s) { return s->running; }));
    }

private:
    controlled_session* find(const std::string& name) {
        for (auto& s : sessions_) {
            if (s->name == name) return s.get();
        }
        return nullptr;
    }

    void finish(controlled_session& s) {
        s.final_stats = s.handle.stop();
        s.running = false;
        s.stopped_order = ++stop_counter_;
    }

    std::string info(const endpoint_facts& facts) {
        std::string out = "{\"ok\":true,\"pid\":" + std::to_string(static_cast<long>(::getpid()));
        out += ",\"program\":";
        json::append_string(out, program_name());
        out += ",\"names\":[";
        if (facts.names != nullptr) {
            for (std::size_t i = 0; i < facts.names->size(); ++i) {
                if (i != 0) out += ',';
                json::append_string(out, (*facts.names)[i]);
            }
        }
        out += ']';
        out += ",\"started_unix_ms\":" + json::number(process_start_unix_ms());
        out += ",\"loupe_version\":\"" LOUPE_VERSION_STRING "\"";
        out += ",\"socket\":";
        json::append_string(out, facts.socket_path);
        out += ",\"output_directory\":";
        json::append_string(out, facts.output_root);
        out += ",\"sessions_running\":" + std::to_string(running());
        out += ",\"requests\":" + json::number(facts.requests);
        out += ",\"refused\":" +
               json::number(facts.refusals != nullptr ? facts.refusals->load(std::memory_order_relaxed) : 0);
        out += '}';
        return out;
    }

    std::string list() {
        std::string out = "{\"ok\":true,\"sessions\":[";
        bool first = true;
        for (auto& s : sessions_) {
            if (s->running && !s->handle.active()) finish(*s);  // stopped by the runtime (exit)
            if (!first) out += ',';
            first = false;
            out += "{\"name\":";
            json::append_string(out, s->name);
            out += std::string(",\"running\":") + (s->running ? "true" : "false");
            out += ",\"output\":";
            json::append_string(out, s->output);
            out += ",\"filter\":";
            json::append_string(out, s->filter);
            out += ",\"task_rules\":";
            json::append_string(out, s->task_rules);
            out += ",\"ring_bytes\":" + json::number(s->ring_bytes);
            out += ",\"memory_budget\":" + json::number(s->memory_budget);
            add_stats(out, s->running ? s->handle.stats() : s->final_stats);
            add_otlp(out, *s);
            out += '}';
        }
        out += "]}";
        return out;
    }

    // Makes room for one more entry: forgets the oldest stopped session.
    void make_room() {
        if (sessions_.size() < max_listed_sessions) return;
        auto oldest = sessions_.end();
        for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
            if (!(*it)->running && (oldest == sessions_.end() || (*it)->stopped_order < (*oldest)->stopped_order)) {
                oldest = it;
            }
        }
        if (oldest == sessions_.end()) {
            throw error("start: " + std::to_string(max_listed_sessions) +
                        " sessions started through the endpoint are running; stop one first");
        }
        sessions_.erase(oldest);
    }

    std::string start(const remote::start_request& req, const endpoint_facts& facts) {
        std::string name = req.name;
        if (name.empty()) {
            do {
                name = "remote-" + std::to_string(++auto_names_);
            } while (find(name) != nullptr && find(name)->running);
        }
        controlled_session* existing = find(name);
        if (existing != nullptr && existing->running) {
            throw error("start: a session named '" + name + "' is running; stop it or pick another name");
        }
        const std::string output = resolve_output(root_, req.output.empty() ? name + ".loupe" : req.output);
        for (const auto& s : sessions_) {
            if (s->running && s->output == output) {
                throw error("start: output " + output + " is being written by running session '" + s->name + "'");
            }
        }
        loupe::session_config cfg;
        cfg.name = name;
        cfg.kinds = req.kinds;
        cfg.filter = req.filter;
        cfg.params = req.params;
        cfg.task_rules = req.task_rules;
        cfg.metrics = req.metrics;
        if (req.ring_bytes != 0) cfg.ring_bytes = req.ring_bytes;
        if (req.set_memory_budget) cfg.memory_budget = static_cast<std::size_t>(req.memory_budget);
        cfg.overflow = req.overflow_block ? overflow_policy::block : overflow_policy::drop;
        cfg.sinks = {std::make_shared<sinks::file_sink>(output)};
        std::shared_ptr<sinks::otlp_http_sink> otlp;
        if (!req.otlp.empty()) {
            // The process's OTEL_* variables (headers, service name, resource
            // attributes), the request's endpoint; without OTEL_SERVICE_NAME
            // the service is the process's first name (what its peers call
            // it), else its program. Throws loupe::error naming a bad URL or
            // variable.
            sinks::otlp_http_sink_options options = sinks::otlp_http_sink::options_from_env();
            options.http.endpoint = req.otlp;
            if (options.conversion.service_name.empty() && facts.names != nullptr && !facts.names->empty()) {
                options.conversion.service_name = facts.names->front();
            }
            otlp = std::make_shared<sinks::otlp_http_sink>(std::move(options));
            cfg.sinks.push_back(otlp);
        }
        if (existing == nullptr) make_room();
        auto entry = std::make_unique<controlled_session>();
        entry->ring_bytes = cfg.ring_bytes;
        entry->memory_budget = cfg.memory_budget;
        entry->handle = loupe::start_session(std::move(cfg));  // throws loupe::error naming the field
        entry->name = name;
        entry->output = output;
        entry->filter = req.filter;
        entry->task_rules = req.task_rules;
        entry->otlp = std::move(otlp);
        if (req.duration_ms != 0) {
            entry->has_deadline = true;
            entry->deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(req.duration_ms);
        }
        if (existing != nullptr) {
            sessions_.erase(
                std::find_if(sessions_.begin(), sessions_.end(), [&](const auto& s) { return s.get() == existing; }));
        }
        sessions_.push_back(std::move(entry));
        std::string out = "{\"ok\":true,\"started\":";
        json::append_string(out, name);
        out += ",\"output\":";
        json::append_string(out, output);
        if (req.duration_ms != 0) out += ",\"duration_ms\":" + json::number(req.duration_ms);
        add_otlp(out, *sessions_.back());
        out += '}';
        return out;
    }

    controlled_session& running_session(const std::string& name, const char* command) {
        controlled_session* s = find(name);
        if (s == nullptr) throw error(std::string(command) + ": no session named '" + name + "'");
        if (s->running && !s->handle.active()) finish(*s);
        if (!s->running) throw error(std::string(command) + ": session '" + name + "' has stopped");
        return *s;
    }

    std::string set(const remote::request& r) {
        controlled_session& s = running_session(r.name, "set");
        // All or none: the filter and the rules are checked before anything changes.
        if (r.set_filter && (r.set_params || r.set_task_rules)) (void)loupe::filter::parse(r.start.filter);
        if (r.set_task_rules && r.set_params) (void)loupe::task_rules::parse(r.start.task_rules);
        if (r.set_params) s.handle.set_params(r.start.params);  // throws naming line and column
        if (r.set_task_rules) {
            s.handle.set_task_rules(r.start.task_rules);  // likewise
            s.task_rules = r.start.task_rules;
        }
        if (r.set_filter) {
            s.handle.set_filter(r.start.filter);  // throws naming the column; the old filter stays
            s.filter = r.start.filter;
        }
        std::string out = "{\"ok\":true,\"set\":";
        json::append_string(out, r.name);
        out += ",\"filter\":";
        json::append_string(out, s.filter);
        out += '}';
        return out;
    }

    std::string stop(const std::string& name) {
        controlled_session& s = running_session(name, "stop");
        finish(s);
        std::string out = "{\"ok\":true,\"stopped\":";
        json::append_string(out, name);
        out += ",\"output\":";
        json::append_string(out, s.output);
        add_stats(out, s.final_stats);
        add_otlp(out, s);
        out += '}';
        return out;
    }

    std::string root_;
    std::vector<std::unique_ptr<controlled_session>> sessions_;
    std::uint64_t auto_names_ = 0;
    std::uint64_t stop_counter_ = 0;
};

}  // namespace loupe::control::detail
