// W3C Trace Context for tasks as a user checks it: the traceparent and
// tracestate rules (the cases of the W3C Level 1 test suite, with the exact
// error and position loupe reports), the carriers over header maps and raw
// header blocks, ids that never repeat across threads and a forked child,
// and the in-band token.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <loupe/tasks.hpp>

namespace tasks = loupe::tasks;
using tasks::traceparent_error;
using tasks::tracestate_problem;

namespace {

constexpr std::string_view kTrace = "12345678901234567890123456789012";
constexpr std::string_view kSpan = "1234567890123456";

std::string traceparent(std::string_view version = "00", std::string_view trace = kTrace, std::string_view span = kSpan,
                        std::string_view flags = "01") {
    return std::string(version) + "-" + std::string(trace) + "-" + std::string(span) + "-" + std::string(flags);
}

tasks::task_context sample_context() {
    tasks::task_context c;
    c.trace = {0x4bf92f3577b34da6ull, 0xa3ce929d0e0e4736ull};
    c.span = 0x00f067aa0ba902b7ull;
    c.flags = tasks::trace_flags::sampled;
    return c;
}

std::string joined(const std::vector<std::string>& members) {
    std::string s;
    for (const std::string& m : members) s += (s.empty() ? "" : ",") + m;
    return s;
}

struct bad_traceparent {
    std::string value;
    traceparent_error error;
    std::size_t position;
};

}  // namespace

// ---- traceparent --------------------------------------------------------------

TEST(Traceparent, ParsesTheSpecExample) {
    const auto r = tasks::parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    ASSERT_TRUE(r.ok()) << tasks::traceparent_error_name(r.error);
    EXPECT_EQ(r.version, 0);
    EXPECT_EQ(r.trace.high, 0x4bf92f3577b34da6ull);
    EXPECT_EQ(r.trace.low, 0xa3ce929d0e0e4736ull);
    EXPECT_EQ(r.span, 0x00f067aa0ba902b7ull);
    EXPECT_EQ(r.flags, 0x01);
}

