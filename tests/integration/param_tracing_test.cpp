// Method parameter tracing end to end: method sites, specs a session carries
// (and changes while it runs), the values each call records, apply errors,
// the hierarchy match modes (US 9,129,056 Tables 1 and 2), the recursion
// guard, thread filters and secrets.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/metrics/metric.hpp>
#include <loupe/params.hpp>

#include "support/trace_files.hpp"

namespace {

// ------------------------------------------------------------- what a sink saw

struct seen_value {
    std::uint32_t spec;
    loupe::value_kind kind;
    std::string text;  // format_value
    bool truncated;
    std::uint32_t original_size;
    std::uint64_t bits;
};

struct seen_call {
    std::string method;
    std::uint64_t begin_ns, end_ns;
    bool exceptional, has_cpu;
    std::uint64_t cpu_begin_ns, cpu_end_ns;
    std::vector<seen_value> values;
    std::vector<loupe::metric_value> metrics;
    bool values_lost = false;
};

struct seen_error {
    std::string method;
    std::uint32_t spec;
    std::string reason;
};

// Keeps the method calls, spec definitions and apply errors it receives.
class method_recorder : public loupe::sink {
public:
    void write(const loupe::record& r) override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (r.kind == loupe::record_kind::zone && r.method == nullptr) {  // a call with nothing but its timing
            calls_.push_back(seen_call{r.where->name, r.begin_ns, r.end_ns, false, false, 0, 0, {},
                                       {r.metrics, r.metrics + r.metric_count}});
        } else if (r.kind == loupe::record_kind::zone) {
            seen_call c{r.where->name, r.begin_ns, r.end_ns, r.method->exceptional, r.method->has_cpu,
                        r.method->cpu_begin_ns, r.method->cpu_end_ns, {}, {r.metrics, r.metrics + r.metric_count}};
            for (std::size_t i = 0; i < r.method->value_count; ++i) {
                const loupe::param_value& v = r.method->values[i];
                c.values.push_back({v.spec, v.kind, loupe::format_value(v), v.truncated, v.original_size, v.bits});
            }
            c.values_lost = r.method->values_lost;
            calls_.push_back(std::move(c));
        } else if (r.kind == loupe::record_kind::param_spec) {
            specs_.push_back(std::string(r.spec->text));
        } else if (r.kind == loupe::record_kind::param_apply_error) {
            errors_.push_back({r.where->name, r.apply_error->spec, std::string(r.apply_error->reason)});
        }
    }
    void flush() override {}
    void close() override {}

    std::vector<seen_call> calls(const std::string& method) const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<seen_call> out;
        for (const auto& c : calls_) {
            if (c.method == method) out.push_back(c);
        }
        // Delivery order follows the rings the collector drains; calls are compared in time order.
        std::sort(out.begin(), out.end(), [](const seen_call& a, const seen_call& b) { return a.begin_ns < b.begin_ns; });
        return out;
    }
    std::vector<std::string> specs() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return specs_;
    }
    std::vector<seen_error> errors() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return errors_;
    }

private:
    mutable std::mutex mutex_;
    std::vector<seen_call> calls_;
    std::vector<std::string> specs_;
    std::vector<seen_error> errors_;
};

loupe::session_config method_session(std::shared_ptr<method_recorder> sink, std::string params) {
    loupe::session_config cfg;
    cfg.name = "params";
    cfg.kinds = loupe::kinds::methods;
    cfg.sinks = {std::move(sink)};
    cfg.params = std::move(params);
    return cfg;
}

// ------------------------------------------------------------- the traced code

namespace shop {

struct Item {
    std::string sku;
    double price = 0;
    std::string label() const { return "item " + sku; }
};

struct Customer {
    std::string name;
    std::string password;
};


class Cart {
public:
    void add(const Item& item, int qty) {
        LOUPE_METHOD("shop::Cart::add(Item const&,int)", item, qty);
        items_ += qty;
    }
    void add_named(const Item& item, int qty) {
        LOUPE_METHOD_CHAINS("shop::Cart::add_named(Item const&,int)", (item, qty),
                            loupe::named("sku", loupe::arg<1> | loupe::field(&Item::sku) | loupe::truncate(3)),
                            loupe::named("qty", loupe::arg<2>));
        items_ += qty;
    }
    void login(const Customer& who) {
        LOUPE_METHOD("shop::Cart::login(Customer const&)", who);
        (void)who;
    }
    void fail(int code) {
        LOUPE_METHOD("shop::Cart::fail(int)", code);
        throw std::runtime_error("fail " + std::to_string(code));
    }
    int items() const { return items_; }

private:
    int items_ = 0;
};

double price(const Item* item) {
    LOUPE_FUNCTION_PARAMS("shop::price(Item const*)", item);
    return item ? item->price : 0.0;
}

}  // namespace shop

const bool reflected = [] {
    loupe::reflect<shop::Item>("shop::Item").field("sku", &shop::Item::sku).field("price", &shop::Item::price)
        .method("label", &shop::Item::label);
    loupe::reflect<shop::Customer>("shop::Customer").field("name", &shop::Customer::name)
        .field("password", &shop::Customer::password);
    return true;
}();

}  // namespace

namespace badsig {
int fine(int n) {
    LOUPE_FUNCTION_PARAMS("badsig::fine(int)", n);
    return n;
}
int odd(int n) {
    LOUPE_FUNCTION_PARAMS("badsig::odd(int", n);  // the closing parenthesis is missing
    return n;
}
}  // namespace badsig

