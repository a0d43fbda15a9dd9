// Parameter spec text, signature parsing/normalization and matching,
// including the patent's Tables 1/2 hierarchy matrix (US 9,129,056 ¶0126–0132).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "loupe/params/detail/param_spec.hpp"
#include "loupe/params/detail/signature_matcher.hpp"
#include "loupe/params/detail/signature_parser.hpp"

namespace {

using loupe::match_mode;
using loupe::detail::class_graph;
using loupe::detail::free_function_matches;
using loupe::detail::method_part_matches;
using loupe::detail::normalize_type;
using loupe::detail::param_spec;
using loupe::detail::param_spec_error;
using loupe::detail::parse_param_specs;
using loupe::detail::parse_signature;
using loupe::detail::receiver_matches;
using loupe::detail::signature;
using loupe::detail::signature_error;

// ---------------------------------------------------------------------------
// Signatures

TEST(ParamSignature, ParsesSiteAndSelectorForms) {
    signature s = parse_signature("shop::Cart::add(Item const&,int)");
    EXPECT_EQ(s.scope, (std::vector<std::string>{"shop", "Cart"}));
    EXPECT_EQ(s.name, "add");
    EXPECT_TRUE(s.has_params);
    EXPECT_EQ(s.params, (std::vector<std::string>{"Item const&", "int"}));
    EXPECT_EQ(s.return_type, "");
    EXPECT_EQ(s.qualified_class(), "shop::Cart");
    EXPECT_EQ(s.qualified_name(), "shop::Cart::add");
    EXPECT_EQ(s.text, "shop::Cart::add(Item const&,int)");

    s = parse_signature("shop::price(Order const*)double");  // patent-style return type
    EXPECT_EQ(s.qualified_name(), "shop::price");
    EXPECT_EQ(s.return_type, "double");

    s = parse_signature("void shop::log(std::string_view)");  // C++-style return type
    EXPECT_EQ(s.qualified_name(), "shop::log");
    EXPECT_EQ(s.params, (std::vector<std::string>{"std::string_view"}));
    EXPECT_EQ(s.return_type, "void");

    s = parse_signature("auto shop::f(int) -> long int");
    EXPECT_EQ(s.return_type, "long");
    EXPECT_EQ(parse_signature("auto shop::f(int)").return_type, "");

    s = parse_signature("shop.Cart.add(Item const&, int)");  // patent-style dots
    EXPECT_EQ(s.qualified_name(), "shop::Cart::add");

    s = parse_signature("example.Arrays.run(example.Value[ ])example.Result");
    EXPECT_EQ(s.params, (std::vector<std::string>{"example::Value[]"}));
    EXPECT_EQ(s.return_type, "example::Result");

    s = parse_signature("shop::Cart::add");  // no parentheses: any overload
    EXPECT_FALSE(s.has_params);
    EXPECT_EQ(s.name, "add");

    s = parse_signature("shop::Cart::total() const noexcept override");
    EXPECT_EQ(s.qualifiers, "const");
    EXPECT_EQ(s.return_type, "");
    s = parse_signature("shop::Cart::total()const Order*");  // cv + type = return type
    EXPECT_EQ(s.qualifiers, "");
    EXPECT_EQ(s.return_type, "Order const*");

    EXPECT_EQ(parse_signature("Cart::operator()(int)").name, "operator()");
    EXPECT_EQ(parse_signature("Cart::operator<<(std::ostream&)").name, "operator<<");
    EXPECT_EQ(parse_signature("Cart::operator bool() const").name, "operator bool");
    EXPECT_EQ(parse_signature("Cart::~Cart()").name, "~Cart");
    EXPECT_EQ(parse_signature("shop::max<int>(int,int)int").name, "max<int>");
    EXPECT_EQ(parse_signature("shop::Box<std::__cxx11::string>::get()").qualified_class(), "shop::Box<std::string>");
    EXPECT_TRUE(parse_signature("f(void)").params.empty());
    EXPECT_EQ(parse_signature("f(const char*, ...)").params, (std::vector<std::string>{"char const*", "..."}));
    EXPECT_EQ(parse_signature("f(Item const& item, int qty)").params, (std::vector<std::string>{"Item const&", "int"}));
}

TEST(ParamSignature, CanonicalTextParsesBack) {
    for (const char* text :
         {"shop::Cart::add(Item const&,int)", "void shop::log(std::string_view)",
          "std::vector<int> const& shop::Cart::items() const", "shop::Cart::add", "int shop::Cart::add", "f()&&",
          "f() const -> int", "f()const Order*", "Cart::operator bool()", "g(void (*)(int), int Cart::*)char const*"}) {
        const signature a = parse_signature(text);
        const signature b = parse_signature(a.canonical());
        EXPECT_EQ(a.canonical(), b.canonical()) << text;
        EXPECT_EQ(a.scope, b.scope) << text;
        EXPECT_EQ(a.name, b.name) << text;
        EXPECT_EQ(a.has_params, b.has_params) << text;
        EXPECT_EQ(a.params, b.params) << text;
        EXPECT_EQ(a.return_type, b.return_type) << text;
        EXPECT_EQ(a.qualifiers, b.qualifiers) << text;
    }
}

TEST(ParamSignature, NormalizesTypeSpellings) {
    struct same {
        const char* a;
        const char* b;
    };
    for (const same& c : std::vector<same>{
             {"const T&", "T const &"},
             {"const T*", "T const*"},
             {"const char * const *", "char const* const*"},
             {"volatile const int*", "int const volatile *"},
             {"std::vector<std::vector<int> >", "std::vector<std::vector<int>>"},
             {"std::map< int , std::string >", "std::map<int,std::string>"},
             {"std::__cxx11::string", "std::string"},
             {"std::__1::string", "std::string"},
             {"::std::string", "std::string"},
             {"std::basic_string<char>", "std::string"},
             {"std::basic_string<char, std::char_traits<char>>", "std::string"},
             {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&",
              "const std::string&"},
             {"std::basic_string_view<char>", "std::string_view"},
             {"std::basic_string<wchar_t>", "std::wstring"},
             {"unsigned", "unsigned int"},
             {"int unsigned", "unsigned int"},
             {"signed", "int"},
             {"signed int", "int"},
             {"short int", "short"},
             {"signed short int", "short"},
             {"unsigned short int", "unsigned short"},
             {"long int", "long"},
             {"long long int", "long long"},
             {"unsigned long long int", "long long unsigned"},
             {"long double", "double long"},
             {"struct Item const&", "Item const&"},
             {"shop.Item", "shop::Item"},
             {"const int", "int"},      // top-level cv of a parameter
             {"char* const", "char*"},  // top-level cv of a parameter
             {"void (*)(const int&)", "void(*)(int const&)"},
             {"std::function<void (int)>", "std::function<void(int)>"},
             {"int Cart::* const", "int Cart::*"},
         }) {
        EXPECT_EQ(normalize_type(c.a), normalize_type(c.b)) << c.a << " vs " << c.b;
    }
    EXPECT_EQ(normalize_type("const T&"), "T const&");
    EXPECT_EQ(normalize_type("const char * const *"), "char const* const*");
    EXPECT_EQ(normalize_type("unsigned"), "unsigned int");
    EXPECT_EQ(normalize_type("std::vector<std::pair<int, const char*> > const&"),
              "std::vector<std::pair<int,char const*>> const&");
    EXPECT_EQ(normalize_type("const int", false), "int const");  // return types keep cv

    // Distinct types stay distinct.
    EXPECT_NE(normalize_type("char"), normalize_type("signed char"));
    EXPECT_NE(normalize_type("char"), normalize_type("unsigned char"));
    EXPECT_NE(normalize_type("T&"), normalize_type("T&&"));
    EXPECT_NE(normalize_type("T const&"), normalize_type("T&"));
    EXPECT_NE(normalize_type("T*"), normalize_type("T[]"));
    EXPECT_NE(normalize_type("long"), normalize_type("long long"));
}

TEST(ParamSignature, ReportsErrorsWithOffsets) {
    struct bad {
        const char* text;
        std::size_t offset;
    };
    for (const bad& b : std::vector<bad>{
             {"", 0},
             {"shop::add(int", 13},
             {"shop::add(int,)", 14},
             {"(int)", 0},
             {"int", 3},
             {"shop::add(int) extra junk", 21},
             {"f(int)(int)", 6},
             {"f(std::vector<int)", 17},
             {"f(signed unsigned)", 2},
             {"f(long long long)", 2},
             {"void f(int)double", 0},
             {"f() -> ", 7},
             {"f(int x = 1)", 8},
         }) {
        try {
            parse_signature(b.text);
            ADD_FAILURE() << "no error for " << b.text;
        } catch (const signature_error& e) {
            EXPECT_EQ(e.offset, b.offset) << b.text << ": " << e.what();
            EXPECT_FALSE(e.message.empty());
        }
    }
    // Nesting and size are bounded, not crashes.
    std::string deep = "f(";
    for (int i = 0; i < 200; ++i) deep += "A<";
    EXPECT_THROW(parse_signature(deep), signature_error);
    EXPECT_THROW(parse_signature(std::string(10000, 'a')), signature_error);
}

// ---------------------------------------------------------------------------
// Matching: method part and free functions

bool part(const char* spec, const char* site) {
    return method_part_matches(parse_signature(spec), parse_signature(site));
}
bool free_fn(const char* spec, const char* site) {
    return free_function_matches(parse_signature(spec), parse_signature(site));
}

TEST(ParamSignature, UnqualifiedTypeNamesMatchAnyNamespace) {
    EXPECT_TRUE(part("Cart::add(Item const&,int)", "shop::Cart::add(shop::Item const&,int)"));  // ¶0122
    EXPECT_TRUE(part("Cart::add(const Item&, int)", "shop::Cart::add(shop::Item const&,int)"));
    EXPECT_TRUE(part("Cart::add(Item const&,int)", "shop::Cart::add(Item const&,int)"));
    EXPECT_TRUE(part("Cart::add(shop::Item const&,int)", "shop::Cart::add(Item const&,int)"));  // site's short name
    EXPECT_FALSE(part("Cart::add(other::Item const&,int)", "shop::Cart::add(shop::Item const&,int)"));
    EXPECT_FALSE(part("Cart::add(Item&,int)", "shop::Cart::add(Item const&,int)"));
    EXPECT_FALSE(part("Cart::add(Item const&)", "shop::Cart::add(Item const&,int)"));
    EXPECT_FALSE(part("Cart::remove(Item const&,int)", "shop::Cart::add(Item const&,int)"));
    EXPECT_TRUE(part("find(vector<Item> const&)", "shop::find(std::vector<shop::Item> const&)"));
    EXPECT_TRUE(part("f(string)", "f(std::__cxx11::basic_string<char>)"));
    EXPECT_TRUE(part("f(Value[ ])", "f(example.Value[])"));
    EXPECT_TRUE(part("f(std::string)", "f(std::__cxx11::basic_string<char, std::char_traits<char>>)"));
    EXPECT_TRUE(part("f(unsigned)", "f(unsigned int)"));
    EXPECT_TRUE(part("Cart::add", "shop::Cart::add(Item const&,int)"));  // no parentheses: any overload
    EXPECT_TRUE(part("Cart::add()", "shop::Cart::add() const"));         // qualifiers not matched
    EXPECT_TRUE(part("max(int,int)", "shop::max<int>(int,int)"));        // any instantiation
    EXPECT_FALSE(part("max<long>(int,int)", "shop::max<int>(int,int)"));
}

TEST(ParamSignature, ReturnTypeRules) {
    // Omitted in the spec: any (¶0123).
    EXPECT_TRUE(part("Arrays.run(Value[ ])", "example.Arrays.run(example.Value[ ])example.Result"));
    // Given: must match, unqualified names in any namespace (¶0122).
    EXPECT_TRUE(part("Arrays.run(Value[ ])Result", "example.Arrays.run(example.Value[ ])another.pkg.Result"));
    EXPECT_TRUE(part("Arrays.run(Value[ ])Result", "example.Arrays.run(example.Value[ ])example.Result"));
    EXPECT_TRUE(part("Arrays.run(Value[ ])Result", "example.Arrays.run(Value[ ])Result"));
    EXPECT_FALSE(part("Arrays.run(Value[ ])Other", "example.Arrays.run(example.Value[ ])example.Result"));
    EXPECT_TRUE(part("double price(const Order*)", "shop::price(Order const*)double"));
    EXPECT_FALSE(part("price(Order const*)int", "double shop::price(Order const*)"));
    // Site without a return type: cannot be restricted by one.
    EXPECT_TRUE(part("price(Order const*)int", "shop::price(Order const*)"));
}

TEST(ParamSignature, FreeFunctionNames) {
    EXPECT_TRUE(free_fn("price", "shop::price(Order const*)double"));
    EXPECT_TRUE(free_fn("price(Order const*)", "shop::price(Order const*)double"));
    EXPECT_TRUE(free_fn("shop::price", "shop::price(Order const*)double"));
    EXPECT_TRUE(free_fn("shop.price", "shop::price(Order const*)double"));
    EXPECT_TRUE(free_fn("detail::price", "shop::detail::price(Order const*)"));
    EXPECT_FALSE(free_fn("other::price", "shop::price(Order const*)"));
    EXPECT_FALSE(free_fn("hop::price", "shop::price(Order const*)"));  // only at a '::' boundary
    EXPECT_FALSE(free_fn("shop::price", "price(Order const*)"));
    EXPECT_FALSE(free_fn("cost", "shop::price(Order const*)"));
    EXPECT_FALSE(free_fn("price(Order*)", "shop::price(Order const*)"));
}

// ---------------------------------------------------------------------------
// Receiver matching: Tables 1 and 2

struct call {
    const char* receiver;
    const char* declaring;
};

std::set<int> traced(const class_graph& g, const char* spec, match_mode mode, const std::vector<call>& calls) {
    const signature s = parse_signature(spec);
    std::set<int> out;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const signature site = parse_signature(std::string(calls[i].declaring) + "::run(Value)");
        if (!method_part_matches(s, site)) continue;
        const auto r = receiver_matches(s, mode, calls[i].receiver, calls[i].declaring, g);
        EXPECT_TRUE(r.error.empty()) << r.error;
        if (r.matches) out.insert(static_cast<int>(i) + 1);
    }
    return out;
}

