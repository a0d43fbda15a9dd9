// The OTLP export (viewer/otlp.hpp): a trace recorded in-process (nested
// zones, a method call with parameter values, I/O, a flow across threads,
// instants, a context), converted and read back span by span, with the
// test's own protobuf reader and, where CMake found it, with protoc against
// the official schema (tests/data/otlp/); batches under their limit and
// valid alone; crafted traces for the value types, drops, an empty trace
// and odd in-memory traces; threads serving W3C tasks (their trace ids,
// parents, tracestate and flags) and the ids of spans outside any task.
#include <gtest/gtest.h>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/params.hpp>
#include <loupe/session.hpp>
#include <loupe/tasks.hpp>
#include <loupe/format/encoder.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/viewer/otlp.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/crafted_trace.hpp"
#include "support/otlp_reader.hpp"
#include "support/protoc_decode.hpp"
#include "support/trace_files.hpp"

namespace otlp_shop {
// A traced function: four parameters, a nested zone and an instant in it.
double checkout(const std::string& sku, int qty, double price, bool gift) {
    LOUPE_FUNCTION_PARAMS("otlp_shop::checkout(std::string const&,int,double,bool)", sku, qty, price, gift);
    LOUPE_ZONE("price");
    LOUPE_INSTANT("priced");
    return gift ? 0.0 : qty * price;
}
}  // namespace otlp_shop

