// The rules compile-time chains (params/chain.hpp) and runtime chains
// (spec text bound to type descriptors) share: which wrappers unwrap
// (recognised by shape, so a server's own smart pointers and optionals work),
// and how `to_string` and `object_id` read a value. A value must read the
// same whichever kind of chain recorded it.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <loupe/params/chain.hpp>
#include <loupe/params/detail/runtime_chain_binder.hpp>
#include <loupe/params/detail/runtime_chain_steps.hpp>
#include <loupe/params/reflect.hpp>

namespace shapes {

struct Line {
    int qty = 0;
};

/// A server's own reference-counted pointer: shaped like std::shared_ptr.
template <class T>
class ref_ptr {
public:
    using element_type = T;
    explicit ref_ptr(T* p = nullptr) : p_(p) {}
    T* get() const noexcept { return p_; }
    T* operator->() const noexcept { return p_; }
    T& operator*() const noexcept { return *p_; }

private:
    T* p_;
};

/// A server's own optional: shaped like std::optional.
template <class T>
class maybe {
public:
    using value_type = T;
    maybe() = default;
    explicit maybe(T v) : v_(v), set_(true) {}
    bool has_value() const noexcept { return set_; }
    const T& operator*() const noexcept { return v_; }

private:
    T v_{};
    bool set_ = false;
};

/// Not a wrapper: a `get()` alone does not make a smart pointer.
struct Box {
    int get() const { return 5; }
    int inside = 9;
};

struct Holder {
    ref_ptr<Line> line;
    maybe<Line> opt;
    std::reference_wrapper<const Line> ref;
    Box box;
};

enum class Level { low = 1, high = 2 };
std::string to_string(Level l) { return l == Level::low ? "LOW" : "HIGH"; }
enum class Plain { seven = 7 };

struct Streamed {
    int v;
};
std::ostream& operator<<(std::ostream& os, const Streamed& s) { return os << "s=" << s.v; }

struct FriendStreamed {
    int v;
    friend std::ostream& operator<<(std::ostream& os, const FriendStreamed& s) { return os << "f=" << s.v; }
};

// Printable by std::ostream only through its conversion to a number.
struct Countish {
    operator int() const { return 5; }
};

struct Throws {};
std::string to_string(const Throws&) { throw std::runtime_error("no"); }

struct WithId {
    std::uint64_t id;
};
std::uint64_t loupe_object_id(const WithId& w) { return w.id; }

}  // namespace shapes