TEST(Traceparent, FormatsVersion00ExactlyAndRoundTrips) {
    const tasks::task_context c = sample_context();
    EXPECT_EQ(tasks::format_traceparent(c).view(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    char buf[tasks::traceparent_size];
    tasks::format_traceparent(c, buf);
    EXPECT_EQ(std::string_view(buf, sizeof buf), tasks::format_traceparent(c).view());
    const auto back = tasks::parse_traceparent(tasks::format_traceparent(c).view());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.trace, c.trace);
    EXPECT_EQ(back.span, c.span);
    EXPECT_EQ(back.flags, c.flags);
}

TEST(Traceparent, KeepsAllEightFlagBitsAsReceived) {
    const auto r = tasks::parse_traceparent(traceparent("00", kTrace, kSpan, "ff"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.flags, 0xff);
}

TEST(Traceparent, OptionalWhitespaceAroundTheValueIsIgnored) {
    for (const std::string& v : {" " + traceparent(), "\t" + traceparent(), traceparent() + " ", traceparent() + "\t",
                                 "\t " + traceparent() + " \t"}) {
        const auto r = tasks::parse_traceparent(v);
        EXPECT_TRUE(r.ok()) << '"' << v << "\": " << tasks::traceparent_error_name(r.error);
    }
    // Positions count in the value as given, whitespace included.
    const auto r = tasks::parse_traceparent("  00-.2345678901234567890123456789012-1234567890123456-01");
    EXPECT_EQ(r.error, traceparent_error::not_hex);
    EXPECT_EQ(r.position, 5u);
}

TEST(Traceparent, AFutureVersionIsReadByItsFirstFourFields) {
    const auto plain = tasks::parse_traceparent(traceparent("cc"));
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(plain.version, 0xcc);
    EXPECT_EQ(plain.trace.high, 0x1234567890123456ull);
    const auto longer = tasks::parse_traceparent(traceparent("cc") + "-what-the-future-will-be-like");
    ASSERT_TRUE(longer.ok());
    EXPECT_EQ(longer.span, 0x1234567890123456ull);
    // Formatting downgrades to version 00.
    tasks::task_context c;
    c.trace = longer.trace;
    c.span = longer.span;
    c.flags = longer.flags;
    EXPECT_EQ(tasks::format_traceparent(c).view(), traceparent());
}

TEST(Traceparent, W3cInvalidCasesGiveTheirErrorAndPosition) {
    const std::string t(kTrace), s(kSpan);
    const std::vector<bad_traceparent> cases = {
        // version 00 with extra characters or fields
        {traceparent() + ".", traceparent_error::trailing_characters, 55},
        {traceparent() + "-what-the-future-will-be-like", traceparent_error::trailing_characters, 55},
        // a future version whose flags are followed by something else than '-'
        {traceparent("cc") + ".what-the-future-will-be-like", traceparent_error::trailing_characters, 55},
        {traceparent("ff"), traceparent_error::version_ff, 0},
        {traceparent(".0"), traceparent_error::not_hex, 0},
        {traceparent("0."), traceparent_error::not_hex, 1},
        {traceparent("000"), traceparent_error::expected_dash, 2},
        {traceparent("0000"), traceparent_error::expected_dash, 2},
        {traceparent("0"), traceparent_error::not_hex, 1},
        {traceparent("00", "00000000000000000000000000000000"), traceparent_error::zero_trace_id, 3},
        {traceparent("00", "." + t.substr(1)), traceparent_error::not_hex, 3},
        {traceparent("00", t.substr(0, 31) + "."), traceparent_error::not_hex, 34},
        {traceparent("00", t + "3"), traceparent_error::expected_dash, 35},
        {traceparent("00", t.substr(0, 31)), traceparent_error::not_hex, 34},
        {traceparent("00", kTrace, "0000000000000000"), traceparent_error::zero_span_id, 36},
        {traceparent("00", kTrace, "." + s.substr(1)), traceparent_error::not_hex, 36},
        {traceparent("00", kTrace, s.substr(0, 15) + "."), traceparent_error::not_hex, 51},
        {traceparent("00", kTrace, s + "7"), traceparent_error::expected_dash, 52},
        {traceparent("00", kTrace, s.substr(0, 15)), traceparent_error::not_hex, 51},
        {traceparent("00", kTrace, kSpan, ".0"), traceparent_error::not_hex, 53},
        {traceparent("00", kTrace, kSpan, "0."), traceparent_error::not_hex, 54},
        {traceparent("00", kTrace, kSpan, "001"), traceparent_error::trailing_characters, 55},
        {traceparent("00", kTrace, kSpan, "1"), traceparent_error::too_short, 54},
        // beyond the W3C suite: case, truncation, emptiness, control characters
        {traceparent("00", "4BF92F3577B34DA6A3CE929D0E0E4736"), traceparent_error::upper_case_hex, 4},
        {traceparent("00", kTrace, "00F067AA0BA902B7"), traceparent_error::upper_case_hex, 38},
        {traceparent("0A"), traceparent_error::upper_case_hex, 1},
        {traceparent("00", kTrace, kSpan, "0A"), traceparent_error::upper_case_hex, 54},
        {"00-1234", traceparent_error::too_short, 7},
        {traceparent("cc", kTrace, kSpan, "0"), traceparent_error::too_short, 54},
        {"", traceparent_error::empty, 0},
        {" \t ", traceparent_error::empty, 0},
        {"00-12345678901234567890123456789012-12345678\x01"
         "1234567-01",
         traceparent_error::not_hex, 44},
        {"00_12345678901234567890123456789012-1234567890123456-01", traceparent_error::expected_dash, 2},
    };
    for (const bad_traceparent& c : cases) {
        const auto r = tasks::parse_traceparent(c.value);
        EXPECT_FALSE(r.ok()) << c.value;
        EXPECT_EQ(r.error, c.error) << c.value << ": got " << tasks::traceparent_error_name(r.error);
        EXPECT_EQ(r.position, c.position) << c.value;
    }
}

TEST(Traceparent, ErrorKindsHaveNames) {
    EXPECT_STREQ(tasks::traceparent_error_name(traceparent_error::upper_case_hex), "upper_case_hex");
    EXPECT_STREQ(tasks::traceparent_error_name(traceparent_error::trailing_characters), "trailing_characters");
    EXPECT_STREQ(tasks::traceparent_error_name(traceparent_error::none), "none");
}

TEST(Traceresponse, HasTheTraceparentShape) {
    const tasks::task_context c = sample_context();
    EXPECT_EQ(tasks::format_traceresponse(c).view(), tasks::format_traceparent(c).view());
    const auto r = tasks::parse_traceresponse(tasks::format_traceresponse(c).view());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.trace, c.trace);
    EXPECT_EQ(tasks::parse_traceresponse(traceparent("ff")).error, traceparent_error::version_ff);
}

// ---- tracestate ---------------------------------------------------------------

TEST(Tracestate, KeepsTheListWithoutWhitespace) {
    for (const char* v : {"foo=1 \t , \t bar=2, \t baz=3", "foo=1\t \t,\t \tbar=2,\t \tbaz=3"}) {
        const auto r = tasks::parse_tracestate(v);
        EXPECT_TRUE(r.ok());
        EXPECT_EQ(r.text.view(), "foo=1,bar=2,baz=3") << v;
        EXPECT_EQ(r.summary.members_kept, 3u);
    }
    for (const char* v : {" foo=1", "\tfoo=1", "foo=1 ", "foo=1\t", "\t foo=1 \t"}) {
        EXPECT_EQ(tasks::parse_tracestate(v).text.view(), "foo=1") << '"' << v << '"';
    }
}

TEST(Tracestate, ValueKeepsItsLeadingSpaces) { EXPECT_EQ(tasks::parse_tracestate("foo=  1  ").text.view(), "foo=  1"); }

TEST(Tracestate, AcceptsEveryAllowedCharacter) {
    std::string key = "abcdefghijklmnopqrstuvwxyz0123456789_-*/";
    std::string value;
    for (int c = 0x20; c <= 0x7e; ++c) {
        if (c != ',' && c != '=') value += static_cast<char>(c);
    }
    for (const std::string& k : {key, key + "@a-z0-9_-*/"}) {
        const auto r = tasks::parse_tracestate(k + "=" + value);
        EXPECT_TRUE(r.ok()) << tasks::tracestate_problem_name(r.summary.problem) << " at " << r.summary.position;
        EXPECT_EQ(r.text.view(), k + "=" + value);
    }
}

TEST(Tracestate, EmptyValuesAndEmptyMembersAreAllowed) {
    EXPECT_TRUE(tasks::parse_tracestate("").ok());
    EXPECT_EQ(tasks::parse_tracestate("").text.view(), "");
    EXPECT_EQ(tasks::parse_tracestate(" , ,foo=1,, \t,").text.view(), "foo=1");
    const std::string_view foo_then_empty[] = {"foo=1", ""};
    const std::string_view empty_then_foo[] = {"", "foo=1"};
    EXPECT_EQ(tasks::parse_tracestate(foo_then_empty, 2).text.view(), "foo=1");
    EXPECT_EQ(tasks::parse_tracestate(empty_then_foo, 2).text.view(), "foo=1");
}

TEST(Tracestate, SeveralHeaderValuesAreOneListInOrder) {
    const std::string_view values[] = {"foo=1,bar=2", "rojo=1,congo=2", "baz=3"};
    const auto r = tasks::parse_tracestate(values, 3);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.text.view(), "foo=1,bar=2,rojo=1,congo=2,baz=3");
}