TEST(ParamSignature, PatentTables1And2) {
    // class Arrays { run(Value) }; class Arrays2 : Arrays {}; class Arrays3 : Arrays2 { run(Value) }
    class_graph g;
    g.add_base("Arrays2", "Arrays");
    g.add_base("Arrays3", "Arrays2");
    g.add_method("Arrays", "run");
    g.add_method("Arrays3", "run");
    const std::vector<call> calls = {{"Arrays", "Arrays"}, {"Arrays2", "Arrays"}, {"Arrays3", "Arrays3"}};

    EXPECT_EQ(traced(g, "Arrays.run(Value)", match_mode::exact, calls), (std::set<int>{1}));
    EXPECT_EQ(traced(g, "Arrays.run(Value)", match_mode::inherited, calls), (std::set<int>{1, 2}));
    EXPECT_EQ(traced(g, "Arrays.run(Value)", match_mode::subclasses, calls), (std::set<int>{1, 2, 3}));
    EXPECT_EQ(traced(g, "Arrays2.run(Value)", match_mode::exact, calls), (std::set<int>{2}));
    EXPECT_EQ(traced(g, "Arrays2.run(Value)", match_mode::inherited, calls), (std::set<int>{2}));
    EXPECT_EQ(traced(g, "Arrays2.run(Value)", match_mode::subclasses, calls), (std::set<int>{2, 3}));
}