namespace {

using namespace shapes;
using loupe::arg;
using loupe::value_kind;

void register_holder() {
    static const bool once = [] {
        loupe::reflect<Holder>("shapes::Holder")
            .field("line", &Holder::line)
            .field("opt", &Holder::opt)
            .field("ref", &Holder::ref)
            .field("box", &Holder::box);
        loupe::reflect<Line>("shapes::Line").field("qty", &Line::qty);
        loupe::reflect<Box>("shapes::Box").field("inside", &Box::inside);
        return true;
    }();
    (void)once;
}

/// One evaluation's value, copied out of its writer.
struct outcome {
    value_kind kind = value_kind::unknown;
    std::string text;
    std::uint64_t bits = 0;
    bool operator==(const outcome& o) const { return kind == o.kind && text == o.text && bits == o.bits; }
};
std::ostream& operator<<(std::ostream& os, const outcome& o) {
    return os << "{kind " << static_cast<int>(o.kind) << ", text '" << o.text << "', bits " << o.bits << "}";
}

outcome copy_out(const loupe::value_writer& w) {
    const loupe::param_value& v = w.value();
    return {v.kind, std::string(v.text), v.bits};
}

template <class Chain, class T>
outcome compiled(const Chain& chain, const T& value) {
    char buf[64];
    loupe::value_writer out(buf, sizeof buf);
    loupe::evaluate_chain(chain, nullptr, std::forward_as_tuple(value), out);
    return copy_out(out);
}

template <class T>
outcome runtime(std::string_view chain, const T& value) {
    register_holder();
    const auto bound = loupe::detail::bind_chain(chain, loupe::detail::type_desc_of<T>());
    if (!bound) {
        ADD_FAILURE() << "bind of '" << chain << "' failed: " << bound.error;
        return {};
    }
    char buf[64];
    loupe::value_writer out(buf, sizeof buf);
    bound.chain->evaluate(&value, out);
    return copy_out(out);
}

TEST(ChainSharedRules, OwnSmartPointersAndOptionalsUnwrapInBothKinds) {
    Line line{4};
    Line other{6};
    Holder h{ref_ptr<Line>(&line), maybe<Line>(Line{5}), std::cref(other), {}};
    EXPECT_EQ(compiled(arg<1> | loupe::field(&Holder::line) | loupe::field(&Line::qty), h).bits, 4u);
    EXPECT_EQ(runtime("field(line)|field(qty)", h).bits, 4u);
    EXPECT_EQ(compiled(arg<1> | loupe::field(&Holder::opt) | loupe::field(&Line::qty), h).bits, 5u);
    EXPECT_EQ(runtime("field(opt)|field(qty)", h).bits, 5u);
    EXPECT_EQ(compiled(arg<1> | loupe::field(&Holder::ref) | loupe::field(&Line::qty), h).bits, 6u);
    EXPECT_EQ(runtime("field(ref)|field(qty)", h).bits, 6u);
    EXPECT_EQ(runtime("field(line)|deref|field(qty)", h).bits, 4u);
}

TEST(ChainSharedRules, EmptyOwnWrappersGiveNullInCallInBothKinds) {
    Line other{6};
    Holder h{ref_ptr<Line>(), maybe<Line>(), std::cref(other), {}};
    EXPECT_EQ(compiled(arg<1> | loupe::field(&Holder::line) | loupe::field(&Line::qty), h).kind,
              value_kind::null_in_call);
    EXPECT_EQ(runtime("field(line)|field(qty)", h).kind, value_kind::null_in_call);
    EXPECT_EQ(compiled(arg<1> | loupe::field(&Holder::opt) | loupe::field(&Line::qty), h).kind,
              value_kind::null_in_call);
    EXPECT_EQ(runtime("field(opt)|field(qty)", h).kind, value_kind::null_in_call);
}

TEST(ChainSharedRules, AGetAloneDoesNotMakeAWrapper) {
    Line other{6};
    Holder h{ref_ptr<Line>(), maybe<Line>(), std::cref(other), {}};
    EXPECT_EQ(compiled(arg<1> | loupe::field(&Holder::box) | loupe::field(&Box::inside), h).bits, 9u);
    EXPECT_EQ(runtime("field(box)|field(inside)", h).bits, 9u);
    const std::string error = loupe::detail::bind_chain("field(box)|deref", loupe::detail::type_desc_of<Holder>()).error;
    EXPECT_NE(error.find("deref"), std::string::npos) << error;
}

TEST(ChainSharedRules, ToStringReadsTheSameInBothKinds) {
    const auto same = [](const auto& value) {
        const outcome c = compiled(arg<1> | loupe::to_string, value);
        const outcome r = runtime("to_string", value);
        EXPECT_EQ(c.kind, value_kind::string);
        EXPECT_EQ(c, r);
        return c.text;
    };
    EXPECT_EQ(same(true), "true");
    EXPECT_EQ(same(-42), "-42");
    EXPECT_EQ(same(std::uint64_t{18446744073709551615u}), "18446744073709551615");
    EXPECT_EQ(same(0.1), "0.10000000000000001");
    EXPECT_EQ(same(Level::high), "HIGH");  // an enum's own to_string wins over its number
    EXPECT_EQ(same(Plain::seven), "7");
    EXPECT_EQ(same(Streamed{3}), "s=3");
    EXPECT_EQ(same(FriendStreamed{4}), "f=4");  // a hidden friend, found by ADL
    EXPECT_EQ(same(std::string("as is")), "as is");
}

// operator<< is looked for as a non-member: the answer must not depend on
// whether a file sees std::ostream complete (docs/params.md).
TEST(ChainSharedRules, AClassPrintableOnlyThroughANumberConversionIsNotFormatted) {
    EXPECT_FALSE(loupe::detail::is_formattable_v<Countish>);
    const std::string error = loupe::detail::bind_chain("to_string", loupe::detail::type_desc_of<Countish>()).error;
    EXPECT_NE(error.find("cannot be formatted"), std::string::npos) << error;
}

TEST(ChainSharedRules, AThrowingToStringGivesExceptionInCallInBothKinds) {
    EXPECT_EQ(compiled(arg<1> | loupe::to_string, Throws{}).kind, value_kind::exception_in_call);
    EXPECT_EQ(runtime("to_string", Throws{}).kind, value_kind::exception_in_call);
}

TEST(ChainSharedRules, ObjectIdReadsTheSameInBothKinds) {
    const WithId hooked{77};
    EXPECT_EQ(compiled(arg<1> | loupe::object_id, hooked).bits, 77u);
    EXPECT_EQ(runtime("object_id", hooked).bits, 77u);
    const Line plain{1};
    const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&plain));
    EXPECT_EQ(compiled(arg<1> | loupe::object_id, plain).bits, address);
    EXPECT_EQ(runtime("object_id", plain).bits, address);
}

}  // namespace