TEST(Tracestate, ARepeatedKeyKeepsTheLeftmostOrDiscardsTheList) {
    const auto r = tasks::parse_tracestate("foo=1,foo=2");
    EXPECT_EQ(r.text.view(), "foo=1");
    EXPECT_EQ(r.summary.problem, tracestate_problem::duplicate_key);
    EXPECT_EQ(r.summary.position, 6u);
    EXPECT_EQ(r.summary.members_dropped, 1u);

    // Across header values: the position counts in the values joined by ','.
    const std::string_view values[] = {"foo=1", "foo=1"};
    const auto lines = tasks::parse_tracestate(values, 2);
    EXPECT_EQ(lines.text.view(), "foo=1");
    EXPECT_EQ(lines.summary.position, 6u);

    // The W3C test suite's strict level: the whole list goes.
    for (const auto& strict : {tasks::parse_tracestate("foo=1,foo=2", tasks::tracestate_policy::discard_on_any_error),
                               tasks::parse_tracestate(values, 2, tasks::tracestate_policy::discard_on_any_error)}) {
        EXPECT_EQ(strict.text.view(), "");
        EXPECT_EQ(strict.summary.problem, tracestate_problem::duplicate_key);
        EXPECT_EQ(strict.summary.members_kept, 0u);
        EXPECT_EQ(strict.summary.members_dropped, 2u);
    }
}

TEST(Tracestate, IllegalKeysAreDroppedWithTheirPosition) {
    struct bad {
        std::string value;
        tracestate_problem problem;
        std::size_t position;
        std::string kept;
    };
    const std::vector<bad> cases = {
        {"foo =1", tracestate_problem::bad_key, 3, ""},
        {"FOO=1", tracestate_problem::bad_key, 0, ""},
        {"foo.bar=1", tracestate_problem::bad_key, 3, ""},
        {"1foo=1,bar=2", tracestate_problem::bad_key, 0, "bar=2"},
        {"=1,bar=2", tracestate_problem::bad_key, 0, "bar=2"},
        // the multi-tenant form: tenant@system
        {"foo@=1,bar=2", tracestate_problem::bad_key, 4, "bar=2"},
        {"@foo=1,bar=2", tracestate_problem::bad_key, 0, "bar=2"},
        {"foo@@bar=1,bar=2", tracestate_problem::bad_key, 4, "bar=2"},
        {"foo@bar@baz=1,bar=2", tracestate_problem::bad_key, 7, "bar=2"},
        {"foo@1bar=1,bar=2", tracestate_problem::bad_key, 4, "bar=2"},
        {"bar=2,foo", tracestate_problem::missing_equals, 6, "bar=2"},
    };
    for (const bad& c : cases) {
        const auto r = tasks::parse_tracestate(c.value);
        EXPECT_EQ(r.summary.problem, c.problem) << c.value << ": " << tasks::tracestate_problem_name(r.summary.problem);
        EXPECT_EQ(r.summary.position, c.position) << c.value;
        EXPECT_EQ(r.text.view(), c.kept) << c.value;
        const auto strict = tasks::parse_tracestate(c.value, tasks::tracestate_policy::discard_on_any_error);
        EXPECT_EQ(strict.text.view(), "") << c.value;
    }
    // A tenant may start with a digit.
    EXPECT_EQ(tasks::parse_tracestate("1tenant@sys=1").text.view(), "1tenant@sys=1");
}

