// Compile cost of a file with one parameter-traced method and one wrapped
// I/O call (bench/compile_cost.sh).
#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/params.hpp>

#include <cstddef>
#include <string>

namespace shop {

class Cart {
public:
    std::size_t add(const std::string& sku, int qty) {
        LOUPE_METHOD("shop::Cart::add(std::string const&,int)", sku, qty);
        items_ += static_cast<std::size_t>(qty);
        return items_ + sku.size();
    }

private:
    std::size_t items_ = 0;
};

}  // namespace shop

std::size_t compile_cost_work(shop::Cart& cart, int fd) {
    char buffer[64];
    const auto got = loupe::io::read(fd, buffer, sizeof buffer);
    return cart.add("sku-1", 2) + static_cast<std::size_t>(got > 0 ? got : 0);
}
