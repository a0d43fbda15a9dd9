// `loupe dump`: prints every record of a trace in file order, as aligned text
// or as JSON Lines (one object per record and per event).
#pragma once

#include <loupe/base/clock_source.hpp>
#include <loupe/base/context.hpp>
#include <loupe/base/flow_id_text.hpp>
#include <loupe/base/io_types.hpp>
#include <loupe/base/metric_types.hpp>
#include <loupe/base/param_value.hpp>
#include <loupe/base/site.hpp>
#include <loupe/format/decoder.hpp>
#include <loupe/text/json.hpp>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace loupe_cli {

class dump_visitor final : public loupe::trace_visitor {
public:
    dump_visitor(std::FILE* out, bool json) : out_(out), json_(json) {}

    void on_session(std::uint64_t at, const loupe::trace_session_info& s) override {
        const char* clock = s.clock == loupe::clock_source::tsc ? "tsc" : "steady_clock";
        if (json_) {
            line("{\"offset\":0,\"record\":\"header\",\"version\":\"" + std::to_string(s.version_major) + "." +
                 std::to_string(s.version_minor) + "\",\"flags\":" + std::to_string(s.flags) + "}");
            line(open(at, "session") + ",\"name\":" + q(s.name) + ",\"pid\":" + std::to_string(s.pid) +
                 ",\"clock\":\"" + clock + "\",\"start_ns\":" + std::to_string(s.start_ns) +
                 ",\"wall_anchor_ns\":" + std::to_string(s.wall_anchor_ns) + "}");
        } else {
            text(0, "HEADER", "version " + std::to_string(s.version_major) + "." + std::to_string(s.version_minor) +
                                  " flags " + std::to_string(s.flags));
            text(at, "SESSION", "name " + q(s.name) + " pid " + std::to_string(s.pid) + " clock " + clock +
                                    " start_ns " + std::to_string(s.start_ns) + " wall_anchor_ns " +
                                    std::to_string(s.wall_anchor_ns));
        }
    }

    void on_string(std::uint64_t at, std::uint64_t id, std::string_view s) override {
        if (json_) {
            line(open(at, "string") + ",\"id\":" + std::to_string(id) + ",\"text\":" + q(s) + "}");
        } else {
            text(at, "STRING", std::to_string(id) + " " + q(s));
        }
    }

    void on_site(std::uint64_t at, const loupe::trace_site& s) override {
        site_names_[s.id] = s.name;
        const char* kind = site_kind_name(s.kind);
        if (json_) {
            line(open(at, "site") + ",\"id\":" + std::to_string(s.id) + ",\"kind\":\"" + kind +
                 "\",\"name\":" + q(s.name) + ",\"file\":" + q(s.file) + ",\"line\":" + std::to_string(s.line) +
                 ",\"function\":" + q(s.function) + "}");
        } else {
            text(at, "SITE", std::to_string(s.id) + " " + kind + " " + q(s.name) + " at " + s.file + ":" +
                                 std::to_string(s.line) + " in " + q(s.function));
        }
    }

    void on_thread(std::uint64_t at, const loupe::trace_thread& t) override {
        if (json_) {
            line(open(at, "thread") + ",\"id\":" + std::to_string(t.id) + ",\"os_tid\":" + std::to_string(t.os_tid) +
                 ",\"name\":" + q(t.name) + "}");
        } else {
            text(at, "THREAD", std::to_string(t.id) + " tid " + std::to_string(t.os_tid) + " name " + q(t.name));
        }
    }

    void on_events_begin(std::uint64_t at, std::uint64_t thread_id) override {
        if (json_) {
            line(open(at, "events") + ",\"thread\":" + std::to_string(thread_id) + "}");
        } else {
            text(at, "EVENTS", "thread " + std::to_string(thread_id));
        }
    }

