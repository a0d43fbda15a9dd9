// Zone arguments (LOUPE_ZONE_ARG): recorded only when their zone is, for the
// sessions that record it; attached to the right zone by every reader (the
// model, the streaming viewers, the live viewer sinks); shown in dumps,
// stats --params, Chrome JSON and Perfetto; bounded text; bad ZONE_ARG
// records are errors that name the byte.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/param_stats.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/crafted_trace.hpp"
#include "support/json_parser.hpp"
#include "support/perfetto_replay.hpp"
#include "support/recording.hpp"
#include "support/trace_files.hpp"

namespace {

enum class tier : unsigned char { gold = 3 };

// The arguments of the zones named `zone` in a trace, as "key=value" text.
std::vector<std::vector<std::string>> args_of_zones(const loupe::trace& t, std::string_view zone) {
    std::vector<std::vector<std::string>> out;
    for (const loupe::trace_event& e : t.events) {
        const loupe::trace_site* site = t.find_site(e.site_id);
        if (e.type != loupe::event_type::zone || !site || site->name != zone) continue;
        std::vector<std::string> args;
        for (const loupe::trace_zone_argument& a : t.args_of(e)) {
            args.push_back(std::string(a.key) + "=" + loupe::format_value(a.value));
        }
        out.push_back(args);
    }
    return out;
}

// One request: a query zone with arguments of every kind, one of them set
// from inside a nested zone that has its own.
void run_query(const std::string& table, std::size_t rows) {
    LOUPE_ZONE_AS(query, "query");
    LOUPE_ZONE_ARG(query, "table", table);
    {
        LOUPE_ZONE_AS(fetch, "fetch");
        LOUPE_ZONE_ARG(fetch, "page", 7);
        LOUPE_ZONE_ARG(query, "rows", rows);  // the outer zone's, set while the inner one runs
    }
    LOUPE_ZONE_ARG(query, "ratio", 0.25);
    LOUPE_ZONE_ARG(query, "cached", false);
    LOUPE_ZONE_ARG(query, "tier", tier::gold);
    LOUPE_ZONE_ARG(query, "delta", -3);
}

std::vector<unsigned char> recorded_queries(std::shared_ptr<loupe::sinks::memory_sink> memory = nullptr) {
    const std::string path = loupe_test::temp_trace_path("zone_args");
    loupe::session_config cfg;
    cfg.name = "zone-args";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    if (memory) cfg.sinks.push_back(memory);
    auto session = loupe::start_session(cfg);
    run_query("notes", 12);
    run_query("users", 3);
    { LOUPE_ZONE("plain"); }
    session.stop();
    std::vector<unsigned char> bytes = loupe::read_trace_bytes(path);
    std::remove(path.c_str());
    return bytes;
}

TEST(ZoneArgs, EachZoneGetsItsOwnArgumentsInTheOrderTheyWereRecorded) {
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    const std::vector<unsigned char> bytes = recorded_queries(memory);
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());

    const auto queries = args_of_zones(t, "query");
    ASSERT_EQ(queries.size(), 2u);
    EXPECT_EQ(queries[0], (std::vector<std::string>{"table=notes", "rows=12", "ratio=0.25", "cached=false", "tier=3",
                                                    "delta=-3"}));
    EXPECT_EQ(queries[1][0], "table=users");
    EXPECT_EQ(queries[1][1], "rows=3");
    EXPECT_EQ(args_of_zones(t, "fetch"), (std::vector<std::vector<std::string>>{{"page=7"}, {"page=7"}}));
    EXPECT_EQ(args_of_zones(t, "plain"), (std::vector<std::vector<std::string>>{{}}));
    EXPECT_EQ(t.zone_args.size(), 14u);
    EXPECT_EQ(t.zone_args_without_zone, 0u);