// A site whose signature does not parse is reported once, when it first
// binds, naming the site; no spec applies to it. The report is made outside
// loupe's locks: a handler that makes a traced call (which binds its own
// site) does not deadlock.
TEST(ParamTracing, ASiteWhoseSignatureDoesNotParseIsReportedOnceOutsideTheRegistrysLock) {
    std::vector<std::string> reports;
    loupe::set_error_handler([&](const std::string& message) {
        reports.push_back(message);
        badsig::fine(static_cast<int>(reports.size()));
    });
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=badsig::fine(int); param=1"));
    badsig::odd(1);
    badsig::odd(2);
    s.stop();
    loupe::set_error_handler(nullptr);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_NE(reports[0].find("param_tracing_test.cpp"), std::string::npos) << reports[0];
    EXPECT_NE(reports[0].find("\"badsig::odd(int\" does not parse"), std::string::npos) << reports[0];
    const auto fine = sink->calls("badsig::fine(int)");
    ASSERT_EQ(fine.size(), 1u);  // the call the handler made
    ASSERT_EQ(fine[0].values.size(), 1u);
    EXPECT_EQ(fine[0].values[0].text, "1");
    for (const auto& c : sink->calls("badsig::odd(int")) EXPECT_TRUE(c.values.empty());
}

// A spec whose method= matches no site that ran (a typo) is named in the
// stats stop() returns, with the sites spelled close to it; a spec that
// matched is not.
TEST(ParamTracing, SpecsThatMatchedNoSiteAreNamedInTheStatsWithCloseMatches) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink,
                                                 "method=badsig::fine(int); param=1\n"
                                                 "method=badsig::fien; param=1\n"
                                                 "method=nothing::like::it(int); param=1\n"));
    badsig::fine(4);
    const loupe::session_stats stats = s.stop();
    ASSERT_EQ(stats.unmatched_specs.size(), 2u);
    EXPECT_EQ(stats.unmatched_specs[0].spec, "method=badsig::fien; param=1");
    EXPECT_EQ(stats.unmatched_specs[0].method, "badsig::fien");
    ASSERT_FALSE(stats.unmatched_specs[0].close_matches.empty());
    EXPECT_EQ(stats.unmatched_specs[0].close_matches[0], "badsig::fine(int)");
    EXPECT_EQ(stats.unmatched_specs[1].method, "nothing::like::it(int)");
    EXPECT_TRUE(stats.unmatched_specs[1].close_matches.empty());
}

TEST(ParamTracing, RuntimeSpecsRecordTheirValuesInSpecOrder) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink,
                                                 "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)\n"
                                                 "method=shop::Cart::add(Item const&,int); param=2\n"));
    shop::Cart cart;
    cart.add(shop::Item{"A-100", 2.5}, 3);
    s.stop();
    const auto calls = sink->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(calls.size(), 1u);
    ASSERT_EQ(calls[0].values.size(), 2u);
    EXPECT_EQ(calls[0].values[0].spec, 0u);
    EXPECT_EQ(calls[0].values[0].kind, loupe::value_kind::string);
    EXPECT_EQ(calls[0].values[0].text, "A-100");
    EXPECT_EQ(calls[0].values[1].spec, 1u);
    EXPECT_EQ(calls[0].values[1].kind, loupe::value_kind::integer);
    EXPECT_EQ(calls[0].values[1].text, "3");
    EXPECT_LE(calls[0].begin_ns, calls[0].end_ns);
    EXPECT_FALSE(calls[0].exceptional);
    EXPECT_EQ(sink->specs().size(), 2u);
    EXPECT_EQ(cart.items(), 3);
}

// The collector reads a method call's unit from the ring where it lies
// (its size comes from its first payload record), unless it wraps round the
// ring's end: in a small ring, calls whose values have every length arrive
// whole, with their values, either way.
TEST(ParamTracing, CallsArriveWholeWhereverTheirUnitsLieInTheRing) {
    auto sink = std::make_shared<method_recorder>();
    loupe::session_config cfg = method_session(sink,
                                               "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)\n"
                                               "method=shop::Cart::add(Item const&,int); param=2\n");
    cfg.ring_bytes = 4096;  // 128 records: calls of 3 to 6 records wrap every few dozen
    cfg.memory_budget = 0;
    cfg.overflow = loupe::overflow_policy::block;
    constexpr int calls = 2000;
    const auto sku_of = [](int i) { return std::string(static_cast<std::size_t>(1 + i % 70), static_cast<char>('A' + i % 26)); };
    auto s = loupe::start_session(cfg);
    std::thread caller([&] {  // a new thread: its ring has the session's size
        shop::Cart cart;
        for (int i = 0; i < calls; ++i) cart.add(shop::Item{sku_of(i), 1.0}, i);
    });
    caller.join();
    s.stop();
    const auto seen = sink->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(calls));
    for (int i = 0; i < calls; ++i) {
        const auto& c = seen[static_cast<std::size_t>(i)];
        ASSERT_EQ(c.values.size(), 2u) << "call " << i;
        ASSERT_EQ(c.values[0].text, sku_of(i).substr(0, c.values[0].text.size())) << "call " << i;
        ASSERT_EQ(c.values[0].original_size, sku_of(i).size()) << "call " << i;
        ASSERT_EQ(c.values[1].text, std::to_string(i)) << "call " << i;
    }
}

TEST(ParamTracing, UnqualifiedTypeNamesAndFreeFunctionNamesMatchAnyNamespace) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=price(const Item*); param=1; chain=field(price)"));
    shop::Item item{"X", 4.25};
    shop::price(&item);
    shop::price(nullptr);
    s.stop();
    const auto calls = sink->calls("shop::price(Item const*)");
    ASSERT_EQ(calls.size(), 2u);
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_EQ(calls[0].values[0].kind, loupe::value_kind::floating);
    EXPECT_EQ(calls[0].values[0].text, "4.25");
    ASSERT_EQ(calls[1].values.size(), 1u);
    EXPECT_EQ(calls[1].values[0].kind, loupe::value_kind::null_in_call);  // field() of a null pointer
}

