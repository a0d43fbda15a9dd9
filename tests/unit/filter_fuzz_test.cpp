// Deterministic fuzzing of the filter parser: random token soup and mutations
// of valid filters either parse (and then round-trip through to_string) or
// fail with a well-formed filter_error; nothing crashes or overflows the stack.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <loupe/core/filter.hpp>

using loupe::filter;

namespace {

/// Subjects built from the same bytes the inputs are made of, so tests match sometimes.
std::vector<loupe::filter_subject> make_subjects(std::vector<std::vector<std::string>>& storage) {
    const char* values[] = {"", "a", "b", "ab", "a*", "x", "\\", "*", "a b"};
    std::mt19937 rng(99);
    std::vector<loupe::filter_subject> subjects;
    storage.assign(24, std::vector<std::string>(8));
    for (auto& st : storage) {
        for (auto& v : st) {
            v = values[rng() % 9];
        }
        loupe::filter_subject s;
        for (std::size_t i = 0; i < loupe::context_field_count; ++i) {
            s.fields[i] = st[i];
        }
        s.thread = st[6];
        s.process = st[7];
        subjects.push_back(s);
    }
    return subjects;
}

bool printable_ascii(const char* s) {
    for (; *s; ++s) {
        if (*s < 0x20 || *s > 0x7e) {
            return false;
        }
    }
    return true;
}

class checker {
public:
    checker() : subjects_(make_subjects(storage_)) {}

    /// Checks one input; returns false (after recording a test failure) if something is wrong.
    bool check(const std::string& text) {
        filter f;
        try {
            f = filter::parse(text);
        } catch (const loupe::filter_error& e) {
            ++errors;
            const std::string what = e.what();
            const bool ok = e.column() >= 1 && e.column() <= text.size() + 1 && what.rfind("filter column ", 0) == 0 &&
                            printable_ascii(e.what());
            EXPECT_TRUE(ok) << "column " << e.column() << " of " << text.size() << ": " << what << "\ninput: "
                            << escape(text);
            return ok;
        }
        ++parsed;
        const std::string canonical = f.to_string();
        filter g;
        try {
            g = filter::parse(canonical);
        } catch (const loupe::filter_error& e) {
            ADD_FAILURE() << "canonical text does not parse: " << e.what() << "\ninput: " << escape(text)
                          << "\ncanonical: " << escape(canonical);
            return false;
        }
        bool ok = g.to_string() == canonical && f.matches_everything() == g.matches_everything();
        for (const auto& s : subjects_) {
            ok = ok && f.matches(s) == g.matches(s);
            matched += f.matches(s);
        }
        EXPECT_TRUE(ok) << "round trip differs\ninput: " << escape(text) << "\ncanonical: " << escape(canonical)
                        << "\nreparsed: " << escape(g.to_string());
        return ok;
    }

    static std::string escape(const std::string& s) {
        std::string out;
        for (const char ch : s) {
            const auto c = static_cast<unsigned char>(ch);
            if (c >= 0x20 && c < 0x7f) {
                out += ch;
            } else {
                static const char hex[] = "0123456789abcdef";
                out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
            }
        }
        return out;
    }

    std::size_t parsed = 0;
    std::size_t errors = 0;
    std::size_t matched = 0;

private:
    std::vector<std::vector<std::string>> storage_;
    std::vector<loupe::filter_subject> subjects_;
};

}  // namespace