TEST(Tracestate, KeyLengthLimits) {
    const auto with = [](const std::string& member) {
        const std::string_view values[] = {"foo=1", member};
        return tasks::parse_tracestate(values, 2);
    };
    EXPECT_EQ(with(std::string(256, 'z') + "=1").text.view(), "foo=1," + std::string(256, 'z') + "=1");
    const auto simple = with(std::string(257, 'z') + "=1");
    EXPECT_EQ(simple.summary.problem, tracestate_problem::key_too_long);
    EXPECT_EQ(simple.summary.position, 6u + 256u);
    EXPECT_EQ(simple.text.view(), "foo=1");

    const std::string tenant_ok = std::string(241, 't') + "@" + std::string(14, 'v') + "=1";
    EXPECT_TRUE(with(tenant_ok).ok());
    const auto tenant = with(std::string(242, 't') + "@v=1");
    EXPECT_EQ(tenant.summary.problem, tracestate_problem::key_too_long);
    EXPECT_EQ(tenant.summary.position, 6u + 241u);
    const auto system = with("t@" + std::string(15, 'v') + "=1");
    EXPECT_EQ(system.summary.problem, tracestate_problem::key_too_long);
    EXPECT_EQ(system.summary.position, 6u + 2u + 14u);
    EXPECT_EQ(system.text.view(), "foo=1");

    const std::string_view strict_values[] = {"foo=1", "t@vvvvvvvvvvvvvvv=1"};
    EXPECT_EQ(tasks::parse_tracestate(strict_values, 2, tasks::tracestate_policy::discard_on_any_error).text.view(),
              "");
}

TEST(Tracestate, IllegalValues) {
    const auto eq = tasks::parse_tracestate("foo=bar=baz");
    EXPECT_EQ(eq.summary.problem, tracestate_problem::bad_value_character);
    EXPECT_EQ(eq.summary.position, 7u);
    EXPECT_EQ(eq.text.view(), "");

    const auto empty = tasks::parse_tracestate("foo=,bar=3");
    EXPECT_EQ(empty.summary.problem, tracestate_problem::empty_value);
    EXPECT_EQ(empty.summary.position, 4u);
    EXPECT_EQ(empty.text.view(), "bar=3");
    EXPECT_EQ(tasks::parse_tracestate("foo=,bar=3", tasks::tracestate_policy::discard_on_any_error).text.view(), "");

    const auto control = tasks::parse_tracestate("a=1,foo=b\x01r,c=3");
    EXPECT_EQ(control.summary.problem, tracestate_problem::bad_value_character);
    EXPECT_EQ(control.summary.position, 9u);
    EXPECT_EQ(control.text.view(), "a=1,c=3");

    EXPECT_TRUE(tasks::parse_tracestate("foo=" + std::string(256, 'v')).ok());
    const auto longer = tasks::parse_tracestate("foo=" + std::string(257, 'v'));
    EXPECT_EQ(longer.summary.problem, tracestate_problem::value_too_long);
    EXPECT_EQ(longer.summary.position, 4u + 256u);
}

TEST(Tracestate, AtMost32Members) {
    std::vector<std::string> members;
    for (int i = 1; i <= 33; ++i)
        members.push_back("bar" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "=" + std::to_string(i));
    const std::vector<std::string> first32(members.begin(), members.begin() + 32);

    const auto full = tasks::parse_tracestate(joined(first32));
    EXPECT_TRUE(full.ok());
    EXPECT_EQ(full.summary.members_kept, 32u);
    EXPECT_EQ(full.text.view(), joined(first32));

    const std::string all = joined(members);
    const auto over = tasks::parse_tracestate(all);
    EXPECT_EQ(over.summary.problem, tracestate_problem::too_many_members);
    EXPECT_EQ(over.summary.position, all.find("bar33"));
    EXPECT_EQ(over.text.view(), joined(first32));
    EXPECT_EQ(over.summary.members_dropped, 1u);

    const auto strict = tasks::parse_tracestate(all, tasks::tracestate_policy::discard_on_any_error);
    EXPECT_EQ(strict.text.view(), "");
    EXPECT_EQ(strict.summary.members_dropped, 33u);
}

TEST(Tracestate, IsCutTo512CharactersByWholeMembersLongOnesFirst) {
    // 2 short members, one of 200 characters, then short ones past 512.
    std::vector<std::string> members = {"a=1", "long=" + std::string(195, 'x'), "b=2"};
    for (int i = 0; i < 20; ++i) members.push_back("k" + std::to_string(i) + "=" + std::string(14, 'v'));
    const auto r = tasks::parse_tracestate(joined(members));
    EXPECT_TRUE(r.ok());
    std::vector<std::string> expected = members;
    expected.erase(expected.begin() + 1);  // the member over 128 characters goes first
    EXPECT_GT(joined(members).size(), 512u);
    EXPECT_LE(joined(expected).size(), 512u);  // it now fits
    EXPECT_EQ(r.text.view(), joined(expected));
    EXPECT_EQ(r.summary.members_truncated, 1u);
    EXPECT_EQ(r.summary.members_kept, 22u);

    // Without long members: members go from the right until it fits.
    std::vector<std::string> shorts;
    for (int i = 0; i < 30; ++i) shorts.push_back("k" + std::to_string(i) + "=" + std::string(20, 'v'));
    const auto cut = tasks::parse_tracestate(joined(shorts));
    std::vector<std::string> kept;
    std::size_t size = 0;
    for (const std::string& m : shorts) {
        const std::size_t next = size + (kept.empty() ? 0 : 1) + m.size();
        if (next > 512) break;
        kept.push_back(m);
        size = next;
    }
    EXPECT_EQ(cut.text.view(), joined(kept));
    EXPECT_LE(cut.text.size(), 512u);
    EXPECT_EQ(cut.summary.members_truncated, shorts.size() - kept.size());
}