namespace {

namespace ot = loupe_test::otlp;

struct recorded {
    loupe::trace trace;
    std::uint64_t flow = 0;
    std::string data_path;  // the file the I/O wrote
};

// Thread "main" serves user ann in session s-1: a "request" zone with two
// arguments holding a flow point, the call of checkout (with "price" and the instant "priced"
// nested), a write to a file and an instant "done"; then an instant
// outside any zone. Thread "worker": a "handle" zone ending the flow.
const recorded& shop_trace() {
    static const recorded r = [] {
        recorded out;
        const std::string path = loupe_test::temp_trace_path("otlp_shop");
        out.data_path = path + ".dat";
        loupe::session_config cfg;
        cfg.name = "otlp-shop";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        cfg.metrics = {"cpu_time"};
        cfg.params =
            "method=otlp_shop::checkout; param=1; name=sku\n"
            "method=otlp_shop::checkout; param=2; name=qty\n"
            "method=otlp_shop::checkout; param=3; name=price\n"
            "method=otlp_shop::checkout; param=4; name=gift\n";
        auto session = loupe::start_session(cfg);
        out.flow = loupe::new_flow_id();
        std::thread main_thread([&out] {
            LOUPE_THREAD_NAME("main");
            loupe::context_scope who({{loupe::context_field::user, "ann"},
                                      {loupe::context_field::session, "s-1"},
                                      {loupe::context_field::request, "r-7"},
                                      {loupe::context_field::app, "shop"}});
            {
                LOUPE_ZONE_AS(request, "request");
                LOUPE_ZONE_ARG(request, "items", 2);
                LOUPE_ZONE_ARG(request, "coupon", "SPRING");
                LOUPE_FLOW("queued", out.flow);
                EXPECT_DOUBLE_EQ(otlp_shop::checkout("A-1", 3, 2.5, false), 7.5);
                const int fd = loupe::io::open(out.data_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
                EXPECT_GE(fd, 0);
                EXPECT_EQ(loupe::io::write(fd, "hello", 5), 5);
                loupe::io::close(fd);
                LOUPE_INSTANT("done");
            }
            LOUPE_INSTANT("alone");
        });
        main_thread.join();
        std::thread worker([&out] {
            LOUPE_THREAD_NAME("worker");
            LOUPE_ZONE("handle");
            LOUPE_FLOW_END("answered", out.flow);
        });
        worker.join();
        session.stop();
        out.trace = loupe::read_trace_file(path);
        std::remove(path.c_str());
        std::remove(out.data_path.c_str());
        return out;
    }();
    return r;
}

std::vector<std::string> batches_of(const loupe::trace& t, const loupe::viewer::otlp_options& options = {},
                                    loupe::viewer::otlp_result* result = nullptr) {
    std::vector<std::string> batches;
    const loupe::viewer::otlp_result r =
        loupe::viewer::write_otlp(t, [&](std::string_view b) { batches.emplace_back(b); }, options);
    if (result) *result = r;
    return batches;
}

std::vector<ot::span> all_spans(const std::string& bytes) {
    std::vector<ot::span> spans;
    for (const ot::resource_spans& rs : ot::read_request(bytes)) spans.insert(spans.end(), rs.spans.begin(), rs.spans.end());
    return spans;
}

std::uint64_t wall(const loupe::trace& t, std::uint64_t ns) { return t.session.wall_anchor_ns + (ns - t.session.start_ns); }

const ot::span* find_span(const std::vector<ot::span>& spans, const std::string& name) {
    for (const ot::span& s : spans) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

// A trace id (wide) or span id as OTLP's bytes: big-endian.
std::string id_bytes(std::uint64_t high, std::uint64_t low, bool wide) {
    std::string out;
    for (int i = wide ? 15 : 7; i >= 0; --i) out.push_back(static_cast<char>((i >= 8 ? high : low) >> (8 * (i % 8))));
    return out;
}
std::string id_bytes(const loupe::tasks::trace_id& t) { return id_bytes(t.high, t.low, true); }
std::string id_bytes(std::uint64_t span) { return id_bytes(0, span, false); }

// Span.trace_state and Span.flags, which the test's reader leaves out.
struct span_extras {
    std::string trace_state;
    bool has_flags = false;
    std::uint64_t flags = 0;
};

// Each span's extras, by span id.
std::map<std::string, span_extras> extras_of(const std::string& request) {
    std::map<std::string, span_extras> out;
    for (const ot::wire_field& rs : ot::parse_message(request)) {
        for (const ot::wire_field& ss : ot::parse_message(rs.bytes)) {
            if (ss.id != 2) continue;  // ResourceSpans.scope_spans
            for (const ot::wire_field& sp : ot::parse_message(ss.bytes)) {
                if (sp.id != 2) continue;  // ScopeSpans.spans
                std::string id;
                span_extras e;
                for (const ot::wire_field& f : ot::parse_message(sp.bytes)) {
                    if (f.id == 2) id = std::string(f.bytes);
                    if (f.id == 3) e.trace_state = std::string(f.bytes);
                    if (f.id == 16) {
                        EXPECT_EQ(f.wire, 5u) << "flags is a fixed32";
                        e.has_flags = true;
                        e.flags = f.number;
                    }
                }
                out[id] = e;
            }
        }
    }
    return out;
}

const loupe::trace_thread* thread_named(const loupe::trace& t, const std::string& name) {
    for (const loupe::trace_thread& th : t.threads) {
        if (th.name == name) return &th;
    }
    return nullptr;
}

std::string text_of(const ot::attributes& a, const std::string& key) {
    auto it = a.find(key);
    return it != a.end() && it->second.kind == ot::any_value::string ? it->second.text : "<missing " + key + ">";
}

// One span per zone, I/O operation and zone-less instant, each named, timed
// and parented as the trace says: the parent is the innermost zone around
// it on its thread, the trace id the outermost's.
TEST(Otlp, SpansMatchTheTraceZoneByZone) {
    const recorded& r = shop_trace();
    const loupe::trace& t = r.trace;
    const std::vector<ot::span> spans = all_spans(loupe::viewer::to_otlp(t));

    struct item {
        std::string name;
        std::uint64_t thread, begin, end;
    };
    std::vector<item> zones;
    for (const loupe::trace_event& e : t.events) {
        if (e.type == loupe::event_type::zone) zones.push_back({t.find_site(e.site_id)->name, e.thread_id, e.begin_ns, e.end_ns});
    }
    std::vector<item> expected = zones;
    for (const loupe::trace_io_op& op : t.io_ops) expected.push_back({loupe::io::op_name(op.op), op.thread_id, op.begin_ns, op.end_ns});
    ASSERT_EQ(t.io_ops.size(), 3u) << "open, write, close";
    ASSERT_EQ(zones.size(), 4u) << "request, the call of checkout, price, handle";

    std::size_t instants_outside = 0;
    for (const loupe::trace_event& e : t.events) {
        if (e.type == loupe::event_type::instant && t.find_site(e.site_id)->name == "alone") ++instants_outside;
    }
    ASSERT_EQ(spans.size(), expected.size() + instants_outside);

    const auto span_of = [&](const item& z) -> const ot::span* {
        const loupe::trace_thread* th = t.find_thread(z.thread);
        for (const ot::span& s : spans) {
            auto tid = s.attrs.find("thread.id");
            if (s.name == z.name && s.start == wall(t, z.begin) && tid != s.attrs.end() &&
                tid->second.integer_value == static_cast<std::int64_t>(th->os_tid)) {
                return &s;
            }
        }
        return nullptr;
    };
    for (const item& z : expected) {
        SCOPED_TRACE(z.name);
        const ot::span* s = span_of(z);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->end, wall(t, z.end));
        EXPECT_EQ(s->kind, 1u) << "SPAN_KIND_INTERNAL";
        // The innermost zone around it on its thread.
        const item* parent = nullptr;
        for (const item& p : zones) {
            if (&p == &z || p.thread != z.thread || p.begin > z.begin || p.end < z.end) continue;
            if (p.name == z.name && p.begin == z.begin) continue;  // itself
            if (!parent || p.end - p.begin < parent->end - parent->begin) parent = &p;
        }
        if (!parent) {
            EXPECT_TRUE(s->parent_span_id.empty()) << "a root span";
        } else {
            const ot::span* ps = span_of(*parent);
            ASSERT_NE(ps, nullptr);
            EXPECT_EQ(s->parent_span_id, ps->span_id) << "child of " << parent->name;
            EXPECT_EQ(s->trace_id, ps->trace_id) << "one trace per outermost zone";
        }
    }
    // Ids: the right widths, never zero, unique; one trace per root span.
    std::set<std::string> span_ids, trace_ids;
    std::size_t roots = 0;
    for (const ot::span& s : spans) {
        ASSERT_EQ(s.trace_id.size(), 16u);
        ASSERT_EQ(s.span_id.size(), 8u);
        EXPECT_NE(s.span_id, std::string(8, '\0'));
        EXPECT_NE(s.trace_id.substr(0, 8), std::string(8, '\0'));
        EXPECT_NE(s.trace_id.substr(8), std::string(8, '\0'));
        EXPECT_TRUE(span_ids.insert(s.span_id).second) << "span id of " << s.name << " repeated";
        trace_ids.insert(s.trace_id);
        if (s.parent_span_id.empty()) ++roots;
    }
    EXPECT_EQ(trace_ids.size(), roots);
    EXPECT_EQ(roots, 3u) << "request, handle and the instant 'alone'";
    const ot::span* alone = find_span(spans, "alone");
    ASSERT_NE(alone, nullptr);
    EXPECT_EQ(alone->start, alone->end);
    EXPECT_EQ(text_of(alone->attrs, "loupe.event"), "instant");
}

TEST(Otlp, AttributesCarryCodeThreadContextParametersMetricsAndIo) {
    const recorded& r = shop_trace();
    const loupe::trace& t = r.trace;
    const std::vector<ot::span> spans = all_spans(loupe::viewer::to_otlp(t));

    const ot::span* request = find_span(spans, "request");
    ASSERT_NE(request, nullptr);
    EXPECT_EQ(text_of(request->attrs, "enduser.id"), "ann");
    EXPECT_EQ(text_of(request->attrs, "session.id"), "s-1");
    EXPECT_EQ(text_of(request->attrs, "loupe.request"), "r-7");
    EXPECT_EQ(text_of(request->attrs, "loupe.app"), "shop");
    EXPECT_EQ(request->attrs.count("loupe.client"), 0u) << "unset fields are left out";
    ASSERT_EQ(request->attrs.count("loupe.arg.items"), 1u) << "zone arguments, typed";
    EXPECT_EQ(request->attrs.at("loupe.arg.items").kind, ot::any_value::integer);
    EXPECT_EQ(request->attrs.at("loupe.arg.items").integer_value, 2);
    EXPECT_EQ(text_of(request->attrs, "loupe.arg.coupon"), "SPRING");
    EXPECT_EQ(text_of(request->attrs, "thread.name"), "main");
    EXPECT_EQ(request->attrs.at("thread.id").integer_value,
              static_cast<std::int64_t>(thread_named(t, "main")->os_tid));
    EXPECT_EQ(text_of(request->attrs, "code.file.path"), __FILE__);
    EXPECT_EQ(request->attrs.at("code.line.number").kind, ot::any_value::integer);
    for (const loupe::trace_site& s : t.sites) {
        if (s.name != "request") continue;
        ASSERT_FALSE(s.function.empty());
        EXPECT_EQ(text_of(request->attrs, "code.function.name"), s.function);
        EXPECT_EQ(request->attrs.at("code.line.number").integer_value, s.line);
    }

    // The method call: its values typed, named after their specs.
    const loupe::trace_event* call = nullptr;
    for (const loupe::trace_event& e : t.events) {
        if (e.method != loupe::no_method) call = &e;
    }
    ASSERT_NE(call, nullptr);
    const ot::span* checkout = find_span(spans, t.find_site(call->site_id)->name);
    ASSERT_NE(checkout, nullptr);
    EXPECT_EQ(text_of(checkout->attrs, "loupe.param.sku"), "A-1");
    ASSERT_EQ(checkout->attrs.count("loupe.param.qty"), 1u);
    EXPECT_EQ(checkout->attrs.at("loupe.param.qty").kind, ot::any_value::integer);
    EXPECT_EQ(checkout->attrs.at("loupe.param.qty").integer_value, 3);
    ASSERT_EQ(checkout->attrs.count("loupe.param.price"), 1u);
    EXPECT_EQ(checkout->attrs.at("loupe.param.price").kind, ot::any_value::floating);
    EXPECT_EQ(checkout->attrs.at("loupe.param.price").floating_value, 2.5);
    ASSERT_EQ(checkout->attrs.count("loupe.param.gift"), 1u);
    EXPECT_EQ(checkout->attrs.at("loupe.param.gift").kind, ot::any_value::boolean);
    EXPECT_FALSE(checkout->attrs.at("loupe.param.gift").flag);
    EXPECT_EQ(checkout->status_code, 0u) << "returned normally: status unset";

    // Metric deltas: one integer attribute per measured metric, as in the trace.
    const loupe::trace_metric* cpu = t.find_metric("cpu_time");
    ASSERT_NE(cpu, nullptr);
    std::int64_t delta = 0;
    if (cpu->available && t.metric_of(*call, cpu->id, delta)) {
        ASSERT_EQ(checkout->attrs.count("loupe.metric.cpu_time"), 1u);
        EXPECT_EQ(checkout->attrs.at("loupe.metric.cpu_time").integer_value, delta);
    }

    // The write: a child span of "request" with the path, bytes and result.
    const ot::span* write = find_span(spans, "write");
    ASSERT_NE(write, nullptr);
    EXPECT_EQ(write->parent_span_id, request->span_id);
    EXPECT_EQ(text_of(write->attrs, "file.path"), r.data_path);
    EXPECT_EQ(write->attrs.at("loupe.io.bytes").integer_value, 5);
    EXPECT_EQ(write->attrs.at("loupe.io.result").integer_value, 5);
    EXPECT_EQ(write->attrs.count("loupe.io.fd"), 1u);
    EXPECT_EQ(text_of(write->attrs, "enduser.id"), "ann") << "I/O spans carry their context too";
    const ot::span* close_span = find_span(spans, "close");
    ASSERT_NE(close_span, nullptr);
    EXPECT_EQ(close_span->attrs.count("loupe.io.bytes"), 0u) << "close moves no bytes";
}

TEST(Otlp, InstantsAreEventsAndFlowsAreLinks) {
    const recorded& r = shop_trace();
    const loupe::trace& t = r.trace;
    const std::vector<ot::span> spans = all_spans(loupe::viewer::to_otlp(t));

    const ot::span* price = find_span(spans, "price");
    ASSERT_NE(price, nullptr);
    ASSERT_EQ(price->events.size(), 1u);
    EXPECT_EQ(price->events[0].name, "priced");
    const ot::span* request = find_span(spans, "request");
    ASSERT_NE(request, nullptr);
    ASSERT_EQ(request->events.size(), 1u) << "'priced' belongs to the innermost zone only";
    EXPECT_EQ(request->events[0].name, "done");
    for (const loupe::trace_event& e : t.events) {
        if (e.type == loupe::event_type::instant && t.find_site(e.site_id)->name == "done") {
            EXPECT_EQ(request->events[0].time, wall(t, e.begin_ns));
        }
    }

    // The flow queued in "request" and answered in "handle": handle links
    // to request, with the flow id.
    const ot::span* handle = find_span(spans, "handle");
    ASSERT_NE(handle, nullptr);
    ASSERT_EQ(handle->links.size(), 1u);
    EXPECT_EQ(handle->links[0].span_id, request->span_id);
    EXPECT_EQ(handle->links[0].trace_id, request->trace_id);
    EXPECT_NE(handle->trace_id, request->trace_id) << "the worker's zone is an outermost zone of its own";
    EXPECT_EQ(text_of(handle->links[0].attrs, "loupe.flow.id"), loupe::flow_id_text(r.flow));
    EXPECT_TRUE(request->links.empty()) << "the flow's first point links nowhere";
}

TEST(Otlp, ResourceAndScopeDescribeTheProcess) {
    const loupe::trace& t = shop_trace().trace;
    const std::vector<ot::resource_spans> requests = ot::read_request(loupe::viewer::to_otlp(t));
    ASSERT_EQ(requests.size(), 1u);
    const ot::resource_spans& rs = requests[0];
    ASSERT_FALSE(t.session.program.empty());
    EXPECT_EQ(text_of(rs.resource, "service.name"), t.session.program);
    EXPECT_EQ(text_of(rs.resource, "process.executable.name"), t.session.program);
    EXPECT_EQ(rs.resource.at("process.pid").integer_value, ::getpid());
    ASSERT_FALSE(t.session.host.empty());
    EXPECT_EQ(text_of(rs.resource, "host.name"), t.session.host);
    EXPECT_EQ(text_of(rs.resource, "loupe.session.name"), "otlp-shop");
    EXPECT_EQ(rs.scope_name, "loupe");
    EXPECT_EQ(rs.scope_version, LOUPE_VERSION_STRING);
    EXPECT_EQ(rs.scope_attrs.count("loupe.dropped_events"), 0u) << "nothing was dropped";

    loupe::viewer::otlp_options named;
    named.service_name = "checkout-service";
    const std::vector<ot::resource_spans> renamed = ot::read_request(loupe::viewer::to_otlp(t, named));
    EXPECT_EQ(text_of(renamed.at(0).resource, "service.name"), "checkout-service");
    EXPECT_EQ(text_of(renamed.at(0).resource, "process.executable.name"), t.session.program);

    // Drops: the trace's count on the scope of every batch.
    static constexpr loupe::site zone_site{"work", "w.cpp", "work", 3, loupe::site_kind::zone};
    const std::vector<unsigned char> bytes = loupe_test::crafted_trace_bytes(
        {{loupe::record_kind::zone, &zone_site, 2000, 2500},
         {loupe::record_kind::dropped, nullptr, 0, 0, 0, 17},
         {loupe::record_kind::zone, &zone_site, 3000, 3500}});
    const loupe::trace dropped = loupe::read_trace(bytes.data(), bytes.size());
    loupe::viewer::otlp_options small;
    small.max_batch_bytes = 1;  // one span per batch
    const std::vector<std::string> batches = batches_of(dropped, small);
    ASSERT_EQ(batches.size(), 2u);
    for (const std::string& b : batches) {
        const std::vector<ot::resource_spans> one = ot::read_request(b);
        ASSERT_EQ(one.size(), 1u);
        ASSERT_EQ(one[0].scope_attrs.count("loupe.dropped_events"), 1u);
        EXPECT_EQ(one[0].scope_attrs.at("loupe.dropped_events").integer_value, 17);
        EXPECT_EQ(text_of(one[0].resource, "service.name"), "unknown_service") << "the crafted trace names no program";
    }
}

// Many spans in small batches: each at most the limit, each a request on
// its own, all together the spans of one conversion.
TEST(Otlp, BatchesStayUnderTheLimitAndDecodeAlone) {
    const std::string path = loupe_test::temp_trace_path("otlp_batches");
    {
        loupe::session_config cfg;
        cfg.name = "batches";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        auto session = loupe::start_session(cfg);
        loupe::context_scope who({{loupe::context_field::user, "bob"}});
        for (int i = 0; i < 600; ++i) {
            LOUPE_ZONE("outer");
            LOUPE_ZONE("inner");
            LOUPE_COUNTER("depth", i);
        }
        session.stop();
    }
    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    ASSERT_EQ(t.events.size(), 1800u);

    loupe::viewer::otlp_options options;
    options.max_batch_bytes = 16 * 1024;
    loupe::viewer::otlp_result result;
    const std::vector<std::string> batches = batches_of(t, options, &result);
    EXPECT_EQ(result.spans, 1200u);
    EXPECT_EQ(result.batches, batches.size());
    EXPECT_GT(batches.size(), 5u);
    std::string all;
    std::uint64_t bytes = 0, spans = 0;
    std::set<std::string> span_ids;
    for (const std::string& b : batches) {
        EXPECT_LE(b.size(), options.max_batch_bytes);
        if (&b != &batches.back()) {
            EXPECT_GT(b.size(), options.max_batch_bytes * 9 / 10) << "batches are filled";
        }
        bytes += b.size();
        for (const ot::span& s : all_spans(b)) {
            ++spans;
            span_ids.insert(s.span_id);
        }
        all += b;
    }
    EXPECT_EQ(bytes, result.bytes);
    EXPECT_EQ(spans, 1200u);
    EXPECT_EQ(span_ids.size(), 1200u);
    EXPECT_EQ(all, loupe::viewer::to_otlp(t, options)) << "to_otlp is the batches concatenated";
    EXPECT_EQ(ot::read_request(all).size(), batches.size()) << "concatenated: one ResourceSpans per batch";

    // The counter samples are events of the zone around them: "inner",
    // or "outer" for a sample taken in the nanosecond "inner" began.
    std::size_t samples = 0, in_inner = 0;
    for (const ot::span& s : all_spans(all)) {
        for (const ot::span_event& e : s.events) {
            EXPECT_EQ(e.name, "depth");
            EXPECT_EQ(e.attrs.at("loupe.counter.value").kind, ot::any_value::floating);
            ++samples;
            in_inner += s.name == "inner";
        }
    }
    EXPECT_EQ(samples, 600u);
    EXPECT_GT(in_inner, 500u);
    // One batch when the limit allows it.
    EXPECT_EQ(batches_of(t).size(), 1u);
}

// Every value kind of a method call: int, uint (as int when it fits, else
// as text), double, bool, string, statuses by their names; an exceptional
// call is an error.
TEST(Otlp, ParameterValuesKeepTheirTypes) {
    static constexpr loupe::site add_site{"add", "cart.cpp", "add", 12, loupe::site_kind::zone};
    loupe::detail::trace_encoder encoder;
    loupe::session_info session{"values", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc,
                                nullptr, 0, "shopd", {}, {}, {}, 0};
    loupe::thread_info thread{1, 501, "main", 1};
    loupe::record r;
    r.session = &session;
    r.kind = loupe::record_kind::session_begin;
    encoder.encode(r);
    const loupe::param_spec_info specs[] = {{0, "method=add; param=1", "n"}, {1, "method=add; param=2", "big"},
                                            {2, "method=add; param=3", "ratio"}, {3, "method=add; param=4", ""},
                                            {4, "method=add; param=5", "label"}, {5, "method=add; param=6", "who"}};
    for (const auto& s : specs) {
        loupe::record p = r;
        p.kind = loupe::record_kind::param_spec;
        p.spec = &s;
        encoder.encode(p);
    }
    auto value = [](std::uint32_t spec, loupe::value_kind kind, std::uint64_t bits, std::string_view text = {}) {
        loupe::param_value v;
        v.spec = spec;
        v.kind = kind;
        v.bits = bits;
        v.text = text;
        v.original_size = static_cast<std::uint32_t>(text.size());
        return v;
    };
    double ratio = 0.25;
    std::uint64_t ratio_bits;
    std::memcpy(&ratio_bits, &ratio, sizeof ratio);
    const loupe::param_value values[] = {
        value(0, loupe::value_kind::integer, static_cast<std::uint64_t>(std::int64_t{-42})),
        value(1, loupe::value_kind::unsigned_integer, std::numeric_limits<std::uint64_t>::max()),
        value(1, loupe::value_kind::unsigned_integer, 7),
        value(2, loupe::value_kind::floating, ratio_bits),
        value(3, loupe::value_kind::boolean, 1),
        value(4, loupe::value_kind::string, 0, "caf\xc3\xa9 \xff"),
        value(5, loupe::value_kind::null_in_call, 0)};
    const loupe::method_call call{values, 7, true, false, 0, 0, true};
    loupe::record z = r;
    z.kind = loupe::record_kind::zone;
    z.thread = &thread;
    z.where = &add_site;
    z.begin_ns = 2000;
    z.end_ns = 2600;
    z.method = &call;
    encoder.encode(z);
    loupe::record end = r;
    end.kind = loupe::record_kind::session_end;
    end.end_ns = 5000;
    end.count = 1;
    encoder.encode(end);
    encoder.close_batch();
    const loupe::trace t = loupe::read_trace(encoder.bytes().data(), encoder.bytes().size());

    const std::vector<ot::span> spans = all_spans(loupe::viewer::to_otlp(t));
    ASSERT_EQ(spans.size(), 1u);
    const ot::attributes& a = spans[0].attrs;
    EXPECT_EQ(a.at("loupe.param.n").kind, ot::any_value::integer);
    EXPECT_EQ(a.at("loupe.param.n").integer_value, -42);
    EXPECT_EQ(text_of(a, "loupe.param.big"), "18446744073709551615") << "beyond int64: as text";
    EXPECT_EQ(a.at("loupe.param.big[1]").integer_value, 7) << "a further value of one spec gets [k]";
    EXPECT_EQ(a.at("loupe.param.ratio").floating_value, 0.25);
    EXPECT_TRUE(a.at("loupe.param.param3").flag) << "an unnamed spec: param<index>";
    EXPECT_EQ(text_of(a, "loupe.param.label"), "caf\xc3\xa9 \\xff") << "made valid UTF-8";
    EXPECT_EQ(text_of(a, "loupe.param.who"), "NullInCall") << "a status: its name";
    EXPECT_TRUE(a.at("loupe.values_lost").flag);
    EXPECT_EQ(spans[0].status_code, 2u) << "left by an exception: STATUS_CODE_ERROR";
    EXPECT_EQ(spans[0].status_message, "exception");
    EXPECT_EQ(spans[0].start, 1'700'000'000'000'000'000ull + 1000);
    EXPECT_EQ(spans[0].end, 1'700'000'000'000'000'000ull + 1600);
    const ot::resource_spans rs = ot::read_request(loupe::viewer::to_otlp(t)).at(0);
    EXPECT_EQ(text_of(rs.resource, "service.name"), "shopd");
}

TEST(Otlp, AnEmptyTraceGivesOneBatchWithTheResource) {
    const std::vector<unsigned char> bytes = loupe_test::crafted_trace_bytes({});
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    ASSERT_TRUE(t.events.empty());
    loupe::viewer::otlp_result result;
    const std::vector<std::string> batches = batches_of(t, {}, &result);
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(result.spans, 0u);
    const std::vector<ot::resource_spans> rs = ot::read_request(batches[0]);
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_TRUE(rs[0].spans.empty());
    EXPECT_EQ(rs[0].resource.at("process.pid").integer_value, 42);
    EXPECT_EQ(rs[0].scope_name, "loupe");
}

// In-memory traces the reader never makes: a zone ending before it begins,
// events of a thread without a definition, zones overlapping without
// nesting, a flow point whose previous point is outside any zone.
TEST(Otlp, OddInMemoryTracesConvertWithoutCrashing) {
    static constexpr loupe::site a{"a", "f.cpp", "f", 1, loupe::site_kind::zone};
    static constexpr loupe::site b{"b", "f.cpp", "f", 2, loupe::site_kind::zone};
    static constexpr loupe::site c{"c", "f.cpp", "f", 3, loupe::site_kind::zone};
    const std::vector<unsigned char> bytes = loupe_test::crafted_trace_bytes(
        {{loupe::record_kind::zone, &a, 2000, 2500},
         {loupe::record_kind::zone, &b, 2200, 2800},
         {loupe::record_kind::zone, &c, 3000, 3100},
         {loupe::record_kind::zone, &c, 3200, 3300}});
    loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    ASSERT_EQ(t.events.size(), 4u);
    t.events[2].end_ns = t.events[2].begin_ns - 50;  // ends before it begins
    t.events[3].thread_id = 999;                     // a thread never defined
    loupe::trace_flow f;
    f.thread_id = t.events[0].thread_id;
    f.site_id = t.events[0].site_id;
    f.time_ns = 1500;  // outside any zone
    f.flow_id = 5;
    t.flows.push_back(f);
    f.time_ns = 2300;  // inside a and b
    t.flows.push_back(f);

    const std::vector<ot::span> spans = all_spans(loupe::viewer::to_otlp(t));
    ASSERT_EQ(spans.size(), 3u) << "the undefined thread's zone is left out";
    std::set<std::string> ids;
    for (const ot::span& s : spans) {
        EXPECT_LE(s.start, s.end) << s.name;
        ids.insert(s.span_id);
        EXPECT_TRUE(s.links.empty()) << "no zone around the flow's first point: nothing to link to";
    }
    EXPECT_EQ(ids.size(), 3u);
    const ot::span* backwards = find_span(spans, "c");
    ASSERT_NE(backwards, nullptr);
    EXPECT_EQ(backwards->start, backwards->end) << "clamped to zero length";
}

// Different recordings give different ids; the same file gives the same.
TEST(Otlp, IdsDifferBetweenRecordingsAndRepeatForOneFile) {
    static constexpr loupe::site z{"z", "f.cpp", "f", 1, loupe::site_kind::zone};
    const std::vector<unsigned char> bytes = loupe_test::crafted_trace_bytes({{loupe::record_kind::zone, &z, 2000, 2500}});
    loupe::trace one = loupe::read_trace(bytes.data(), bytes.size());
    loupe::trace other = loupe::read_trace(bytes.data(), bytes.size());
    other.session.pid = 43;
    const ot::span first = all_spans(loupe::viewer::to_otlp(one)).at(0);
    const ot::span again = all_spans(loupe::viewer::to_otlp(one)).at(0);
    const ot::span elsewhere = all_spans(loupe::viewer::to_otlp(other)).at(0);
    EXPECT_EQ(first.span_id, again.span_id);
    EXPECT_EQ(first.trace_id, again.trace_id);
    EXPECT_NE(first.span_id, elsewhere.span_id);
    EXPECT_NE(first.trace_id, elsewhere.trace_id);
}

// Two conversions of one trace through windows (the live sink's pieces):
// each writes only its spans, and a span written by the second has the id
// the first gave its child as parent, in the same trace.
TEST(Otlp, WindowsWriteTheirSpansWithIdsThatDoNotDependOnTheConversion) {
    static constexpr loupe::site outer{"outer", "f.cpp", "f", 1, loupe::site_kind::zone};
    static constexpr loupe::site inner{"inner", "f.cpp", "f", 2, loupe::site_kind::zone};
    static constexpr loupe::site later{"later", "f.cpp", "f", 3, loupe::site_kind::zone};
    const loupe::trace t = loupe_test::crafted_trace({{loupe::record_kind::zone, &inner, 2000, 3000},
                                                      {loupe::record_kind::zone, &outer, 1000, 5000},
                                                      {loupe::record_kind::zone, &later, 6000, 7000}});
    const std::uint64_t thread = t.threads.at(0).id;
    const auto convert = [&](const loupe::viewer::otlp_window& w) {
        std::string out;
        loupe::viewer::write_otlp_window(t, [&out](std::string_view b) { out.append(b.data(), b.size()); }, {}, w);
        return all_spans(out);
    };
    loupe::viewer::otlp_window first;
    first.up_to[thread] = 3000;
    loupe::viewer::otlp_window second;
    second.after[thread] = 3000;
    second.last = true;
    const std::vector<ot::span> a = convert(first), b = convert(second);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].name, "inner");
    ASSERT_EQ(b.size(), 2u);
    const ot::span* parent = find_span(b, "outer");
    ASSERT_NE(parent, nullptr);
    EXPECT_EQ(a[0].parent_span_id, parent->span_id);
    EXPECT_EQ(a[0].trace_id, parent->trace_id);
    EXPECT_NE(find_span(b, "later")->trace_id, parent->trace_id) << "an outermost zone is a trace of its own";
    // A window without an upper bound for a thread writes none of its spans.
    loupe::viewer::otlp_window none;
    EXPECT_TRUE(convert(none).empty());
}

