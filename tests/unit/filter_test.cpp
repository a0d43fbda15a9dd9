// The thread-filter language: grammar, error messages, matching semantics,
// the builder, canonical text and limits (docs/filters.md).
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <loupe/core/filter.hpp>

using loupe::filter;
using loupe::filter_key;
using loupe::filter_subject;
namespace where = loupe::where;

namespace {

/// A subject with the given keys set; everything else unset.
filter_subject subject(std::initializer_list<std::pair<filter_key, std::string_view>> values) {
    filter_subject s;
    for (const auto& [key, value] : values) {
        const auto i = static_cast<std::size_t>(key);
        if (i < loupe::context_field_count) {
            s.fields[i] = value;
        } else if (key == filter_key::thread) {
            s.thread = value;
        } else if (key == filter_key::trace) {
            s.trace = value;
        } else {
            s.process = value;
        }
    }
    return s;
}

bool matches(std::string_view text, const filter_subject& s) { return filter::parse(text).matches(s); }

std::string canonical(std::string_view text) { return filter::parse(text).to_string(); }

struct parse_failure {
    std::size_t column = 0;
    std::string what;
};

parse_failure parse_error(std::string_view text) {
    try {
        filter::parse(text);
    } catch (const loupe::filter_error& e) {
        return {e.column(), e.what()};
    }
    return {0, "(parsed)"};
}

std::string builder_error(const std::function<filter()>& make) {
    try {
        make();
    } catch (const loupe::filter_error& e) {
        return std::string("unexpected filter_error: ") + e.what();
    } catch (const loupe::error& e) {
        return e.what();
    }
    return "(built)";
}

bool printable_ascii(const std::string& s) {
    for (const char c : s) {
        if (c < 0x20 || c > 0x7e) {
            return false;
        }
    }
    return true;
}

constexpr filter_key all_keys[] = {filter_key::client,  filter_key::user, filter_key::session,
                                   filter_key::request, filter_key::app,  filter_key::component,
                                   filter_key::thread,  filter_key::process};  // trace: ExistsAndTraceIds

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Keys and subjects

TEST(Filter, ExistsAndTraceIds) {
    const std::string id = "4bf92f3577b34da6a3ce929d0e0e4736";
    const filter_subject in_task = subject({{filter_key::trace, id}, {filter_key::user, "u"}});
    const filter_subject no_task = subject({{filter_key::user, "u"}});
    EXPECT_TRUE(matches("trace exists", in_task));
    EXPECT_FALSE(matches("trace exists", no_task));
    EXPECT_TRUE(matches("!(trace exists) && user exists", no_task));
    EXPECT_TRUE(matches("trace == \"" + id + "\"", in_task));
    EXPECT_FALSE(matches("trace == \"00f92f3577b34da6a3ce929d0e0e4736\"", in_task));
    EXPECT_TRUE(matches("trace ~ \"4bf9*\"", in_task));
    EXPECT_EQ(canonical("trace exists"), "trace ~ \"*\"");
    const parse_failure bad = parse_error("trace == \"4bf92f3577b34da6a3ce929d0e0e473\"");
    EXPECT_EQ(bad.column, 10u);
    EXPECT_NE(bad.what.find("expected a trace id of 32 lowercase hex digits, found 31 characters"), std::string::npos)
        << bad.what;
    EXPECT_EQ(parse_error("trace in [\"" + id + "\", \"zz\"]").column, 48u);
    EXPECT_NE(parse_error("user exists exists").what.find("'&&', '||'"), std::string::npos);
}

TEST(Filter, KeyNamesAndSubjectValues) {
    const char* names[] = {"client", "user", "session", "request", "app", "component", "thread", "process"};
    for (std::size_t i = 0; i < 8; ++i) {
        EXPECT_STREQ(loupe::filter_key_name(all_keys[i]), names[i]);
        EXPECT_EQ(static_cast<std::size_t>(all_keys[i]), i);
    }
    EXPECT_STREQ(loupe::filter_key_name(filter_key::trace), "trace");
    EXPECT_EQ(static_cast<std::size_t>(filter_key::trace), 8u);
    EXPECT_STREQ(loupe::filter_key_name(static_cast<filter_key>(200)), "?");
    filter_subject s = subject({{filter_key::client, "c"}, {filter_key::component, "k"},
                                {filter_key::thread, "t"}, {filter_key::process, "p"}});
    EXPECT_EQ(s.value(filter_key::client), "c");
    EXPECT_EQ(s.value(filter_key::component), "k");
    EXPECT_EQ(s.value(filter_key::thread), "t");
    EXPECT_EQ(s.value(filter_key::process), "p");
    EXPECT_EQ(s.value(filter_key::trace), "");
    EXPECT_EQ(s.value(filter_key::user), "");
    EXPECT_EQ(s.value(static_cast<filter_key>(200)), "");
}

// ---------------------------------------------------------------------------------------------------------------
// Valid grammar

TEST(FilterGrammar, EmptyAndBlankTextMatchEverything) {
    for (const char* text : {"", " ", "\t\n\r ", "\n"}) {
        const filter f = filter::parse(text);
        EXPECT_TRUE(f.matches_everything()) << text;
        EXPECT_TRUE(f.matches(filter_subject{}));
        EXPECT_EQ(f.to_string(), "");
    }
    EXPECT_TRUE(filter().matches_everything());
    EXPECT_TRUE(filter().matches(subject({{filter_key::user, "x"}})));
    EXPECT_EQ(filter().to_string(), "");
    EXPECT_FALSE(filter::parse("user ~ \"*\" || !(user ~ \"*\")").matches_everything());
}

TEST(FilterGrammar, EveryOperatorInCanonicalForm) {
    EXPECT_EQ(canonical("user == \"alice\""), "user == \"alice\"");
    EXPECT_EQ(canonical("user != \"alice\""), "user != \"alice\"");
    EXPECT_EQ(canonical("app in [\"a\"]"), "app in [\"a\"]");
    EXPECT_EQ(canonical("app in [\"a\",\"b\" , \"c\"]"), "app in [\"a\", \"b\", \"c\"]");
    EXPECT_EQ(canonical("request ~ \"health*\""), "request ~ \"health*\"");
    EXPECT_EQ(canonical("!user == \"a\""), "!(user == \"a\")");
    EXPECT_EQ(canonical("!!user == \"a\""), "!(!(user == \"a\"))");
    EXPECT_EQ(canonical("user == \"a\" && app == \"b\""), "user == \"a\" && app == \"b\"");
    EXPECT_EQ(canonical("user == \"a\" || app == \"b\""), "user == \"a\" || app == \"b\"");
    EXPECT_EQ(canonical("user == \"alice\" && (app == \"shop\" || app in [\"billing\", \"crm\"]) && "
                        "!(request ~ \"health*\")"),
              "user == \"alice\" && (app == \"shop\" || app in [\"billing\", \"crm\"]) && !(request ~ \"health*\")");
}

TEST(FilterGrammar, AllKeysParse) {
    for (const filter_key k : all_keys) {
        const std::string text = std::string(loupe::filter_key_name(k)) + " == \"v\"";
        EXPECT_EQ(canonical(text), text);
        EXPECT_TRUE(matches(text, subject({{k, "v"}})));
    }
}

TEST(FilterGrammar, AndBindsTighterThanOr) {
    const char* text = "user == \"a\" || user == \"b\" && app == \"c\"";
    EXPECT_EQ(canonical(text), text);  // no parentheses needed
    // a || (b && c): true for user a with any app; (a || b) && c would be false here.
    EXPECT_TRUE(matches(text, subject({{filter_key::user, "a"}, {filter_key::app, "x"}})));
    EXPECT_FALSE(matches(text, subject({{filter_key::user, "b"}, {filter_key::app, "x"}})));
    EXPECT_TRUE(matches(text, subject({{filter_key::user, "b"}, {filter_key::app, "c"}})));
    EXPECT_EQ(canonical("(user == \"a\" || user == \"b\") && app == \"c\""),
              "(user == \"a\" || user == \"b\") && app == \"c\"");
    EXPECT_FALSE(matches("(user == \"a\" || user == \"b\") && app == \"c\"",
                         subject({{filter_key::user, "a"}, {filter_key::app, "x"}})));
    EXPECT_EQ(canonical("user == \"a\" && app == \"b\" || user == \"c\""),
              "user == \"a\" && app == \"b\" || user == \"c\"");
}

TEST(FilterGrammar, NotBindsTighterThanAnd) {
    const char* text = "!user == \"a\" && app == \"b\"";
    EXPECT_EQ(canonical(text), "!(user == \"a\") && app == \"b\"");
    // (!a) && b: false when app is not b; !(a && b) would be true.
    EXPECT_FALSE(matches(text, subject({{filter_key::user, "x"}, {filter_key::app, "c"}})));
    EXPECT_TRUE(matches(text, subject({{filter_key::user, "x"}, {filter_key::app, "b"}})));
    EXPECT_TRUE(
        matches("!(user == \"a\" && app == \"b\")", subject({{filter_key::user, "x"}, {filter_key::app, "c"}})));
    EXPECT_EQ(canonical("!(user == \"a\" && app == \"b\")"), "!(user == \"a\" && app == \"b\")");
    EXPECT_EQ(canonical("!(user == \"a\" || app == \"b\")"), "!(user == \"a\" || app == \"b\")");
}

TEST(FilterGrammar, ParenthesesAndFlattening) {
    EXPECT_EQ(canonical("((user == \"a\"))"), "user == \"a\"");
    EXPECT_EQ(canonical("(user == \"a\" && (app == \"b\" && thread == \"c\"))"),
              "user == \"a\" && app == \"b\" && thread == \"c\"");
    EXPECT_EQ(canonical("(user == \"a\" || app == \"b\") || thread == \"c\""),
              "user == \"a\" || app == \"b\" || thread == \"c\"");
    EXPECT_EQ(canonical("(user == \"a\" && app == \"b\") || (thread == \"c\" && process == \"d\")"),
              "user == \"a\" && app == \"b\" || thread == \"c\" && process == \"d\"");
    EXPECT_EQ(canonical("!(((user == \"a\")))"), "!(user == \"a\")");
    EXPECT_EQ(canonical("(!(user == \"a\"))"), "!(user == \"a\")");
}

TEST(FilterGrammar, WhitespaceVariants) {
    const std::string expected = "user == \"a\" && (app in [\"b\", \"c\"] || !(thread ~ \"w*\"))";
    for (const char* text : {
             "user==\"a\"&&(app in[\"b\",\"c\"]||!thread~\"w*\")",
             "  user  ==  \"a\"  &&  (  app  in  [  \"b\"  ,  \"c\"  ]  ||  !  thread  ~  \"w*\"  )  ",
             "\tuser\t==\t\"a\"\n&&\n(app\rin\r[\"b\",\n\"c\"]\r\n||\t!(thread ~ \"w*\"))\n",
         }) {
        EXPECT_EQ(canonical(text), expected) << text;
    }
}

TEST(FilterGrammar, StringEscapes) {
    const filter f = filter::parse(R"(user == "a\"b\\c\nd\te")");
    EXPECT_EQ(f.to_string(), R"(user == "a\"b\\c\nd\te")");
    EXPECT_TRUE(f.matches(subject({{filter_key::user, "a\"b\\c\nd\te"}})));
    // Bytes >= 0x80 and DEL pass through unchanged.
    const filter g = filter::parse("app == \"caf\xc3\xa9\x7f\"");
    EXPECT_TRUE(g.matches(subject({{filter_key::app, "caf\xc3\xa9\x7f"}})));
    EXPECT_EQ(g.to_string(), "app == \"caf\xc3\xa9\x7f\"");
    // Operators and keywords inside strings are just bytes.
    EXPECT_TRUE(matches(R"(app == "&& || ! ( ) [ ] , ~ in user")",
                        subject({{filter_key::app, "&& || ! ( ) [ ] , ~ in user"}})));
}

// ---------------------------------------------------------------------------------------------------------------
// Errors: exact columns and messages

TEST(FilterErrors, ColumnsAndMessages) {
    const std::string field_list = "expected a field (client, user, session, request, app, component, thread, process, trace)";
    const std::string glob_escape = "expected '*', '?' or '\\' after '\\' in a glob pattern";
    const struct {
        std::string text;
        std::size_t column;
        std::string message;
    } cases[] = {
        {"user = \"alice\"", 6, "expected '==', '!=', 'in', '~' or 'exists' after field 'user', found '='"},
        {"usr == \"x\"", 1, field_list + ", found identifier 'usr'"},
        {"USER == \"x\"", 1, field_list + ", found identifier 'USER'"},
        {"user == \"a\" && usr == \"b\"", 16, field_list + ", found identifier 'usr'"},
        {"user == \"alice", 9, "unterminated string literal (expected a closing '\"', found end of filter)"},
        {"user == \"a\\", 9, "unterminated string literal (expected a closing '\"', found end of filter)"},
        {"(user == \"a\"", 13, "expected ')' to close '(' at column 1, found end of filter"},
        {"user == \"x\" && ((app == \"y\")", 29, "expected ')' to close '(' at column 16, found end of filter"},
        {"(user == \"x\" app == \"y\")", 14,
         "expected '&&', '||' or ')' to close '(' at column 1, found identifier 'app'"},
        {"(user == \"x\" & app == \"y\")", 14, "expected '&&', found '&'"},
        {"user == \"a\" &&", 15, "expected a test after '&&', found end of filter"},
        {"user == \"a\" || || app == \"b\"", 16, "expected a test after '||', found '||'"},
        {"user == \"a\" & app == \"b\"", 13, "expected '&&', found '&'"},
        {"user == \"a\" | app == \"b\"", 13, "expected '||', found '|'"},
        {"user == \"a\" app == \"b\"", 13, "expected '&&', '||' or end of filter, found identifier 'app'"},
        {"user == \"a\")", 12, "expected '&&', '||' or end of filter, found ')'"},
        {"user == \"a\" \"b\"", 13, "expected '&&', '||' or end of filter, found string literal \"b\""},
        {"user == \"a\" 42", 13, "expected '&&', '||' or end of filter, found number '42'"},
        {"user == alice", 9, "expected a string literal after '==', found identifier 'alice'"},
        {"user == 5", 9, "expected a string literal after '==', found number '5'"},
        {"user != ", 9, "expected a string literal after '!=', found end of filter"},
        {"user ~ abc", 8, "expected a string literal after '~', found identifier 'abc'"},
        {"user === \"a\"", 8, "expected a string literal after '==', found '='"},
        {"user == 'a'", 9, "expected a string literal after '==', found '''"},
        {"user", 5, "expected '==', '!=', 'in', '~' or 'exists' after field 'user', found end of filter"},
        {"user \"a\"", 6, "expected '==', '!=', 'in', '~' or 'exists' after field 'user', found string literal \"a\""},
        {"user in \"a\"", 9, "expected '[' after 'in', found string literal \"a\""},
        {"user in []", 10, "expected a string literal after '[', found ']'"},
        {"user in [\"a\",]", 14, "expected a string literal after ',', found ']'"},
        {"user in [\"a\" \"b\"]", 14, "expected ',' or ']' to close '[' at column 9, found string literal \"b\""},
        {"user in [\"a\"", 13, "expected ',' or ']' to close '[' at column 9, found end of filter"},
        {"()", 2, "expected a test after '(', found ')'"},
        {"!", 2, "expected a test after '!', found end of filter"},
        {"!!", 3, "expected a test after '!', found end of filter"},
        {"&& user == \"a\"", 1, "expected a test, found '&&'"},
        {")", 1, "expected a test, found ')'"},
        {"~", 1, "expected a test, found '~'"},
        {"user == \"\"", 9,
         "expected a non-empty string, found \"\"; unset fields never match, use !(user ~ \"*\") to select threads "
         "without a user"},
        {"app in [\"a\", \"\"]", 14,
         "expected a non-empty string, found \"\"; unset fields never match, use !(app ~ \"*\") to select threads "
         "without an app"},
        {"thread != \"\"", 11,
         "expected a non-empty string, found \"\"; unset fields never match, use !(thread ~ \"*\") to select threads "
         "without a thread name"},
        {"user == \"\\q\"", 10, "expected '\"', '\\', 'n' or 't' after '\\' in a string literal, found 'q'"},
        {std::string("user == \"a\nb\""), 11,
         "expected a printable character in a string literal (write \\n or \\t for newline or tab), found '\\x0a'"},
        {std::string("user == \"a\0\"", 12), 11,
         "expected a printable character in a string literal (write \\n or \\t for newline or tab), found '\\x00'"},
        {"user == \"a\" \xff", 13, "expected '&&', '||' or end of filter, found '\\xff'"},
        {"\x80", 1, "expected a test, found '\\x80'"},
        {"user \"a\xff\"", 6,
         "expected '==', '!=', 'in', '~' or 'exists' after field 'user', found string literal \"a\\xff\""},
        {"user ~ \"a\\\\b\"", 10, glob_escape + ", found 'b'"},
        {"user ~ \"ab\\\\\"", 11, glob_escape + ", found the end of the pattern"},
        {"user ~ \"\\n\\\\x\"", 11, glob_escape + ", found 'x'"},
        {"user == \"a\" && " + std::string(50, 'x'), 16,
         field_list + ", found identifier '" + std::string(37, 'x') + "...'"},
    };
    for (const auto& c : cases) {
        const parse_failure e = parse_error(c.text);
        EXPECT_EQ(e.column, c.column) << c.text;
        EXPECT_EQ(e.what, "filter column " + std::to_string(c.column) + ": " + c.message) << c.text;
        EXPECT_TRUE(printable_ascii(e.what)) << e.what;
    }
}

TEST(FilterErrors, FilterErrorIsALoupeError) {
    const loupe::filter_error e(7, "expected x, found y");
    EXPECT_EQ(e.column(), 7u);
    EXPECT_STREQ(e.what(), "filter column 7: expected x, found y");
    EXPECT_THROW(filter::parse("usr == \"x\""), loupe::error);
}

// ---------------------------------------------------------------------------------------------------------------
// Matching semantics

TEST(FilterMatching, EqualityPerKeyIsByteExactAndCaseSensitive) {
    for (const filter_key k : all_keys) {
        const std::string text = std::string(loupe::filter_key_name(k)) + " == \"Alice\"";
        const filter f = filter::parse(text);
        EXPECT_TRUE(f.matches(subject({{k, "Alice"}}))) << text;
        EXPECT_FALSE(f.matches(subject({{k, "alice"}}))) << text;
        EXPECT_FALSE(f.matches(subject({{k, "Alice "}}))) << text;
        EXPECT_FALSE(f.matches(subject({{k, "Alic"}}))) << text;
        EXPECT_FALSE(f.matches(subject({}))) << text;
        // Another key holding the value does not count.
        for (const filter_key other : all_keys) {
            if (other != k) {
                EXPECT_FALSE(f.matches(subject({{other, "Alice"}}))) << text;
            }
        }
    }
}

TEST(FilterMatching, UnsetFields) {
    const filter_subject unset = subject({{filter_key::app, "shop"}});
    EXPECT_FALSE(matches("user == \"x\"", unset));
    EXPECT_TRUE(matches("user != \"x\"", unset));  // != is !(==): it matches threads with no user
    EXPECT_FALSE(matches("user in [\"x\", \"y\"]", unset));
    EXPECT_FALSE(matches("user ~ \"*\"", unset));
    EXPECT_TRUE(matches("!(user ~ \"*\")", unset));
    EXPECT_FALSE(matches("!(user ~ \"*\")", subject({{filter_key::user, "x"}})));
    EXPECT_TRUE(matches("user ~ \"*\"", subject({{filter_key::user, "x"}})));
    EXPECT_FALSE(matches("user ~ \"?*\"", unset));
    EXPECT_FALSE(matches("!(user != \"x\")", unset));
    EXPECT_FALSE(matches("thread ~ \"*\"", unset));
    EXPECT_FALSE(matches("process ~ \"*\"", unset));
}

TEST(FilterMatching, NotEqual) {
    EXPECT_TRUE(matches("user != \"alice\"", subject({{filter_key::user, "bob"}})));
    EXPECT_FALSE(matches("user != \"alice\"", subject({{filter_key::user, "alice"}})));
    EXPECT_TRUE(matches("user != \"alice\"", subject({{filter_key::user, "Alice"}})));
    EXPECT_TRUE(matches("user != \"alice\"", subject({})));
    // Exactly !(==) on every subject.
    for (const char* v : {"", "alice", "bob"}) {
        const filter_subject s = subject({{filter_key::user, v}});
        EXPECT_EQ(matches("user != \"alice\"", s), matches("!(user == \"alice\")", s)) << v;
    }
}

TEST(FilterMatching, In) {
    const filter f = filter::parse("app in [\"billing\", \"crm\", \"shop\"]");
    EXPECT_TRUE(f.matches(subject({{filter_key::app, "billing"}})));
    EXPECT_TRUE(f.matches(subject({{filter_key::app, "crm"}})));
    EXPECT_TRUE(f.matches(subject({{filter_key::app, "shop"}})));
    EXPECT_FALSE(f.matches(subject({{filter_key::app, "shopping"}})));
    EXPECT_FALSE(f.matches(subject({{filter_key::app, "cr"}})));
    EXPECT_FALSE(f.matches(subject({})));
    EXPECT_TRUE(matches("app in [\"a\", \"a\"]", subject({{filter_key::app, "a"}})));
    EXPECT_TRUE(matches("!(app in [\"a\", \"b\"])", subject({})));
}

TEST(FilterMatching, Glob) {
    const struct {
        const char* pattern;  // as it appears between the quotes in filter text
        const char* value;
        bool match;
    } cases[] = {
        {"*", "a", true},
        {"*", "anything at all", true},
        {"**", "x", true},
        {"a*", "a", true},
        {"a*", "abc", true},
        {"a*", "ba", false},
        {"*a", "ba", true},
        {"*a", "ab", false},
        {"*a*", "xax", true},
        {"*a*", "xyz", false},
        {"a*b*c", "abc", true},
        {"a*b*c", "aXbYc", true},
        {"a*b*c", "aXXbYYbZc", true},
        {"a*b*c", "abcabc", true},
        {"a*b*c", "aXcYb", false},
        {"a*b*c", "abcd", false},
        {"a**b", "ab", true},
        {"a?c", "abc", true},
        {"a?c", "ac", false},
        {"a?c", "abbc", false},
        {"?", "a", true},
        {"?", "ab", false},
        {"??", "ab", true},
        {"*?", "x", true},
        {"?*", "x", true},
        {"*??*", "x", false},
        {"abc", "abc", true},
        {"abc", "abcd", false},
        {"abc", "Abc", false},
        {"health*", "healthz", true},
        {"health*", "health", true},
        {"health*", "healt", false},
        {"health\\\\*", "health*", true},  // the pattern health\* : a literal star
        {"health\\\\*", "healthz", false},
        {"health\\\\*", "health*z", false},
        {"\\\\?", "?", true},
        {"\\\\?", "a", false},
        {"\\\\\\\\", "\\", true},  // the pattern \\ : one backslash
        {"\\\\\\\\", "\\\\", false},
        {"*\\\\**", "a*b", true},
        {"*\\\\**", "ab", false},
        {"*aaa*b", "aaaaaaaaaaaaaaaaaaaaaaaaaac", false},
        {"*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
        {"caf\xc3\xa9*", "caf\xc3\xa9-1", true},
        {"?", "\xc3\xa9", false},  // '?' is one byte, not one character
        {"??", "\xc3\xa9", true},
        {"*\\t*", "a\tb", true},  // string escapes apply first: \t is a tab
    };
    for (const auto& c : cases) {
        const std::string text = std::string("request ~ \"") + c.pattern + "\"";
        EXPECT_EQ(matches(text, subject({{filter_key::request, c.value}})), c.match) << text << " on " << c.value;
        EXPECT_FALSE(matches(text, subject({}))) << text;  // unset never matches
    }
}

TEST(FilterMatching, GlobFunctionDirectly) {
    using loupe::detail::glob_match;
    EXPECT_TRUE(glob_match("", ""));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("***", ""));
    EXPECT_FALSE(glob_match("?", ""));
    EXPECT_FALSE(glob_match("", "a"));
    EXPECT_FALSE(glob_match("a", ""));
    EXPECT_TRUE(glob_match("\\*", "*"));
    EXPECT_FALSE(glob_match("\\*", "a"));
    EXPECT_TRUE(glob_match("a\\", "a\\"));  // a lone trailing '\' is literal
    // Worst case stays fast (no exponential backtracking).
    const std::string value(4000, 'a');
    EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", value));
    EXPECT_EQ(loupe::detail::glob_invalid_escape("a\\*\\?\\\\b"), std::string_view::npos);
    EXPECT_EQ(loupe::detail::glob_invalid_escape("a\\b"), 1u);
    EXPECT_EQ(loupe::detail::glob_invalid_escape("ab\\"), 2u);
}

TEST(FilterMatching, ThreadAndProcess) {
    const filter f = filter::parse("thread ~ \"worker-*\" && process == \"server\"");
    filter_subject s = subject({{filter_key::thread, "worker-3"}, {filter_key::process, "server"}});
    EXPECT_TRUE(f.matches(s));
    s.thread = "main";
    EXPECT_FALSE(f.matches(s));
    s.thread = "worker-3";
    s.process = "client";
    EXPECT_FALSE(f.matches(s));
    // Context fields with the same values do not count for thread/process.
    EXPECT_FALSE(f.matches(subject({{filter_key::app, "worker-3"}, {filter_key::client, "server"}})));
}

TEST(FilterMatching, CombinationsAndOrNot) {
    const filter f = filter::parse(
        "user == \"alice\" && (app == \"shop\" || app in [\"billing\", \"crm\"]) && !(request ~ \"health*\")");
    EXPECT_TRUE(f.matches(subject({{filter_key::user, "alice"}, {filter_key::app, "shop"}})));
    EXPECT_TRUE(
        f.matches(subject({{filter_key::user, "alice"}, {filter_key::app, "crm"}, {filter_key::request, "r1"}})));
    EXPECT_FALSE(f.matches(
        subject({{filter_key::user, "alice"}, {filter_key::app, "crm"}, {filter_key::request, "healthz"}})));
    EXPECT_FALSE(f.matches(subject({{filter_key::user, "bob"}, {filter_key::app, "shop"}})));
    EXPECT_FALSE(f.matches(subject({{filter_key::user, "alice"}, {filter_key::app, "blog"}})));
    EXPECT_FALSE(f.matches(subject({{filter_key::user, "alice"}})));
}

// ---------------------------------------------------------------------------------------------------------------
// Builder

TEST(FilterBuilder, ProducesWhatParseProduces) {
    const std::pair<filter, const char*> cases[] = {
        {where::user == "alice", "user == \"alice\""},
        {where::user != "alice", "user != \"alice\""},
        {where::app.in({"billing", "crm"}), "app in [\"billing\", \"crm\"]"},
        {where::app.in(std::vector<std::string>{"a", "b", "c"}), "app in [\"a\", \"b\", \"c\"]"},
        {where::request.glob("health*"), "request ~ \"health*\""},
        {where::session.is_set(), "session ~ \"*\""},
        {!where::session.is_set(), "!(session ~ \"*\")"},
        {where::client == "c" || where::component == "k", "client == \"c\" || component == \"k\""},
        {where::thread == "t" && where::process == "p", "thread == \"t\" && process == \"p\""},
        {where::user == "alice" && (where::app == "shop" || where::app.in({"billing", "crm"})) &&
             !where::request.glob("health*"),
         "user == \"alice\" && (app == \"shop\" || app in [\"billing\", \"crm\"]) && !(request ~ \"health*\")"},
        {(where::user == "a" || where::user == "b") || where::user == "c",
         "user == \"a\" || user == \"b\" || user == \"c\""},
        {where::user == "a" && (where::user == "b" && where::user == "c"),
         "user == \"a\" && user == \"b\" && user == \"c\""},
        {!!(where::user == "a"), "!(!(user == \"a\"))"},
        {where::user == "q\"b\\s\nt\t", "user == \"q\\\"b\\\\s\\nt\\t\""},
        {where::request.glob("health\\*"), "request ~ \"health\\\\*\""},
    };
    for (const auto& [built, text] : cases) {
        EXPECT_EQ(built.to_string(), text);
        EXPECT_EQ(filter::parse(text).to_string(), text);
    }
    EXPECT_TRUE(where::session.is_set().matches(subject({{filter_key::session, "s"}})));
    EXPECT_FALSE(where::session.is_set().matches(subject({})));
}

TEST(FilterBuilder, EmptyFilterIdentities) {
    const filter a = where::user == "a";
    EXPECT_EQ((filter() && a).to_string(), a.to_string());
    EXPECT_EQ((a && filter()).to_string(), a.to_string());
    EXPECT_TRUE((filter() || a).matches_everything());
    EXPECT_TRUE((a || filter()).matches_everything());
    EXPECT_TRUE((filter() && filter()).matches_everything());
}

TEST(FilterBuilder, RejectsWhatTheLanguageRejects) {
    EXPECT_EQ(builder_error([] { return where::user == ""; }),
              "filter builder: expected a non-empty string, found \"\"; unset fields never match, use !(user ~ \"*\") "
              "to select threads without a user");
    EXPECT_EQ(builder_error([] { return where::user == std::string(64, 'x'); }),
              "filter builder: expected at most 63 bytes, found a string of 64 bytes");
    EXPECT_EQ(builder_error([] { return where::user == std::string(63, 'x'); }), "(built)");
    EXPECT_EQ(builder_error([] { return where::user == "a\x01"; }),
              "filter builder: expected no control bytes other than newline and tab, found '\\x01'");
    EXPECT_EQ(builder_error([] { return where::user.glob("a\\b"); }),
              "filter builder: expected '*', '?' or '\\' after '\\' in a glob pattern, found 'b'");
    EXPECT_EQ(builder_error([] { return where::user.in(std::vector<std::string>{}); }),
              "filter builder: expected at least one value for 'user in', found none");
    EXPECT_EQ(builder_error([] { return where::user.in({"a", ""}); }).substr(0, 50),
              "filter builder: expected a non-empty string, found");
    EXPECT_EQ(builder_error([] { return !filter(); }),
              "filter builder: expected a filter to negate, found the empty filter (it matches everything)");
}

TEST(FilterBuilder, EnforcesTheLimits) {
    filter f = where::user == "a";
    for (std::size_t i = 1; i < loupe::filter_max_tests; ++i) {
        f = f && where::user == "a";
    }
    EXPECT_EQ(filter::parse(f.to_string()).to_string(), f.to_string());
    EXPECT_EQ(builder_error([&] { return f && where::user == "a"; }),
              "filter builder: expected at most 256 tests, found 257");

    filter deep = where::user == "a";
    for (std::size_t i = 0; i < loupe::filter_max_depth; ++i) {
        deep = !deep;
    }
    EXPECT_EQ(filter::parse(deep.to_string()).to_string(), deep.to_string());
    EXPECT_EQ(builder_error([&] { return !deep; }), "filter builder: expected at most 32 nested '(' or '!', found 33");

    std::vector<std::string> many;
    for (int i = 0; i < 1000; ++i) {
        many.push_back("value-" + std::to_string(i));
    }
    EXPECT_EQ(builder_error([&] { return where::app.in(many); }).substr(0, 67),
              "filter builder: expected a filter whose text is at most 4096 bytes,");
}

// ---------------------------------------------------------------------------------------------------------------
// to_string round trip on random filters

namespace {

/// A reference model of a filter: an expression tree evaluated naively.
struct model {
    enum kind_t { eq, ne, in, glob, not_, and_, or_ } kind = eq;
    filter_key key = filter_key::user;
    std::vector<std::string> values;
    std::vector<model> kids;
};

// Values chosen to collide often with the subject values below, and to need escapes.
const std::vector<std::string> vocabulary = {"a", "b", "ab", "ba", "a\"b", "a\\b", "x\ny", "t\tab", "caf\xc3\xa9"};
const std::vector<std::string> patterns = {"*", "a*", "*b", "?", "a?", "*a*", "\\*", "a\\\\b", "??", "*\n*"};

bool reference_glob(std::string_view p, std::string_view s) {  // recursive, for small inputs only
    if (p.empty()) {
        return s.empty();
    }
    if (p[0] == '*') {
        for (std::size_t i = 0; i <= s.size(); ++i) {
            if (reference_glob(p.substr(1), s.substr(i))) {
                return true;
            }
        }
        return false;
    }
    if (s.empty()) {
        return false;
    }
    if (p[0] == '?') {
        return reference_glob(p.substr(1), s.substr(1));
    }
    if (p[0] == '\\' && p.size() > 1) {
        return p[1] == s[0] && reference_glob(p.substr(2), s.substr(1));
    }
    return p[0] == s[0] && reference_glob(p.substr(1), s.substr(1));
}

bool evaluate(const model& m, const filter_subject& s) {
    const std::string_view v = s.value(m.key);
    switch (m.kind) {
        case model::eq: return !v.empty() && v == m.values[0];
        case model::ne: return !(!v.empty() && v == m.values[0]);
        case model::in:
            for (const std::string& x : m.values) {
                if (!v.empty() && v == x) {
                    return true;
                }
            }
            return false;
        case model::glob: return !v.empty() && reference_glob(m.values[0], v);
        case model::not_: return !evaluate(m.kids[0], s);
        case model::and_:
            for (const model& k : m.kids) {
                if (!evaluate(k, s)) {
                    return false;
                }
            }
            return true;
        case model::or_:
            for (const model& k : m.kids) {
                if (evaluate(k, s)) {
                    return true;
                }
            }
            return false;
    }
    return false;
}

model random_model(std::mt19937& rng, int depth) {
    model m;
    const int kind = static_cast<int>(rng() % (depth > 0 ? 7u : 4u));
    m.kind = static_cast<model::kind_t>(kind);
    m.key = all_keys[rng() % 8];
    if (m.kind == model::in) {
        const std::size_t n = 1 + rng() % 3;
        for (std::size_t i = 0; i < n; ++i) {
            m.values.push_back(vocabulary[rng() % vocabulary.size()]);
        }
    } else if (m.kind == model::glob) {
        m.values.push_back(patterns[rng() % patterns.size()]);
    } else if (m.kind == model::eq || m.kind == model::ne) {
        m.values.push_back(vocabulary[rng() % vocabulary.size()]);
    } else if (m.kind == model::not_) {
        m.kids.push_back(random_model(rng, depth - 1));
    } else {
        const std::size_t n = 2 + rng() % 3;
        for (std::size_t i = 0; i < n; ++i) {
            m.kids.push_back(random_model(rng, depth - 1));
        }
    }
    return m;
}

filter build(const model& m) {
    const where::key_ref k{m.key};
    switch (m.kind) {
        case model::eq: return k == m.values[0];
        case model::ne: return k != m.values[0];
        case model::in: return k.in(m.values);
        case model::glob: return k.glob(m.values[0]);
        case model::not_: return !build(m.kids[0]);
        case model::and_:
        case model::or_: {
            filter f = build(m.kids[0]);
            for (std::size_t i = 1; i < m.kids.size(); ++i) {
                f = m.kind == model::and_ ? (f && build(m.kids[i])) : (f || build(m.kids[i]));
            }
            return f;
        }
    }
    return filter();
}

std::string quote(const std::string& v) {
    std::string out;
    loupe::detail::filter_append_quoted(out, v);
    return out;
}

/// Hand-written text for a model: random whitespace, redundant parentheses,
/// '!' without parentheses where it may be omitted.
std::string write(const model& m, std::mt19937& rng) {
    const char* blanks[] = {"", " ", "  ", "\t", "\n", " \r\n "};
    auto ws = [&] { return std::string(blanks[rng() % 6]); };
    std::string out;
    const std::string key = loupe::filter_key_name(m.key);
    switch (m.kind) {
        case model::eq: out = key + ws() + "==" + ws() + quote(m.values[0]); break;
        case model::ne: out = key + ws() + "!=" + ws() + quote(m.values[0]); break;
        case model::glob: out = key + ws() + "~" + ws() + quote(m.values[0]); break;
        case model::in:
            out = key + " in" + ws() + "[" + ws();
            for (std::size_t i = 0; i < m.values.size(); ++i) {
                out += (i ? "," + ws() : "") + quote(m.values[i]) + ws();
            }
            out += "]";
            break;
        case model::not_: out = "!" + ws() + "(" + ws() + write(m.kids[0], rng) + ws() + ")"; break;
        case model::and_:
        case model::or_:
            for (std::size_t i = 0; i < m.kids.size(); ++i) {
                out += (i ? ws() + (m.kind == model::and_ ? "&&" : "||") + ws() : "") + "(" +
                       write(m.kids[i], rng) + ")";
            }
            break;
    }
    return rng() % 4 == 0 ? "(" + ws() + out + ws() + ")" : out;
}

filter_subject random_subject(std::mt19937& rng, std::vector<std::string>& storage) {
    filter_subject s;
    for (const filter_key k : all_keys) {
        std::string v;
        const unsigned r = rng() % 4;
        if (r == 1) {
            v = vocabulary[rng() % vocabulary.size()];
        } else if (r >= 2) {
            v = vocabulary[rng() % vocabulary.size()] + vocabulary[rng() % vocabulary.size()];
            v = rng() % 2 ? v : "*" + v.substr(0, 2);
        }
        storage[static_cast<std::size_t>(k)] = v;
    }
    for (std::size_t i = 0; i < loupe::context_field_count; ++i) {
        s.fields[i] = storage[i];
    }
    s.thread = storage[6];
    s.process = storage[7];
    return s;
}

}  // namespace

TEST(FilterRoundTrip, RandomFiltersMatchTheModelAndRoundTrip) {
    std::mt19937 rng(20240611);
    std::vector<std::vector<std::string>> storage(64, std::vector<std::string>(8));
    std::vector<filter_subject> subjects;
    for (auto& st : storage) {
        subjects.push_back(random_subject(rng, st));
    }
    int disagreements = 0;
    for (int round = 0; round < 1500; ++round) {
        const model m = random_model(rng, 1 + static_cast<int>(rng() % 4));
        const filter built = build(m);
        const std::string text = write(m, rng);
        const filter parsed = filter::parse(text);
        const std::string canonical_text = built.to_string();
        ASSERT_EQ(parsed.to_string(), canonical_text) << text;
        const filter reparsed = filter::parse(canonical_text);
        ASSERT_EQ(reparsed.to_string(), canonical_text);
        const filter copy = parsed;  // a regular value type
        for (const filter_subject& s : subjects) {
            const bool expected = evaluate(m, s);
            disagreements += built.matches(s) != expected;
            disagreements += parsed.matches(s) != expected;
            disagreements += reparsed.matches(s) != expected;
            disagreements += copy.matches(s) != expected;
        }
    }
    EXPECT_EQ(disagreements, 0);
}

TEST(FilterRoundTrip, CopiesAndMovesAreIndependent) {
    filter a = filter::parse("user == \"a\" || app ~ \"b*\"");
    filter b = a;
    filter c = std::move(a);
    a = filter::parse("thread == \"t\"");
    EXPECT_EQ(b.to_string(), "user == \"a\" || app ~ \"b*\"");
    EXPECT_EQ(c.to_string(), "user == \"a\" || app ~ \"b*\"");
    EXPECT_EQ(a.to_string(), "thread == \"t\"");
    b = c;
    EXPECT_EQ(b.to_string(), c.to_string());
}

// ---------------------------------------------------------------------------------------------------------------
// Limits

TEST(FilterLimits, TextLength) {
    std::string text = "user == \"a\"";
    text.resize(loupe::filter_max_text_bytes, ' ');
    EXPECT_EQ(canonical(text), "user == \"a\"");
    text += ' ';
    const parse_failure e = parse_error(text);
    EXPECT_EQ(e.column, 4097u);
    EXPECT_EQ(e.what, "filter column 4097: expected at most 4096 bytes of filter text, found 4097 bytes");
    EXPECT_EQ(parse_error(std::string(100000, '(')).column, 4097u);
}

TEST(FilterLimits, CanonicalTextMustFitToo) {
    // 3070 compact bytes whose canonical form ("!(user == \"a\") && ...") is 4604 bytes.
    std::string text;
    for (int i = 0; i < 256; ++i) {
        text += i ? "&&!user==\"a\"" : "!user==\"a\"";
    }
    ASSERT_LE(text.size(), loupe::filter_max_text_bytes);
    const parse_failure e = parse_error(text);
    EXPECT_EQ(e.column, 1u);
    EXPECT_EQ(e.what, "filter column 1: expected a filter whose canonical text (to_string) is at most 4096 bytes, "
                      "found one of 4604 bytes");
    // With 200 tests it fits (3600 bytes) and round-trips.
    text.clear();
    for (int i = 0; i < 200; ++i) {
        text += i ? "&&!user==\"a\"" : "!user==\"a\"";
    }
    const filter f = filter::parse(text);
    EXPECT_EQ(filter::parse(f.to_string()).to_string(), f.to_string());
}

TEST(FilterLimits, DepthOfParentheses) {
    auto nested = [](std::size_t n) { return std::string(n, '(') + "user == \"a\"" + std::string(n, ')'); };
    EXPECT_EQ(canonical(nested(32)), "user == \"a\"");
    const parse_failure e = parse_error(nested(33));
    EXPECT_EQ(e.column, 33u);
    EXPECT_EQ(e.what, "filter column 33: expected at most 32 nested '(' and '!', found '(' at depth 33");
}

TEST(FilterLimits, DepthOfNegations) {
    auto negated = [](std::size_t n) { return std::string(n, '!') + "user == \"a\""; };
    EXPECT_TRUE(matches(negated(32), subject({{filter_key::user, "a"}})));
    EXPECT_FALSE(matches(negated(31), subject({{filter_key::user, "a"}})));
    const parse_failure e = parse_error(negated(33));
    EXPECT_EQ(e.column, 33u);
    EXPECT_EQ(e.what, "filter column 33: expected at most 32 nested '(' and '!', found '!' at depth 33");
    // "!(" is one level, so the canonical form of 32 negations parses back.
    const filter f = filter::parse(negated(32));
    EXPECT_EQ(filter::parse(f.to_string()).to_string(), f.to_string());
    // Mixed: 16 '(' and 16 '!' fit; one more '(' does not.
    const std::string test = "user == \"a\"";
    EXPECT_NO_THROW(filter::parse(std::string(16, '(') + std::string(16, '!') + test + std::string(16, ')')));
    const parse_failure m = parse_error(std::string(17, '(') + std::string(16, '!') + test + std::string(17, ')'));
    EXPECT_EQ(m.column, 33u);
    EXPECT_EQ(m.what, "filter column 33: expected at most 32 nested '(' and '!', found '!' at depth 33");
    // A '(' right after a '!' (blanks allowed) shares its level.
    std::string shared;
    for (int i = 0; i < 32; ++i) {
        shared += "! (";
    }
    EXPECT_NO_THROW(filter::parse(shared + test + std::string(32, ')')));
    EXPECT_EQ(parse_error(shared + "! (" + test + std::string(33, ')')).column, 97u);
    EXPECT_EQ(parse_error(shared + "(" + test + std::string(33, ')')).column, 97u);
}

TEST(FilterLimits, NumberOfTests) {
    auto chain = [](std::size_t n) {
        std::string text;
        for (std::size_t i = 0; i < n; ++i) {
            text += i ? " || app == \"a\"" : "app == \"a\"";
        }
        return text;
    };
    EXPECT_NO_THROW(filter::parse(chain(256)));
    const parse_failure e = parse_error(chain(257));
    EXPECT_EQ(e.column, 256 * 14 + 1u);
    EXPECT_EQ(e.what, "filter column " + std::to_string(256 * 14 + 1) +
                          ": expected at most 256 tests, found a 257th test");
    // An "in" list is one test however many values it has.
    std::string list = "app in [";
    for (int i = 0; i < 300; ++i) {
        list += i ? ",\"v\"" : "\"v\"";
    }
    list += "]";
    EXPECT_TRUE(matches(list, subject({{filter_key::app, "v"}})));
}

TEST(FilterLimits, LiteralLength) {
    const std::string ok(63, 'x');
    EXPECT_TRUE(matches("user == \"" + ok + "\"", subject({{filter_key::user, ok}})));
    const parse_failure e = parse_error("user == \"" + ok + "y\"");
    EXPECT_EQ(e.column, 9u);
    EXPECT_EQ(e.what, "filter column 9: expected at most 63 bytes, found a string of 64 bytes");
    // Length is counted after unescaping: 63 newlines are 63 bytes.
    std::string escaped;
    for (int i = 0; i < 63; ++i) {
        escaped += "\\n";
    }
    EXPECT_TRUE(matches("user == \"" + escaped + "\"", subject({{filter_key::user, std::string(63, '\n')}})));
    EXPECT_EQ(parse_error("user == \"" + escaped + "\\n\"").column, 9u);
    // The limit applies to "in" values and glob patterns too.
    EXPECT_EQ(parse_error("app in [\"a\", \"" + ok + "y\"]").column, 14u);
    EXPECT_EQ(parse_error("app ~ \"" + ok + "*\"").what,
              "filter column 7: expected at most 63 bytes, found a string of 64 bytes");
}

TEST(FilterLimits, ConcurrentMatchesOnOneFilter) {
    // Const use from several threads needs no locking; run under TSan to check.
    const filter f = filter::parse("user == \"a\" || app ~ \"s*\"");
    std::vector<std::string> storage(8);
    std::mt19937 rng(7);
    const filter_subject s = random_subject(rng, storage);
    const bool expected = f.matches(s);
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 10000; ++i) {
                wrong += f.matches(s) != expected;
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(wrong.load(), 0);
}
