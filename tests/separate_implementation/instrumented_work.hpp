// An instrumenting file of a program built with LOUPE_SEPARATE_IMPLEMENTATION=1:
// it declares loupe's shared out-of-line parts and compiles none of them.
#pragma once

#include <loupe/loupe.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

/// One piece of work inside a zone, under a context of two fields and a
/// component, handing a new flow on. Returns the flow id and what the thread's
/// context held inside the scopes.
struct separate_work_result {
    std::uint64_t flow = 0;
    std::string user;
    std::string request;
    std::string component;
};
separate_work_result separate_work(int i);

/// Destroys two field scopes out of order (a misuse loupe reports once).
void separate_out_of_order_scopes();

/// A parameter of the method below, printed by its operator<< (declared
/// here, defined in instrumented_work.cpp: a method site's file needs no
/// <ostream> of its own).
struct separate_money {
    long cents = 0;
};
std::ostream& operator<<(std::ostream& os, const separate_money& m);

/// A polymorphic class with a method site without compile-time chains
/// (LOUPE_METHOD): every such site enters through the one shared entry.
class separate_cart {
public:
    virtual ~separate_cart() = default;
    std::size_t add(const std::string& sku, int qty, const separate_money& price);
};
/// A subclass that inherits add: specs with match=exact skip its calls.
class separate_gift_cart : public separate_cart {};

/// Reads up to `n` bytes of `fd` through the I/O wrapper; returns read()'s result.
long separate_read(int fd, char* buffer, std::size_t n);