    // Typed as the C++ values were.
    const loupe::trace_event* first_query = nullptr;
    for (const auto& e : t.events) {
        if (t.find_site(e.site_id)->name == "query") {
            first_query = &e;
            break;
        }
    }
    ASSERT_NE(first_query, nullptr);
    const auto args = t.args_of(*first_query);
    ASSERT_EQ(args.size(), 6u);
    EXPECT_EQ(args[0].value.kind, loupe::value_kind::string);
    EXPECT_EQ(args[1].value.kind, loupe::value_kind::unsigned_integer);
    EXPECT_EQ(args[2].value.kind, loupe::value_kind::floating);
    EXPECT_EQ(args[3].value.kind, loupe::value_kind::boolean);
    EXPECT_EQ(args[4].value.kind, loupe::value_kind::unsigned_integer);  // an enum, by its underlying type
    EXPECT_EQ(args[5].value.kind, loupe::value_kind::integer);

    // Sinks see each argument as its own record, before its zone, stamped
    // with the zone's begin time.
    const auto events = memory->events();
    std::map<std::uint64_t, std::size_t> zone_at;  // begin -> index
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i].kind == loupe::record_kind::zone) zone_at[events[i].begin_ns] = i;
    }
    std::size_t seen = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i].kind != loupe::record_kind::zone_arg) continue;
        ++seen;
        ASSERT_EQ(events[i].params.size(), 1u);
        ASSERT_EQ(zone_at.count(events[i].begin_ns), 1u) << events[i].name;
        EXPECT_LT(i, zone_at[events[i].begin_ns]) << events[i].name;
    }
    EXPECT_EQ(seen, 14u);
}

TEST(ZoneArgs, AValueIsEvaluatedOnlyWhenItsZoneIsRecorded) {
    int evaluated = 0;
    auto value = [&] { return ++evaluated; };
    {
        LOUPE_ZONE_AS(idle, "idle");
        LOUPE_ZONE_ARG(idle, "n", value());  // no session
    }
    EXPECT_EQ(evaluated, 0);

    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg = loupe_test::memory_config(memory);
    cfg.filter = "user == \"alice\"";
    auto session = loupe::start_session(cfg);
    {
        LOUPE_ZONE_AS(filtered_out, "filtered");  // this thread serves nobody: not recorded
        LOUPE_ZONE_ARG(filtered_out, "n", value());
    }
    EXPECT_EQ(evaluated, 0);
    {
        loupe::context_scope who{{loupe::context_field::user, "alice"}};
        LOUPE_ZONE_AS(recorded, "recorded");
        LOUPE_ZONE_ARG(recorded, "n", value());
    }
    session.stop();
    EXPECT_EQ(evaluated, 1);
    const auto args = loupe_test::of_kind(memory->events(), loupe::record_kind::zone_arg);
    ASSERT_EQ(args.size(), 1u);
    EXPECT_EQ(args[0].name, "n");
    EXPECT_EQ(args[0].params[0].as_int(), 1);
}

TEST(ZoneArgs, AZoneBegunBeforeTheSessionRecordsNoArguments) {
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    int evaluated = 0;
    {
        LOUPE_ZONE_AS(early, "early");
        auto session = loupe::start_session(loupe_test::memory_config(memory));
        LOUPE_ZONE_ARG(early, "n", ++evaluated);
        session.stop();
    }
    EXPECT_EQ(evaluated, 0);
    EXPECT_TRUE(loupe_test::of_kind(memory->events(), loupe::record_kind::zone_arg).empty());
}

TEST(ZoneArgs, TextIsCutTo256BytesAtACharacterBoundaryAndSaysSo) {
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(loupe_test::memory_config(memory));
    std::string long_text(255, 'a');
    long_text += "\xC3\xA9";  // é straddles byte 256
    long_text += std::string(100, 'b');
    const std::string exact(256, 'c');
    {
        LOUPE_ZONE_AS(z, "texts");
        LOUPE_ZONE_ARG(z, "long", long_text);
        LOUPE_ZONE_ARG(z, "exact", exact);
        LOUPE_ZONE_ARG(z, "empty", std::string_view());
        LOUPE_ZONE_ARG(z, "c_string", "literal");
    }
    session.stop();
    const auto args = loupe_test::of_kind(memory->events(), loupe::record_kind::zone_arg);
    ASSERT_EQ(args.size(), 4u);
    const loupe::param_value& cut = args[0].params[0];
    EXPECT_TRUE(cut.truncated);
    EXPECT_EQ(cut.original_size, long_text.size());
    EXPECT_EQ(cut.text, std::string(255, 'a'));  // not half of é
    EXPECT_FALSE(args[1].params[0].truncated);
    EXPECT_EQ(args[1].params[0].text, exact);
    EXPECT_EQ(args[2].params[0].text, "");
    EXPECT_EQ(args[3].params[0].text, "literal");
}

