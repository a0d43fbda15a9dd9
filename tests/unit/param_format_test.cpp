// .loupe format 1.4: parameter specs, method calls and apply errors written
// by file_sink from hand-built sink records and read back (reader, memory
// sink), corrupt and cut-short METHOD_CALL records, and the bytes of
// sessions without parameters (unchanged from 1.3 but the header).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <loupe/format/encoder.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/sinks/file_sink.hpp>
#include <loupe/sinks/memory_sink.hpp>

#include "support/trace_files.hpp"

namespace {

constexpr loupe::site add_site{"shop::Cart::add(Item const&,int)", "cart.cpp", "add", 12, loupe::site_kind::zone};
constexpr loupe::site remove_site{"shop::Cart::remove(int)", "cart.cpp", "remove", 30, loupe::site_kind::zone};
constexpr loupe::site plain_site{"plain", "cart.cpp", "f", 40, loupe::site_kind::zone};
constexpr loupe::site tick_site{"tick", "cart.cpp", "f", 41, loupe::site_kind::instant};

loupe::param_value scalar(std::uint32_t spec, loupe::value_kind kind, std::uint64_t bits) {
    loupe::param_value v;
    v.spec = spec;
    v.kind = kind;
    v.bits = bits;
    return v;
}
loupe::param_value text(std::uint32_t spec, loupe::value_kind kind, std::string_view s, bool truncated = false,
                        std::uint32_t original = 0) {
    loupe::param_value v;
    v.spec = spec;
    v.kind = kind;
    v.text = s;
    v.truncated = truncated;
    v.original_size = original ? original : static_cast<std::uint32_t>(s.size());
    return v;
}
std::uint64_t bits_of(double d) {
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

// Sends hand-built records of one session to a sink.
struct recorder {
    loupe::sink& out;
    loupe::session_info session{"params", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc, nullptr, 0, {}, {}, {}, {}, 0};
    loupe::thread_info main_thread{1, 501, "main", 1};
    loupe::thread_info worker{2, 502, "worker", 1};
    std::uint64_t events = 0;

    loupe::record base(loupe::record_kind kind) {
        loupe::record r;
        r.session = &session;
        r.kind = kind;
        return r;
    }
    void begin() { out.write(base(loupe::record_kind::session_begin)); }
    void spec(std::uint32_t index, std::string_view spec_text, std::string_view name) {
        const loupe::param_spec_info info{index, spec_text, name};
        loupe::record r = base(loupe::record_kind::param_spec);
        r.spec = &info;
        out.write(r);
    }
    void zone(const loupe::thread_info& t, const loupe::site& where, std::uint64_t b, std::uint64_t e,
              const loupe::method_call* call = nullptr, const std::vector<loupe::metric_value>* metrics = nullptr) {
        loupe::record r = base(loupe::record_kind::zone);
        r.thread = &t;
        r.where = &where;
        r.begin_ns = b;
        r.end_ns = e;
        r.method = call;
        if (metrics) {
            r.metrics = metrics->data();
            r.metric_count = metrics->size();
        }
        out.write(r);
        ++events;
    }
    void instant(const loupe::thread_info& t, std::uint64_t at) {
        loupe::record r = base(loupe::record_kind::instant);
        r.thread = &t;
        r.where = &tick_site;
        r.begin_ns = r.end_ns = at;
        out.write(r);
        ++events;
    }
    void apply_error(const loupe::site& where, std::uint32_t spec, std::string_view reason) {
        const loupe::param_apply_error e{spec, reason};
        loupe::record r = base(loupe::record_kind::param_apply_error);
        r.where = &where;
        r.apply_error = &e;
        out.write(r);
    }
    void end() {
        loupe::record r = base(loupe::record_kind::session_end);
        r.end_ns = 100000;
        r.count = events;
        out.write(r);
        out.flush();
        out.close();
    }
};

void expect_same(const loupe::param_value& got, const loupe::param_value& want, const std::string& where) {
    EXPECT_EQ(got.spec, want.spec) << where;
    EXPECT_EQ(got.kind, want.kind) << where;
    EXPECT_EQ(got.truncated, want.truncated) << where;
    EXPECT_EQ(got.original_size, want.original_size) << where;
    EXPECT_EQ(got.bits, want.bits) << where;  // bit patterns: NaN too
    EXPECT_EQ(got.text, want.text) << where;
}

// The values of every kind, over three calls (see write_every_kind).
struct every_kind {
    std::vector<loupe::param_value> first, second, third;
    every_kind() {
        first = {text(0, loupe::value_kind::string, "ABC-1"), text(0, loupe::value_kind::type_name, "shop::Item"),
                 scalar(1, loupe::value_kind::integer, static_cast<std::uint64_t>(std::int64_t{-5}))};
        second = {text(0, loupe::value_kind::string, "abcdefgh", true, 300),
                  scalar(1, loupe::value_kind::unsigned_integer, std::numeric_limits<std::uint64_t>::max())};
        third = {scalar(2, loupe::value_kind::boolean, 1),
                 scalar(2, loupe::value_kind::floating, bits_of(std::numeric_limits<double>::quiet_NaN())),
                 scalar(2, loupe::value_kind::floating, bits_of(-std::numeric_limits<double>::infinity())),
                 scalar(2, loupe::value_kind::floating, bits_of(2.5)),
                 scalar(2, loupe::value_kind::object_id, 0x7ffdeadbeef0ull),
                 scalar(2, loupe::value_kind::hash, 0xfedcba9876543210ull),
                 text(2, loupe::value_kind::string, "")};
        loupe::param_value redacted;
        redacted.spec = 2;
        redacted.kind = loupe::value_kind::redacted;
        redacted.original_size = 12;
        third.push_back(redacted);
        for (std::uint8_t k = 16; k <= 22; ++k) third.push_back(scalar(2, static_cast<loupe::value_kind>(k), 0));
    }
};

// main: add (3 values), tick, add (2 values, exceptional, cpu) inside
// "plain", add (no values, exceptional, values lost); worker: remove (every
// other kind, cpu). Spec 1 is renamed between the calls; two apply errors.
void write_every_kind(loupe::sink& sink, const every_kind& v) {
    recorder rec{sink};
    rec.begin();
    rec.spec(0, "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)", "sku");
    rec.spec(1, "method=shop::Cart::add(Item const&,int); param=2", "");
    rec.spec(2, "method=shop::Cart::remove(int); param=1; data=cpu", "id");
    rec.apply_error(remove_site, 3, "modifier 2 `field(nosuch)`: int has no field 'nosuch'");
    const loupe::method_call c1{v.first.data(), v.first.size(), false, false, 0, 0};
    rec.zone(rec.main_thread, add_site, 2000, 2500, &c1);
    rec.instant(rec.main_thread, 2600);
    const loupe::method_call c2{v.second.data(), v.second.size(), true, true, 500, 900};
    rec.zone(rec.main_thread, add_site, 3100, 3900, &c2);
    rec.zone(rec.main_thread, plain_site, 3000, 4000);
    rec.spec(1, "method=shop::Cart::add(Item const&,int); param=2; name=qty", "qty");
    rec.spec(1, "method=shop::Cart::add(Item const&,int); param=2; name=qty", "qty");  // unchanged: not written again
    const loupe::method_call c3{v.third.data(), v.third.size(), false, true, 7000, 7000 + 123456};
    rec.zone(rec.worker, remove_site, 5000, 9000, &c3);
    const loupe::method_call c4{nullptr, 0, true, false, 0, 0, true};
    rec.zone(rec.main_thread, add_site, 9500, 9600, &c4);
    rec.apply_error(add_site, 0, "reason \xff with a bad byte");
    rec.end();
}

std::vector<std::uint64_t> record_offsets(const std::vector<unsigned char>& bytes, std::uint8_t kind) {
    std::vector<std::uint64_t> out;
    std::size_t pos = loupe::detail::format::header_size;
    while (pos < bytes.size()) {
        const std::size_t at = pos;
        const std::uint8_t k = bytes[pos++];
        std::uint64_t length = 0;
        for (unsigned shift = 0;; shift += 7) {
            const unsigned char b = bytes[pos++];
            length |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) break;
        }
        if (k == kind) out.push_back(at);
        pos += static_cast<std::size_t>(length);
    }
    return out;
}

TEST(ParamFormat, EveryValueKindSpecsAndApplyErrorsRoundTripThroughFileSink) {
    const std::string path = loupe_test::temp_trace_path("param_format_roundtrip");
    const every_kind v;
    {
        loupe::sinks::file_sink sink(path);
        write_every_kind(sink, v);
    }
    loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    EXPECT_EQ(t.session.version_minor, 9);
    ASSERT_TRUE(t.complete);

    ASSERT_EQ(t.param_specs.size(), 3u);
    EXPECT_EQ(t.param_specs[0].index, 0u);
    EXPECT_EQ(t.param_specs[0].name, "sku");
    EXPECT_EQ(t.param_specs[1].name, "qty");  // the redefinition replaced it in place
    EXPECT_EQ(t.param_specs[1].text, "method=shop::Cart::add(Item const&,int); param=2; name=qty");
    EXPECT_EQ(t.param_label(1), "qty");
    EXPECT_EQ(t.param_label(7), "param7");
    ASSERT_NE(t.find_param_spec(2), nullptr);
    EXPECT_EQ(t.find_param_spec(2)->text, "method=shop::Cart::remove(int); param=1; data=cpu");

    ASSERT_EQ(t.apply_errors.size(), 2u);
    EXPECT_EQ(t.find_site(t.apply_errors[0].site_id)->name, "shop::Cart::remove(int)");
    EXPECT_EQ(t.apply_errors[0].spec, 3u);
    EXPECT_EQ(t.apply_errors[0].reason, "modifier 2 `field(nosuch)`: int has no field 'nosuch'");
    EXPECT_EQ(t.find_site(t.apply_errors[1].site_id)->name, "shop::Cart::add(Item const&,int)");
    EXPECT_EQ(t.apply_errors[1].reason, "reason \xff with a bad byte");

    // The model's text survives the original: a copy shares its storage.
    const loupe::trace copy = t;
    t = loupe::trace();
    std::vector<const loupe::trace_event*> calls;
    for (const loupe::trace_event& e : copy.events) {
        if (e.method != loupe::no_method) {
            calls.push_back(&e);
        } else {
            EXPECT_EQ(copy.method_of(e), nullptr);
            EXPECT_TRUE(copy.params_of(e).empty());
        }
    }
    ASSERT_EQ(calls.size(), 4u);
    ASSERT_EQ(copy.method_calls.size(), 4u);
    const std::vector<loupe::param_value>* want[] = {&v.first, &v.second, &v.third, nullptr};
    const bool exceptional[] = {false, true, false, true};
    for (std::size_t i = 0; i < 4; ++i) {
        const loupe::trace_event& e = *calls[i];
        EXPECT_EQ(e.type, loupe::event_type::zone);
        const loupe::trace_method_call* m = copy.method_of(e);
        ASSERT_NE(m, nullptr);
        EXPECT_EQ(m->exceptional, exceptional[i]) << i;
        EXPECT_EQ(m->values_lost, i == 3) << i;
        const loupe::param_span values = copy.params_of(e);
        const std::size_t expected = want[i] ? want[i]->size() : 0;
        ASSERT_EQ(values.size(), expected) << i;
        for (std::size_t k = 0; k < expected; ++k) {
            expect_same(values[k], (*want[i])[k], "call " + std::to_string(i) + " value " + std::to_string(k));
        }
    }
    EXPECT_EQ(copy.find_site(calls[2]->site_id)->name, "shop::Cart::remove(int)");
    EXPECT_EQ(calls[2]->thread_id, 2u);
    const loupe::trace_method_call& cpu = *copy.method_of(*calls[1]);
    EXPECT_TRUE(cpu.has_cpu);
    EXPECT_EQ(cpu.cpu_begin_ns, 500u);
    EXPECT_EQ(cpu.cpu_end_ns, 900u);
    EXPECT_FALSE(copy.method_of(*calls[0])->has_cpu);
    EXPECT_EQ(copy.method_of(*calls[2])->cpu_end_ns - copy.method_of(*calls[2])->cpu_begin_ns, 123456u);
    // People see the values through format_value.
    const loupe::param_span second = copy.params_of(*calls[1]);
    EXPECT_EQ(loupe::format_value(second[0]), "abcdefgh\xE2\x80\xA6");
    EXPECT_EQ(loupe::format_value(second[1]), "18446744073709551615");
    EXPECT_EQ(loupe::format_value(copy.params_of(*calls[2])[9]), "NullInCall");
    EXPECT_EQ(copy.events.size(), 6u);
    EXPECT_EQ(copy.end.events_written, 6u);
}

TEST(ParamFormat, MemorySinkKeepsMethodCallsSpecsAndApplyErrors) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    const every_kind v;
    write_every_kind(*sink, v);
    std::vector<loupe::sinks::memory_event> events;
    {
        // Copies keep their text valid after the sink forgets the originals.
        const std::vector<loupe::sinks::memory_event> taken = sink->take();
        events = taken;
    }
    std::vector<const loupe::sinks::memory_event*> calls, specs, errors;
    for (const auto& e : events) {
        if (e.has_method) calls.push_back(&e);
        if (e.kind == loupe::record_kind::param_spec) specs.push_back(&e);
        if (e.kind == loupe::record_kind::param_apply_error) errors.push_back(&e);
    }
    ASSERT_EQ(calls.size(), 4u);
    ASSERT_EQ(calls[2]->params.size(), v.third.size());
    for (std::size_t k = 0; k < v.third.size(); ++k) expect_same(calls[2]->params[k], v.third[k], std::to_string(k));
    expect_same(calls[0]->params[0], v.first[0], "string");
    EXPECT_TRUE(calls[1]->exceptional);
    EXPECT_TRUE(calls[1]->has_cpu);
    EXPECT_EQ(calls[1]->cpu_end_ns, 900u);
    EXPECT_TRUE(calls[3]->params.empty());
    EXPECT_TRUE(calls[3]->values_lost);
    EXPECT_FALSE(calls[1]->values_lost);
    EXPECT_EQ(calls[0]->name, "shop::Cart::add(Item const&,int)");
    ASSERT_EQ(specs.size(), 5u);  // the sink keeps every record, repeats too
    EXPECT_EQ(specs[3]->spec, 1u);
    EXPECT_EQ(specs[3]->spec_name, "qty");
    EXPECT_EQ(specs[0]->spec_text, "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0]->name, "shop::Cart::remove(int)");
    EXPECT_EQ(errors[0]->spec, 3u);
    EXPECT_EQ(errors[0]->reason, "modifier 2 `field(nosuch)`: int has no field 'nosuch'");
}

std::vector<unsigned char> encoded_every_kind() {
    struct bytes_sink final : loupe::sink {
        loupe::detail::trace_encoder encoder;
        void write(const loupe::record& r) override { encoder.encode(r); }
        void flush() override { encoder.close_batch(); }
        void close() override {}
    } sink;
    write_every_kind(sink, every_kind());
    return sink.encoder.bytes();
}

loupe::trace_error read_error(const std::vector<unsigned char>& bytes, loupe::decode_options options = {}) {
    try {
        (void)loupe::read_trace(bytes.data(), bytes.size(), options);
    } catch (const loupe::trace_error& e) {
        return e;
    }
    ADD_FAILURE() << "the trace was read without an error";
    return loupe::trace_error(0, "none");
}

TEST(ParamFormat, CutShortMethodCallNamesItsOffsetAndPartialReadsTheZone) {
    const std::vector<unsigned char> bytes = encoded_every_kind();
    const std::vector<std::uint64_t> calls = record_offsets(bytes, loupe::detail::format::rec_method_call);
    ASSERT_EQ(calls.size(), 4u);
    // Cut inside the third call's record (the worker's): its offset is named.
    std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(calls[2] + 9));
    const loupe::trace_error e = read_error(cut);
    EXPECT_EQ(e.offset(), calls[2]);
    EXPECT_TRUE(e.truncated());
    EXPECT_NE(std::string(e.what()).find("byte " + std::to_string(calls[2])), std::string::npos);
    loupe::decode_options partial;
    partial.accept_truncated = true;
    const loupe::trace t = loupe::read_trace(cut.data(), cut.size(), partial);
    EXPECT_FALSE(t.complete);
    EXPECT_EQ(t.method_calls.size(), 2u);
    ASSERT_FALSE(t.events.empty());
    EXPECT_EQ(t.events.back().method, loupe::no_method);  // the worker's zone, without its cut-off call
    // Cutting at every byte never reads out of bounds (ASan builds check) and always throws.
    for (std::size_t n = calls[0]; n < calls[0] + 30; ++n) {
        std::vector<unsigned char> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_THROW((void)loupe::read_trace(prefix.data(), prefix.size()), loupe::trace_error) << n;
    }
}