    void on_event(std::uint64_t at, const loupe::trace_event& e) override {
        const char* type = e.type == loupe::event_type::zone      ? "zone"
                           : e.type == loupe::event_type::instant ? "instant"
                                                                  : "counter";
        const std::string& name = site_names_[e.site_id];
        if (json_) {
            std::string s = open(at, type) + ",\"thread\":" + std::to_string(e.thread_id) +
                            ",\"site\":" + std::to_string(e.site_id) + ",\"name\":" + q(name) +
                            ",\"begin_ns\":" + std::to_string(e.begin_ns);
            if (e.type == loupe::event_type::zone) {
                s += ",\"end_ns\":" + std::to_string(e.end_ns) +
                     ",\"duration_ns\":" + std::to_string(e.end_ns - e.begin_ns);
            }
            if (e.type == loupe::event_type::counter) s += ",\"value\":" + loupe::report::json::number(e.value);
            line(s + "}");
        } else {
            std::string s = "site " + std::to_string(e.site_id) + " " + q(name) + " at " + std::to_string(e.begin_ns);
            if (e.type == loupe::event_type::zone) s += " duration " + std::to_string(e.end_ns - e.begin_ns) + " ns";
            if (e.type == loupe::event_type::counter) s += " value " + loupe::report::json::number(e.value);
            text(at, std::string("  ") + type, s);
        }
    }

    void on_dropped(std::uint64_t at, const loupe::trace_drop& d) override {
        if (json_) {
            line(open(at, "dropped") + ",\"thread\":" + std::to_string(d.thread_id) +
                 ",\"count\":" + std::to_string(d.count) + "}");
        } else {
            text(at, "DROPPED", "thread " + std::to_string(d.thread_id) + " count " + std::to_string(d.count));
        }
    }

    void on_end(std::uint64_t at, const loupe::trace_end_info& e) override {
        if (json_) {
            line(open(at, "end") + ",\"events_written\":" + std::to_string(e.events_written) +
                 ",\"events_dropped\":" + std::to_string(e.events_dropped) + ",\"end_ns\":" + std::to_string(e.end_ns) +
                 "}");
        } else {
            text(at, "END", "written " + std::to_string(e.events_written) + " dropped " +
                                std::to_string(e.events_dropped) + " end_ns " + std::to_string(e.end_ns));
        }
    }

    void on_context(std::uint64_t at, const loupe::trace_context& c) override {
        std::string fields;
        for (unsigned f = 0; f < loupe::context_field_count; ++f) {
            const auto field = static_cast<loupe::context_field>(f);
            const std::string& v = c.fields[f];
            if (v.empty()) continue;
            const bool cut = (c.truncated_mask >> f) & 1u;
            if (json_) {
                fields += std::string(",\"") + loupe::context_field_name(field) + "\":" + q(v);
                if (cut) fields += std::string(",\"") + loupe::context_field_name(field) + "_truncated\":true";
            } else {
                fields += std::string(" ") + loupe::context_field_name(field) + "=" + q(v) + (cut ? "(truncated)" : "");
            }
        }
        if (json_) {
            line(open(at, "context") + ",\"thread\":" + std::to_string(c.thread_id) +
                 ",\"time_ns\":" + std::to_string(c.time_ns) + fields + "}");
        } else {
            text(at, "CONTEXT", "thread " + std::to_string(c.thread_id) + " at " + std::to_string(c.time_ns) +
                                    (fields.empty() ? " (empty)" : fields));
        }
    }

    void on_io_resource(std::uint64_t at, const loupe::trace_io_resource& r) override {
        const char* kind = loupe::io::resource_kind_name(r.kind);
        if (json_) {
            line(open(at, "io_resource") + ",\"id\":" + std::to_string(r.id) + ",\"kind\":\"" + kind +
                 "\",\"name\":" + q(r.name) + ",\"open_ns\":" + std::to_string(r.open_ns) +
                 ",\"opener_os_tid\":" + std::to_string(r.opener_os_tid) + (r.backfilled ? ",\"backfilled\":true" : "") +
                 (r.name_truncated ? ",\"name_truncated\":true" : "") + "}");
        } else {
            text(at, "IO_RESOURCE", std::to_string(r.id) + " " + kind + " " + q(r.name) + " opened " +
                                        (r.open_ns ? "at " + std::to_string(r.open_ns) : std::string("(unknown)")) +
                                        " by tid " + std::to_string(r.opener_os_tid) +
                                        (r.backfilled ? " (backfilled)" : "") + (r.name_truncated ? " (truncated)" : ""));
        }
    }