TEST(ZoneArgs, ArgumentsLostWithAFullRingAreCountedAsDropped) {
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg = loupe_test::memory_config(memory);
    cfg.ring_bytes = 4096;  // 128 records
    cfg.memory_budget = 0;  // and it stays so
    cfg.overflow = loupe::overflow_policy::drop;
    auto session = loupe::start_session(cfg);
    std::uint64_t produced = 0;
    for (int i = 0; i < 20000; ++i) {
        LOUPE_ZONE_AS(z, "busy");
        LOUPE_ZONE_ARG(z, "i", i);
        LOUPE_ZONE_ARG(z, "text", "some text");
        produced += 3;
    }
    const loupe::session_stats stats = session.stop();
    const auto events = memory->events();
    const std::uint64_t delivered = loupe_test::of_kind(events, loupe::record_kind::zone).size() +
                                    loupe_test::of_kind(events, loupe::record_kind::zone_arg).size();
    EXPECT_EQ(delivered + loupe_test::dropped_total(events), produced);
    EXPECT_EQ(stats.delivered + stats.dropped, produced);
}

TEST(ZoneArgs, ArgumentsWhoseZoneIsMissingAreCountedNotAttachedElsewhere) {
    static constexpr loupe::site outer{"outer", "f.cpp", "f", 1, loupe::site_kind::zone};
    loupe::zone_argument lost{"lost", {}};
    lost.value.kind = loupe::value_kind::integer;
    lost.value.bits = 1;
    loupe::zone_argument kept{"kept", {}};
    kept.value.kind = loupe::value_kind::integer;
    kept.value.bits = 2;
    using loupe::record_kind;
    // The inner zone (begun at 2000) was dropped; its argument must not land
    // on the outer zone, whose own argument must.
    const loupe::trace t = loupe_test::crafted_trace({
        {record_kind::zone_arg, nullptr, 1000, 1000, 0, 0, {}, &kept},
        {record_kind::zone_arg, nullptr, 2000, 2000, 0, 0, {}, &lost},
        {record_kind::zone, &outer, 1000, 5000},
        {record_kind::zone_arg, nullptr, 6000, 6000, 0, 0, {}, &lost},  // its zone never ended in the trace
    });
    EXPECT_EQ(args_of_zones(t, "outer"), (std::vector<std::vector<std::string>>{{"kept=2"}}));
    EXPECT_EQ(t.zone_args_without_zone, 2u);
}

TEST(ZoneArgs, ChromeJsonAndPerfettoShowThemFromEveryPath) {
    const std::vector<unsigned char> bytes = recorded_queries();
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());

    std::string json, json_parallel;
    loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json);
    loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json_parallel, {}, 2);
    EXPECT_EQ(json, loupe::viewer::to_chrome_json(t));
    EXPECT_EQ(json_parallel, json);
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(json, doc), "");
    int queries = 0;
    for (const loupe_test::json::value& e : doc["traceEvents"].items) {
        if (e["name"].s == "query") {
            ++queries;
            ASSERT_TRUE(e.has("args"));
            EXPECT_EQ(e["args"]["table"].kind, loupe_test::json::value::string);
            EXPECT_EQ(e["args"]["cached"].kind, loupe_test::json::value::boolean);
            EXPECT_FALSE(e["args"]["cached"].b);
            EXPECT_DOUBLE_EQ(e["args"]["ratio"].n, 0.25);
            EXPECT_DOUBLE_EQ(e["args"]["delta"].n, -3);
        }
        if (e["name"].s == "plain") {
            EXPECT_FALSE(e.has("args"));
        }
    }
    EXPECT_EQ(queries, 2);

    for (unsigned workers : {1u, 2u}) {
        std::string plain;
        loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), plain, {false, workers});
        EXPECT_EQ(plain, loupe::viewer::to_perfetto(t, {false})) << workers;
        const loupe_test::perfetto::model m = loupe_test::perfetto::replay(plain);
        ASSERT_TRUE(m.ok) << m.error;
        std::vector<std::map<std::string, std::string>> query_args;
        for (const auto& [uuid, track] : m.threads) {
            for (const auto& s : track.slices) {
                if (s.name == "query") query_args.push_back(s.args);
            }
        }
        ASSERT_EQ(query_args.size(), 2u);
        EXPECT_EQ(query_args[0]["table"], "notes");
        EXPECT_EQ(query_args[0]["rows"], "12");
        EXPECT_EQ(query_args[0]["cached"], "false");
        EXPECT_EQ(query_args[0]["delta"], "-3");
        EXPECT_EQ(query_args[1]["table"], "users");
    }
}