TEST(ParamFormat, CorruptMethodCallsAreErrorsNamingTheField) {
    const std::vector<unsigned char> bytes = encoded_every_kind();
    const std::uint64_t at = record_offsets(bytes, loupe::detail::format::rec_method_call)[0];
    // Layout of the first call: kind, length (1 byte), thread, flags, count,
    // then the first value: kind, spec, payload length, payload.
    const std::uint64_t flags_at = at + 3, spec_at = at + 6, payload_at = at + 7;
    ASSERT_EQ(bytes[at + 5], static_cast<unsigned char>(loupe::value_kind::string));
    struct corruption {
        std::uint64_t offset;
        unsigned char value;
        std::uint64_t error_at;
        const char* message;
    };
    const corruption cases[] = {
        {flags_at, 0x80, flags_at, "METHOD_CALL flags 128 has unknown bits"},
        {spec_at, 9, spec_at, "value spec 9 is not defined by a PARAM_SPEC before it"},
        {payload_at, 0x7f, payload_at, "value payload: expected 127 bytes of text but the record ends"},
        {payload_at + 1, 0x04, payload_at + 1, "text value flags 4 has unknown bits"},
        {at + 4, 0x7f, at + 4, "METHOD_CALL count 127 does not fit"},
        {at + 2, 7, at + 2, "METHOD_CALL thread 7 is not defined before it"},
    };
    for (const corruption& c : cases) {
        std::vector<unsigned char> bad = bytes;
        bad[c.offset] = c.value;
        const loupe::trace_error e = read_error(bad);
        EXPECT_EQ(e.offset(), c.error_at) << c.message << ": " << e.what();
        EXPECT_NE(e.detail().find(c.message), std::string::npos) << e.what();
        EXPECT_FALSE(e.truncated()) << c.message;
    }
    // The last call (main's) said to be the worker's, whose latest zone has
    // its call already: the reader names the record.
    const std::uint64_t last = record_offsets(bytes, loupe::detail::format::rec_method_call)[3];
    std::vector<unsigned char> bad = bytes;
    ASSERT_EQ(bad[last + 2], 1u);
    bad[last + 2] = 2;
    const loupe::trace_error e = read_error(bad);
    EXPECT_EQ(e.offset(), last);
    EXPECT_EQ(e.detail(), "METHOD_CALL of thread 2 does not follow a zone of that thread");
}