TEST(ParamSignature, PatentTablesWithQualifiedNames) {
    // The same matrix with canonical names in a namespace and unqualified specs.
    class_graph g;
    g.add_base("example::Arrays2", "example::Arrays");
    g.add_base("example::Arrays3", "example::Arrays2");
    g.add_method("example::Arrays", "run");
    g.add_method("example::Arrays3", "run");
    const std::vector<call> calls = {{"example::Arrays", "example::Arrays"},
                                     {"example::Arrays2", "example::Arrays"},
                                     {"example::Arrays3", "example::Arrays3"}};
    EXPECT_EQ(traced(g, "Arrays.run(Value)", match_mode::inherited, calls), (std::set<int>{1, 2}));
    EXPECT_EQ(traced(g, "example.Arrays2.run(Value)", match_mode::subclasses, calls), (std::set<int>{2, 3}));
    EXPECT_EQ(traced(g, "example::Arrays2::run(Value)", match_mode::exact, calls), (std::set<int>{2}));
    EXPECT_EQ(traced(g, "other::Arrays.run(Value)", match_mode::subclasses, calls), (std::set<int>{}));
    EXPECT_EQ(traced(g, "rrays.run(Value)", match_mode::subclasses, calls), (std::set<int>{}));  // '::' boundary
}