TEST(ZoneArgs, StatsParamsGroupZonesByArgumentValue) {
    const std::vector<unsigned char> bytes = recorded_queries();
    const loupe::report::param_report r = loupe::report::param_stats(loupe::read_trace(bytes.data(), bytes.size()));
    EXPECT_EQ(r.zones_with_args, 4u);  // two queries, two fetches
    ASSERT_EQ(r.zone_args.size(), 2u);
    const loupe::report::method_param_stats* query = nullptr;
    for (const auto& z : r.zone_args) {
        if (z.method == "query") query = &z;
    }
    ASSERT_NE(query, nullptr);
    EXPECT_EQ(query->calls, 2u);
    const loupe::report::param_spec_stats* table = nullptr;
    for (const auto& k : query->specs) {
        if (k.label == "table") table = &k;
    }
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->distinct_values, 2u);
    const std::string text = loupe::report::format_param_stats(r);
    EXPECT_NE(text.find("zone arguments: 4 zones by argument value"), std::string::npos) << text;
    EXPECT_NE(text.find("notes"), std::string::npos) << text;
    const std::string json = loupe::report::param_stats_json(r);
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(json, doc), "");
    EXPECT_EQ(doc["zones_with_args"].n, 4);
    EXPECT_EQ(doc["zone_args"].items.size(), 2u);
}

TEST(ZoneArgs, BadZoneArgRecordsAreErrorsThatNameTheByte) {
    static constexpr loupe::site zone{"z", "f.cpp", "f", 1, loupe::site_kind::zone};
    loupe::zone_argument arg{"k", {}};
    arg.value.kind = loupe::value_kind::integer;
    arg.value.bits = 5;
    using loupe::record_kind;
    std::vector<unsigned char> bytes = loupe_test::crafted_trace_bytes({
        {record_kind::zone_arg, nullptr, 1000, 1000, 0, 0, {}, &arg},
        {record_kind::zone, &zone, 1000, 2000},
    });
    // Find the ZONE_ARG record (kind 0x13) and break its value's spec.
    std::size_t at = 16;
    while (at < bytes.size() && bytes[at] != 0x13) at += 2 + bytes[at + 1];  // short records: one length byte
    ASSERT_LT(at, bytes.size());
    // Payload: thread, zone time, key, then u8 kind and the spec.
    const auto after_varints = [&](std::size_t from, int n) {
        for (; n > 0; --n) {
            while (bytes[from] & 0x80) ++from;
            ++from;
        }
        return from;
    };
    const std::size_t key_at = after_varints(at + 2, 2);
    const std::size_t spec_at = after_varints(at + 2, 3) + 1;  // past the kind
    bytes[spec_at] = 4;
    try {
        loupe::read_trace(bytes.data(), bytes.size());
        FAIL() << "a ZONE_ARG value with spec 4 was accepted";
    } catch (const loupe::trace_error& e) {
        EXPECT_EQ(e.offset(), spec_at);
        EXPECT_NE(std::string(e.what()).find("value spec 4: expected 0 in a ZONE_ARG"), std::string::npos) << e.what();
    }
    // A key that names no string.
    bytes[spec_at] = 0;
    bytes[key_at] = 0x7f;
    try {
        loupe::read_trace(bytes.data(), bytes.size());
        FAIL() << "a ZONE_ARG naming an undefined key was accepted";
    } catch (const loupe::trace_error& e) {
        EXPECT_EQ(e.offset(), key_at);
        EXPECT_NE(std::string(e.what()).find("ZONE_ARG key refers to string 127"), std::string::npos) << e.what();
    }
}

}  // namespace