TEST(ParamTracing, CompileTimeChainsAreSelectedByNameOrAllAtOnce) {
    {
        auto sink = std::make_shared<method_recorder>();
        auto s = loupe::start_session(method_session(sink, "method=shop::Cart::add_named(Item const&,int); chain=@sku"));
        shop::Cart cart;
        cart.add_named(shop::Item{"LONGSKU", 1}, 2);
        s.stop();
        const auto calls = sink->calls("shop::Cart::add_named(Item const&,int)");
        ASSERT_EQ(calls.size(), 1u);
        ASSERT_EQ(calls[0].values.size(), 1u);
        EXPECT_EQ(calls[0].values[0].kind, loupe::value_kind::string);
        EXPECT_TRUE(calls[0].values[0].truncated);
        EXPECT_EQ(calls[0].values[0].original_size, 7u);
        EXPECT_EQ(calls[0].values[0].text, "LON\xE2\x80\xA6");
    }
    {
        auto sink = std::make_shared<method_recorder>();
        auto s = loupe::start_session(method_session(sink, "method=shop::Cart::add_named"));
        shop::Cart cart;
        cart.add_named(shop::Item{"AB", 1}, 5);
        s.stop();
        const auto calls = sink->calls("shop::Cart::add_named(Item const&,int)");
        ASSERT_EQ(calls.size(), 1u);
        ASSERT_EQ(calls[0].values.size(), 2u);
        EXPECT_EQ(calls[0].values[0].text, "AB");
        EXPECT_EQ(calls[0].values[1].text, "5");
    }
}

TEST(ParamTracing, MethodsAreTimedWithoutSpecsAndOnlyWhenMethodsAreRecorded) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, ""));
    shop::Cart cart;
    cart.add(shop::Item{"A", 1}, 1);
    s.stop();
    const auto calls = sink->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_TRUE(calls[0].values.empty());

    auto zones_only = std::make_shared<method_recorder>();
    auto cfg = method_session(zones_only, "");
    cfg.kinds = loupe::kinds::zones;
    auto z = loupe::start_session(cfg);
    cart.add(shop::Item{"A", 1}, 1);
    z.stop();
    EXPECT_TRUE(zones_only->calls("shop::Cart::add(Item const&,int)").empty());
}

TEST(ParamTracing, ASpecThatDoesNotFitIsAnApplyErrorAndTheCallIsStillTimed) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink,
                                                 "method=shop::Cart::add(Item const&,int); param=1; chain=field(nosuch)\n"
                                                 "method=shop::Cart::add(Item const&,int); param=2; chain=length\n"
                                                 "method=shop::Cart::add(Item const&,int); param=7\n"));
    shop::Cart cart;
    cart.add(shop::Item{"A", 1}, 1);
    cart.add(shop::Item{"B", 1}, 2);
    s.stop();
    const auto calls = sink->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(calls.size(), 2u);
    for (const auto& c : calls) {
        ASSERT_EQ(c.values.size(), 3u);
        for (const auto& v : c.values) EXPECT_EQ(v.kind, loupe::value_kind::enable_failed);
        EXPECT_LE(c.begin_ns, c.end_ns);
    }
    const auto errors = sink->errors();
    ASSERT_EQ(errors.size(), 3u);  // once per (site, spec), not per call
    EXPECT_EQ(errors[0].spec, 0u);
    EXPECT_NE(errors[0].reason.find("nosuch"), std::string::npos) << errors[0].reason;
    EXPECT_NE(errors[1].reason.find("length"), std::string::npos) << errors[1].reason;
    EXPECT_NE(errors[2].reason.find("param=7"), std::string::npos) << errors[2].reason;
}

TEST(ParamTracing, MalformedSpecTextFailsTheStartNamingLineAndColumn) {
    auto sink = std::make_shared<method_recorder>();
    try {
        loupe::start_session(method_session(sink, "method=shop::Cart::add(Item const&,int); param=1\n"
                                                  "method=shop::Cart::add(Item const&,int); parm=1\n"));
        FAIL() << "expected loupe::error";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("column"), std::string::npos) << e.what();
    }
    try {
        loupe::start_session(method_session(sink, "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|lenght"));
        FAIL() << "expected loupe::error";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("line 1, column 68"), std::string::npos) << e.what();
    }
    auto no_methods = method_session(sink, "method=shop::price(Item const*); param=1");
    no_methods.kinds = loupe::kinds::zones;
    EXPECT_THROW(loupe::start_session(no_methods), loupe::error);
}

TEST(ParamTracing, AnExceptionLeavingTheMethodMarksTheCall) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=shop::Cart::fail(int); param=1; data=entry,exit,wall,cpu"));
    shop::Cart cart;
    EXPECT_THROW(cart.fail(7), std::runtime_error);
    s.stop();
    const auto calls = sink->calls("shop::Cart::fail(int)");
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_TRUE(calls[0].exceptional);
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_EQ(calls[0].values[0].text, "7");
    EXPECT_TRUE(calls[0].has_cpu);
    EXPECT_LE(calls[0].cpu_begin_ns, calls[0].cpu_end_ns);
}

namespace unwinding {

void traced_cleanup(int step) {
    LOUPE_FUNCTION_PARAMS("unwinding::traced_cleanup(int)", step);
}

struct cleanup_on_exit {
    ~cleanup_on_exit() { traced_cleanup(1); }  // runs while the exception below unwinds
};

}  // namespace unwinding

TEST(ParamTracing, ACallMadeByADestructorDuringUnwindingIsNotExceptional) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=unwinding::traced_cleanup(int); param=1"));
    try {
        unwinding::cleanup_on_exit cleanup;
        throw std::runtime_error("unwinding");
    } catch (const std::runtime_error&) {
    }
    s.stop();
    const auto calls = sink->calls("unwinding::traced_cleanup(int)");
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_FALSE(calls[0].exceptional);  // it returned normally, inside someone else's unwinding
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_EQ(calls[0].values[0].text, "1");
}