    void on_io(std::uint64_t at, const loupe::trace_io_op& op) override {
        const char* name = loupe::io::op_name(op.op);
        if (json_) {
            line(open(at, "io") + ",\"thread\":" + std::to_string(op.thread_id) + ",\"op\":\"" + name +
                 "\",\"begin_ns\":" + std::to_string(op.begin_ns) + ",\"duration_ns\":" +
                 std::to_string(op.end_ns - op.begin_ns) + ",\"resource\":" + std::to_string(op.resource_id) +
                 ",\"fd\":" + std::to_string(op.fd) + ",\"result\":" + std::to_string(op.result) + "}");
        } else {
            text(at, "IO", "thread " + std::to_string(op.thread_id) + " " + name + " fd " + std::to_string(op.fd) +
                               " resource " + std::to_string(op.resource_id) + " result " + std::to_string(op.result) +
                               " at " + std::to_string(op.begin_ns) + " duration " +
                               std::to_string(op.end_ns - op.begin_ns) + " ns");
        }
    }

    void on_metric(std::uint64_t at, const loupe::trace_metric& m) override {
        if (json_) {
            line(open(at, "metric") + ",\"id\":" + std::to_string(m.id) + ",\"name\":" + q(m.name) +
                 ",\"unit\":" + q(m.unit) + ",\"source\":" + std::to_string(static_cast<int>(m.source)) +
                 ",\"available\":" + (m.available ? "true" : "false") + ",\"reason\":" + q(m.unavailable_reason) +
                 "}");
        } else {
            text(at, "METRIC", std::to_string(m.id) + " " + m.name + (m.unit.empty() ? "" : " (" + m.unit + ")") +
                                   (m.available ? "" : " unavailable: " + m.unavailable_reason));
        }
    }

    void on_zone_metrics(std::uint64_t at, const loupe::trace_zone_metrics& z) override {
        if (json_) {
            line(open(at, "zone_metrics") + ",\"thread\":" + std::to_string(z.thread_id) + ",\"values\":" +
                 values_json(z.values) + "}");
        } else {
            text(at, "ZONE_METR", "thread " + std::to_string(z.thread_id) + values_text(z.values));
        }
    }

    void on_metric_totals(std::uint64_t at, const loupe::trace_metric_totals& t) override {
        const std::string who = t.per_cpu ? "cpu " + std::to_string(t.cpu) : "thread " + std::to_string(t.thread_id);
        if (json_) {
            line(open(at, "metric_totals") + (t.per_cpu ? ",\"cpu\":" + std::to_string(t.cpu)
                                                        : ",\"thread\":" + std::to_string(t.thread_id)) +
                 ",\"values\":" + values_json(t.values) + "}");
        } else {
            text(at, "TOTALS", who + values_text(t.values));
        }
    }

    void on_param_spec(std::uint64_t at, const loupe::trace_param_spec& s) override {
        if (json_) {
            line(open(at, "param_spec") + ",\"index\":" + std::to_string(s.index) + ",\"name\":" + q(s.name) +
                 ",\"text\":" + q(s.text) + "}");
        } else {
            text(at, "PARAM_SPEC", std::to_string(s.index) + " name " + q(s.name) + " " + q(s.text));
        }
    }

