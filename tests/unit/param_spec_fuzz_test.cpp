// Deterministic fuzzing of the parameter spec text and signature parsers:
// random and mutated inputs built from spec fragments must never crash, and
// every error must point inside the input.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/params/detail/param_spec.hpp"
#include "loupe/params/detail/signature_matcher.hpp"
#include "loupe/params/detail/signature_parser.hpp"

namespace {

using loupe::match_mode;
using loupe::detail::class_graph;
using loupe::detail::param_spec_error;
using loupe::detail::parse_param_specs;
using loupe::detail::parse_signature;
using loupe::detail::signature;
using loupe::detail::signature_error;

const std::vector<std::string> fragments = {
    "method=",
    "param=",
    "chain=",
    "match=",
    "data=",
    "name=",
    ";",
    "; ",
    " ",
    "\t",
    "\n",
    "\r\n",
    "#",
    " # c",
    "(",
    ")",
    "<",
    ">",
    "> >",
    ">>",
    ",",
    "::",
    ".",
    "...",
    "*",
    "&",
    "&&",
    "[",
    "]",
    "[ ]",
    "->",
    "~",
    "@",
    "\"",
    "\\",
    "=",
    "0",
    "1",
    "255",
    "256",
    "-1",
    "exact",
    "inherited",
    "subclasses",
    "entry",
    "exit",
    "wall",
    "cpu",
    "const",
    "volatile",
    "unsigned",
    "signed",
    "long",
    "short",
    "int",
    "char",
    "void",
    "auto",
    "operator",
    "operator()",
    "operator<",
    "struct",
    "decltype(x)",
    "noexcept",
    "std::",
    "std::__cxx11::",
    "basic_string<char>",
    "std::string",
    "Item",
    "shop",
    "Cart",
    "add",
    "x",
    "shop::Cart::add(Item const&,int)",
    "shop::price(Order const*)double",
    "void shop::log(std::string_view)",
    "shop.Cart.add(Item const&, int)",
    "field(sku)|truncate(16)",
    "@sku",
    "std::vector<std::pair<int,int> > const&",
    "void (*)(int)",
    "int Cart::*",
    "f(",
    "g)",
    "\xff",
    "\x01",
    "é",
};

/// A random line of fragments, often shaped like a spec.
std::string random_text(std::mt19937_64& rng) {
    std::string out;
    const int n = static_cast<int>(rng() % 14);
    if (rng() % 2 == 0) out += "method=";
    for (int i = 0; i < n; ++i) out += fragments[rng() % fragments.size()];
    return out;
}

std::string mutate(std::string s, std::mt19937_64& rng) {
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < edits; ++i) {
        const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
        switch (rng() % 5) {
            case 0:  // delete a byte
                if (!s.empty() && at < s.size()) s.erase(at, 1);
                break;
            case 1:  // insert a fragment
                s.insert(at, fragments[rng() % fragments.size()]);
                break;
            case 2:  // replace a byte
                if (at < s.size()) s[at] = static_cast<char>(rng() % 256);
                break;
            case 3:  // duplicate a slice
                if (at < s.size()) s.insert(at, s.substr(at, rng() % 16));
                break;
            default:  // truncate
                s.resize(at);
                break;
        }
    }
    return s;
}

const std::vector<std::string> seeds = {
    "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16); match=exact; "
    "data=entry,exit,wall,cpu; name=sku",
    "method=shop::price(Order const*)double; param=1; chain=cast(shop::Special)|field(detail)",
    "method=java.util.HashMap.get(java.lang.Object); param=1; chain=instance_method(toString()std::string)",
    "method=shop::Cart::add; chain=@sku\nmethod=f; data=cpu # c\n# only a comment",
    "method=std::vector<std::pair<int, const char*> > const& shop::Cart::items() const noexcept; param=0",
    "method=Cart::operator()(void (*)(int), int Cart::*, std::function<void(int)>)&&; match=inherited",
};

/// Line count and the length of each line, as the parser sees them.
std::vector<std::size_t> line_lengths(std::string_view text) {
    std::vector<std::size_t> out;
    std::size_t pos = 0;
    while (true) {
        const std::size_t nl = text.find('\n', pos);
        out.push_back((nl == std::string_view::npos ? text.size() : nl) - pos);
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
    }
    return out;
}

