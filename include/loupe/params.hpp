// Method parameter tracing (US 9,129,056): method sites, compile-time
// modifier chains, the reflection registry runtime chains reach through, and
// the values they produce. See README "Parameter tracing" and docs/params.md.
//
//     void Cart::add(const Item& item, int qty) {
//         LOUPE_METHOD("shop::Cart::add(Item const&,int)", item, qty);
//         ...
//     }
//     loupe::reflect<Item>("shop::Item").field("sku", &Item::sku);
//     cfg.kinds = loupe::kinds::all;   // includes kinds::methods
//     cfg.params = "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16)";
#pragma once

#include "loupe/params/chain.hpp"
#include "loupe/params/method.hpp"
#include "loupe/params/reflect.hpp"
#include "loupe/params/value.hpp"