TEST(Tracestate, A10KilobyteHeaderKeepsAtMost512Characters) {
    std::string huge;
    for (int i = 0; huge.size() < 10 * 1024; ++i) huge += "k" + std::to_string(i) + "=" + std::string(40, 'v') + ",";
    const auto r = tasks::parse_tracestate(huge);
    EXPECT_LE(r.text.size(), 512u);
    EXPECT_LE(r.summary.members_kept, 32u);
    EXPECT_EQ(r.summary.problem, tracestate_problem::too_many_members);
    const auto again = tasks::parse_tracestate(r.text.view());
    EXPECT_TRUE(again.ok());
    EXPECT_EQ(again.text.view(), r.text.view());
}

// ---- carriers -----------------------------------------------------------------

TEST(Carrier, BothHeadersMissingStartsATask) {
    const std::uint64_t errors = tasks::propagation_errors();
    const auto in = tasks::extract(std::map<std::string, std::string>{{"host", "example.com"}});
    EXPECT_EQ(in.status, tasks::extract_status::absent);
    EXPECT_FALSE(in.context.valid());
    EXPECT_EQ(tasks::propagation_errors(), errors);  // not an error
    const tasks::task_context mine = tasks::child_task(in.context);
    EXPECT_TRUE(mine.valid());
}

TEST(Carrier, HeaderNamesMatchInAnyCase) {
    for (const char* name : {"traceparent", "TraceParent", "TrAcEpArEnT", "TRACEPARENT"}) {
        const auto in =
            tasks::extract(std::map<std::string, std::string>{{name, traceparent()}, {"TraceState", "foo=1"}});
        ASSERT_TRUE(in.ok()) << name;
        EXPECT_EQ(in.context.trace, (tasks::trace_id{0x1234567890123456ull, 0x7890123456789012ull}));
        EXPECT_EQ(in.context.state.view(), "foo=1");
    }
    for (const char* wrong : {"trace-parent", "trace.parent"}) {
        EXPECT_EQ(tasks::extract(std::map<std::string, std::string>{{wrong, traceparent()}}).status,
                  tasks::extract_status::absent)
            << wrong;
    }
    const auto state_name = tasks::extract(
        std::unordered_map<std::string, std::string>{{"traceparent", traceparent()}, {"trace-state", "foo=1"}});
    ASSERT_TRUE(state_name.ok());
    EXPECT_EQ(state_name.context.state.view(), "");
}

TEST(Carrier, ExtractKeepsTheTraceAndOnlyTheKnownFlags) {
    const auto in =
        tasks::extract(std::map<std::string, std::string>{{"traceparent", traceparent("00", kTrace, kSpan, "ff")}});
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(in.context.flags, tasks::trace_flags::sampled);
    EXPECT_EQ(in.context.span, 0x1234567890123456ull);
    const tasks::task_context next = tasks::child_task(in.context);
    EXPECT_EQ(next.trace, in.context.trace);
    EXPECT_NE(next.span, in.context.span);
    EXPECT_EQ(next.flags, in.context.flags);
}

TEST(Carrier, AMalformedTraceparentIsCountedAndGivesNoContext) {
    const std::uint64_t errors = tasks::propagation_errors();
    const auto in = tasks::extract(std::map<std::string, std::string>{
        {"traceparent", traceparent("00", "00000000000000000000000000000000")}, {"tracestate", "foo=1"}});
    EXPECT_EQ(in.status, tasks::extract_status::malformed_traceparent);
    EXPECT_EQ(in.traceparent.error, traceparent_error::zero_trace_id);
    EXPECT_EQ(in.traceparent.position, 3u);
    EXPECT_FALSE(in.context.valid());
    EXPECT_TRUE(in.context.state.empty());  // no tracestate without a valid traceparent
    EXPECT_EQ(tasks::propagation_errors(), errors + 1);
    const tasks::task_context mine = tasks::child_task(in.context);
    EXPECT_TRUE(mine.valid());
    EXPECT_TRUE(mine.state.empty());
}

TEST(Carrier, TracestateWithoutTraceparentIsNotRead) {
    const std::uint64_t errors = tasks::propagation_errors();
    const auto in = tasks::extract(std::map<std::string, std::string>{{"tracestate", "foo=1,FOO=2"}});
    EXPECT_EQ(in.status, tasks::extract_status::absent);
    EXPECT_EQ(tasks::propagation_errors(), errors);
}

