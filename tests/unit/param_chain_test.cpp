// Compile-time modifier chains (params/chain.hpp): each modifier's success and
// error outcomes, the first-failing-modifier rule, unwrapping, typed values.
#include "loupe/params/chain.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

namespace shop {

struct Line {
    std::string sku;
    int qty = 0;
};

struct Order {
    std::vector<Line> lines;
    std::array<int, 3> codes{};
    int raw[2] = {7, 8};
    const char* note = nullptr;
    const Line* first = nullptr;
    std::unique_ptr<Line> owned;
    std::shared_ptr<Line> shared;
    std::optional<Line> maybe;
    std::optional<int> maybe_count;
    const int* count_ptr = nullptr;
};

struct Base {
    virtual ~Base() = default;
    int base_value = 1;
};
struct Special : Base {
    std::string detail = "special";
};
struct Other : Base {};
struct Plain {
    int v = 3;
};

class Customer {
public:
    explicit Customer(std::string name) : name_(std::move(name)) {}
    const std::string& name() const { return name_; }
    std::string upper() const {  // returns a temporary: must live while the rest of the chain runs
        std::string s = name_;
        for (auto& ch : s) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
        return s;
    }
    int fails() const { throw std::runtime_error("boom"); }
    int id_noexcept() const noexcept { return 42; }
    const Customer* self_ptr() const { return this; }
    int& counter() { return counter_; }              // non-const: call() must not accept it
    const int& counter() const { return counter_; }  // the const overload is picked

private:
    std::string name_;
    int counter_ = 5;
};

struct Money {
    std::int64_t cents = 0;
};
std::ostream& operator<<(std::ostream& os, const Money& m) {
    return os << m.cents / 100 << '.' << m.cents % 100 << " EUR";
}

struct Big {
    std::size_t n;
};
std::ostream& operator<<(std::ostream& os, const Big& b) {
    for (std::size_t i = 0; i < b.n; ++i) os << 'x';
    return os;
}

struct Tagged {
    int v = 0;
};
struct Priced {
    std::size_t digits;
};
std::ostream& operator<<(std::ostream& os, const Priced& p) {
    return os << std::string(p.digits, '9') << "\xE2\x82\xAC";
}

std::string to_string(const Tagged& t) { return "tag#" + std::to_string(t.v); }

struct WithId {
    std::uint64_t id = 0;
};
std::uint64_t loupe_object_id(const WithId& w) { return w.id; }

enum class Color : std::uint8_t { red = 1, blue = 200 };
enum Signed : int { minus = -4 };

std::size_t twice_size(const std::string& s) { return s.size() * 2; }
int thrower(const std::string&) { throw std::logic_error("no"); }
bool is_null(const Line* p) { return p == nullptr; }

}  // namespace shop