TEST(ParamSignature, ReceiverEdgeCases) {
    class_graph g;
    g.add_base("B", "A");
    g.add_method("A", "f");
    const signature no_class = parse_signature("f()");
    EXPECT_TRUE(receiver_matches(no_class, match_mode::exact, "Anything", "Anything", g).matches);
    const signature a = parse_signature("A::f()");
    // Unknown receiver (no RTTI): the declaring class stands in for it.
    EXPECT_TRUE(receiver_matches(a, match_mode::exact, "", "A", g).matches);
    EXPECT_FALSE(receiver_matches(a, match_mode::exact, "", "B", g).matches);
    // A receiver unknown to the graph only matches itself.
    EXPECT_FALSE(receiver_matches(a, match_mode::subclasses, "Z", "Z", g).matches);
    // Nobody from C' up declares m: inherited does not match.
    class_graph h;
    h.add_base("D2", "C");
    h.add_method("D2", "f");
    EXPECT_FALSE(receiver_matches(parse_signature("C::f()"), match_mode::inherited, "D2", "D2", h).matches);
    EXPECT_TRUE(receiver_matches(parse_signature("C::f()"), match_mode::subclasses, "D2", "D2", h).matches);
    // Cycles in a broken graph terminate.
    class_graph cyc;
    cyc.add_base("X", "Y");
    cyc.add_base("Y", "X");
    EXPECT_FALSE(receiver_matches(a, match_mode::inherited, "X", "X", cyc).matches);
    // Site written with a short class name, canonical receiver.
    class_graph s;
    s.add_base("shop::Special", "shop::Cart");
    s.add_method("shop::Cart", "add");
    EXPECT_TRUE(
        receiver_matches(parse_signature("Cart::add"), match_mode::inherited, "shop::Special", "Cart", s).matches);
}