    void on_method_call(std::uint64_t at, const loupe::trace_method_call_record& m) override {
        if (json_) {
            std::string s = open(at, "method_call") + ",\"thread\":" + std::to_string(m.thread_id) +
                            ",\"exceptional\":" + (m.exceptional ? "true" : "false") +
                            ",\"values_lost\":" + (m.values_lost ? "true" : "false");
            if (m.has_cpu) {
                s += ",\"cpu_begin_ns\":" + std::to_string(m.cpu_begin_ns) +
                     ",\"cpu_end_ns\":" + std::to_string(m.cpu_end_ns);
            }
            s += ",\"values\":[";
            for (std::size_t i = 0; i < m.values.size(); ++i) s += (i ? "," : "") + value_json(m.values[i]);
            line(s + "]}");
        } else {
            std::string s = "thread " + std::to_string(m.thread_id);
            if (m.exceptional) s += " exceptional";
            if (m.values_lost) s += " values-lost";
            if (m.has_cpu) {
                s += " cpu " + std::to_string(m.cpu_begin_ns) + ".." + std::to_string(m.cpu_end_ns) + " (" +
                     std::to_string(static_cast<std::int64_t>(m.cpu_end_ns - m.cpu_begin_ns)) + " ns)";
            }
            s += m.values.empty() ? " no values" : " values:";
            for (std::size_t i = 0; i < m.values.size(); ++i) s += (i ? ", " : " ") + value_text(m.values[i]);
            text(at, "  METHOD", s);
        }
    }

    void on_zone_arg(std::uint64_t at, const loupe::trace_zone_arg& a) override {
        if (json_) {
            line(open(at, "zone_arg") + ",\"thread\":" + std::to_string(a.thread_id) +
                 ",\"zone_begin_ns\":" + std::to_string(a.zone_begin_ns) + ",\"key\":" + q(a.arg.key) +
                 ",\"value\":" + value_json(a.arg.value) + "}");
        } else {
            text(at, "ZONE_ARG", "thread " + std::to_string(a.thread_id) + " zone at " +
                                     std::to_string(a.zone_begin_ns) + " " + q(a.arg.key) + " = " +
                                     value_text(a.arg.value));
        }
    }

    void on_apply_error(std::uint64_t at, const loupe::trace_apply_error& e) override {
        const std::string& name = site_names_[e.site_id];
        if (json_) {
            line(open(at, "apply_error") + ",\"site\":" + std::to_string(e.site_id) + ",\"name\":" + q(name) +
                 ",\"spec\":" + std::to_string(e.spec) + ",\"reason\":" + q(e.reason) + "}");
        } else {
            text(at, "APPLY_ERR",
                 "site " + std::to_string(e.site_id) + " " + q(name) + " spec " + std::to_string(e.spec) + ": " +
                     q(e.reason));
        }
    }

    void on_flow(std::uint64_t at, const loupe::trace_flow& f) override {
        const std::string& name = site_names_[f.site_id];
        const char* role = f.terminates ? "end" : "step";
        if (json_) {
            line(open(at, "flow") + ",\"thread\":" + std::to_string(f.thread_id) + ",\"site\":" +
                 std::to_string(f.site_id) + ",\"name\":" + q(name) + ",\"time_ns\":" + std::to_string(f.time_ns) +
                 ",\"id\":\"" + loupe::flow_id_text(f.flow_id) + "\",\"role\":\"" + role + "\"}");
        } else {
            text(at, "FLOW", "thread " + std::to_string(f.thread_id) + " site " + std::to_string(f.site_id) + " " +
                                 q(name) + " id " + loupe::flow_id_text(f.flow_id) + " " + role + " at " +
                                 std::to_string(f.time_ns));
        }
    }

    void on_process(std::uint64_t at, std::string_view program) override {
        if (json_) {
            line(open(at, "process") + ",\"program\":" + q(std::string(program)) + "}");
        } else {
            text(at, "PROCESS", "program " + q(std::string(program)));
        }
    }

