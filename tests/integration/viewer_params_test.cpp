// Method calls' parameter values in the viewer outputs: typed Perfetto debug
// annotations (decoded with protoc against Perfetto's schema) and Chrome
// JSON args (parsed), the same from .loupe bytes, from the in-memory model
// and from the live sinks; zones without parameters are unchanged.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <loupe/format/output_file.hpp>
#include <loupe/format/encoder.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/sinks/chrome_json_sink.hpp>
#include <loupe/sinks/perfetto_sink.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include "support/json_parser.hpp"
#include "support/perfetto_replay.hpp"
#include "support/protoc_decode.hpp"
#include "support/trace_files.hpp"

namespace {

namespace pf = loupe_test::perfetto;

constexpr loupe::site add_site{"shop::Cart::add(Item const&,int)", "cart.cpp", "add", 12, loupe::site_kind::zone};
constexpr loupe::site checkout_site{"checkout", "cart.cpp", "checkout", 20, loupe::site_kind::zone};
constexpr loupe::site plain_site{"plain", "cart.cpp", "f", 40, loupe::site_kind::zone};

loupe::param_value value(std::uint32_t spec, loupe::value_kind kind, std::uint64_t bits = 0, std::string_view text = {},
                         bool truncated = false, std::uint32_t original = 0) {
    loupe::param_value v;
    v.spec = spec;
    v.kind = kind;
    v.bits = bits;
    v.text = text;
    v.truncated = truncated;
    v.original_size = original;
    return v;
}
std::uint64_t bits_of(double d) {
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

// Records of a session: thread "main" with two calls of `add` nested in
// "checkout" (one exceptional, with CPU time, values lost) and a plain zone; thread
// "other" with plain zones only. Specs: 0 "sku", 1 unnamed, 2 "flag",
// 3 named "sku" as well.
void write_session(loupe::sink& out) {
    static const std::string quoted = "quote \" backslash \\ newline \n bad \xff end";
    loupe::session_info session{"viewer-params", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc,
                                nullptr,         0, {}, {}, {}, {}, 0};
    loupe::thread_info main_thread{1, 501, "main", 1}, other{2, 502, "other", 1};
    auto base = [&](loupe::record_kind kind) {
        loupe::record r;
        r.session = &session;
        r.kind = kind;
        return r;
    };
    out.write(base(loupe::record_kind::session_begin));
    const loupe::param_spec_info specs[] = {{0, "method=shop::Cart::add(Item const&,int); param=1", "sku"},
                                            {1, "method=shop::Cart::add(Item const&,int); param=2", ""},
                                            {2, "method=shop::Cart::add(Item const&,int); param=0", "flag"},
                                            {3, "method=shop::Cart::add(Item const&,int); param=1; chain=hash", "sku"}};
    for (const auto& s : specs) {
        loupe::record r = base(loupe::record_kind::param_spec);
        r.spec = &s;
        out.write(r);
    }
    std::uint64_t events = 0;
    auto zone = [&](const loupe::thread_info& t, const loupe::site& where, std::uint64_t b, std::uint64_t e,
                    const loupe::method_call* call) {
        loupe::record r = base(loupe::record_kind::zone);
        r.thread = &t;
        r.where = &where;
        r.begin_ns = b;
        r.end_ns = e;
        r.method = call;
        out.write(r);
        ++events;
    };
    const loupe::param_value first[] = {
        value(0, loupe::value_kind::string, 0, quoted, false, static_cast<std::uint32_t>(quoted.size())),
        value(1, loupe::value_kind::integer, static_cast<std::uint64_t>(std::int64_t{-42})),
        value(2, loupe::value_kind::boolean, 1), value(3, loupe::value_kind::hash, 0x1f2e3d4c5b6a7988ull)};
    const loupe::param_value second[] = {
        value(0, loupe::value_kind::string, 0, "abcdefgh", true, 300),
        value(1, loupe::value_kind::unsigned_integer, std::numeric_limits<std::uint64_t>::max()),
        value(1, loupe::value_kind::floating, bits_of(2.5)),
        value(1, loupe::value_kind::floating, bits_of(std::numeric_limits<double>::quiet_NaN())),
        value(1, loupe::value_kind::floating, bits_of(-std::numeric_limits<double>::infinity())),
        value(2, loupe::value_kind::null_in_call),
        value(3, loupe::value_kind::redacted, 0, {}, false, 12)};
    const loupe::method_call c1{first, 4, false, false, 0, 0};
    const loupe::method_call c2{second, 7, true, true, 1000, 1750, true};
    zone(main_thread, add_site, 2100, 2400, &c1);
    zone(main_thread, plain_site, 2500, 2600, nullptr);
    zone(main_thread, add_site, 2700, 2900, &c2);
    zone(main_thread, checkout_site, 2000, 3000, nullptr);
    zone(other, plain_site, 2000, 2500, nullptr);
    zone(other, plain_site, 2600, 2700, nullptr);
    loupe::record end = base(loupe::record_kind::session_end);
    end.end_ns = 10000;
    end.count = events;
    out.write(end);
    out.flush();
    out.close();
}

struct bytes_sink final : loupe::sink {
    loupe::detail::trace_encoder encoder;
    void write(const loupe::record& r) override { encoder.encode(r); }
    void flush() override { encoder.close_batch(); }
    void close() override {}
};

const std::vector<unsigned char>& session_bytes() {
    static const std::vector<unsigned char> bytes = [] {
        bytes_sink sink;
        write_session(sink);
        return sink.encoder.bytes();
    }();
    return bytes;
}

const loupe_test::json::value* find_event(const loupe_test::json::value& doc, const std::string& name,
                                          std::size_t nth) {
    for (const auto& e : doc["traceEvents"].items) {
        if (e["name"].s == name && e["ph"].s == "X" && nth-- == 0) return &e;
    }
    return nullptr;
}

TEST(ViewerParams, ChromeJsonArgsHoldTheValuesTypedAndStayValidJson) {
    const std::vector<unsigned char>& bytes = session_bytes();
    std::string json;
    loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json);
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(json, doc), "") << json;
    const auto* first = find_event(doc, "shop::Cart::add(Item const&,int)", 0);
    const auto* second = find_event(doc, "shop::Cart::add(Item const&,int)", 1);
    ASSERT_TRUE(first && second);
    const auto& a = (*first)["args"];
    EXPECT_EQ(a["sku"].s, "quote \" backslash \\ newline \n bad \\xff end");
    EXPECT_EQ(a["param1"].kind, loupe_test::json::value::number);
    EXPECT_EQ(a["param1"].n, -42);
    EXPECT_EQ(a["flag"].kind, loupe_test::json::value::boolean);
    EXPECT_TRUE(a["flag"].b);
    EXPECT_EQ(a["sku#3"].s, "#1f2e3d4c5b6a7988");  // a second spec named "sku"
    EXPECT_FALSE(a.has("exceptional"));
    EXPECT_FALSE(a.has("values_lost"));
    EXPECT_FALSE(a.has("cpu_ns"));
    const auto& b = (*second)["args"];
    EXPECT_EQ(b["sku"].s, "abcdefgh\xE2\x80\xA6");
    EXPECT_EQ(b["param1"].n, 18446744073709551615.0);
    EXPECT_NE(json.find("\"param1\":18446744073709551615"), std::string::npos);
    EXPECT_EQ(b["param1[1]"].n, 2.5);
    EXPECT_EQ(b["param1[2]"].s, "NaN");
    EXPECT_EQ(b["param1[3]"].s, "-Infinity");
    EXPECT_EQ(b["flag"].s, "NullInCall");
    EXPECT_EQ(b["sku#3"].s, "<redacted 12 B>");
    EXPECT_TRUE(b["exceptional"].b);
    EXPECT_TRUE(b["values_lost"].b);
    EXPECT_EQ(b["cpu_ns"].n, 750);
    // Zones without a call have no args.
    const auto* plain = find_event(doc, "plain", 0);
    ASSERT_NE(plain, nullptr);
    EXPECT_FALSE(plain->has("args"));
    EXPECT_FALSE((*find_event(doc, "checkout", 0)).has("args"));
}

