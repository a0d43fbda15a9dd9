// short_move: the inline std::memmove of the method path, for every length
// it handles inline and past it, with and without overlapping ranges.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <loupe/params/detail/short_move.hpp>

namespace {

TEST(ShortMove, CopiesLikeMemmoveForEveryLengthAndOverlap) {
    for (std::size_t n = 0; n <= 80; ++n) {
        for (int shift = -9; shift <= 9; ++shift) {  // 0: separate buffers; otherwise within one
            std::vector<unsigned char> expected(200), got(200);
            for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = got[i] = static_cast<unsigned char>(i * 7 + 1);
            const std::size_t from = 60, to = static_cast<std::size_t>(60 + shift);
            if (shift == 0) {
                std::vector<unsigned char> source(expected.begin(), expected.end());
                std::memmove(expected.data() + to + 100 - 60, source.data() + from, n);
                loupe::detail::short_move(got.data() + to + 100 - 60, source.data() + from, n);
            } else {
                std::memmove(expected.data() + to, expected.data() + from, n);
                loupe::detail::short_move(got.data() + to, got.data() + from, n);
            }
            ASSERT_EQ(got, expected) << "n=" << n << " shift=" << shift;
        }
    }
}

}  // namespace