namespace metered {

loupe::metric_id rows() {
    static const loupe::metric_id id = loupe::metric("params_test.rows", "rows");
    return id;
}

void import_rows(int n) {
    LOUPE_FUNCTION_PARAMS("metered::import_rows(int)", n);
    loupe::metric_add(rows(), n);
}

void import_quietly(int n) {
    LOUPE_FUNCTION_PARAMS("metered::import_quietly(int)", n);  // no spec: a plain zone
    loupe::metric_add(rows(), n);
}

}  // namespace metered

TEST(ParamTracing, MethodCallsCarryTheirOwnMetricDeltasWithTheirValues) {
    const loupe::metric_id rows = metered::rows();  // defined before the session names it
    auto sink = std::make_shared<method_recorder>();
    auto cfg = method_session(sink, "method=metered::import_rows(int); param=1");
    cfg.metrics = {"params_test.rows"};
    auto s = loupe::start_session(cfg);
    loupe::metric_add(metered::rows(), 100);  // outside any call: charged to none
    metered::import_rows(5);
    metered::import_rows(9);
    metered::import_quietly(3);
    s.stop();
    const auto calls = sink->calls("metered::import_rows(int)");
    ASSERT_EQ(calls.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(calls[i].values.size(), 1u);
        ASSERT_EQ(calls[i].metrics.size(), 1u);
        EXPECT_EQ(calls[i].metrics[0].id, rows);
        EXPECT_EQ(std::to_string(calls[i].metrics[0].value), calls[i].values[0].text);  // 5 rows for n=5, 9 for 9
    }
    const auto quiet = sink->calls("metered::import_quietly(int)");
    ASSERT_EQ(quiet.size(), 1u);
    EXPECT_TRUE(quiet[0].values.empty());
    ASSERT_EQ(quiet[0].metrics.size(), 1u);
    EXPECT_EQ(quiet[0].metrics[0].value, 3);
}

namespace late {

struct Parcel {
    int weight = 0;
};

void ship(const Parcel& p) {
    LOUPE_FUNCTION_PARAMS("late::ship(Parcel const&)", p);
}

}  // namespace late

TEST(ParamTracing, ATypeRegisteredWhileTheSessionRunsIsFoundByTheNextCall) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=late::ship(Parcel const&); param=1; chain=field(weight)"));
    late::ship(late::Parcel{3});  // Parcel is not registered yet: an apply error
    loupe::reflect<late::Parcel>("late::Parcel").field("weight", &late::Parcel::weight);
    late::ship(late::Parcel{4});
    s.stop();
    const auto calls = sink->calls("late::ship(Parcel const&)");
    ASSERT_EQ(calls.size(), 2u);
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_EQ(calls[0].values[0].kind, loupe::value_kind::enable_failed);
    ASSERT_EQ(calls[1].values.size(), 1u);
    EXPECT_EQ(calls[1].values[0].text, "4");
    EXPECT_EQ(sink->errors().size(), 1u);
}

namespace {
// The compiler calls this class "(anonymous namespace)::Widget"; its site
// names it "gadgets::Widget", and specs match the site's name.
class Widget {
public:
    int poke(int strength) {
        LOUPE_METHOD("gadgets::Widget::poke(int)", strength);
        return strength * 2;
    }
};
}  // namespace

TEST(ParamTracing, AReceiverOfTheSitesOwnClassMatchesAsTheSignatureNamesIt) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=gadgets::Widget::poke(int); param=1; match=exact"));
    Widget w;
    EXPECT_EQ(w.poke(21), 42);
    s.stop();
    const auto calls = sink->calls("gadgets::Widget::poke(int)");
    ASSERT_EQ(calls.size(), 1u);
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_EQ(calls[0].values[0].text, "21");
}

TEST(ParamTracing, ValuesAreCutToTheSessionsValueBudget) {
    auto sink = std::make_shared<method_recorder>();
    auto cfg = method_session(sink, "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)");
    cfg.param_value_bytes = 8;
    auto s = loupe::start_session(cfg);
    shop::Cart cart;
    cart.add(shop::Item{std::string(1000, 'x'), 1}, 1);
    s.stop();
    const auto calls = sink->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(calls.size(), 1u);
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_TRUE(calls[0].values[0].truncated);
    EXPECT_EQ(calls[0].values[0].original_size, 1000u);
    EXPECT_EQ(calls[0].values[0].text, std::string(8, 'x') + "\xE2\x80\xA6");
}

TEST(ParamTracing, RedactAndHashNeverPutTheSecretIntoTheTrace) {
    const std::string path = std::string(LOUPE_TEST_BINARY_DIR) + "/params_secrets.loupe";
    auto file = std::make_shared<loupe::sinks::file_sink>(path);
    auto sink = std::make_shared<method_recorder>();
    loupe::session_config cfg = method_session(sink,
                                               "method=shop::Cart::login(Customer const&); param=1; chain=field(password)|redact\n"
                                               "method=shop::Cart::login(Customer const&); param=1; chain=field(password)|hash\n"
                                               "method=shop::Cart::login(Customer const&); param=1; chain=field(name)\n");
    cfg.sinks.push_back(file);
    auto s = loupe::start_session(cfg);
    shop::Cart cart;
    cart.login(shop::Customer{"alice", "hunter2-secret"});
    cart.login(shop::Customer{"bob", "hunter2-secret"});
    cart.login(shop::Customer{"carol", "other-secret"});
    s.stop();
    const std::string bytes = loupe_test::slurp(path);
    ASSERT_FALSE(bytes.empty());
    EXPECT_EQ(bytes.find("hunter2"), std::string::npos);
    EXPECT_EQ(bytes.find("other-secret"), std::string::npos);
    EXPECT_NE(bytes.find("alice"), std::string::npos);  // the clear field is there: the scan can find text
    const auto calls = sink->calls("shop::Cart::login(Customer const&)");
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_EQ(calls[0].values[0].kind, loupe::value_kind::redacted);
    EXPECT_EQ(calls[0].values[0].original_size, 14u);
    EXPECT_EQ(calls[0].values[1].kind, loupe::value_kind::hash);
    EXPECT_EQ(calls[0].values[1].bits, calls[1].values[1].bits);  // same secret, same hash
    EXPECT_NE(calls[0].values[1].bits, calls[2].values[1].bits);
    std::remove(path.c_str());
}