TEST(ViewerParams, FromBytesFromTheModelAndFromLiveSinksAlike) {
    const std::vector<unsigned char>& bytes = session_bytes();
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    std::string json, json_parallel, pftrace;
    loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json);
    loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json_parallel, {}, 2);
    loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), pftrace);
    EXPECT_EQ(json, loupe::viewer::to_chrome_json(t));
    EXPECT_EQ(json_parallel, json);
    EXPECT_EQ(pftrace, loupe::viewer::to_perfetto(t));
    for (unsigned workers : {1u, 2u}) {
        std::string plain;
        loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), plain, {false, workers});
        EXPECT_EQ(plain, loupe::viewer::to_perfetto(t, {false})) << workers;
    }

    const std::string json_path = loupe_test::temp_trace_path("viewer_params") + ".json";
    const std::string pf_path = loupe_test::temp_trace_path("viewer_params") + ".pftrace";
    {
        loupe::sinks::chrome_json_sink sink(json_path);
        write_session(sink);
    }
    {
        loupe::sinks::perfetto_sink sink(pf_path);
        write_session(sink);
    }
    EXPECT_EQ(loupe_test::read_text(json_path), json);
    EXPECT_EQ(loupe_test::read_text(pf_path), pftrace);
    std::remove(json_path.c_str());
    std::remove(pf_path.c_str());
}