TEST(Carrier, ABadTracestateIsCountedOnceAndTheTraceparentStands) {
    const std::uint64_t errors = tasks::propagation_errors();
    const auto in = tasks::extract(
        std::map<std::string, std::string>{{"traceparent", traceparent()}, {"tracestate", "foo=1,FOO=2,foo=3,bar=4"}});
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(in.context.state.view(), "foo=1,bar=4");
    EXPECT_EQ(in.tracestate.problem, tracestate_problem::bad_key);
    EXPECT_EQ(in.tracestate.members_dropped, 2u);
    EXPECT_EQ(tasks::propagation_errors(), errors + 1);

    const auto strict = tasks::extract(
        std::map<std::string, std::string>{{"traceparent", traceparent()}, {"tracestate", "foo=1,foo=2"}},
        tasks::tracestate_policy::discard_on_any_error);
    ASSERT_TRUE(strict.ok());
    EXPECT_EQ(strict.context.state.view(), "");
}

TEST(Carrier, RoundTripsThroughMaps) {
    tasks::task_context c = sample_context();
    c.state.assign("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");

    std::map<std::string, std::string> ordered{{"TraceParent", "stale"}, {"TRACESTATE", "stale=1"}, {"host", "h"}};
    ASSERT_TRUE(tasks::inject(c, ordered));
    EXPECT_EQ(ordered, (std::map<std::string, std::string>{
                           {"host", "h"},
                           {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                           {"tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"}}));
    const auto back = tasks::extract(ordered);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.context, c);

    std::unordered_map<std::string, std::string> unordered{{"tracestate", "old=1"}};
    tasks::task_context no_state = sample_context();
    ASSERT_TRUE(tasks::inject(no_state, unordered));
    EXPECT_EQ(unordered.count("tracestate"), 0u);  // the old list does not belong to this context
    EXPECT_EQ(tasks::extract(unordered).context, no_state);
}

TEST(Carrier, RoundTripsThroughASetterAndAGetter) {
    tasks::task_context c = sample_context();
    c.state.assign("congo=t61rcWkgMzE");
    std::vector<std::pair<std::string, std::string>> sent;
    ASSERT_TRUE(tasks::inject(c, [&](std::string_view name, std::string_view value) {
        sent.emplace_back(std::string(name), std::string(value));
    }));
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0].first, "traceparent");
    EXPECT_EQ(sent[1].first, "tracestate");

    // A getter returning std::optional<std::string_view>...
    const auto by_view = tasks::extract([&](std::string_view name) -> std::optional<std::string_view> {
        for (const auto& [n, v] : sent) {
            if (n == name) return std::string_view(v);
        }
        return std::nullopt;
    });
    EXPECT_EQ(by_view.context, c);
    // ... a std::optional<std::string> by value, or a pointer.
    const auto by_copy = tasks::extract([&](std::string_view name) -> std::optional<std::string> {
        for (const auto& [n, v] : sent) {
            if (n == name) return v;
        }
        return std::nullopt;
    });
    EXPECT_EQ(by_copy.context, c);
    const auto by_pointer = tasks::extract([&](std::string_view name) -> const std::string* {
        for (const auto& [n, v] : sent) {
            if (n == name) return &v;
        }
        return nullptr;
    });
    EXPECT_EQ(by_pointer.context, c);
}

TEST(Carrier, AnInvalidContextInjectsNothing) {
    std::map<std::string, std::string> headers;
    EXPECT_FALSE(tasks::inject(tasks::task_context{}, headers));
    EXPECT_TRUE(headers.empty());
    int calls = 0;
    EXPECT_FALSE(tasks::inject(tasks::task_context{}, [&](std::string_view, std::string_view) { ++calls; }));
    EXPECT_EQ(calls, 0);
    std::string block;
    EXPECT_FALSE(tasks::inject_header_block(tasks::task_context{}, block));
    EXPECT_EQ(block, "");
}

TEST(Carrier, RawHeaderBlockRoundTrip) {
    tasks::task_context c = sample_context();
    c.state.assign("congo=t61rcWkgMzE");
    std::string block = "GET /orders HTTP/1.1\r\nHost: example.com\r\n";
    ASSERT_TRUE(tasks::inject_header_block(c, block));
    EXPECT_EQ(block,
              "GET /orders HTTP/1.1\r\nHost: example.com\r\n"
              "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n"
              "tracestate: congo=t61rcWkgMzE\r\n");
    block += "\r\nbody traceparent: nothing\r\n";
    const auto in = tasks::extract_header_block(block);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(in.context, c);
}

TEST(Carrier, RawHeaderBlockNamesValuesAndLines) {
    const std::string block =
        "HTTP/1.1 200 OK\r\n"
        "TRACEPARENT:\t " +
        traceparent() +
        " \r\n"
        "tracestate: foo=1,bar=2\r\n"
        "X-Other: a:b\n"
        "TraceState:rojo=1,congo=2\r\n"
        "tracestate : ignored=1\r\n"  // whitespace before ':' is not a field
        " folded=1\r\n"               // an obsolete continuation line is not joined
        "tracestate: baz=3\r\n"
        "\r\n"
        "tracestate: body=1\r\n";
    const auto in = tasks::extract_header_block(block);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(in.context.state.view(), "foo=1,bar=2,rojo=1,congo=2,baz=3");
}