void check_text(const std::string& text, std::size_t& ok, std::size_t& errors) {
    try {
        const auto specs = parse_param_specs(text);
        ++ok;
        for (const auto& s : specs) {
            // Parsed selectors round-trip through their canonical text.
            const signature again = parse_signature(s.method.canonical());
            ASSERT_EQ(again.canonical(), s.method.canonical()) << text;
            ASSERT_GE(s.param, -1);
            ASSERT_LE(s.param, 255);
        }
    } catch (const param_spec_error& e) {
        ++errors;
        const std::vector<std::size_t> lines = line_lengths(text);
        ASSERT_GE(e.line, 1u) << text;
        ASSERT_LE(e.line, lines.size()) << text;
        ASSERT_GE(e.column, 1u) << text << " -> " << e.what();
        ASSERT_LE(e.column, lines[e.line - 1] + 1) << text << " -> " << e.what();
        ASSERT_FALSE(e.message.empty());
    } catch (const signature_error& e) {
        FAIL() << "signature_error escaped for " << text << ": " << e.what();
    }
}

TEST(ParamSpecFuzz, RandomAndMutatedSpecsNeverCrash) {
    std::mt19937_64 rng(0x10c0be5eedULL);
    std::size_t ok = 0, errors = 0;
    constexpr int rounds = 200000;
    for (int i = 0; i < rounds; ++i) {
        std::string text;
        switch (i % 4) {
            case 0:
                text = random_text(rng);
                break;
            case 1:
                text = random_text(rng) + "\n" + random_text(rng);
                break;
            default:
                text = mutate(seeds[rng() % seeds.size()], rng);
                break;
        }
        check_text(text, ok, errors);
        if (HasFatalFailure()) return;
    }
    EXPECT_EQ(ok + errors, static_cast<std::size_t>(rounds));
    EXPECT_GT(ok, 1000u);  // the mutations keep many inputs valid
    EXPECT_GT(errors, 1000u);
}

TEST(ParamSpecFuzz, SignaturesAndMatchingNeverCrash) {
    std::mt19937_64 rng(42);
    class_graph g;
    g.add_base("shop::Special", "shop::Cart");
    g.add_base("shop::Cart", "Item");
    g.add_method("shop::Cart", "add");
    std::vector<signature> parsed;
    for (int i = 0; i < 50000; ++i) {
        std::string text = i % 2 == 0 ? random_text(rng).substr(0) : mutate(seeds[rng() % seeds.size()].substr(7), rng);
        try {
            parsed.push_back(parse_signature(text));
        } catch (const signature_error& e) {
            ASSERT_LE(e.offset, text.size()) << text;
        }
        if (parsed.size() >= 2) {
            const signature& a = parsed[rng() % parsed.size()];
            const signature& b = parsed[rng() % parsed.size()];
            (void)loupe::detail::method_part_matches(a, b);
            (void)loupe::detail::free_function_matches(a, b);
            for (match_mode m : {match_mode::exact, match_mode::inherited, match_mode::subclasses}) {
                (void)loupe::detail::receiver_matches(a, m, b.qualified_class(), "shop::Cart", g);
            }
        }
        if (parsed.size() > 512) parsed.erase(parsed.begin(), parsed.begin() + 256);
    }
}

TEST(ParamSpecFuzz, PathologicalNestingIsBounded) {
    for (const char* unit : {"A<", "(", "(*", "f(", "decltype(", "x<(", "[", "std::vector<"}) {
        std::string text = "method=";
        for (int i = 0; i < 1000; ++i) text += unit;
        EXPECT_THROW(parse_param_specs(text), param_spec_error) << unit;
        std::string closed = "method=f(";
        for (int i = 0; i < 40; ++i) closed += "A<x B<";
        for (int i = 0; i < 40; ++i) closed += ">>";
        closed += ")";
        EXPECT_THROW(parse_param_specs(closed), param_spec_error);
    }
}

}  // namespace