// ------------------------------------------------ Tables 1 and 2 of the patent

namespace hierarchy {

struct Value {};

class Arrays {
public:
    virtual ~Arrays() = default;
    virtual int run(const Value& v) {
        LOUPE_METHOD("hierarchy::Arrays::run(Value const&)", v);
        return 1;
    }
};
class Arrays2 : public Arrays {};  // inherits run
class Arrays3 : public Arrays2 {
public:
    int run(const Value& v) override {
        LOUPE_METHOD("hierarchy::Arrays3::run(Value const&)", v);
        return 3;
    }
};

const bool registered = [] {
    loupe::reflect<Arrays>("hierarchy::Arrays");
    loupe::reflect<Arrays2>("hierarchy::Arrays2").base<Arrays>();
    loupe::reflect<Arrays3>("hierarchy::Arrays3").base<Arrays2>();
    return true;
}();

// Which of the calls 1..3 (on Arrays, Arrays2, Arrays3) carry the spec's value.
std::vector<int> traced_calls(const std::string& spec_class, const std::string& mode) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(
        method_session(sink, "method=" + spec_class + ".run(Value const&); param=0; chain=type_of; match=" + mode));
    Arrays a1;
    Arrays2 a2;
    Arrays3 a3;
    Value v;
    Arrays* calls[] = {&a1, &a2, &a3};
    for (Arrays* a : calls) a->run(v);
    s.stop();
    std::vector<int> traced;
    auto all = sink->calls("hierarchy::Arrays::run(Value const&)");
    for (const auto& c : sink->calls("hierarchy::Arrays3::run(Value const&)")) all.push_back(c);
    EXPECT_EQ(all.size(), 3u);  // every call is timed
    for (const auto& c : all) {
        if (c.values.empty()) continue;
        EXPECT_EQ(c.values[0].kind, loupe::value_kind::type_name);
        if (c.values[0].text == "hierarchy::Arrays") traced.push_back(1);
        if (c.values[0].text == "hierarchy::Arrays2") traced.push_back(2);
        if (c.values[0].text == "hierarchy::Arrays3") traced.push_back(3);
    }
    std::sort(traced.begin(), traced.end());
    return traced;
}

}  // namespace hierarchy

TEST(ParamTracing, MatchModesFollowThePatentsTables1And2) {
    using hierarchy::traced_calls;
    EXPECT_EQ(traced_calls("Arrays", "exact"), (std::vector<int>{1}));
    EXPECT_EQ(traced_calls("Arrays", "inherited"), (std::vector<int>{1, 2}));
    EXPECT_EQ(traced_calls("Arrays", "subclasses"), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(traced_calls("Arrays2", "exact"), (std::vector<int>{2}));
    EXPECT_EQ(traced_calls("Arrays2", "inherited"), (std::vector<int>{2}));
    EXPECT_EQ(traced_calls("Arrays2", "subclasses"), (std::vector<int>{2, 3}));
}

// ------------------------------------------------ recursion guard and filters

namespace guarded {

std::atomic<int> getter_calls{0};
std::atomic<int> getter_calls_on_bob{0};
thread_local bool on_bob = false;

struct Account;
void audit(const Account& a);

struct Account {
    int id = 0;
    int balance() const {  // a getter that itself calls an instrumented method
        ++getter_calls;
        if (on_bob) ++getter_calls_on_bob;
        audit(*this);
        return id * 10;
    }
};

void audit(const Account& a) {
    LOUPE_FUNCTION_PARAMS("guarded::audit(Account const&)", a);
}

void transfer(const Account& a) {
    LOUPE_FUNCTION_PARAMS("guarded::transfer(Account const&)", a);
}

const bool registered = [] {
    loupe::reflect<Account>("guarded::Account").method("balance", &Account::balance);
    return true;
}();

}  // namespace guarded

TEST(ParamTracing, MethodsCalledByAModifierAreNotTraced) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink,
                                                 "method=guarded::transfer(Account const&); param=1; chain=call(balance)\n"
                                                 "method=guarded::audit(Account const&); param=1; chain=call(balance)\n"));
    guarded::getter_calls = 0;
    guarded::transfer(guarded::Account{4});
    s.stop();
    const auto transfers = sink->calls("guarded::transfer(Account const&)");
    ASSERT_EQ(transfers.size(), 1u);
    ASSERT_EQ(transfers[0].values.size(), 1u);
    EXPECT_EQ(transfers[0].values[0].text, "40");
    EXPECT_TRUE(sink->calls("guarded::audit(Account const&)").empty());  // audit ran inside the getter
    EXPECT_EQ(guarded::getter_calls.load(), 1);
}