TEST(Carrier, SeveralTraceparentFieldsStartANewTask) {
    const std::uint64_t errors = tasks::propagation_errors();
    const std::string block = "traceparent: " + traceparent("00", "12345678901234567890123456789011") + "\r\n" +
                              "traceparent: " + traceparent() + "\r\n";
    const auto in = tasks::extract_header_block(block);
    EXPECT_EQ(in.status, tasks::extract_status::repeated_traceparent);
    EXPECT_FALSE(in.context.valid());
    EXPECT_EQ(tasks::propagation_errors(), errors + 1);

    const auto cased = tasks::extract(
        std::map<std::string, std::string>{{"traceparent", traceparent()}, {"TraceParent", traceparent()}});
    EXPECT_EQ(cased.status, tasks::extract_status::repeated_traceparent);

    // A getter that joins repeated fields with ',' (RFC 7230) gives an invalid value.
    const std::string folded = traceparent() + "," + traceparent();
    const auto joined_fields = tasks::extract([&](std::string_view name) -> std::optional<std::string_view> {
        if (name == "traceparent") return std::string_view(folded);
        return std::nullopt;
    });
    EXPECT_EQ(joined_fields.status, tasks::extract_status::malformed_traceparent);
    EXPECT_EQ(joined_fields.traceparent.error, traceparent_error::trailing_characters);
    EXPECT_EQ(tasks::propagation_errors(), errors + 3);
}

TEST(Carrier, BadInputOfAnyKindNeverYieldsAValidId) {
    std::vector<std::string> values = {
        "",
        traceparent().substr(0, 30),
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
        traceparent() + "\r\nX-Injected: 1",
        std::string(10 * 1024, 'a'),
        "00-" + std::string(10 * 1024, '1'),
        std::string("00-1234567890123456789012345678901\0-1234567890123456-01", 55),
        "\x80\xff\x01",
    };
    for (const std::string& v : values) {
        const std::uint64_t errors = tasks::propagation_errors();
        const auto in = tasks::extract(std::map<std::string, std::string>{{"traceparent", v}, {"tracestate", v}});
        EXPECT_FALSE(in.ok()) << v.substr(0, 60);
        EXPECT_FALSE(in.context.valid());
        EXPECT_EQ(in.context.trace, tasks::trace_id{});
        EXPECT_EQ(in.context.span, 0u);
        EXPECT_EQ(tasks::propagation_errors(), errors + 1);
        if (v.find('\n') != std::string::npos) continue;  // a header block would read it as two lines
        const auto block = tasks::extract_header_block("traceparent: " + v + "\r\n\r\n");
        EXPECT_FALSE(block.context.valid());
    }
}

TEST(Carrier, TraceresponseRoundTrip) {
    const tasks::task_context callee = sample_context();
    std::map<std::string, std::string> response;
    ASSERT_TRUE(tasks::inject_response(callee, [&](std::string_view name, std::string_view value) {
        response[std::string(name)] = std::string(value);
    }));
    EXPECT_EQ(response.at("traceresponse"), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    const auto back = tasks::extract_response(response);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.context, callee);
    const auto from_block = tasks::extract_response_header_block(
        "HTTP/1.1 200 OK\r\nTraceResponse: " + response.at("traceresponse") + "\r\n\r\n");
    EXPECT_EQ(from_block.context, callee);
    EXPECT_EQ(tasks::extract_response(std::map<std::string, std::string>{}).status, tasks::extract_status::absent);
}

// ---- ids ----------------------------------------------------------------------

TEST(TaskIds, NewTaskAndChildTask) {
    const tasks::task_context root = tasks::new_task(tasks::trace_flags::sampled);
    EXPECT_TRUE(root.valid());
    EXPECT_TRUE(root.sampled());
    EXPECT_TRUE(root.state.empty());
    tasks::task_context with_state = root;
    with_state.state.assign("congo=1");
    const tasks::task_context child = tasks::child_task(with_state);
    EXPECT_EQ(child.trace, root.trace);
    EXPECT_NE(child.span, root.span);
    EXPECT_EQ(child.state.view(), "congo=1");
    EXPECT_NE(tasks::new_task().trace, root.trace);
}

TEST(TaskIds, NeverZeroAndNeverRepeatedAcrossThreads) {
    constexpr int threads = 4, per_thread = 50000;
    std::vector<std::vector<std::uint64_t>> spans(threads);
    std::vector<std::vector<tasks::trace_id>> traces(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                spans[t].push_back(tasks::new_span_id());
                traces[t].push_back(tasks::new_trace_id());
            }
        });
    }
    for (std::thread& w : workers) w.join();
    std::vector<std::uint64_t> all_spans, trace_highs, trace_lows;
    for (int t = 0; t < threads; ++t) {
        all_spans.insert(all_spans.end(), spans[t].begin(), spans[t].end());
        for (const tasks::trace_id& id : traces[t]) {
            EXPECT_TRUE(id.valid());
            trace_highs.push_back(id.high);
            trace_lows.push_back(id.low);
        }
    }
    for (std::vector<std::uint64_t>* ids : {&all_spans, &trace_highs, &trace_lows}) {
        EXPECT_EQ(std::count(ids->begin(), ids->end(), 0u), 0);
        std::sort(ids->begin(), ids->end());
        EXPECT_EQ(std::adjacent_find(ids->begin(), ids->end()), ids->end());
    }
}

