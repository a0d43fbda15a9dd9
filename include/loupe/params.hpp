// Method parameter tracing (US 9,129,056) for the files that instrument:
// method sites, compile-time modifier chains and the values they produce.
// What runtime chains may reach (loupe::reflect, params/reflect.hpp) is
// registered where sessions are set up and comes with <loupe/session.hpp>.
// See README "Parameter tracing" and docs/params.md.
//
//     void Cart::add(const Item& item, int qty) {
//         LOUPE_METHOD("shop::Cart::add(Item const&,int)", item, qty);
//         ...
//     }
//     // where sessions start (<loupe/session.hpp>):
//     loupe::reflect<Item>("shop::Item").field("sku", &Item::sku);
//     cfg.kinds = loupe::kinds::all;   // includes kinds::methods
//     cfg.params = "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16)";
#pragma once

#include "loupe/params/chain.hpp"
#include "loupe/params/method.hpp"
#include "loupe/params/value.hpp"
