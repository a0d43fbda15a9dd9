// An instrumenting file of a program built with LOUPE_SEPARATE_IMPLEMENTATION=1:
// it declares loupe's shared out-of-line parts and compiles none of them.
#pragma once

#include <loupe/loupe.hpp>

#include <cstdint>
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