namespace tasks = loupe::tasks;

struct task_recording {
    loupe::trace trace;
    tasks::trace_id a_trace{0x4bf92f3577b34da6ull, 0xa3ce929d0e0e4736ull};  // the caller's traceparent
    std::uint64_t handler_span = 0;  // the span the request's handler runs as (task A)
    tasks::task_context b, c;
    std::uint64_t flow = 0;
};

// Thread "server": zone "before" outside any task; an incoming request
// (task A: traceparent, tracestate congo=t61rcWkgMzE) whose zone "handler"
// holds a flow point, zone "query" with a write in it, task B's zones
// "other-task" and "other-inner" (B's scope nested in the handler), then
// "after-other" back in A; zone "outer" outside any task with task C's
// zone "in-c" (instant "c-mark") inside; instant "c-alone" in C outside
// zones. Thread "worker", adopting the handler's context: zone "worker"
// ending the flow.
const task_recording& task_trace() {
    static const task_recording r = [] {
        task_recording out;
        out.b = tasks::new_task();
        out.c = tasks::new_task(tasks::trace_flags::sampled);
        EXPECT_TRUE(out.c.state.assign("rojo=00f067aa0ba902b7"));
        const std::string path = loupe_test::temp_trace_path("otlp_tasks");
        const std::string data_path = path + ".dat";
        loupe::session_config cfg;
        cfg.name = "otlp-tasks";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        auto session = loupe::start_session(cfg);
        out.flow = loupe::new_flow_id();
        loupe::context handler_context;
        std::thread server([&] {
            LOUPE_THREAD_NAME("server");
            // A field for the whole thread: a change of its task is written
            // to the trace only while its context has a field.
            loupe::field_scope user(loupe::context_field::user, "ann");
            { LOUPE_ZONE("before"); }
            {
                const std::map<std::string, std::string> headers = {
                    {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                    {"tracestate", "congo=t61rcWkgMzE"}};
                tasks::incoming_request request(headers, "GET /stock");
                out.handler_span = request.context().span;
                handler_context = loupe::capture_context();
                LOUPE_ZONE("handler");
                LOUPE_FLOW("queued", out.flow);
                {
                    LOUPE_ZONE("query");
                    const int fd = loupe::io::open(data_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
                    EXPECT_GE(fd, 0);
                    EXPECT_EQ(loupe::io::write(fd, "row", 3), 3);
                    loupe::io::close(fd);
                }
                {
                    tasks::task_scope other(out.b);
                    LOUPE_ZONE("other-task");
                    LOUPE_ZONE("other-inner");
                }
                LOUPE_ZONE("after-other");
            }
            {
                LOUPE_ZONE("outer");
                tasks::task_scope c(out.c);
                LOUPE_ZONE("in-c");
                LOUPE_INSTANT("c-mark");
            }
            {
                tasks::task_scope c(out.c);
                LOUPE_INSTANT("c-alone");
            }
        });
        server.join();
        std::thread worker([&] {
            LOUPE_THREAD_NAME("worker");
            loupe::context_scope adopt(handler_context);
            LOUPE_ZONE("worker");
            LOUPE_FLOW_END("answered", out.flow);
        });
        worker.join();
        session.stop();
        out.trace = loupe::read_trace_file(path);
        std::remove(path.c_str());
        std::remove(data_path.c_str());
        return out;
    }();
    return r;
}

// Spans under a task are in its W3C trace: the outermost one on a thread is
// a child of the task's span, the ones inside it of their zone; a zone
// outside any task has a trace of its own; two tasks on one thread never
// mix; the tracestate and the flags come with the task.
TEST(Otlp, SpansOfATaskAreInItsTraceUnderItsSpan) {
    const task_recording& r = task_trace();
    const loupe::trace& t = r.trace;
    const std::string bytes = loupe::viewer::to_otlp(t);
    const std::vector<ot::span> spans = all_spans(bytes);
    const std::map<std::string, span_extras> extras = extras_of(bytes);
    ASSERT_EQ(spans.size(), 13u) << "9 zones, open, write, close and the instant c-alone";
    ASSERT_NE(r.handler_span, 0u);
    ASSERT_NE(r.handler_span, 0x00f067aa0ba902b7ull) << "the handler runs as a span of its own";
    // The trace says the same of the handler: its REQUEST_IN names that span.
    bool request_in = false;
    for (const loupe::trace_task_point& p : t.task_points) {
        if (p.kind != loupe::task_point_kind::request_in) continue;
        request_in = true;
        EXPECT_EQ(p.span_id, r.handler_span);
        EXPECT_EQ(p.call_id, 0x00f067aa0ba902b7ull);
    }
    EXPECT_TRUE(request_in);

    const auto span = [&](const std::string& name) -> const ot::span& {
        const ot::span* s = find_span(spans, name);
        EXPECT_NE(s, nullptr) << name;
        static const ot::span missing;
        return s ? *s : missing;
    };
    const auto extra = [&](const ot::span& s) {
        auto it = extras.find(s.span_id);
        return it == extras.end() ? span_extras{} : it->second;
    };
    const std::string a = id_bytes(r.a_trace), b = id_bytes(r.b.trace), c = id_bytes(r.c.trace);
    const std::string handler_span = id_bytes(r.handler_span);
    struct expected {
        const char* name;
        std::string trace;   // empty: a trace of its own
        std::string parent;  // the span id, or a span's name in `parent_name`
        const char* parent_name;
        const char* trace_state;
        bool sampled;
    };
    const std::vector<expected> table = {
        {"before", "", "", nullptr, "", false},
        {"handler", a, handler_span, nullptr, "congo=t61rcWkgMzE", true},
        {"query", a, "", "handler", "congo=t61rcWkgMzE", true},
        {"open", a, "", "query", "congo=t61rcWkgMzE", true},
        {"write", a, "", "query", "congo=t61rcWkgMzE", true},
        {"close", a, "", "query", "congo=t61rcWkgMzE", true},
        {"other-task", b, id_bytes(r.b.span), nullptr, "", false},
        {"other-inner", b, "", "other-task", "", false},
        {"after-other", a, "", "handler", "congo=t61rcWkgMzE", true},
        {"outer", "", "", nullptr, "", false},
        {"in-c", c, id_bytes(r.c.span), nullptr, "rojo=00f067aa0ba902b7", true},
        {"c-alone", c, id_bytes(r.c.span), nullptr, "rojo=00f067aa0ba902b7", true},
        {"worker", a, handler_span, nullptr, "congo=t61rcWkgMzE", true},
    };
    for (const expected& e : table) {
        SCOPED_TRACE(e.name);
        const ot::span& s = span(e.name);
        if (e.trace.empty()) {
            EXPECT_TRUE(s.parent_span_id.empty()) << "a root span";
            EXPECT_NE(s.trace_id, a);
            EXPECT_NE(s.trace_id, b);
            EXPECT_NE(s.trace_id, c);
        } else {
            EXPECT_EQ(s.trace_id, e.trace);
        }
        EXPECT_EQ(s.parent_span_id, e.parent_name ? span(e.parent_name).span_id : e.parent);
        EXPECT_EQ(extra(s).trace_state, e.trace_state);
        EXPECT_EQ(extra(s).has_flags, e.sampled) << "flags when not 0";
        if (e.sampled) {
            EXPECT_EQ(extra(s).flags, 1u) << "W3C sampled";
        }
    }
    EXPECT_NE(span("before").trace_id, span("outer").trace_id) << "one trace per outermost zone outside tasks";
    // "c-mark" is an event of "in-c"; the worker's zone links to the
    // handler, in the handler's trace.
    ASSERT_EQ(span("in-c").events.size(), 1u);
    EXPECT_EQ(span("in-c").events[0].name, "c-mark");
    ASSERT_EQ(span("worker").links.size(), 1u);
    EXPECT_EQ(span("worker").links[0].span_id, span("handler").span_id);
    EXPECT_EQ(span("worker").links[0].trace_id, a);
    // Span ids stay loupe's own: unique, none the task's.
    std::set<std::string> ids;
    for (const ot::span& s : spans) {
        EXPECT_TRUE(ids.insert(s.span_id).second) << s.name;
        EXPECT_NE(s.span_id, handler_span);
    }
    EXPECT_EQ(bytes, loupe::viewer::to_otlp(t)) << "converting twice gives the same bytes";
}

// Outside tasks the ids are as they always were: span i of the thread at
// index k is mix(seed ^ counter(k, i)) and the root's counter numbers its
// trace; a context whose task has a zero span id is no task.
TEST(Otlp, SpansWithoutATaskKeepTheirIds) {
    static constexpr loupe::site outer{"outer", "f.cpp", "f", 1, loupe::site_kind::zone};
    static constexpr loupe::site inner{"inner", "f.cpp", "f", 2, loupe::site_kind::zone};
    static constexpr loupe::site mark{"mark", "f.cpp", "f", 3, loupe::site_kind::instant};
    // In file order: inner (ends first), outer, the instant after them.
    loupe::trace t = loupe_test::crafted_trace({{loupe::record_kind::zone, &inner, 2200, 2400},
                                                {loupe::record_kind::zone, &outer, 2000, 2500},
                                                {loupe::record_kind::instant, &mark, 3000, 3000}});
    ASSERT_EQ(t.events.size(), 3u);
    const loupe::detail::otlp::id_source ids(t.session);
    using loupe::detail::otlp::id_source;
    const auto span_id = [&](std::uint32_t event) { return id_bytes(ids.span(id_source::counter(0, event))); };
    const auto trace_id = [&](std::uint32_t event) {
        const loupe::detail::otlp::trace_id id = ids.trace(id_source::counter(0, event));
        return id_bytes(id.high, id.low, true);
    };
    const std::string plain = loupe::viewer::to_otlp(t);
    const std::vector<ot::span> spans = all_spans(plain);
    ASSERT_EQ(spans.size(), 3u);
    const ot::span* o = find_span(spans, "outer");
    const ot::span* i = find_span(spans, "inner");
    const ot::span* m = find_span(spans, "mark");
    ASSERT_TRUE(o && i && m);
    EXPECT_EQ(o->span_id, span_id(1));
    EXPECT_EQ(o->trace_id, trace_id(1));
    EXPECT_TRUE(o->parent_span_id.empty());
    EXPECT_EQ(i->span_id, span_id(0));
    EXPECT_EQ(i->trace_id, trace_id(1));
    EXPECT_EQ(i->parent_span_id, span_id(1));
    EXPECT_EQ(m->span_id, span_id(2));
    EXPECT_EQ(m->trace_id, trace_id(2));
    for (const auto& e : extras_of(plain)) {
        EXPECT_TRUE(e.second.trace_state.empty());
        EXPECT_FALSE(e.second.has_flags);
    }

    // A context with a trace id but no span is not a valid task: nothing
    // changes. With both ids, the zones move to the task's trace.
    loupe::trace_context ctx;
    ctx.thread_id = t.events[0].thread_id;
    ctx.time_ns = 1000;
    ctx.trace_high = 7;
    ctx.trace_low = 9;
    ctx.tracestate = "k=v";
    t.contexts.push_back(ctx);
    for (loupe::trace_event& e : t.events) e.context = 0;
    EXPECT_EQ(loupe::viewer::to_otlp(t), plain);
    t.contexts[0].span_id = 11;
    const std::vector<ot::span> in_task = all_spans(loupe::viewer::to_otlp(t));
    ASSERT_EQ(in_task.size(), 3u);
    for (const ot::span& s : in_task) {
        SCOPED_TRACE(s.name);
        EXPECT_EQ(s.trace_id, id_bytes(7, 9, true));
        EXPECT_EQ(s.span_id, s.name == "outer" ? span_id(1) : s.name == "inner" ? span_id(0) : span_id(2))
            << "span ids do not change";
        EXPECT_EQ(s.parent_span_id, s.name == "inner" ? span_id(1) : id_bytes(11));
    }
}

#ifdef LOUPE_PROTOC
// protoc's text form of an ExportTraceServiceRequest, or "" with protoc's
// output in `error`.
std::string protoc_decode_otlp(const std::string& bytes, const std::string& tag, std::string& error) {
    const std::string in = loupe_test::temp_trace_path(tag) + ".pb";
    const std::string out = in + ".txt";
    loupe::detail::write_output_file(in, bytes);
    const std::string command = std::string(LOUPE_PROTOC) + " --proto_path=" + LOUPE_OTLP_SCHEMA_DIR +
                                " --decode=opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"
                                " opentelemetry/proto/collector/trace/v1/trace_service.proto < " +
                                in + " > " + out + " 2>&1";
    const int status = std::system(command.c_str());
    std::string text = loupe_test::read_text(out);
    std::remove(in.c_str());
    std::remove(out.c_str());
    if (status != 0) {
        error = text;
        return {};
    }
    return text;
}

// The official schema reads what the test's reader reads: every batch
// alone and the file, with the attributes' types.
TEST(Otlp, ProtocDecodesEveryBatchAndTheFile) {
    const loupe::trace& t = shop_trace().trace;
    loupe::viewer::otlp_options options;
    options.max_batch_bytes = 1024;
    const std::vector<std::string> batches = batches_of(t, options);
    ASSERT_GT(batches.size(), 1u);
    std::string all;
    for (std::size_t i = 0; i < batches.size(); ++i) {
        std::string error;
        const std::string text = protoc_decode_otlp(batches[i], "otlp_batch", error);
        ASSERT_FALSE(text.empty()) << "batch " << i << ": " << error;
        EXPECT_EQ(loupe_test::occurrences(text, "\n    spans {"), all_spans(batches[i]).size());
        all += batches[i];
    }
    std::string error;
    const std::string text = protoc_decode_otlp(all, "otlp_all", error);
    ASSERT_FALSE(text.empty()) << error;
    EXPECT_EQ(loupe_test::occurrences(text, "resource_spans {"), batches.size());
    EXPECT_EQ(loupe_test::occurrences(text, "\n    spans {"), all_spans(all).size());
    EXPECT_NE(text.find("key: \"enduser.id\"\n        value {\n          string_value: \"ann\""), std::string::npos) << text;
    EXPECT_NE(text.find("key: \"loupe.param.qty\"\n        value {\n          int_value: 3"), std::string::npos);
    EXPECT_NE(text.find("key: \"loupe.param.price\"\n        value {\n          double_value: 2.5"), std::string::npos);
    EXPECT_NE(text.find("key: \"loupe.param.gift\"\n        value {\n          bool_value: false"), std::string::npos);
    EXPECT_NE(text.find("name: \"loupe\"\n      version: \"" LOUPE_VERSION_STRING "\""), std::string::npos);
    EXPECT_NE(text.find("kind: SPAN_KIND_INTERNAL"), std::string::npos);
    EXPECT_NE(text.find("links {"), std::string::npos);
    EXPECT_NE(text.find("events {\n        time_unix_nano:"), std::string::npos);
    EXPECT_NE(text.find("key: \"service.name\""), std::string::npos);
}

// The schema reads a task's tracestate and flags where loupe puts them.
TEST(Otlp, ProtocReadsTheTraceStateAndFlagsOfTasks) {
    std::string error;
    const std::string text = protoc_decode_otlp(loupe::viewer::to_otlp(task_trace().trace), "otlp_tasks", error);
    ASSERT_FALSE(text.empty()) << error;
    EXPECT_EQ(loupe_test::occurrences(text, "trace_state: \"congo=t61rcWkgMzE\""), 7u) << text;
    EXPECT_EQ(loupe_test::occurrences(text, "trace_state: \"rojo=00f067aa0ba902b7\""), 2u);
    EXPECT_EQ(loupe_test::occurrences(text, "\n      flags: 1\n"), 9u);
}
#endif

}  // namespace