namespace {

using namespace shop;
using loupe::value_kind;

// Evaluates `c` on the given parameters (no receiver) into a fresh writer.
struct result {
    char buffer[64];
    loupe::value_writer writer{buffer, sizeof buffer};
    loupe::param_value v() const { return writer.value(); }
};

template <class Chain, class... P>
void eval(result& r, const Chain& c, P&... p) {
    loupe::evaluate_chain(c, nullptr, std::forward_as_tuple(p...), r.writer);
}

template <class Chain, class Self, class... P>
void eval_on(result& r, const Chain& c, const Self* self, P&... p) {
    loupe::evaluate_chain(c, self, std::forward_as_tuple(p...), r.writer);
}

std::string text(const result& r) { return std::string(r.v().text); }

using loupe::arg;

// --- static properties ----------------------------------------------------------

static constexpr auto kSku = arg<1> | loupe::field(&Line::sku) | loupe::truncate(16);
static constexpr auto kNamed = loupe::named("qty", arg<2> | loupe::field(&Line::qty));
static constexpr auto kSelf = loupe::self | loupe::call(&Customer::name) | loupe::length;

static_assert(loupe::chain_param_v<decltype(kSku)> == 1);
static_assert(loupe::chain_param_v<decltype(kNamed)> == 2);
static_assert(loupe::chain_param_v<decltype(kSelf)> == 0);
static_assert(decltype(kSku)::param() == 1 && decltype(kSku)::size() == 2);
static_assert(loupe::chain_param_v<decltype(loupe::self)> == 0);
static_assert(std::is_same_v<std::remove_const_t<decltype(kSelf)>,
                             decltype(arg<0> | loupe::call(&Customer::name) | loupe::length)>);
static_assert(std::is_same_v<decltype(loupe::named("me", loupe::self)), loupe::named_chain<loupe::chain<0>>>);
static_assert(std::is_trivially_copyable_v<decltype(kSku)>);

TEST(ParamChainStatic, NamedChainKeepsNameAndChain) {
    EXPECT_STREQ(kNamed.name, "qty");
    Line line{"A-1", 9};
    result r;
    eval(r, kNamed, line, line);  // a named chain evaluates like its chain
    EXPECT_EQ(r.v().kind, value_kind::integer);
    EXPECT_EQ(r.v().as_int(), 9);
}

TEST(ParamChainStatic, ZeroArgumentModifiersWithAndWithoutParentheses) {
    constexpr auto a = arg<1> | loupe::length;
    constexpr auto b = arg<1> | loupe::length();
    static_assert(std::is_same_v<decltype(a), decltype(b)>);
    constexpr auto c = arg<1> | loupe::to_string;  // picks the modifier, not to_string(value_kind)
    constexpr auto d = arg<1> | loupe::to_string();
    static_assert(std::is_same_v<decltype(c), decltype(d)>);
    std::string s = "abc";
    result r;
    eval(r, c, s);
    EXPECT_EQ(text(r), "abc");
}

// --- empty chains and typed values ----------------------------------------------------

TEST(ParamChainDirect, EmptyChainOnTraceableArgGivesDirectValue) {
    int i = -3;
    unsigned u = 4000000000u;
    bool b = true;
    std::string s = "hello";
    const char* cs = "c-string";
    result ri, ru, rb, rs, rc;
    eval(ri, arg<1>, i, u, b, s, cs);
    eval(ru, arg<2>, i, u, b, s, cs);
    eval(rb, arg<3>, i, u, b, s, cs);
    eval(rs, arg<4>, i, u, b, s, cs);
    eval(rc, arg<5>, i, u, b, s, cs);
    EXPECT_EQ(ri.v().kind, value_kind::integer);
    EXPECT_EQ(ri.v().as_int(), -3);
    EXPECT_EQ(ru.v().kind, value_kind::unsigned_integer);
    EXPECT_EQ(ru.v().as_uint(), 4000000000u);
    EXPECT_EQ(rb.v().kind, value_kind::boolean);
    EXPECT_TRUE(rb.v().as_bool());
    EXPECT_EQ(rs.v().kind, value_kind::string);
    EXPECT_EQ(text(rs), "hello");
    EXPECT_FALSE(rs.v().truncated);
    EXPECT_EQ(rc.v().kind, value_kind::string);
    EXPECT_EQ(text(rc), "c-string");
}

TEST(ParamChainDirect, FloatingPointKeepsNanAndInfinities) {
    double nan = std::numeric_limits<double>::quiet_NaN();
    double inf = std::numeric_limits<double>::infinity();
    float neg = -std::numeric_limits<float>::infinity();
    result rn, ri, rf;
    eval(rn, arg<1>, nan);
    eval(ri, arg<1>, inf);
    eval(rf, arg<1>, neg);
    EXPECT_EQ(rn.v().kind, value_kind::floating);
    EXPECT_TRUE(std::isnan(rn.v().as_double()));
    EXPECT_EQ(ri.v().as_double(), inf);
    EXPECT_EQ(rf.v().as_double(), -inf);
}

TEST(ParamChainDirect, EnumsAreTheirUnderlyingInteger) {
    Color c = Color::blue;
    Signed s = minus;
    result rc, rs;
    eval(rc, arg<1>, c);
    eval(rs, arg<1>, s);
    EXPECT_EQ(rc.v().kind, value_kind::unsigned_integer);
    EXPECT_EQ(rc.v().as_uint(), 200u);
    EXPECT_EQ(rs.v().kind, value_kind::integer);
    EXPECT_EQ(rs.v().as_int(), -4);
}

TEST(ParamChainDirect, NullFinalValuesGiveNullValue) {
    const char* cs = nullptr;
    const int* ip = nullptr;
    std::optional<int> none;
    std::unique_ptr<int> up;
    result rc, ri, ro, ru;
    eval(rc, arg<1>, cs);
    eval(ri, arg<1>, ip);
    eval(ro, arg<1>, none);
    eval(ru, arg<1>, up);
    EXPECT_EQ(rc.v().kind, value_kind::null_value);
    EXPECT_EQ(ri.v().kind, value_kind::null_value);
    EXPECT_EQ(ro.v().kind, value_kind::null_value);
    EXPECT_EQ(ru.v().kind, value_kind::null_value);
}

TEST(ParamChainDirect, PointersAndWrappersToTraceableValuesAreUnwrappedAtTheEnd) {
    int x = 12;
    const int* ip = &x;
    std::optional<int> some = 5;
    auto sp = std::make_shared<std::string>("shared");
    std::reference_wrapper<int> ref = std::ref(x);
    result ri, ro, rs, rr;
    eval(ri, arg<1>, ip);
    eval(ro, arg<1>, some);
    eval(rs, arg<1>, sp);
    eval(rr, arg<1>, ref);
    EXPECT_EQ(ri.v().as_int(), 12);
    EXPECT_EQ(ro.v().as_int(), 5);
    EXPECT_EQ(text(rs), "shared");
    EXPECT_EQ(rr.v().as_int(), 12);
}

TEST(ParamChainDirect, NonConstParametersAndSecondArgument) {
    Line line{"S", 3};
    int n = 10;
    result r;
    eval(r, arg<2> | loupe::apply(+[](int v) { return v + 1; }), line, n);
    EXPECT_EQ(r.v().as_int(), 11);
}

// --- length -----------------------------------------------------------------------

TEST(ParamChainLength, ContainersArraysAndStrings) {
    std::vector<int> v{1, 2, 3};
    std::array<int, 4> a{};
    int raw[5] = {};
    std::string s = "héllo";  // 6 bytes
    const char* cs = "four";
    char buf[16] = "abc";
    result rv, ra, rr, rs, rc, rb;
    eval(rv, arg<1> | loupe::length, v);
    eval(ra, arg<1> | loupe::length, a);
    eval(rr, arg<1> | loupe::length, raw);
    eval(rs, arg<1> | loupe::length, s);
    eval(rc, arg<1> | loupe::length, cs);
    eval(rb, arg<1> | loupe::length, buf);
    EXPECT_EQ(rv.v().kind, value_kind::unsigned_integer);
    EXPECT_EQ(rv.v().as_uint(), 3u);
    EXPECT_EQ(ra.v().as_uint(), 4u);
    EXPECT_EQ(rr.v().as_uint(), 5u);
    EXPECT_EQ(rs.v().as_uint(), 6u);
    EXPECT_EQ(rc.v().as_uint(), 4u);
    EXPECT_EQ(rb.v().as_uint(), 3u);  // up to the NUL, like the traced text
}

TEST(ParamChainLength, NullInputGivesNullInCall) {
    const std::vector<int>* pv = nullptr;
    const char* cs = nullptr;
    std::optional<std::string> none;
    result rv, rc, ro;
    eval(rv, arg<1> | loupe::length, pv);
    eval(rc, arg<1> | loupe::length, cs);
    eval(ro, arg<1> | loupe::length, none);
    EXPECT_EQ(rv.v().kind, value_kind::null_in_call);
    EXPECT_EQ(rc.v().kind, value_kind::null_in_call);
    EXPECT_EQ(ro.v().kind, value_kind::null_in_call);
}

// --- at -----------------------------------------------------------------------------

TEST(ParamChainAt, FrontAndBackIndices) {
    std::vector<int> v{10, 20, 30};
    result r0, r1, rm1, rm2, rm3;
    eval(r0, arg<1> | loupe::at(0), v);
    eval(r1, arg<1> | loupe::at(1), v);
    eval(rm1, arg<1> | loupe::at(-1), v);
    eval(rm2, arg<1> | loupe::array_element(-2), v);
    eval(rm3, arg<1> | loupe::at(-3), v);
    EXPECT_EQ(r0.v().as_int(), 10);
    EXPECT_EQ(r1.v().as_int(), 20);
    EXPECT_EQ(rm1.v().as_int(), 30);
    EXPECT_EQ(rm2.v().as_int(), 20);
    EXPECT_EQ(rm3.v().as_int(), 10);
}

TEST(ParamChainAt, OutOfRangeGivesInvalidIndex) {
    std::vector<int> v{10, 20, 30};
    std::vector<int> empty;
    result r3, rm4, rmin, rmax, rempty;
    eval(r3, arg<1> | loupe::at(3), v);
    eval(rm4, arg<1> | loupe::at(-4), v);
    eval(rmin, arg<1> | loupe::at(std::numeric_limits<std::int64_t>::min()), v);
    eval(rmax, arg<1> | loupe::at(std::numeric_limits<std::int64_t>::max()), v);
    eval(rempty, arg<1> | loupe::at(-1), empty);
    EXPECT_EQ(r3.v().kind, value_kind::invalid_index);
    EXPECT_EQ(rm4.v().kind, value_kind::invalid_index);
    EXPECT_EQ(rmin.v().kind, value_kind::invalid_index);
    EXPECT_EQ(rmax.v().kind, value_kind::invalid_index);
    EXPECT_EQ(rempty.v().kind, value_kind::invalid_index);
}

TEST(ParamChainAt, ArraysStringsAndNull) {
    std::array<int, 3> a{1, 2, 3};
    int raw[2] = {7, 8};
    std::string s = "xyz";
    const char* cs = "abc";
    const std::vector<int>* null_vec = nullptr;
    result ra, rr, rs, rc, rn;
    eval(ra, arg<1> | loupe::at(-1), a);
    eval(rr, arg<1> | loupe::at(1), raw);
    eval(rs, arg<1> | loupe::at(0), s);
    eval(rc, arg<1> | loupe::at(-1), cs);
    eval(rn, arg<1> | loupe::at(0), null_vec);
    EXPECT_EQ(ra.v().as_int(), 3);
    EXPECT_EQ(rr.v().as_int(), 8);
    EXPECT_EQ(rs.v().as_int(), 'x');
    EXPECT_EQ(rc.v().as_int(), 'c');
    EXPECT_EQ(rn.v().kind, value_kind::null_in_call);
}

TEST(ParamChainAt, ElementThenField) {
    Order o;
    o.lines = {{"A", 1}, {"B", 2}, {"C", 3}};
    result r;
    eval(r, arg<1> | loupe::field(&Order::lines) | loupe::at(-1) | loupe::field(&Line::qty), o);
    EXPECT_EQ(r.v().as_int(), 3);
}

// --- type_of ----------------------------------------------------------------------------

TEST(ParamChainTypeOf, DynamicTypeOfPolymorphicObjects) {
    Special special;
    const Base* as_base = &special;
    Base base;
    result rs, rb;
    eval(rs, arg<1> | loupe::type_of, as_base);
    eval(rb, arg<1> | loupe::class_, base);
    EXPECT_EQ(rs.v().kind, value_kind::type_name);
    EXPECT_EQ(text(rs), "shop::Special");
    EXPECT_EQ(text(rb), "shop::Base");
}

TEST(ParamChainTypeOf, StaticTypeOfOtherObjectsAndCachedNames) {
    Plain p;
    result r1, r2;
    eval(r1, arg<1> | loupe::type_of, p);
    eval(r2, arg<1> | loupe::type_of, p);
    EXPECT_EQ(text(r1), "shop::Plain");
    EXPECT_EQ(text(r2), "shop::Plain");
    // The cache hands out the same storage each time (no per-call allocation).
    EXPECT_EQ(loupe::detail::cached_type_name(typeid(Plain)).data(),
              loupe::detail::cached_type_name(typeid(Plain)).data());
}

TEST(ParamChainTypeOf, NullGivesNullInCall) {
    const Base* none = nullptr;
    result r;
    eval(r, arg<1> | loupe::type_of, none);
    EXPECT_EQ(r.v().kind, value_kind::null_in_call);
}

// --- call ------------------------------------------------------------------------------

TEST(ParamChainCall, GetterResultsIncludingTemporaries) {
    Customer c("ada");
    result rn, ru, rl, rid, rc;
    eval(rn, arg<1> | loupe::call(&Customer::name), c);
    eval(ru, arg<1> | loupe::call(&Customer::upper) | loupe::truncate(2), c);
    eval(rl, arg<1> | loupe::instance_method(&Customer::upper) | loupe::length, c);
    eval(rid, arg<1> | loupe::call(&Customer::id_noexcept), c);
    eval(rc, arg<1> | loupe::call(&Customer::counter), c);  // the const overload of an overload pair
    EXPECT_EQ(text(rn), "ada");
    EXPECT_EQ(text(ru), "AD");
    EXPECT_TRUE(ru.v().truncated);
    EXPECT_EQ(rl.v().as_uint(), 3u);
    EXPECT_EQ(rid.v().as_int(), 42);
    EXPECT_EQ(rc.v().as_int(), 5);
}

TEST(ParamChainCall, ThrowingGetterGivesExceptionInCall) {
    Customer c("ada");
    result r;
    eval(r, arg<1> | loupe::call(&Customer::fails), c);
    EXPECT_EQ(r.v().kind, value_kind::exception_in_call);
}

TEST(ParamChainCall, NullObjectGivesNullInCall) {
    const Customer* none = nullptr;
    std::shared_ptr<Customer> empty;
    result rp, rs;
    eval(rp, arg<1> | loupe::call(&Customer::name), none);
    eval(rs, arg<1> | loupe::call(&Customer::name), empty);
    EXPECT_EQ(rp.v().kind, value_kind::null_in_call);
    EXPECT_EQ(rs.v().kind, value_kind::null_in_call);
}

TEST(ParamChainCall, OnTheReceiver) {
    Customer c("grace");
    result r, rnull;
    eval_on(r, loupe::self | loupe::call(&Customer::name) | loupe::length, &c);
    eval_on(rnull, loupe::self | loupe::call(&Customer::name), static_cast<const Customer*>(nullptr));
    EXPECT_EQ(r.v().as_uint(), 5u);
    EXPECT_EQ(rnull.v().kind, value_kind::null_in_call);
}

// --- apply -----------------------------------------------------------------------------

TEST(ParamChainApply, CallsTheFunctionWithTheValue) {
    std::string s = "abcd";
    result r;
    eval(r, arg<1> | loupe::apply(&twice_size), s);
    EXPECT_EQ(r.v().kind, value_kind::unsigned_integer);
    EXPECT_EQ(r.v().as_uint(), 8u);
}

TEST(ParamChainApply, ThrowingFunctionGivesExceptionInCall) {
    std::string s = "abcd";
    result r;
    eval(r, arg<1> | loupe::static_method(&thrower), s);
    EXPECT_EQ(r.v().kind, value_kind::exception_in_call);
}

TEST(ParamChainApply, NullPassesThroughToAFunctionTakingAPointer) {
    const Line* none = nullptr;
    Line line;
    const Line* some = &line;
    result rn, rs;
    eval(rn, arg<1> | loupe::apply(&is_null), none);
    eval(rs, arg<1> | loupe::apply(&is_null), some);
    EXPECT_EQ(rn.v().kind, value_kind::boolean);
    EXPECT_TRUE(rn.v().as_bool());
    EXPECT_FALSE(rs.v().as_bool());
}

TEST(ParamChainApply, NullIsUnwrappedForAFunctionTakingTheObject) {
    const std::string* none = nullptr;
    std::string s = "xy";
    const std::string* some = &s;
    result rn, rs;
    eval(rn, arg<1> | loupe::apply(&twice_size), none);
    eval(rs, arg<1> | loupe::apply(&twice_size), some);
    EXPECT_EQ(rn.v().kind, value_kind::null_in_call);
    EXPECT_EQ(rs.v().as_uint(), 4u);
}

// --- field -------------------------------------------------------------------------------

TEST(ParamChainField, ReadsMembersByReference) {
    Order o;
    o.codes = {4, 5, 6};
    result rc, rr;
    eval(rc, arg<1> | loupe::field(&Order::codes) | loupe::at(2), o);
    eval(rr, arg<1> | loupe::field(&Order::raw) | loupe::length, o);
    EXPECT_EQ(rc.v().as_int(), 6);
    EXPECT_EQ(rr.v().as_uint(), 2u);
}

TEST(ParamChainField, NullObjectGivesNullInCall) {
    const Line* none = nullptr;
    result r;
    eval(r, arg<1> | loupe::field(&Line::sku), none);
    EXPECT_EQ(r.v().kind, value_kind::null_in_call);
}

TEST(ParamChainField, NullMemberAtTheEndGivesNullValue) {
    Order o;
    result rn, rp, ro;
    eval(rn, arg<1> | loupe::field(&Order::note), o);
    eval(rp, arg<1> | loupe::field(&Order::count_ptr), o);
    eval(ro, arg<1> | loupe::field(&Order::maybe_count), o);
    EXPECT_EQ(rn.v().kind, value_kind::null_value);
    EXPECT_EQ(rp.v().kind, value_kind::null_value);
    EXPECT_EQ(ro.v().kind, value_kind::null_value);
}

TEST(ParamChainField, BaseClassMemberThroughDerivedObject) {
    Special s;
    s.base_value = 77;
    result r;
    eval(r, arg<1> | loupe::field(&Base::base_value), s);
    EXPECT_EQ(r.v().as_int(), 77);
}

// --- cast ---------------------------------------------------------------------------------

TEST(ParamChainCast, SuccessReachesSubclassFields) {
    Special special;
    special.detail = "deep";
    const Base* b = &special;
    result r;
    eval(r, arg<1> | loupe::cast<Special> | loupe::field(&Special::detail), b);
    EXPECT_EQ(r.v().kind, value_kind::string);
    EXPECT_EQ(text(r), "deep");
}

TEST(ParamChainCast, WrongDynamicTypeGivesCastFailed) {
    Other other;
    const Base& b = other;
    result r;
    eval(r, arg<1> | loupe::cast<Special> | loupe::field(&Special::detail), b);
    EXPECT_EQ(r.v().kind, value_kind::cast_failed);
}

TEST(ParamChainCast, NullPassesThroughSoTheNextModifierReportsNullInCall) {
    const Base* none = nullptr;
    result rnext, rend;
    eval(rnext, arg<1> | loupe::cast<Special> | loupe::field(&Special::detail), none);
    eval(rend, arg<1> | loupe::cast<Special> | loupe::field(&Special::detail) | loupe::length, none);
    EXPECT_EQ(rnext.v().kind, value_kind::null_in_call);
    EXPECT_EQ(rend.v().kind, value_kind::null_in_call);
}

// --- object_id -----------------------------------------------------------------------------

TEST(ParamChainObjectId, StableForTheSameObjectDifferentForTwoLiveObjects) {
    Line a, b;
    const Line* pa = &a;
    result r1, r2, r3;
    eval(r1, arg<1> | loupe::object_id, a);
    eval(r2, arg<1> | loupe::id, pa);
    eval(r3, arg<1> | loupe::object_id, b);
    EXPECT_EQ(r1.v().kind, value_kind::object_id);
    EXPECT_EQ(r1.v().bits, r2.v().bits);
    EXPECT_NE(r1.v().bits, r3.v().bits);
}

TEST(ParamChainObjectId, SameIdThroughABasePointer) {
    Special s;
    const Base* b = &s;
    result rd, rb;
    eval(rd, arg<1> | loupe::object_id, s);
    eval(rb, arg<1> | loupe::object_id, b);
    EXPECT_EQ(rd.v().bits, rb.v().bits);
}

TEST(ParamChainObjectId, AdlHookOverridesAndNullGivesNullInCall) {
    WithId w{1234};
    const WithId* none = nullptr;
    result r, rn;
    eval(r, arg<1> | loupe::object_id, w);
    eval(rn, arg<1> | loupe::object_id, none);
    EXPECT_EQ(r.v().kind, value_kind::object_id);
    EXPECT_EQ(r.v().bits, 1234u);
    EXPECT_EQ(rn.v().kind, value_kind::null_in_call);
}

// --- deref and unwrapping ---------------------------------------------------------------------

TEST(ParamChainDeref, ExplicitUnwrap) {
    int x = 9;
    const int* p = &x;
    const int* none = nullptr;
    std::optional<int> o = 3;
    result rp, rn, ro;
    eval(rp, arg<1> | loupe::deref, p);
    eval(rn, arg<1> | loupe::deref, none);
    eval(ro, arg<1> | loupe::deref(), o);
    EXPECT_EQ(rp.v().as_int(), 9);
    EXPECT_EQ(rn.v().kind, value_kind::null_in_call);
    EXPECT_EQ(ro.v().as_int(), 3);
}

TEST(ParamChainUnwrap, SmartPointersOptionalAndReferenceWrapper) {
    Order o;
    o.owned = std::make_unique<Line>(Line{"U", 1});
    o.shared = std::make_shared<Line>(Line{"S", 2});
    o.maybe = Line{"M", 3};
    Line first{"F", 4};
    o.first = &first;
    Line by_ref{"R", 5};
    auto ref = std::cref(by_ref);
    result ru, rs, rm, rf, rr;
    eval(ru, arg<1> | loupe::field(&Order::owned) | loupe::field(&Line::qty), o);
    eval(rs, arg<1> | loupe::field(&Order::shared) | loupe::field(&Line::qty), o);
    eval(rm, arg<1> | loupe::field(&Order::maybe) | loupe::field(&Line::qty), o);
    eval(rf, arg<1> | loupe::field(&Order::first) | loupe::field(&Line::qty), o);
    eval(rr, arg<1> | loupe::field(&Line::qty), ref);
    EXPECT_EQ(ru.v().as_int(), 1);
    EXPECT_EQ(rs.v().as_int(), 2);
    EXPECT_EQ(rm.v().as_int(), 3);
    EXPECT_EQ(rf.v().as_int(), 4);
    EXPECT_EQ(rr.v().as_int(), 5);
}

TEST(ParamChainUnwrap, NullWrappersGiveNullInCall) {
    Order o;
    result ru, rs, rm, rf;
    eval(ru, arg<1> | loupe::field(&Order::owned) | loupe::field(&Line::qty), o);
    eval(rs, arg<1> | loupe::field(&Order::shared) | loupe::field(&Line::qty), o);
    eval(rm, arg<1> | loupe::field(&Order::maybe) | loupe::field(&Line::qty), o);
    eval(rf, arg<1> | loupe::field(&Order::first) | loupe::field(&Line::qty), o);
    EXPECT_EQ(ru.v().kind, value_kind::null_in_call);
    EXPECT_EQ(rs.v().kind, value_kind::null_in_call);
    EXPECT_EQ(rm.v().kind, value_kind::null_in_call);
    EXPECT_EQ(rf.v().kind, value_kind::null_in_call);
}

TEST(ParamChainUnwrap, PointerToPointerUnwrapsEveryLayer) {
    Line line{"L", 6};
    const Line* p = &line;
    const Line* const* pp = &p;
    const Line* none = nullptr;
    const Line* const* pnone = &none;
    result r, rn;
    eval(r, arg<1> | loupe::field(&Line::qty), pp);
    eval(rn, arg<1> | loupe::field(&Line::qty), pnone);
    EXPECT_EQ(r.v().as_int(), 6);
    EXPECT_EQ(rn.v().kind, value_kind::null_in_call);
}

// --- to_string -----------------------------------------------------------------------------

TEST(ParamChainToString, NumbersBoolsAndStrings) {
    int i = -42;
    double d = 2.5;
    bool b = false;
    std::string s = "as is";
    result ri, rd, rb, rs;
    eval(ri, arg<1> | loupe::to_string, i);
    eval(rd, arg<1> | loupe::to_string, d);
    eval(rb, arg<1> | loupe::to_string, b);
    eval(rs, arg<1> | loupe::to_string, s);
    EXPECT_EQ(ri.v().kind, value_kind::string);
    EXPECT_EQ(text(ri), "-42");
    EXPECT_EQ(text(rd), "2.5");
    EXPECT_EQ(text(rb), "false");
    EXPECT_EQ(text(rs), "as is");
}

TEST(ParamChainToString, UserTypeWithOperatorShiftAndAdlToString) {
    Money m{1250};
    Tagged t{7};
    result rm, rt;
    eval(rm, arg<1> | loupe::to_string, m);
    eval(rt, arg<1> | loupe::to_string, t);
    EXPECT_EQ(text(rm), "12.50 EUR");
    EXPECT_FALSE(rm.v().truncated);
    EXPECT_EQ(text(rt), "tag#7");
}

TEST(ParamChainToString, BoundedOnAOneMegabyteString) {
    std::string big(1u << 20, 'a');
    Big streamed{1u << 20};
    result rs, ro;
    eval(rs, arg<1> | loupe::to_string | loupe::truncate(1000), big);
    eval(ro, arg<1> | loupe::to_string, streamed);
    EXPECT_EQ(rs.v().kind, value_kind::string);
    EXPECT_TRUE(rs.v().truncated);
    EXPECT_EQ(rs.v().text.size(), sizeof rs.buffer);  // the writer's budget, not 1000
    EXPECT_EQ(rs.v().original_size, 1u << 20);
    EXPECT_TRUE(ro.v().truncated);
    EXPECT_EQ(ro.v().text.size(), sizeof ro.buffer);
    EXPECT_EQ(ro.v().original_size, 1u << 20);
    EXPECT_EQ(ro.v().text, std::string(sizeof ro.buffer, 'x'));
}

TEST(ParamChainToString, StreamedTextIsCutOnAUtf8Boundary) {
    // 63 ASCII bytes then a 3-byte euro sign: the 64-byte budget ends inside it.
    Priced p{63};
    result r;
    eval(r, arg<1> | loupe::to_string, p);
    EXPECT_EQ(r.v().kind, value_kind::string);
    EXPECT_EQ(r.v().text, std::string(63, '9'));
    EXPECT_TRUE(r.v().truncated);
    EXPECT_EQ(r.v().original_size, 66u);
}

// --- truncate -------------------------------------------------------------------------------

TEST(ParamChainTruncate, CutsOnAUtf8BoundaryWithFlagAndOriginalSize) {
    std::string s = "ab\xC3\xA9z";  // "abéz": é is two bytes at offsets 2-3
    result r3, r4, r10;
    eval(r3, arg<1> | loupe::truncate(3), s);
    eval(r4, arg<1> | loupe::truncate(4), s);
    eval(r10, arg<1> | loupe::truncate(10), s);
    EXPECT_EQ(r3.v().kind, value_kind::string);
    EXPECT_EQ(text(r3), "ab");  // not inside é
    EXPECT_TRUE(r3.v().truncated);
    EXPECT_EQ(r3.v().original_size, 5u);
    EXPECT_EQ(text(r4), "ab\xC3\xA9");
    EXPECT_TRUE(r4.v().truncated);
    EXPECT_EQ(text(r10), s);
    EXPECT_FALSE(r10.v().truncated);
    EXPECT_EQ(r10.v().original_size, 5u);
}

TEST(ParamChainTruncate, FieldThenTruncate) {
    Line line{"0123456789ABCDEFGHIJ", 1};
    result r;
    eval(r, kSku, line);
    EXPECT_EQ(text(r), "0123456789ABCDEF");
    EXPECT_TRUE(r.v().truncated);
    EXPECT_EQ(r.v().original_size, 20u);
}

TEST(ParamChainTruncate, NullCStringGivesNullInCall) {
    const char* none = nullptr;
    result r;
    eval(r, arg<1> | loupe::truncate(4), none);
    EXPECT_EQ(r.v().kind, value_kind::null_in_call);
}

// --- redact ---------------------------------------------------------------------------------

bool buffer_contains(const result& r, std::string_view needle) {
    return std::string_view(r.buffer, sizeof r.buffer).find(needle) != std::string_view::npos;
}

TEST(ParamChainRedact, OnlyTheSizeIsKept) {
    std::string secret = "hunter2-password";
    result r;
    std::memset(r.buffer, 0, sizeof r.buffer);
    eval(r, arg<1> | loupe::redact, secret);
    EXPECT_EQ(r.v().kind, value_kind::redacted);
    EXPECT_EQ(r.v().original_size, secret.size());
    EXPECT_TRUE(r.v().text.empty());
    EXPECT_FALSE(buffer_contains(r, "hunter2"));
}

TEST(ParamChainRedact, ClearTextFormattedIntoTheBufferIsWiped) {
    Money secret_amount{987654321};
    result r;
    eval(r, arg<1> | loupe::to_string | loupe::redact, secret_amount);
    EXPECT_EQ(r.v().kind, value_kind::redacted);
    EXPECT_EQ(r.v().original_size, std::string("9876543.21 EUR").size());
    EXPECT_FALSE(buffer_contains(r, "9876543"));
}

TEST(ParamChainRedact, NumbersKeepTheirWidth) {
    std::int32_t pin = 1234;
    result r;
    eval(r, arg<1> | loupe::redact, pin);
    EXPECT_EQ(r.v().kind, value_kind::redacted);
    EXPECT_EQ(r.v().original_size, 4u);
    EXPECT_EQ(r.v().bits, 0u);
}

// --- hash -------------------------------------------------------------------------------------

TEST(ParamChainHash, EqualForEqualInputDifferentForDifferentInput) {
    std::string a1 = "alice@example.com", a2 = "alice@example.com", b = "bob@example.com";
    result r1, r2, r3;
    eval(r1, arg<1> | loupe::hash, a1);
    eval(r2, arg<1> | loupe::hash, a2);
    eval(r3, arg<1> | loupe::hash, b);
    EXPECT_EQ(r1.v().kind, value_kind::hash);
    EXPECT_EQ(r1.v().bits, r2.v().bits);
    EXPECT_NE(r1.v().bits, r3.v().bits);
    EXPECT_EQ(r1.v().bits, loupe::detail::keyed_hash(a1.data(), a1.size()));  // the runtime chains' value
    EXPECT_FALSE(buffer_contains(r1, "alice"));
}

TEST(ParamChainHash, IntegersHashTheirEightLittleEndianBytes) {
    std::int32_t small = -2;
    std::int64_t wide = -2;
    std::uint16_t other = 3;
    result rs, rw, ro;
    eval(rs, arg<1> | loupe::hash, small);
    eval(rw, arg<1> | loupe::hash, wide);
    eval(ro, arg<1> | loupe::hash, other);
    const unsigned char le[8] = {0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    EXPECT_EQ(rs.v().bits, loupe::detail::keyed_hash(le, 8));
    EXPECT_EQ(rs.v().bits, rw.v().bits);  // the same integer, whatever its width
    EXPECT_NE(rs.v().bits, ro.v().bits);
}

TEST(ParamChainHash, CStringsAndNull) {
    const char* a = "same";
    std::string b = "same";
    const char* none = nullptr;
    result ra, rb, rn;
    eval(ra, arg<1> | loupe::hash, a);
    eval(rb, arg<1> | loupe::hash, b);
    eval(rn, arg<1> | loupe::hash, none);
    EXPECT_EQ(ra.v().bits, rb.v().bits);
    EXPECT_EQ(rn.v().kind, value_kind::null_in_call);
}

// --- chains ---------------------------------------------------------------------------------

TEST(ParamChainRules, FirstFailingModifierDecidesTheStatus) {
    Order o;
    o.lines = {{"A", 1}};
    // at(5) fails first (InvalidIndex); the field after it never runs on anything.
    result r1;
    eval(r1, arg<1> | loupe::field(&Order::lines) | loupe::at(5) | loupe::field(&Line::sku) | loupe::length, o);
    EXPECT_EQ(r1.v().kind, value_kind::invalid_index);
    // The null comes first, before a cast that would have failed.
    const Order* none = nullptr;
    result r2;
    eval(r2, arg<1> | loupe::field(&Order::lines) | loupe::at(-1) | loupe::field(&Line::qty), none);
    EXPECT_EQ(r2.v().kind, value_kind::null_in_call);
    // A throwing getter stops the chain: later modifiers do not run.
    Customer c("x");
    result r3;
    eval(r3, arg<1> | loupe::call(&Customer::fails) | loupe::apply(+[](int) -> int { throw 1; }), c);
    EXPECT_EQ(r3.v().kind, value_kind::exception_in_call);
    // A cast failure hides the next modifier's null: CastFailed, not NullInCall.
    Other other;
    const Base* b = &other;
    result r4;
    eval(r4, arg<1> | loupe::cast<Special> | loupe::field(&Special::detail) | loupe::at(100), b);
    EXPECT_EQ(r4.v().kind, value_kind::cast_failed);
}

TEST(ParamChainRules, EvaluationStopsAtTheFailure) {
    static int calls = 0;
    calls = 0;
    const std::vector<int>* none = nullptr;
    result r;
    eval(r, arg<1> | loupe::at(0) | loupe::apply(+[](int v) { return ++calls + v; }), none);
    EXPECT_EQ(r.v().kind, value_kind::null_in_call);
    EXPECT_EQ(calls, 0);
}

TEST(ParamChainRules, SelfAndArgumentsTogether) {
    Customer c("lin");
    Line line{"SKU-9", 2};
    result rs, ra;
    static constexpr auto who = loupe::self | loupe::call(&Customer::self_ptr) | loupe::call(&Customer::name);
    eval_on(rs, who, &c, line);
    eval_on(ra, arg<1> | loupe::field(&Line::sku), &c, line);
    EXPECT_EQ(text(rs), "lin");
    EXPECT_EQ(text(ra), "SKU-9");
}

TEST(ParamChainRules, SelfAloneAndNamed) {
    const std::string receiver = "the receiver";
    Customer c("id");
    result ralone, rnamed, rid;
    eval_on(ralone, loupe::self, &receiver);
    eval_on(rnamed, loupe::named("me", loupe::self), &receiver);
    eval_on(rid, loupe::named("id", loupe::self | loupe::object_id), &c);
    EXPECT_EQ(text(ralone), "the receiver");
    EXPECT_EQ(text(rnamed), "the receiver");
    EXPECT_EQ(rid.v().kind, value_kind::object_id);
    EXPECT_EQ(rid.v().bits, reinterpret_cast<std::uintptr_t>(&c));
}

TEST(ParamChainRules, ConcurrentTypeNamesAgree) {
    Special s;
    const Base* b = &s;
    std::vector<std::string> seen(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 1000; ++i) {
                result r;
                eval(r, arg<1> | loupe::type_of, b);
                if (i == 999) seen[static_cast<std::size_t>(t)] = text(r);
            }
        });
    }
    for (auto& th : threads) th.join();
    for (const auto& name : seen) EXPECT_EQ(name, "shop::Special");
}

}  // namespace