// A straight binding's values are written straight into the thread's ring
// and published in place when the call returns; whatever else the thread
// records in between must neither lose them nor be lost.
namespace in_place {

struct Order {
    std::string id;
    int lines = 0;
    int priced() const {  // a getter that records a zone of its own
        LOUPE_ZONE("in_place::Order::priced");
        return lines * 10;
    }
};

void ship(const Order& order, int boxes) {
    LOUPE_FUNCTION_CHAINS("in_place::ship(Order const&,int)", (order, boxes),
                          loupe::named("id", loupe::arg<1> | loupe::field(&Order::id)),
                          loupe::named("boxes", loupe::arg<2>));
    LOUPE_ZONE("in_place::ship.body");  // recorded while the call's values wait in the ring
}

void dispatch(const Order& order) {
    LOUPE_FUNCTION_CHAINS("in_place::dispatch(Order const&)", (order),
                          loupe::named("id", loupe::arg<1> | loupe::field(&Order::id)));
    ship(order, order.lines);  // a call with values inside a call with values
}

void quote(const Order& order) {
    LOUPE_FUNCTION_CHAINS("in_place::quote(Order const&)", (order),
                          loupe::named("total", loupe::arg<1> | loupe::call(&Order::priced)),
                          loupe::named("id", loupe::arg<1> | loupe::field(&Order::id)));
}

loupe::session_config session(std::shared_ptr<method_recorder> sink) {
    auto cfg = method_session(std::move(sink),
                              "method=in_place::ship\nmethod=in_place::dispatch\nmethod=in_place::quote\n");
    cfg.kinds = loupe::kinds::methods | loupe::kinds::zones;
    cfg.overflow = loupe::overflow_policy::block;  // every event counts below
    return cfg;
}

}  // namespace in_place

TEST(ParamTracing, ValuesWrittenInPlaceSurviveWhatTheCallRecordsInside) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(in_place::session(sink));
    constexpr int rounds = 300;
    std::thread([] {
        for (int i = 0; i < rounds; ++i) {
            const in_place::Order order{"order-" + std::to_string(i), i % 7};
            in_place::ship(order, i);
            in_place::dispatch(order);
        }
    }).join();
    const loupe::session_stats stats = s.stop();
    const auto ships = sink->calls("in_place::ship(Order const&,int)");
    const auto dispatches = sink->calls("in_place::dispatch(Order const&)");
    ASSERT_EQ(ships.size(), 2u * rounds);
    ASSERT_EQ(dispatches.size(), std::size_t{rounds});
    for (int i = 0; i < rounds; ++i) {
        const std::string id = "order-" + std::to_string(i);
        const seen_call& alone = ships[2 * static_cast<std::size_t>(i)];
        const seen_call& nested = ships[2 * static_cast<std::size_t>(i) + 1];
        ASSERT_EQ(alone.values.size(), 2u) << i;
        EXPECT_EQ(alone.values[0].text, id);
        EXPECT_EQ(alone.values[1].text, std::to_string(i));
        ASSERT_EQ(nested.values.size(), 2u) << i;
        EXPECT_EQ(nested.values[0].text, id);
        EXPECT_EQ(nested.values[1].text, std::to_string(i % 7));
        ASSERT_EQ(dispatches[static_cast<std::size_t>(i)].values.size(), 1u) << i;
        EXPECT_EQ(dispatches[static_cast<std::size_t>(i)].values[0].text, id);  // set aside by the call inside it
        EXPECT_FALSE(dispatches[static_cast<std::size_t>(i)].values_lost);
        EXPECT_LE(dispatches[static_cast<std::size_t>(i)].begin_ns, nested.begin_ns);
        EXPECT_GE(dispatches[static_cast<std::size_t>(i)].end_ns, nested.end_ns);
    }
    EXPECT_EQ(sink->calls("in_place::ship.body").size(), 2u * rounds);
    EXPECT_EQ(stats.delivered, 5u * rounds);  // 3 calls and 2 zones a round, nothing more
    EXPECT_EQ(stats.dropped, 0u);
}

TEST(ParamTracing, AGetterThatRecordsWhileTheValuesAreWrittenLosesNothing) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(in_place::session(sink));
    constexpr int rounds = 300;
    // Long ids: the slots left behind are mostly text, which read as records
    // would name sessions and sites that do not exist.
    const std::string prefix(100, 'q');
    std::thread([&prefix] {
        for (int i = 0; i < rounds; ++i) in_place::quote(in_place::Order{prefix + std::to_string(i), i});
    }).join();
    const loupe::session_stats stats = s.stop();
    const auto quotes = sink->calls("in_place::quote(Order const&)");
    ASSERT_EQ(quotes.size(), std::size_t{rounds});
    for (int i = 0; i < rounds; ++i) {
        const seen_call& c = quotes[static_cast<std::size_t>(i)];
        ASSERT_EQ(c.values.size(), 2u) << i;
        EXPECT_EQ(c.values[0].text, std::to_string(i * 10));
        EXPECT_EQ(c.values[1].text, prefix + std::to_string(i));
        EXPECT_FALSE(c.values_lost);
    }
    // The getter's zone is recorded (before the call it serves), and the
    // slots the call had opened reach no sink.
    EXPECT_EQ(sink->calls("in_place::Order::priced").size(), std::size_t{rounds});
    EXPECT_EQ(stats.delivered, 2u * rounds);
    EXPECT_EQ(stats.dropped, 0u);
}

TEST(ParamTracing, AThreadTheFilterExcludesNeverRunsTheGetters) {
    auto sink = std::make_shared<method_recorder>();
    auto cfg = method_session(sink, "method=guarded::transfer(Account const&); param=1; chain=call(balance)");
    cfg.filter = R"(user == "alice")";
    auto s = loupe::start_session(cfg);
    guarded::getter_calls = 0;
    guarded::getter_calls_on_bob = 0;
    std::thread alice([] {
        loupe::field_scope user(loupe::context_field::user, "alice");
        for (int i = 0; i < 50; ++i) guarded::transfer(guarded::Account{i});
    });
    std::thread bob([] {
        guarded::on_bob = true;
        loupe::field_scope user(loupe::context_field::user, "bob");
        for (int i = 0; i < 50; ++i) guarded::transfer(guarded::Account{i});
    });
    alice.join();
    bob.join();
    s.stop();
    EXPECT_EQ(guarded::getter_calls_on_bob.load(), 0);
    EXPECT_EQ(guarded::getter_calls.load(), 50);
    EXPECT_EQ(sink->calls("guarded::transfer(Account const&)").size(), 50u);
}