TEST(ParamSignature, AmbiguousInheritedResolveIsAnError) {
    // class L { f }; class R { f }; class M : L, R {}; spec M::f inherited.
    class_graph g;
    g.add_base("M", "L");
    g.add_base("M", "R");
    g.add_method("L", "f");
    g.add_method("R", "f");
    const auto r = receiver_matches(parse_signature("M::f()"), match_mode::inherited, "M", "L", g);
    EXPECT_FALSE(r.matches);
    EXPECT_NE(r.error.find("ambiguous"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("'L'"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("'R'"), std::string::npos) << r.error;
    // Subclasses mode does not resolve, so no error.
    const auto s = receiver_matches(parse_signature("M::f()"), match_mode::subclasses, "M", "L", g);
    EXPECT_TRUE(s.matches);
    EXPECT_TRUE(s.error.empty());
    // A nearer declaration wins (breadth-first): M2 : L, R2; R2 : R.
    class_graph h;
    h.add_base("M2", "L");
    h.add_base("M2", "R2");
    h.add_base("R2", "R");
    h.add_method("L", "f");
    h.add_method("R", "f");
    const auto t = receiver_matches(parse_signature("M2::f()"), match_mode::inherited, "M2", "L", h);
    EXPECT_TRUE(t.matches) << t.error;
    // Diamond through a shared base: one class, not ambiguous.
    class_graph d;
    d.add_base("Bottom", "Left");
    d.add_base("Bottom", "Right");
    d.add_base("Left", "Top");
    d.add_base("Right", "Top");
    d.add_method("Top", "f");
    const auto u = receiver_matches(parse_signature("Bottom::f()"), match_mode::inherited, "Bottom", "Top", d);
    EXPECT_TRUE(u.matches) << u.error;
}

// ---------------------------------------------------------------------------
// Spec text

TEST(ParamSpec, ParsesAllKeys) {
    const auto specs = parse_param_specs(
        "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16); match=exact; "
        "data=entry,exit,wall,cpu; name=sku\n");
    ASSERT_EQ(specs.size(), 1u);
    const param_spec& s = specs[0];
    EXPECT_EQ(s.line, 1u);
    EXPECT_EQ(s.method.qualified_name(), "shop::Cart::add");
    EXPECT_EQ(s.method.params, (std::vector<std::string>{"Item const&", "int"}));
    EXPECT_EQ(s.method_column, 8u);
    EXPECT_EQ(s.param, 1);
    EXPECT_EQ(s.chain, "field(sku)|truncate(16)");
    EXPECT_EQ(s.chain_column, 57u);
    EXPECT_EQ(s.compiled_chain, "");
    EXPECT_EQ(s.match, match_mode::exact);
    EXPECT_TRUE(s.data_entry && s.data_exit && s.data_wall && s.data_cpu);
    EXPECT_EQ(s.name, "sku");
    EXPECT_EQ(s.text,
              "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16); match=exact; "
              "data=entry,exit,wall,cpu; name=sku");
}

TEST(ParamSpec, DefaultsCommentsAndLayout) {
    const auto specs = parse_param_specs(
        "# a comment line\n"
        "\n"
        "   \t\n"
        "  method = shop::price(Order const*)double ;param=1  # trailing comment\r\n"
        "method=shop::Repo::find(Query); param=0; chain=id;\n"
        "method=shop::Cart::add; chain=@sku\n"
        "method=shop::Cart::add(Item const&,int); data=cpu; match=inherited\n"
        "method=f; param=2; chain=; match=subclasses; data= wall , entry ");
    ASSERT_EQ(specs.size(), 5u);

    EXPECT_EQ(specs[0].line, 4u);
    EXPECT_EQ(specs[0].text, "method = shop::price(Order const*)double ;param=1");
    EXPECT_EQ(specs[0].method.return_type, "double");
    EXPECT_EQ(specs[0].param, 1);
    EXPECT_EQ(specs[0].chain, "");
    EXPECT_EQ(specs[0].chain_column, 0u);
    EXPECT_EQ(specs[0].match, match_mode::subclasses);
    EXPECT_TRUE(specs[0].data_entry && specs[0].data_exit && specs[0].data_wall);
    EXPECT_FALSE(specs[0].data_cpu);
    EXPECT_EQ(specs[0].name, "param1");

    EXPECT_EQ(specs[1].param, 0);
    EXPECT_EQ(specs[1].chain, "id");
    EXPECT_EQ(specs[1].name, "param0.id");

    EXPECT_EQ(specs[2].param, -1);
    EXPECT_EQ(specs[2].compiled_chain, "sku");
    EXPECT_EQ(specs[2].chain, "");
    EXPECT_EQ(specs[2].chain_column, 31u);
    EXPECT_FALSE(specs[2].method.has_params);
    EXPECT_EQ(specs[2].name, "sku");

    EXPECT_EQ(specs[3].param, -1);  // timing only
    EXPECT_EQ(specs[3].name, "");
    EXPECT_EQ(specs[3].match, match_mode::inherited);
    EXPECT_TRUE(specs[3].data_cpu);
    EXPECT_FALSE(specs[3].data_entry || specs[3].data_exit || specs[3].data_wall);

    EXPECT_EQ(specs[4].line, 8u);
    EXPECT_EQ(specs[4].chain, "");  // the empty chain: the parameter itself
    EXPECT_EQ(specs[4].name, "param2");
    EXPECT_TRUE(specs[4].data_wall && specs[4].data_entry);
    EXPECT_FALSE(specs[4].data_exit || specs[4].data_cpu);

    EXPECT_TRUE(parse_param_specs("").empty());
    EXPECT_TRUE(parse_param_specs("\n\n# x\n").empty());
}

TEST(ParamSpec, SemicolonsInsideParenthesesStayInTheChain) {
    const auto specs = parse_param_specs("method=f(int); param=1; chain=call(a;b)|x(\"q;)\"); name=n");
    ASSERT_EQ(specs.size(), 1u);
    EXPECT_EQ(specs[0].chain, "call(a;b)|x(\"q;)\")");
    EXPECT_EQ(specs[0].name, "n");
}

struct bad_spec {
    const char* text;
    std::size_t line;
    std::size_t column;
    const char* fragment;  // in the message
};

TEST(ParamSpec, ErrorsNameLineAndColumn) {
    for (const bad_spec& b : std::vector<bad_spec>{
             {"method=f; param=1\nmethod=shop::Cart::add(Item); parm=2", 2, 31, "unknown key 'parm'"},
             {"method=f; param=1; param=2", 1, 20, "duplicate key 'param'"},
             {"method=f; match=exact; match=exact", 1, 24, "duplicate key 'match'"},
             {"param=1; chain=x", 1, 1, "missing method="},
             {"  param=1", 1, 3, "missing method="},
             {"method=f; param=256", 1, 17, "0 to 255"},
             {"method=f; param=-1", 1, 17, "0 to 255"},
             {"method=f; param=1x", 1, 17, "0 to 255"},
             {"method=f; param=", 1, 17, "0 to 255"},
             {"method=f; match=exactly", 1, 17, "exact, inherited or subclasses"},
             {"method=f; data=entry,stack", 1, 22, "entry, exit, wall or cpu"},
             {"method=f; data=entry,,exit", 1, 22, "found nothing"},
             {"method=f; data=", 1, 16, "found nothing"},
             {"method=f; param=1; chain=field(sku", 1, 31, "unterminated '('"},
             {"method=f(int; param=1", 1, 9, "unterminated '('"},
             {"method=f); param=1", 1, 9, "unmatched ')'"},
             {"method=f; param=1; chain=x(\"abc)", 1, 28, "unterminated string"},
             {"method=f; chain=field(sku)", 1, 11, "chain= needs param="},
             {"method=f; chain=@", 1, 18, "compile-time chain name"},
             {"method=f; chain=@sku|truncate(4)", 1, 21, "compile-time chain name"},
             {"method=f; name=9lives", 1, 16, "name: expected a label"},
             {"method=f; name=a b", 1, 17, "name: expected letters"},
             {"method=; param=1", 1, 8, "expected a method signature"},
             {"method=shop::add(int,); param=1", 1, 22, "method: expected a parameter type"},
             {"method=shop::add(int) junk x", 1, 28, "method: expected the end"},
             {"method=f; bogus", 1, 11, "expected key=value"},
             {"method=f; =1", 1, 11, "expected a key"},
             {"\n\n  method=f ; param = 300", 3, 22, "0 to 255"},
         }) {
        try {
            parse_param_specs(b.text);
            ADD_FAILURE() << "no error for: " << b.text;
        } catch (const param_spec_error& e) {
            EXPECT_EQ(e.line, b.line) << b.text << " -> " << e.what();
            EXPECT_EQ(e.column, b.column) << b.text << " -> " << e.what();
            EXPECT_NE(std::string(e.what()).find(b.fragment), std::string::npos) << b.text << " -> " << e.what();
            const std::string prefix =
                "params line " + std::to_string(b.line) + ", column " + std::to_string(b.column) + ": ";
            EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
        }
    }
}

TEST(ParamSpec, ErrorMessageNamesInputPositionAndExpectation) {
    try {
        parse_param_specs("method=f\nmethod=shop::Cart::add(Item); parm=2");
        FAIL();
    } catch (const param_spec_error& e) {
        EXPECT_STREQ(e.what(),
                     "params line 2, column 31: unknown key 'parm' (expected method, param, chain, match, data, "
                     "name)");
    }
    // param_spec_error is a loupe::error (start_session's contract) and a std::exception.
    EXPECT_THROW(parse_param_specs("bad"), loupe::error);
    EXPECT_THROW(parse_param_specs("bad"), std::exception);
}

}  // namespace
