// "Did you mean": the spellings closest to a name that matched nothing.
#include <loupe/text/close_matches.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(CloseMatches, EditDistanceCountsSingleByteEdits) {
    EXPECT_EQ(loupe::edit_distance("", ""), 0u);
    EXPECT_EQ(loupe::edit_distance("add", "add"), 0u);
    EXPECT_EQ(loupe::edit_distance("add", "ad"), 1u);
    EXPECT_EQ(loupe::edit_distance("add", "adds"), 1u);
    EXPECT_EQ(loupe::edit_distance("add", "odd"), 1u);
    EXPECT_EQ(loupe::edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(loupe::edit_distance("", "abc"), 3u);
}

TEST(CloseMatches, ASelectorWithoutParametersIsComparedWithTheSitesNames) {
    const std::vector<std::string> sites = {"shop::A::m(int)", "shop::A::m(std::string const&)", "shop::B::mm(int)",
                                            "double shop::price(Order const*)", "other::thing(int)"};
    const auto near = loupe::closest_spellings("shop::A::mm", sites, 3);
    ASSERT_EQ(near.size(), 3u);
    EXPECT_EQ(near[0], "shop::A::m(int)");  // one edit; ties in name order
    EXPECT_EQ(near[1], "shop::A::m(std::string const&)");
    EXPECT_EQ(near[2], "shop::B::mm(int)");
    EXPECT_EQ(loupe::closest_spellings("shop::prize", sites, 3), std::vector<std::string>{"double shop::price(Order const*)"});
}

TEST(CloseMatches, AFullSignatureIsComparedWhole) {
    const std::vector<std::string> sites = {"shop::A::m(int)", "shop::A::m(long)"};
    EXPECT_EQ(loupe::closest_spellings("shop::A::m(unt)", sites, 3), (std::vector<std::string>{"shop::A::m(int)", "shop::A::m(long)"}));
    EXPECT_TRUE(loupe::closest_spellings("entirely::different(int)", sites, 3).empty());
    EXPECT_TRUE(loupe::closest_spellings("shop::A::m", {}, 3).empty());
}

}  // namespace