// ------------------------------------------------ specs changed while calls run

namespace slow {

std::mutex m;
std::condition_variable cv;
bool inside = false, release = false;

void wait_here(int n) {
    LOUPE_FUNCTION_PARAMS("slow::wait_here(int)", n);
    std::unique_lock<std::mutex> lock(m);
    inside = true;
    cv.notify_all();
    cv.wait(lock, [] { return release; });
}

void reset() {
    std::lock_guard<std::mutex> lock(m);
    inside = release = false;
}
void wait_inside() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [] { return inside; });
}
void let_go() {
    std::lock_guard<std::mutex> lock(m);
    release = true;
    cv.notify_all();
}

}  // namespace slow

TEST(ParamTracing, SpecsChangedWhileAThreadIsInsideKeepThatCallsBinding) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=slow::wait_here(int); param=1; name=first"));
    slow::reset();
    std::thread t([] { slow::wait_here(1); });
    slow::wait_inside();
    s.set_params("method=slow::wait_here(int); param=1; chain=hash; name=second");
    slow::let_go();
    t.join();
    slow::reset();
    std::thread t2([] { slow::wait_here(2); });
    slow::wait_inside();
    s.set_params("");  // no specs: later calls are timed only
    slow::let_go();
    t2.join();
    slow::reset();
    slow::let_go();
    slow::wait_here(3);
    s.stop();
    const auto calls = sink->calls("slow::wait_here(int)");
    ASSERT_EQ(calls.size(), 3u);  // every call delivered whole: no exit without its entry
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_EQ(calls[0].values[0].kind, loupe::value_kind::integer);  // the binding it entered with
    EXPECT_EQ(calls[0].values[0].spec, 0u);
    ASSERT_EQ(calls[1].values.size(), 1u);
    EXPECT_EQ(calls[1].values[0].kind, loupe::value_kind::hash);
    EXPECT_EQ(calls[1].values[0].spec, 1u);
    EXPECT_TRUE(calls[2].values.empty());
    EXPECT_EQ(sink->specs().size(), 2u);
}

TEST(ParamTracing, ACallThatEnteredBeforeTheSessionStartedIsNotRecorded) {
    auto sink = std::make_shared<method_recorder>();
    slow::reset();
    std::thread t([] { slow::wait_here(9); });
    slow::wait_inside();
    auto s = loupe::start_session(method_session(sink, "method=slow::wait_here(int); param=1"));
    slow::let_go();
    t.join();
    s.stop();
    EXPECT_TRUE(sink->calls("slow::wait_here(int)").empty());
}

TEST(ParamTracing, SetParamsRejectsBadTextAndKeepsTheOldSpecs) {
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=shop::price(Item const*); param=1; chain=field(price)"));
    EXPECT_THROW(s.set_params("method=shop::price(Item const*); param=x"), loupe::error);
    shop::Item item{"Z", 1.5};
    shop::price(&item);
    s.stop();
    const auto calls = sink->calls("shop::price(Item const*)");
    ASSERT_EQ(calls.size(), 1u);
    ASSERT_EQ(calls[0].values.size(), 1u);
    EXPECT_EQ(calls[0].values[0].text, "1.5");
    EXPECT_THROW(s.set_params(""), loupe::error);  // not running any more
}

TEST(ParamTracing, ACallWithoutValuesLeftByAnExceptionIsMarked) {
    // No spec applies to fail(int): the call is timed like a zone, and still
    // says that it left by an exception.
    auto sink = std::make_shared<method_recorder>();
    auto s = loupe::start_session(method_session(sink, "method=shop::price(Item const*); param=1"));
    shop::Cart cart;
    EXPECT_THROW(cart.fail(3), std::runtime_error);
    cart.add(shop::Item{"B", 1}, 1);
    s.stop();
    const auto failed = sink->calls("shop::Cart::fail(int)");
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_TRUE(failed[0].exceptional);
    EXPECT_TRUE(failed[0].values.empty());
    const auto added = sink->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(added.size(), 1u);
    EXPECT_FALSE(added[0].exceptional);
}

TEST(ParamTracing, TwoSessionsWithSpecsOnOneSiteEachGetTheirOwnValues) {
    auto first = std::make_shared<method_recorder>();
    auto second = std::make_shared<method_recorder>();
    auto a = loupe::start_session(method_session(first, "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)"));
    auto second_cfg = method_session(second, "method=shop::Cart::add(Item const&,int); param=2");
    second_cfg.filter = R"(user == "carol")";
    auto b = loupe::start_session(second_cfg);
    std::thread([] {  // recorded by the first session only
        shop::Cart cart;
        cart.add(shop::Item{"ONLY-A", 1}, 4);
    }).join();
    std::thread([] {  // recorded by both
        loupe::field_scope user(loupe::context_field::user, "carol");
        shop::Cart cart;
        cart.add(shop::Item{"BOTH", 1}, 6);
    }).join();
    a.stop();
    b.stop();
    const auto a_calls = first->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(a_calls.size(), 2u);
    for (const auto& c : a_calls) ASSERT_EQ(c.values.size(), 1u);
    EXPECT_EQ(a_calls[0].values[0].text, "ONLY-A");
    EXPECT_EQ(a_calls[1].values[0].text, "BOTH");
    const auto b_calls = second->calls("shop::Cart::add(Item const&,int)");
    ASSERT_EQ(b_calls.size(), 1u);
    ASSERT_EQ(b_calls[0].values.size(), 1u);
    EXPECT_EQ(b_calls[0].values[0].kind, loupe::value_kind::integer);
    EXPECT_EQ(b_calls[0].values[0].text, "6");
}