    void on_host(std::uint64_t at, const loupe::trace_session_info& s) override {
        if (json_) {
            line(open(at, "host") + ",\"host\":" + q(s.host) + ",\"boot_id\":" + q(s.boot_id) +
                 ",\"clock_domain\":" + q(s.clock_domain) + ",\"process_start_ns\":" + std::to_string(s.process_start_ns) +
                 "}");
        } else {
            text(at, "HOST", "host " + q(s.host) + " boot " + q(s.boot_id) + " clock domain " + q(s.clock_domain) +
                                 " process start " + std::to_string(s.process_start_ns));
        }
    }

    void on_task_context(std::uint64_t at, const loupe::trace_context& c) override {
        const std::string trace = hex64(c.trace_high) + hex64(c.trace_low);
        if (json_) {
            line(open(at, "task_context") + ",\"thread\":" + std::to_string(c.thread_id) + ",\"time_ns\":" +
                 std::to_string(c.time_ns) + ",\"trace\":\"" + trace + "\",\"span\":\"" + hex64(c.span_id) +
                 "\",\"flags\":" + std::to_string(c.trace_flags) + ",\"tracestate\":" + q(c.tracestate) + "}");
        } else {
            text(at, "TASK_CONTEXT", "thread " + std::to_string(c.thread_id) + " trace " + trace + " span " +
                                         hex64(c.span_id) + " flags " + std::to_string(c.trace_flags) +
                                         (c.tracestate.empty() ? std::string() : " tracestate " + q(c.tracestate)));
        }
    }

    void on_task_point(std::uint64_t at, const loupe::trace_task_point& t) override {
        static const char* const points[] = {"?", "call_out", "return_in", "request_in", "return_out"};
        const char* point = points[static_cast<unsigned>(t.kind) % 5];
        const std::string trace = hex64(t.trace_high) + hex64(t.trace_low);
        if (json_) {
            line(open(at, "task") + ",\"thread\":" + std::to_string(t.thread_id) + ",\"point\":\"" + point +
                 "\",\"time_ns\":" + std::to_string(t.time_ns) + ",\"trace\":\"" + trace + "\",\"call\":\"" +
                 hex64(t.call_id) + "\",\"span\":\"" + hex64(t.span_id) + "\",\"echoed\":\"" + hex64(t.echoed_id) +
                 "\",\"status\":" + std::to_string(t.status) + ",\"tagged\":" + (t.tagged ? "true" : "false") +
                 ",\"peer\":" + q(t.peer) + ",\"name\":" + q(t.name) + "}");
        } else {
            text(at, "TASK", std::string(point) + " thread " + std::to_string(t.thread_id) + " at " +
                                 std::to_string(t.time_ns) + " trace " + trace + " call " + hex64(t.call_id) + " span " +
                                 hex64(t.span_id) + " echoed " + hex64(t.echoed_id) + " status " +
                                 std::to_string(t.status) + (t.tagged ? " tagged" : "") + " peer " + q(t.peer) +
                                 " name " + q(t.name));
        }
    }

    void on_unknown(std::uint64_t at, std::uint8_t kind, std::uint64_t bytes) override {
        if (json_) {
            line(open(at, "unknown") + ",\"kind\":" + std::to_string(kind) + ",\"bytes\":" + std::to_string(bytes) +
                 "}");
        } else {
            text(at, "UNKNOWN", "kind " + std::to_string(kind) + ", " + std::to_string(bytes) + " bytes skipped");
        }
    }

private:
    static std::string hex64(std::uint64_t v) {
        char text[17];
        std::snprintf(text, sizeof text, "%016" PRIx64, v);
        return text;
    }