TEST(FilterFuzz, RandomTokenSoup) {
    // Biased toward grammar tokens; whole test-shaped pieces keep a share of inputs valid.
    const std::vector<std::string> pieces = {
        "user", "app", "thread", "process", "client", "session", "request", "component", "usr", "==", "!=",
        "=", "\"", "(", ")", "!", "&&", "||", "&", "|", "in", "[", "]", ",", "~", "*", "?", "\\", " ", " ", " ",
        "\t", "\n", "a", "b", "\"a\"", "\"b*\"", "\"\\\\*\"", "\"\"", "\"a\\\"b\"", "user == \"a\"",
        "app in [\"a\", \"b\"]", "thread ~ \"a*\"", " && ", " || ", "!(", "\\n", "\\x",
    };
    std::mt19937 rng(12345);
    checker c;
    for (int i = 0; i < 200000; ++i) {
        const std::size_t length = rng() % 65;
        std::string text;
        while (text.size() < length) {
            const unsigned r = rng() % 16;
            if (r == 0) {
                text += static_cast<char>(rng() % 256);  // any byte, 0x00 and 0xff included
            } else if (r == 1) {
                text += static_cast<char>(rng() % 2 ? 0x00 : 0xff);
            } else {
                text += pieces[rng() % pieces.size()];
            }
        }
        text.resize(length);
        if (!c.check(text)) {
            break;
        }
    }
    // The soup must reach the parser's deeper paths, not only its first error.
    EXPECT_GT(c.parsed, 2000u);
    EXPECT_GT(c.errors, 100000u);
    EXPECT_GT(c.matched, 0u);
    std::printf("token soup: %zu parsed, %zu errors\n", c.parsed, c.errors);
}

TEST(FilterFuzz, MutationsOfValidFilters) {
    const std::vector<std::string> seeds = {
        "",
        "user == \"alice\"",
        "user != \"alice\"",
        "app in [\"billing\", \"crm\", \"shop\"]",
        "request ~ \"health*\"",
        "request ~ \"a\\\\*b?c\"",
        "!(user ~ \"*\")",
        "user == \"alice\" && (app == \"shop\" || app in [\"billing\", \"crm\"]) && !(request ~ \"health*\")",
        "thread ~ \"worker-*\" || process == \"server\" && client != \"c\"",
        "((user == \"a\") || !!app == \"b\") && session ~ \"?\"",
        "component == \"a\\\"b\\\\c\\nd\\te\"",
        "user==\"a\"&&app==\"b\"||thread==\"c\"",
        " ! ( user == \"a\" || ! ( app == \"b\" && ! thread ~ \"c\" ) ) ",
    };
    const char interesting[] = {'"', '(', ')', '!', '&', '|', '=', '[', ']', ',', '~', '*', '?', '\\', ' ', 'a',
                                'n', '\0', '\xff', '\n', 't', 'u'};
    std::mt19937 rng(777);
    checker c;
    for (const std::string& seed : seeds) {
        ASSERT_TRUE(c.check(seed)) << seed;
        for (int i = 0; i < 4000; ++i) {
            std::string text = seed;
            const unsigned edits = 1 + rng() % 3;
            for (unsigned e = 0; e < edits; ++e) {
                const char byte =
                    rng() % 3 == 0 ? static_cast<char>(rng() % 256) : interesting[rng() % sizeof interesting];
                const std::size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
                switch (rng() % 3) {
                    case 0: text.insert(at, 1, byte); break;
                    case 1:
                        if (at < text.size()) {
                            text.erase(at, 1);
                        }
                        break;
                    default:
                        if (at < text.size()) {
                            text[at] = byte;
                        }
                }
            }
            if (!c.check(text)) {
                return;
            }
        }
    }
    EXPECT_GT(c.parsed, 5000u);
    EXPECT_GT(c.errors, 20000u);
    std::printf("mutations: %zu parsed, %zu errors\n", c.parsed, c.errors);
}

TEST(FilterFuzz, DeepNestingIsAnErrorNotACrash) {
    for (const std::string unit : {"(", "!", "!(", "( !", "(\n"}) {
        std::string text;
        while (text.size() < 10000) {
            text += unit;
        }
        for (const std::string& input : {text, text + "user == \"a\"", text.substr(0, 4096)}) {
            try {
                filter::parse(input);
                ADD_FAILURE() << "parsed " << unit;
            } catch (const loupe::filter_error& e) {
                const std::string what = e.what();
                if (input.size() > loupe::filter_max_text_bytes) {
                    EXPECT_EQ(e.column(), 4097u) << what;
                } else {
                    EXPECT_NE(what.find("expected at most 32 nested '(' and '!'"), std::string::npos) << what;
                    EXPECT_LE(e.column(), 33u * unit.size()) << what;
                }
            }
        }
    }
    // Exactly at the limit (and under the text limit), deep nesting works.
    EXPECT_EQ(filter::parse(std::string(32, '(') + "user == \"a\"" + std::string(32, ')')).to_string(),
              "user == \"a\"");
}