TEST(ParamFormat, ReadersSkipTheNewRecordKindsByTheirFraming) {
    // What a 1.3 reader does: the three new kinds are unknown to it.
    std::vector<unsigned char> bytes = encoded_every_kind();
    const std::uint8_t kinds[] = {loupe::detail::format::rec_param_spec, loupe::detail::format::rec_method_call,
                                  loupe::detail::format::rec_apply_error};
    std::size_t renamed = 0;
    for (const std::uint8_t kind : kinds) {
        for (const std::uint64_t at : record_offsets(bytes, kind)) {
            bytes[at] = 0x7e;
            ++renamed;
        }
    }
    EXPECT_EQ(renamed, 4u + 4u + 2u);
    struct counting final : loupe::trace_visitor {
        std::size_t unknown = 0, events = 0;
        void on_unknown(std::uint64_t, std::uint8_t kind, std::uint64_t) override { unknown += kind == 0x7e; }
        void on_event(std::uint64_t, const loupe::trace_event&) override { ++events; }
    } visitor;
    EXPECT_TRUE(loupe::decode_trace(bytes.data(), bytes.size(), visitor).complete);
    EXPECT_EQ(visitor.unknown, renamed);
    EXPECT_EQ(visitor.events, 6u);
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    EXPECT_TRUE(t.method_calls.empty());
    EXPECT_TRUE(t.param_specs.empty());
    EXPECT_EQ(t.events.size(), 6u);
}

