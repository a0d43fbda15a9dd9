// The compile-time reading of method signature literals (how many
// parameters, which are spelled as built-in types) that LOUPE_METHOD checks
// its arguments against. Wrong sites must not compile: tests/compile_fail/
// signature_parameter_*.cpp.
#include <loupe/params/detail/signature_check.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace {

using loupe::detail::builtin_code_of;
using loupe::detail::shape_of_signature;

TEST(SignatureCheck, CountsTheParametersOfTheFirstListOutsideTemplateBrackets) {
    EXPECT_EQ(shape_of_signature("A::m()").count, 0);
    EXPECT_EQ(shape_of_signature("A::m( void )").count, 0);
    EXPECT_EQ(shape_of_signature("shop::Cart::add(Item const&,int)").count, 2);
    EXPECT_EQ(shape_of_signature("double shop::price(Order const*)").count, 1);
    EXPECT_EQ(shape_of_signature("f(std::map<int, std::string> const&, int)").count, 2);
    EXPECT_EQ(shape_of_signature("f(void (*)(int, int), char)").count, 2);
    EXPECT_EQ(shape_of_signature("f(int (&)[3])").count, 1);
    EXPECT_EQ(shape_of_signature("ns::Box<std::pair<int, int>>::put(int)").count, 1);
    // Constant: usable where the macros use it.
    static_assert(shape_of_signature("A::m(int, int)").count == 2, "");
}

TEST(SignatureCheck, LeavesWhatItCannotTakeApartToTheRuntimeParser) {
    EXPECT_EQ(shape_of_signature("A::operator()(int)").count, -1);
    EXPECT_EQ(shape_of_signature("A::operator<(A const&)").count, -1);
    EXPECT_EQ(shape_of_signature("A::m(int,)").count, -1);
    EXPECT_EQ(shape_of_signature("A::m(int").count, -1);
    EXPECT_EQ(shape_of_signature("no parameter list").count, -1);
}

TEST(SignatureCheck, NamesTheBuiltInTypesAParameterSpells) {
    const auto s = shape_of_signature(
        "f(int, unsigned long const&, const double, std::size_t, std::int64_t, Item const&, char const*, bool&&)");
    ASSERT_EQ(s.count, 8);
    EXPECT_EQ(s.builtin[0], builtin_code_of<int>());
    EXPECT_EQ(s.builtin[1], builtin_code_of<unsigned long>());
    EXPECT_EQ(s.builtin[2], builtin_code_of<double>());
    EXPECT_EQ(s.builtin[3], builtin_code_of<std::size_t>());
    EXPECT_EQ(s.builtin[4], builtin_code_of<std::int64_t>());
    EXPECT_EQ(s.builtin[5], 0);  // a class: not compared
    EXPECT_EQ(s.builtin[6], 0);  // a pointer: not compared
    EXPECT_EQ(s.builtin[7], builtin_code_of<bool>());
}

TEST(SignatureCheck, FindsTheFirstArgumentOfAnotherBuiltInType) {
    using args = decltype(loupe::detail::site_arguments_of(std::declval<int&>(), std::declval<const double&>(),
                                                           std::declval<long&>()));
    EXPECT_EQ(args::count, 3);
    EXPECT_EQ(args::first_type_mismatch(shape_of_signature("f(int, double, long)")), -1);
    EXPECT_EQ(args::first_type_mismatch(shape_of_signature("f(int const&, Money, long)")), -1);
    EXPECT_EQ(args::first_type_mismatch(shape_of_signature("f(int, float, long)")), 1);
    EXPECT_EQ(args::first_type_mismatch(shape_of_signature("f(int, double, int)")), 2);
    EXPECT_EQ(args::first_type_mismatch(shape_of_signature("f(int, double)")), -1);  // the count check's case
}

}  // namespace