namespace nesting {

// Each call keeps its value on the thread's value stack until it returns.
int descend(const std::string& label, int depth) {
    LOUPE_FUNCTION_PARAMS("nesting::descend(std::string const&,int)", label, depth);
    return depth == 0 ? 0 : 1 + descend(label, depth - 1);
}

}  // namespace nesting

TEST(ParamTracing, CallsNestedBeyondTheValueStackAreRecordedWithTheValuesThatFit) {
    // 3 KB values, 200 calls deep: far more than the thread's 32 KiB value
    // stack holds. Every call is still recorded; the outer ones carry their
    // value whole, the ones that find no room for a frame (one unit's 4 KiB
    // payload) carry none and are flagged values_lost.
    auto sink = std::make_shared<method_recorder>();
    auto cfg = method_session(sink, "method=nesting::descend(std::string const&,int); param=1");
    cfg.param_value_bytes = 4096;
    cfg.overflow = loupe::overflow_policy::block;  // 200 units of 3 KB: none may be dropped
    auto s = loupe::start_session(cfg);
    const std::string label(3000, 'x');
    std::thread([&label] { EXPECT_EQ(nesting::descend(label, 199), 199); }).join();
    s.stop();
    const auto calls = sink->calls("nesting::descend(std::string const&,int)");
    ASSERT_EQ(calls.size(), 200u);
    std::size_t with_value = 0;
    for (const auto& c : calls) {
        EXPECT_EQ(c.values_lost, c.values.empty());  // a call without its value says so
        if (c.values.empty()) continue;
        ++with_value;
        ASSERT_EQ(c.values.size(), 1u);
        EXPECT_EQ(c.values[0].text, label);
        EXPECT_FALSE(c.values[0].truncated);
    }
    // Frames of 16 + 12 + 3000 bytes (payload header, value header and
    // original size, text), each opened while 4 KiB are left of 32 KiB.
    const std::size_t frame = 16 + 12 + 3000;
    EXPECT_EQ(with_value, (32u * 1024 - 4096) / frame + 1);
    EXPECT_EQ(calls.front().values.size(), 1u);  // the outermost call
    EXPECT_TRUE(calls.back().values.empty());    // the innermost
}

namespace oversized {

void two_texts(const std::string& a, const std::string& b) {
    LOUPE_FUNCTION_PARAMS("oversized::two_texts(std::string const&,std::string const&)", a, b);
}

}  // namespace oversized

TEST(ParamTracing, AValueBeyondTheCallsPayloadIsLeftOutAndFlaggedWithOrWithoutCpu) {
    // Two 3,000-byte values cannot share one call's 4 KiB payload: the second
    // is left out (not cut to what is left) and the call says values_lost,
    // whether or not a spec also asks for CPU time.
    const std::string a(3000, 'a'), b(3000, 'b');
    for (const bool cpu : {false, true}) {
        auto sink = std::make_shared<method_recorder>();
        const std::string method = "method=oversized::two_texts(std::string const&,std::string const&)";
        auto cfg = method_session(sink, method + "; param=1" + (cpu ? "; data=cpu" : "") + "\n" + method + "; param=2");
        cfg.param_value_bytes = 4096;
        cfg.overflow = loupe::overflow_policy::block;
        auto s = loupe::start_session(cfg);
        oversized::two_texts(a, b);
        s.stop();
        const auto calls = sink->calls("oversized::two_texts(std::string const&,std::string const&)");
        ASSERT_EQ(calls.size(), 1u) << "cpu " << cpu;
        const seen_call& c = calls[0];
        EXPECT_EQ(c.has_cpu, cpu);
        EXPECT_TRUE(c.values_lost) << "cpu " << cpu;
        ASSERT_EQ(c.values.size(), 1u) << "cpu " << cpu;
        EXPECT_EQ(c.values[0].text, a);
        EXPECT_FALSE(c.values[0].truncated);
    }
}

TEST(ParamTracing, ACallThatCanNeverFitTheRingIsDroppedAndCountedAtOnceUnderEitherPolicy) {
    // A 3,000-byte value in a 1 KiB ring: the call's unit can never fit.
    // Under block the host thread must not wait for room that cannot come;
    // under either policy every call is delivered or counted as dropped.
    const std::string big(3000, 'x');
    for (const auto policy : {loupe::overflow_policy::block, loupe::overflow_policy::drop}) {
        auto sink = std::make_shared<method_recorder>();
        auto cfg = method_session(sink, "method=oversized::two_texts(std::string const&,std::string const&); param=1");
        cfg.param_value_bytes = 4096;
        cfg.ring_bytes = 1024;
        cfg.overflow = policy;
        auto s = loupe::start_session(cfg);
        std::atomic<bool> returned{false};
        std::thread caller([&] {  // a new thread: it gets the session's 1 KiB ring
            oversized::two_texts(big, "small");
            oversized::two_texts(big, "small");
            returned = true;
        });
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!returned && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        const bool blocked = !returned;
        const loupe::session_stats st = s.stop();  // releases a blocked caller
        caller.join();
        EXPECT_FALSE(blocked) << "the host thread waited for room in a ring its call can never fit";
        const auto calls = sink->calls("oversized::two_texts(std::string const&,std::string const&)");
        EXPECT_EQ(calls.size() + st.dropped, 2u) << "policy " << static_cast<int>(policy);
        EXPECT_EQ(st.delivered, calls.size());
    }
}
