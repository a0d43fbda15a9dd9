// Deterministic fuzzing of runtime chains: token soup, random bytes and
// mutations of valid chains either fail to parse with a well-formed
// chain_syntax_error (offset within the text), or parse and then bind (or
// fail to bind with a message naming the modifier) and evaluate on real
// objects, including nulls and empty containers, without crashing.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <loupe/params/detail/runtime_chain_binder.hpp>
#include <loupe/params/detail/runtime_chain_parser.hpp>
#include <loupe/params/detail/runtime_chain_steps.hpp>
#include <loupe/params/reflect.hpp>

namespace rcf {

struct Base {
    virtual ~Base() = default;
    int n = 1;
};
struct Node : Base {
    std::string name = "node\xC3\xA9";
    std::vector<Node> kids;
    std::unique_ptr<Node> next;
    std::shared_ptr<Base> other;
    const char* text = nullptr;
    std::vector<std::string> words{"a", "bb", ""};
    std::string label() const { return "L" + name; }
    int fail() const { throw 1; }
};
struct Leaf : Base {
    std::string leaf = "leaf";
};

std::string describe(const Node& n) { return "D" + n.name; }
std::size_t count(const Node* n) { return n != nullptr ? n->kids.size() : 99; }

void register_types() {
    static const bool once = [] {
        loupe::reflect<Base>("rcf::Base").field("n", &Base::n);
        loupe::reflect<Node>("rcf::Node")
            .field("name", &Node::name)
            .field("kids", &Node::kids)
            .field("next", &Node::next)
            .field("other", &Node::other)
            .field("text", &Node::text)
            .field("words", &Node::words)
            .method("label", &Node::label)
            .method("fail", &Node::fail)
            .base<Base>();
        loupe::reflect<Leaf>("rcf::Leaf").field("leaf", &Leaf::leaf).base<Base>();
        loupe::reflect_function("rcf::describe", &describe);
        loupe::reflect_function("rcf::count", &count);
        return true;
    }();
    (void)once;
}

const char* const tokens[] = {"length",
                              "at",
                              "array_element",
                              "type_of",
                              "class",
                              "call",
                              "instance_method",
                              "apply",
                              "static_method",
                              "field",
                              "cast",
                              "object_id",
                              "id",
                              "deref",
                              "to_string",
                              "truncate",
                              "redact",
                              "hash",
                              "(",
                              ")",
                              "|",
                              " ",
                              "-1",
                              "0",
                              "1",
                              "2",
                              "-9223372036854775808",
                              "9223372036854775807",
                              "99999999999999999999",
                              "name",
                              "kids",
                              "next",
                              "other",
                              "text",
                              "words",
                              "label",
                              "fail",
                              "n",
                              "leaf",
                              "rcf::Node",
                              "rcf::Leaf",
                              "rcf::Base",
                              "Leaf",
                              "rcf::describe",
                              "describe",
                              "rcf.count",
                              "::",
                              ":",
                              "<",
                              ">",
                              ",",
                              "()",
                              "std::string",
                              "\t",
                              "-",
                              "+",
                              "x",
                              "\xC3",
                              "\0",
                              "*",
                              "&",
                              "."};

const char* const seeds[] = {
    "field(kids)|at(-1)|field(name)|truncate(3)",
    "field(next)|field(name)|hash",
    "field(other)|cast(rcf::Leaf)|field(leaf)",
    "field(other)|type_of",
    "call(label)|to_string|redact",
    "apply(rcf::describe)|length",
    "apply(count)",
    "field(words)|at(1)|length",
    "field(text)|at(0)",
    "cast(Node)|field(n)|to_string",
    "instance_method(label()std::string)|truncate(2)",
    "static_method(rcf::count(rcf::Node const*)std::size_t)",
    "array_element | class",
    "id",
    "field(kids)|array_element(0)|field(next)|deref|field(name)",
    "call(fail)",
    "",
};

struct subject {
    const loupe::detail::type_desc* desc;
    const void* object;
};

class fuzzer {
public:
    fuzzer() {
        register_types();
        full_.kids.resize(2);
        full_.kids[1].next = std::make_unique<Node>();
        full_.next = std::make_unique<Node>();
        full_.other = std::make_shared<Leaf>();
        full_.text = "txt";
        empty_.words.clear();
        empty_.other = std::make_shared<Base>();
        full_ptr_ = &full_;
        subjects_ = {{loupe::detail::type_desc_of<Node>(), &full_},
                     {loupe::detail::type_desc_of<Node>(), &empty_},
                     {loupe::detail::type_desc_of<const Node*>(), &full_ptr_},
                     {loupe::detail::type_desc_of<const Node*>(), &null_ptr_},
                     {loupe::detail::type_desc_of<Base>(), &leaf_},
                     {loupe::detail::type_desc_of<std::string>(), &str_},
                     {loupe::detail::type_desc_of<int>(), &int_}};
    }