// The bytes the 1.3 encoder wrote for a session of zones (nested, with
// metric deltas), instants, counters and drops, captured before 1.4.
const unsigned char bytes_of_1_3[] = {
    0x89, 0x4c, 0x4f, 0x55, 0x50, 0x45, 0x0d, 0x0a, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x19, 0xe8,
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x36, 0xfe, 0x9c, 0x97, 0x17, 0x2a, 0x00, 0x06, 0x67,
    0x6f, 0x6c, 0x64, 0x65, 0x6e, 0x0b, 0x11, 0x09, 0x01, 0x01, 0x07, 0x64, 0x62, 0x2e, 0x72, 0x6f, 0x77, 0x73, 0x04,
    0x72, 0x6f, 0x77, 0x73, 0x00, 0x02, 0x03, 0x01, 0x01, 0x61, 0x04, 0x03, 0x01, 0x65, 0x01, 0x02, 0x07, 0x02, 0x05,
    0x69, 0x6e, 0x6e, 0x65, 0x72, 0x02, 0x07, 0x03, 0x05, 0x77, 0x2e, 0x63, 0x70, 0x70, 0x02, 0x03, 0x04, 0x01, 0x66,
    0x03, 0x06, 0x01, 0x01, 0x02, 0x03, 0x04, 0x04, 0x05, 0x06, 0x01, 0x01, 0x01, 0xe4, 0x0f, 0x50, 0x02, 0x07, 0x05,
    0x05, 0x64, 0x65, 0x70, 0x74, 0x68, 0x03, 0x06, 0x02, 0x03, 0x05, 0x03, 0x06, 0x04, 0x05, 0x0c, 0x01, 0x03, 0x02,
    0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x06, 0x06, 0x04, 0x74, 0x69, 0x63, 0x6b, 0x03, 0x06,
    0x03, 0x02, 0x06, 0x03, 0x05, 0x04, 0x05, 0x04, 0x01, 0x02, 0x03, 0x5a, 0x02, 0x06, 0x07, 0x04, 0x77, 0x6f, 0x72,
    0x6b, 0x03, 0x06, 0x04, 0x01, 0x07, 0x03, 0x03, 0x04, 0x05, 0x06, 0x01, 0x01, 0x04, 0xbd, 0x01, 0x64, 0x02, 0x03,
    0x08, 0x01, 0x62, 0x04, 0x03, 0x02, 0x66, 0x08, 0x05, 0x19, 0x02, 0x01, 0x01, 0xb4, 0x1f, 0x50, 0x03, 0x02, 0x50,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f, 0x02, 0x03, 0x5a, 0x01, 0x04, 0xbd, 0x01, 0x64, 0x0c, 0x04, 0x02,
    0x01, 0x09, 0x0d, 0x05, 0x19, 0x01, 0x01, 0x01, 0xb4, 0x1f, 0x50, 0x03, 0x02, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0xf0, 0x3f, 0x02, 0x03, 0x5a, 0x01, 0x04, 0xbd, 0x01, 0x64, 0x06, 0x02, 0x01, 0x03, 0x07, 0x0a, 0x0c, 0x03,
    0x28, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

TEST(ParamFormat, SessionsWithoutParametersEncodeAsBefore) {
    static const loupe::site work{"work", "w.cpp", "f", 3, loupe::site_kind::zone};
    static const loupe::site inner{"inner", "w.cpp", "f", 4, loupe::site_kind::zone};
    static const loupe::site tick{"tick", "w.cpp", "f", 5, loupe::site_kind::instant};
    static const loupe::site depth{"depth", "w.cpp", "f", 6, loupe::site_kind::counter};
    const loupe::metric_info metrics[] = {{9, "db.rows", "rows", loupe::metric_source::push, true, ""}};
    loupe::session_info s{"golden", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc, metrics, 1, {}, {}, {}, {}, 0};
    loupe::thread_info a{1, 101, "a", 1}, b{2, 102, "b", 1};
    loupe::detail::trace_encoder enc;
    loupe::record r;
    r.session = &s;
    r.kind = loupe::record_kind::session_begin;
    enc.encode(r);
    std::uint64_t n = 0;
    const loupe::metric_value delta[] = {{9, -7}};
    for (int i = 0; i < 3; ++i) {
        const loupe::thread_info* th = i % 2 ? &b : &a;
        const std::uint64_t t0 = 2000 + 1000u * static_cast<unsigned>(i);
        loupe::record z;
        z.session = &s;
        z.thread = th;
        z.kind = loupe::record_kind::zone;
        z.where = &inner;
        z.begin_ns = t0 + 10;
        z.end_ns = t0 + 90;
        enc.encode(z);
        ++n;
        loupe::record c = z;
        c.kind = loupe::record_kind::counter;
        c.where = &depth;
        c.begin_ns = c.end_ns = t0 + 50;
        c.value = 0.5 * i;
        enc.encode(c);
        ++n;
        loupe::record in = z;
        in.kind = loupe::record_kind::instant;
        in.where = &tick;
        in.begin_ns = in.end_ns = t0 + 95;
        enc.encode(in);
        ++n;
        loupe::record o = z;
        o.where = &work;
        o.begin_ns = t0;
        o.end_ns = t0 + 100;
        if (i == 1) {
            o.metrics = delta;
            o.metric_count = 1;
        }
        enc.encode(o);
        ++n;
    }
    loupe::record d;
    d.session = &s;
    d.kind = loupe::record_kind::dropped;
    d.thread = &a;
    d.count = 3;
    enc.encode(d);
    loupe::record e;
    e.session = &s;
    e.kind = loupe::record_kind::session_end;
    e.end_ns = 9000;
    e.count = n;
    e.dropped_total = 3;
    enc.encode(e);
    enc.close_batch();
    std::vector<unsigned char> expected(std::begin(bytes_of_1_3), std::end(bytes_of_1_3));
    expected[10] = loupe::detail::format::version_minor;  // the header's minor version: the only difference
    EXPECT_EQ(enc.bytes(), expected);
}

}  // namespace