    static const char* site_kind_name(loupe::site_kind k) {
        switch (k) {
            case loupe::site_kind::zone: return "zone";
            case loupe::site_kind::instant: return "instant";
            case loupe::site_kind::counter: return "counter";
            case loupe::site_kind::io: return "io";
            case loupe::site_kind::method:
                return "method";
            case loupe::site_kind::flow: return "flow";
            case loupe::site_kind::flow_end: return "flow_end";
            case loupe::site_kind::unit: break;  // a ring unit header, never a site's kind
            case loupe::site_kind::zone_arg: break;  // a zone argument's key: never a SITE record
            case loupe::site_kind::task: break;      // the task points' gate: never a SITE record
            case loupe::site_kind::zone_metrics: break;  // a ring's metric deltas: never a SITE record
        }
        return "?";
    }
    static std::string q(std::string_view s) { return loupe::report::json::quote(s); }
    // Metric values as " metric 9 = 80, metric 1 = 2300" / {"9":80,"1":2300}.
    static std::string values_text(const std::vector<loupe::metric_value>& values) {
        std::string out;
        for (const auto& v : values) out += (out.empty() ? " metric " : ", metric ") + std::to_string(v.id) + " = " + std::to_string(v.value);
        return out;
    }
    static std::string values_json(const std::vector<loupe::metric_value>& values) {
        std::string out = "{";
        for (const auto& v : values) out += (out.size() > 1 ? ",\"" : "\"") + std::to_string(v.id) + "\":" + std::to_string(v.value);
        return out + "}";
    }
    // "spec 0 int -3", "spec 1 string \"ab\"… (truncated, 300 B)", "spec 2 NullInCall".
    static std::string value_text(const loupe::param_value& v) {
        std::string s = "spec " + std::to_string(v.spec) + " ";
        if (loupe::is_status(v.kind)) return s + loupe::to_string(v.kind);
        s += std::string(loupe::to_string(v.kind)) + " ";
        if (v.kind == loupe::value_kind::string || v.kind == loupe::value_kind::type_name) {
            s += q(v.text);
            if (v.truncated) s += "\xE2\x80\xA6 (truncated, " + std::to_string(v.original_size) + " B)";
            return s;
        }
        return s + loupe::format_value(v);
    }
    static std::string value_json(const loupe::param_value& v) {
        std::string s = "{\"spec\":" + std::to_string(v.spec) + ",\"kind\":\"" + loupe::to_string(v.kind) + "\"";
        switch (v.kind) {
            case loupe::value_kind::boolean:
                s += std::string(",\"value\":") + (v.as_bool() ? "true" : "false");
                break;
            case loupe::value_kind::integer:
                s += ",\"value\":" + std::to_string(v.as_int());
                break;
            case loupe::value_kind::unsigned_integer:
                s += ",\"value\":" + std::to_string(v.as_uint());
                break;
            case loupe::value_kind::floating: {
                const double d = v.as_double();
                s += ",\"value\":" + (std::isfinite(d) ? loupe::report::json::number(d) : q(loupe::format_value(v)));
                break;
            }
            case loupe::value_kind::string:
            case loupe::value_kind::type_name:
                s += ",\"value\":" + q(v.text);
                if (v.truncated) s += ",\"truncated\":true";
                s += ",\"original_size\":" + std::to_string(v.original_size);
                break;
            case loupe::value_kind::object_id:
            case loupe::value_kind::hash:
                s += ",\"value\":" + q(loupe::format_value(v));
                break;
            case loupe::value_kind::redacted:
                s += ",\"original_size\":" + std::to_string(v.original_size);
                break;
            default:
                break;
        }
        return s + "}";
    }
    static std::string open(std::uint64_t at, const char* record) {
        return "{\"offset\":" + std::to_string(at) + ",\"record\":\"" + record + "\"";
    }
    void line(const std::string& s) {
        std::fwrite(s.data(), 1, s.size(), out_);
        std::fputc('\n', out_);
    }
    void text(std::uint64_t at, const std::string& record, const std::string& fields) {
        std::fprintf(out_, "@%-9" PRIu64 " %-10s %s\n", at, record.c_str(), fields.c_str());
    }

    std::FILE* out_;
    bool json_;
    std::unordered_map<std::uint64_t, std::string> site_names_;
};

}  // namespace loupe_cli