TEST(TaskIds, AForkedChildMakesIdsOfItsOwn) {
    constexpr int count = 20000;
    std::vector<std::uint64_t> ids;
    for (int i = 0; i < 100; ++i) ids.push_back(tasks::new_span_id());  // the key exists before the fork
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        std::vector<std::uint64_t> mine;
        for (int i = 0; i < count; ++i) {
            mine.push_back(tasks::new_span_id());
            const tasks::trace_id t = tasks::new_trace_id();
            mine.push_back(t.high);
        }
        const char* p = reinterpret_cast<const char*>(mine.data());
        std::size_t left = mine.size() * sizeof(std::uint64_t);
        while (left > 0) {
            const ssize_t n = write(fds[1], p, left);
            if (n <= 0) _exit(1);
            p += n;
            left -= static_cast<std::size_t>(n);
        }
        _exit(0);
    }
    close(fds[1]);
    // The parent goes on from the same counters meanwhile.
    std::vector<std::uint64_t> parent_after;
    for (int i = 0; i < count; ++i) {
        parent_after.push_back(tasks::new_span_id());
        parent_after.push_back(tasks::new_trace_id().high);
    }
    std::vector<std::uint64_t> child(static_cast<std::size_t>(2 * count));
    char* p = reinterpret_cast<char*>(child.data());
    std::size_t left = child.size() * sizeof(std::uint64_t);
    while (left > 0) {
        const ssize_t n = read(fds[0], p, left);
        ASSERT_GT(n, 0);
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    ids.insert(ids.end(), parent_after.begin(), parent_after.end());
    ids.insert(ids.end(), child.begin(), child.end());
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 0u), 0);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

// ---- in-band token ------------------------------------------------------------

TEST(InBandToken, PrefixFormat) {
    EXPECT_EQ(tasks::encode_prefix(sample_context()).view(),
              "__lt1-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01__");
    char buf[tasks::in_band_prefix_size];
    tasks::encode_prefix(sample_context(), buf);
    EXPECT_EQ(std::string_view(buf, sizeof buf), tasks::encode_prefix(sample_context()).view());
}

TEST(InBandToken, StripTakesAWellFormedPrefixOff) {
    const tasks::task_context c = sample_context();
    const std::string name = std::string(tasks::encode_prefix(c).view()) + "orders.created";
    const std::uint64_t errors = tasks::propagation_errors();
    const auto r = tasks::strip(name);
    ASSERT_TRUE(r.found());
    EXPECT_EQ(r.rest, "orders.created");
    EXPECT_EQ(r.context, c);
    EXPECT_EQ(tasks::strip(tasks::encode_prefix(c).view()).rest, "");
    EXPECT_EQ(tasks::propagation_errors(), errors);
}

TEST(InBandToken, ANameWithoutTheMarkerIsJustAName) {
    const std::uint64_t errors = tasks::propagation_errors();
    for (const char* name : {"orders.created", "", "__lt", "__lt2-4bf92f3577b34da6a3ce929d0e0e4736"}) {
        const auto r = tasks::strip(name);
        EXPECT_EQ(r.status, tasks::in_band_status::no_token) << name;
        EXPECT_EQ(r.rest, name);
        EXPECT_FALSE(r.context.valid());
    }
    EXPECT_EQ(tasks::propagation_errors(), errors);
}

TEST(InBandToken, AMalformedPrefixIsLeftUntouchedAndCounted) {
    const std::string good(tasks::encode_prefix(sample_context()).view());
    struct bad {
        std::string name;
        tasks::in_band_error error;
        std::size_t position;
    };
    std::string upper = good + "x";
    upper[6] = 'A';
    std::string no_end = good + "x";
    no_end[59] = '.';
    std::string zero_span = good;
    zero_span.replace(39, 16, std::string(16, '0'));
    const std::vector<bad> cases = {
        {upper, tasks::in_band_error::upper_case_hex, 6},
        {good.substr(0, 30), tasks::in_band_error::too_short, 30},
        {good.substr(0, 59), tasks::in_band_error::too_short, 59},
        {no_end, tasks::in_band_error::expected_end_marker, 59},
        {"__lt1-" + std::string(32, '0') + good.substr(38), tasks::in_band_error::zero_trace_id, 6},
        {zero_span, tasks::in_band_error::zero_span_id, 39},
        {"__lt1-orders", tasks::in_band_error::not_hex, 6},
    };
    for (const bad& c : cases) {
        const std::uint64_t errors = tasks::propagation_errors();
        const auto r = tasks::strip(c.name);
        EXPECT_EQ(r.status, tasks::in_band_status::malformed) << c.name;
        EXPECT_EQ(r.error, c.error) << c.name << ": " << tasks::in_band_error_name(r.error);
        EXPECT_EQ(r.position, c.position) << c.name;
        EXPECT_EQ(r.rest, c.name);
        EXPECT_FALSE(r.context.valid());
        EXPECT_EQ(tasks::propagation_errors(), errors + 1);
    }
}