    void check(const std::string& text) {
        loupe::detail::parsed_chain parsed;
        try {
            parsed = loupe::detail::parse_chain(text);
        } catch (const loupe::detail::chain_syntax_error& e) {
            ++syntax_errors;
            ASSERT_LE(e.offset, text.size()) << text;
            ASSERT_FALSE(std::string(e.what()).empty());
            return;
        }
        ++parsed_ok;
        for (const subject& s : subjects_) {
            const auto bound = loupe::detail::bind_chain(parsed, s.desc);
            if (!bound) {
                ++bind_errors;
                ASSERT_FALSE(bound.error.empty()) << text;
                if (bound.failed_modifier != 0) {
                    ASSERT_EQ(bound.error.rfind("modifier " + std::to_string(bound.failed_modifier) + " `", 0), 0u)
                        << bound.error;
                }
                continue;
            }
            ++bound_ok;
            char buf[16];
            loupe::value_writer out(buf, sizeof buf);
            bound.chain->evaluate(s.object, out);
            ASSERT_TRUE(out.written()) << text;
            const loupe::param_value& v = out.value();
            if (!loupe::is_status(v.kind) && bound.chain->result_kind() != loupe::value_kind::unknown) {
                ASSERT_EQ(v.kind, bound.chain->result_kind()) << text;
            }
            ASSERT_LE(v.text.size(), sizeof buf);
        }
    }

    std::size_t syntax_errors = 0, parsed_ok = 0, bind_errors = 0, bound_ok = 0;

private:
    Node full_, empty_;
    Leaf leaf_;
    const Node* full_ptr_ = nullptr;
    const Node* null_ptr_ = nullptr;
    std::string str_ = "hello";
    int int_ = 5;
    std::vector<subject> subjects_;
};

std::string token_soup(std::mt19937_64& rng) {
    std::string s;
    const std::size_t n = rng() % 12;
    constexpr std::size_t count = sizeof tokens / sizeof tokens[0];
    for (std::size_t i = 0; i < n; ++i) {
        const char* t = tokens[rng() % count];
        s += (t[0] == '\0') ? std::string(1, '\0') : std::string(t);
    }
    return s;
}

std::string mutate(std::string s, std::mt19937_64& rng) {
    const std::size_t edits = 1 + rng() % 4;
    for (std::size_t e = 0; e < edits; ++e) {
        const std::size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
        switch (rng() % 5) {
            case 0:
                if (!s.empty() && pos < s.size()) s.erase(pos, 1 + rng() % 3);
                break;
            case 1:
                s.insert(pos, 1, static_cast<char>(rng() % 256));
                break;
            case 2:
                if (pos < s.size()) s[pos] = static_cast<char>(32 + rng() % 95);
                break;
            case 3:
                s.insert(pos, tokens[rng() % (sizeof tokens / sizeof tokens[0])]);
                break;
            default:
                s.insert(pos, "|");
                break;
        }
    }
    return s;
}

}  // namespace rcf

TEST(RuntimeChainFuzz, SeedsParseAndBind) {
    rcf::fuzzer f;
    for (const char* s : rcf::seeds) f.check(s);
    EXPECT_EQ(f.syntax_errors, 0u);
    EXPECT_GT(f.bound_ok, 10u);
}

TEST(RuntimeChainFuzz, RandomAndMutatedChainsNeverCrash) {
    rcf::fuzzer f;
    std::mt19937_64 rng(20091204);  // deterministic
    constexpr std::size_t inputs = 200000;
    constexpr std::size_t seed_count = sizeof rcf::seeds / sizeof rcf::seeds[0];
    for (std::size_t i = 0; i < inputs; ++i) {
        std::string text;
        switch (i % 4) {
            case 0:
                text = rcf::token_soup(rng);
                break;
            case 1: {
                text.resize(rng() % 40);
                for (char& c : text) c = static_cast<char>(rng() % 256);
                break;
            }
            default:
                text = rcf::mutate(rcf::seeds[rng() % seed_count], rng);
                break;
        }
        f.check(text);
        if (::testing::Test::HasFatalFailure()) return;
    }
    // Every path was exercised.
    EXPECT_GT(f.syntax_errors, 1000u);
    EXPECT_GT(f.parsed_ok, 1000u);
    EXPECT_GT(f.bind_errors, 1000u);
    EXPECT_GT(f.bound_ok, 1000u);
    // Very long and very deep inputs are refused cleanly.
    std::string deep;
    for (int i = 0; i < 100; ++i) deep += "deref|";
    deep += "length";
    f.check(deep);
    f.check(std::string(10000, '('));
    f.check(std::string(5000, ' '));
}