TEST(ViewerParams, PerfettoSlicesCarryTheValuesAsAnnotations) {
    const std::vector<unsigned char>& bytes = session_bytes();
    std::string plain;
    loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), plain, {false, 1});
    const pf::model m = pf::replay(plain);
    ASSERT_TRUE(m.ok) << m.error;
    const pf::thread_track* main_track = nullptr;
    const pf::thread_track* other_track = nullptr;
    for (const auto& [uuid, track] : m.threads) {
        if (track.name == "main") main_track = &track;
        if (track.name == "other") other_track = &track;
    }
    ASSERT_TRUE(main_track && other_track);
    ASSERT_EQ(main_track->slices.size(), 4u);
    std::vector<const pf::slice*> calls;
    for (const pf::slice& s : main_track->slices) {
        if (s.name == "shop::Cart::add(Item const&,int)") calls.push_back(&s);
        if (s.name != "shop::Cart::add(Item const&,int)") {
            EXPECT_TRUE(s.args.empty()) << s.name;
        }
    }
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[0]->depth, 1);
    EXPECT_EQ(calls[0]->args.at("param1"), "-42");
    EXPECT_EQ(calls[0]->args.at("sku"), "quote \" backslash \\ newline \n bad \\xff end");
    EXPECT_EQ(calls[1]->args.at("flag"), "NullInCall");
    EXPECT_EQ(calls[1]->args.at("param1"), "18446744073709551615");
    EXPECT_EQ(calls[1]->args.at("sku"), "abcdefgh\xE2\x80\xA6");
    EXPECT_EQ(calls[1]->args.at("cpu_ns"), "750");
    EXPECT_EQ(calls[1]->args.count("exceptional"), 1u);
    EXPECT_EQ(calls[1]->args.count("values_lost"), 1u);
    EXPECT_EQ(calls[0]->args.count("values_lost"), 0u);
    for (const pf::slice& s : other_track->slices) {
        EXPECT_TRUE(s.args.empty());
    }
#ifndef LOUPE_PROTOC
    GTEST_SKIP() << "protoc not found at configure time (CI installs protobuf-compiler)";
#else
    std::string error;
    const std::string text = loupe_test::protoc_decode(plain, "viewer_params_protoc", error);
    ASSERT_NE(text, "") << error;
    auto count = [&](const std::string& needle) { return loupe_test::occurrences(text, needle); };
    // Typed values; names interned once for the sequence of "main" only.
    EXPECT_EQ(count("bool_value: true\n"), 3u);  // flag, exceptional, values_lost
    EXPECT_EQ(count("int_value: -42\n"), 1u);
    EXPECT_EQ(count("uint_value: 18446744073709551615\n"), 1u);
    EXPECT_EQ(count("double_value: 2.5\n"), 1u);
    EXPECT_EQ(count("double_value: nan\n"), 1u);
    EXPECT_EQ(count("double_value: -inf\n"), 1u);
    EXPECT_EQ(count("string_value: \"NullInCall\"\n"), 1u);
    EXPECT_EQ(count("string_value: \"#1f2e3d4c5b6a7988\"\n"), 1u);
    EXPECT_EQ(count("string_value: \"<redacted 12 B>\"\n"), 1u);
    EXPECT_EQ(count("int_value: 750\n"), 1u);
    EXPECT_EQ(count("name: \"sku\"\n"), 1u);
    EXPECT_EQ(count("name: \"sku#3\"\n"), 1u);
    EXPECT_EQ(count("name: \"param1\"\n"), 1u);
    EXPECT_EQ(count("name: \"param1[1]\"\n"), 1u);  // a further value of one spec: named inline
    EXPECT_EQ(count("name: \"exceptional\"\n"), 1u);
    EXPECT_EQ(count("name: \"values_lost\"\n"), 1u);
#endif
}

TEST(ViewerParams, ZonesWithoutParametersConvertAsBefore) {
    // The same session without its specs and calls converts to the output
    // of a trace that never had any (the writers add nothing per zone).
    struct strip final : loupe::sink {
        bytes_sink inner;
        void write(const loupe::record& r) override {
            if (r.kind == loupe::record_kind::param_spec) return;
            loupe::record copy = r;
            copy.method = nullptr;
            inner.write(copy);
        }
        void flush() override { inner.flush(); }
        void close() override {}
    } stripped;
    write_session(stripped);
    const std::vector<unsigned char>& bytes = stripped.inner.encoder.bytes();
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    EXPECT_TRUE(t.method_calls.empty());
    const std::string json = loupe::viewer::to_chrome_json(t);
    EXPECT_EQ(json.find("\"args\":{\"sku"), std::string::npos);
    EXPECT_EQ(json.find("exceptional"), std::string::npos);
    const std::vector<unsigned char>& with = session_bytes();
    std::string with_json;
    loupe::viewer::convert_to_chrome_json(with.data(), with.size(), with_json);
    // Only the two calls' lines differ.
    std::size_t differing = 0;
    std::size_t a = 0, b = 0;
    while (a < json.size() && b < with_json.size()) {
        const std::size_t ea = json.find('\n', a), eb = with_json.find('\n', b);
        if (json.substr(a, ea - a) != with_json.substr(b, eb - b)) ++differing;
        a = ea + 1;
        b = eb + 1;
    }
    EXPECT_EQ(differing, 2u);
}

}  // namespace
