// Runtime (text) modifier chains on reflected types: each modifier's value
// and error kinds, bind-time type errors with their messages, getters that
// return temporaries or throw, casts along registered bases, syntax errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <loupe/params/detail/class_graph.hpp>
#include <loupe/params/detail/runtime_chain_binder.hpp>
#include <loupe/params/detail/runtime_chain_encoders.hpp>
#include <loupe/params/detail/runtime_chain_parser.hpp>
#include <loupe/params/detail/runtime_chain_steps.hpp>
#include <loupe/params/reflect.hpp>

namespace rtc {

struct Entity {
    virtual ~Entity() = default;
    std::int64_t id = 7;
};

struct Item : Entity {
    std::string sku = "A-100";
    double price = 2.5;
    int qty = 3;
    std::vector<int> tags{10, 20, 30};
    std::vector<bool> flags{true, false};
    std::unique_ptr<Item> next;
    const char* cname = nullptr;
    std::optional<std::string> note;
    char code[8] = {'X', 'Y', 0, 0, 0, 0, 0, 0};

    double total() const { return price * qty; }
    std::string name() const { return "item-" + sku; }
    std::string label() const { return "label-" + sku; }
    const std::string& sku_ref() const { return sku; }
    int boom() const { throw std::runtime_error("boom"); }
};

struct Special : Item {
    std::string detail = "special detail";
};

struct Point {
    int x = 1, y = 2;
};
std::ostream& operator<<(std::ostream& os, const Point& p) { return os << '(' << p.x << ", " << p.y << ')'; }

struct Order {
    std::vector<Item> items;
    std::vector<std::shared_ptr<Entity>> entities;
    std::string id = "order-1";
    Item* first = nullptr;
    Point where;
    Item plain;
};

std::string table_of(const Item& i) { return "table:" + i.sku; }
std::size_t count_or_zero(const Order* o) { return o != nullptr ? o->items.size() + 100 : 0; }

struct Unregistered {
    int v = 1;
};

void register_types() {
    static const bool once = [] {
        loupe::reflect<Entity>("rtc::Entity").field("id", &Entity::id);
        loupe::reflect<Item>("rtc::Item")
            .field("sku", &Item::sku)
            .field("price", &Item::price)
            .field("qty", &Item::qty)
            .field("tags", &Item::tags)
            .field("flags", &Item::flags)
            .field("next", &Item::next)
            .field("cname", &Item::cname)
            .field("note", &Item::note)
            .field("code", &Item::code)
            .method("total", &Item::total)
            .method("name", &Item::name)
            .method("label", &Item::label)
            .method("sku_ref", &Item::sku_ref)
            .method("boom", &Item::boom)
            .base<Entity>();
        loupe::reflect<Special>("rtc::Special").field("detail", &Special::detail).base<Item>();
        loupe::reflect<Order>("rtc::Order")
            .field("items", &Order::items)
            .field("entities", &Order::entities)
            .field("id", &Order::id)
            .field("first", &Order::first)
            .field("where", &Order::where)
            .field("plain", &Order::plain);
        loupe::reflect_function("rtc::table_of", &table_of);
        loupe::reflect_function("rtc::count_or_zero", &count_or_zero);
        return true;
    }();
    (void)once;
}

/// The result of one evaluation, copied out of the writer.
struct result {
    loupe::value_kind kind = loupe::value_kind::unknown;
    std::string text;
    std::uint64_t bits = 0;
    bool truncated = false;
    std::uint32_t original_size = 0;
};

template <class T>
result eval(std::string_view chain, const T& object, std::size_t capacity = 256) {
    register_types();
    const auto bound = loupe::detail::bind_chain(chain, loupe::detail::type_desc_of<T>());
    if (!bound) {
        ADD_FAILURE() << "bind failed: " << bound.error;
        return {};
    }
    std::vector<char> buf(capacity);
    loupe::value_writer out(buf.data(), capacity);
    bound.chain->evaluate(&object, out);
    const loupe::param_value& v = out.value();
    return {v.kind, std::string(v.text), v.bits, v.truncated, v.original_size};
}

template <class T>
std::string bind_error(std::string_view chain) {
    register_types();
    const auto bound = loupe::detail::bind_chain(chain, loupe::detail::type_desc_of<T>());
    EXPECT_FALSE(bound) << chain;
    return bound.error;
}

using loupe::value_kind;

}  // namespace rtc

using namespace rtc;

TEST(RuntimeChain, FieldReadsByName) {
    Item item;
    const result r = eval("field(sku)", item);
    EXPECT_EQ(r.kind, value_kind::string);
    EXPECT_EQ(r.text, "A-100");
    EXPECT_EQ(eval("field(qty)", item).kind, value_kind::integer);
    const result price = eval("field(price)", item);
    EXPECT_EQ(price.kind, value_kind::floating);
    double d;
    std::memcpy(&d, &price.bits, sizeof d);
    EXPECT_EQ(d, 2.5);
}

TEST(RuntimeChain, EmptyChainTracesTheValueItself) {
    int v = -4;
    const result r = eval("", v);
    EXPECT_EQ(r.kind, value_kind::integer);
    EXPECT_EQ(static_cast<std::int64_t>(r.bits), -4);
    std::string s = "hi";
    EXPECT_EQ(eval("  ", s).text, "hi");
}

TEST(RuntimeChain, InheritedFieldIsFoundThroughRegisteredBase) {
    Special sp;
    sp.id = 42;
    const result r = eval("field(id)", sp);
    EXPECT_EQ(r.kind, value_kind::integer);
    EXPECT_EQ(static_cast<std::int64_t>(r.bits), 42);
    EXPECT_EQ(eval("field(sku)", sp).text, "A-100");
}

TEST(RuntimeChain, LengthOfContainersAndStrings) {
    Item item;
    result r = eval("field(tags) | length", item);
    EXPECT_EQ(r.kind, value_kind::unsigned_integer);
    EXPECT_EQ(r.bits, 3u);
    EXPECT_EQ(eval("field(sku)|length", item).bits, 5u);
    EXPECT_EQ(eval("field(code)|length", item).bits, 2u);
    item.cname = nullptr;
    EXPECT_EQ(eval("field(cname)|length", item).kind, value_kind::null_in_call);
    item.cname = "abcd";
    EXPECT_EQ(eval("field(cname)|length", item).bits, 4u);
}

TEST(RuntimeChain, AtCountsFromBothEnds) {
    Item item;
    EXPECT_EQ(static_cast<std::int64_t>(eval("field(tags)|at(0)", item).bits), 10);
    EXPECT_EQ(static_cast<std::int64_t>(eval("field(tags)|at(-1)", item).bits), 30);
    EXPECT_EQ(static_cast<std::int64_t>(eval("field(tags)|at(-3)", item).bits), 10);
    EXPECT_EQ(eval("field(tags)|at(3)", item).kind, value_kind::invalid_index);
    EXPECT_EQ(eval("field(tags)|at(-4)", item).kind, value_kind::invalid_index);
    EXPECT_EQ(eval("field(tags)|at(-9223372036854775808)", item).kind, value_kind::invalid_index);
    item.tags.clear();
    EXPECT_EQ(eval("field(tags)|at(-1)", item).kind, value_kind::invalid_index);
    // Strings index as chars (integers); vector<bool> elements are proxies.
    EXPECT_EQ(static_cast<std::int64_t>(eval("field(sku)|at(-1)", item).bits), '0');
    const result b = eval("field(flags)|at(1)", item);
    EXPECT_EQ(b.kind, value_kind::boolean);
    EXPECT_EQ(b.bits, 0u);
}

TEST(RuntimeChain, AtOverElementsOfClassType) {
    Order order;
    order.items.resize(2);
    order.items[1].sku = "second";
    EXPECT_EQ(eval("field(items)|at(-1)|field(sku)", order).text, "second");
    EXPECT_EQ(eval("field(items)|array_element(-1)|field(sku)", order).text, "second");
    EXPECT_EQ(eval("field(items)|array_element|field(sku)", order).text, "A-100");
}

TEST(RuntimeChain, TypeOfReportsRegisteredDynamicType) {
    Special sp;
    const Entity& e = sp;
    const result r = eval("type_of", e);
    EXPECT_EQ(r.kind, value_kind::type_name);
    EXPECT_EQ(r.text, "rtc::Special");
    EXPECT_EQ(eval("class", e).text, "rtc::Special");
    Order o;
    o.entities.push_back(std::make_shared<Item>());
    o.entities.push_back(nullptr);
    EXPECT_EQ(eval("field(entities)|at(0)|type_of", o).text, "rtc::Item");
    EXPECT_EQ(eval("field(entities)|at(1)|type_of", o).kind, value_kind::null_in_call);
    // Unregistered types report their demangled name.
    std::vector<int> v;
    EXPECT_EQ(eval("type_of", v).text, loupe::detail::demangle(typeid(std::vector<int>)));
    EXPECT_EQ(loupe::detail::reflected_name(typeid(Special)), "rtc::Special");
}

TEST(RuntimeChain, CallRunsRegisteredGetters) {
    Item item;
    const result total = eval("call(total)", item);
    EXPECT_EQ(total.kind, value_kind::floating);
    double d;
    std::memcpy(&d, &total.bits, 8);
    EXPECT_EQ(d, 7.5);
    EXPECT_EQ(eval("call(sku_ref)", item).text, "A-100");
    EXPECT_EQ(eval("instance_method(name()std::string)", item).text, "item-A-100");
}

TEST(RuntimeChain, TwoGettersReturningStringsKeepTheirOwnMemberPointers) {
    Item item;
    EXPECT_EQ(eval("call(name)", item).text, "item-A-100");
    EXPECT_EQ(eval("call(label)", item).text, "label-A-100");
    EXPECT_EQ(eval("call(name)", item).text, "item-A-100");
}

TEST(RuntimeChain, GetterTemporaryLivesWhileTheRestOfTheChainRuns) {
    Item item;
    item.sku = std::string(100, 'z');  // beyond the small-string buffer: a heap temporary
    const result r = eval("call(name) | truncate(8)", item);
    EXPECT_EQ(r.text, "item-zzz");
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.original_size, 105u);
    EXPECT_EQ(eval("call(name)|length", item).bits, 105u);
    EXPECT_EQ(eval("call(name)|at(-1)", item).bits, static_cast<std::uint64_t>('z'));
}

TEST(RuntimeChain, ThrowingGetterGivesExceptionInCall) {
    Item item;
    EXPECT_EQ(eval("call(boom)", item).kind, value_kind::exception_in_call);
}

TEST(RuntimeChain, ApplyCallsRegisteredFunctions) {
    Item item;
    EXPECT_EQ(eval("apply(rtc::table_of)", item).text, "table:A-100");
    EXPECT_EQ(eval("apply(table_of)", item).text, "table:A-100");
    EXPECT_EQ(eval("static_method(rtc::table_of(rtc::Item const&)std::string)", item).text, "table:A-100");
    EXPECT_EQ(eval("static_method(rtc.table_of)", item).text, "table:A-100");
    // A derived object is passed as its registered base.
    Special sp;
    sp.sku = "S";
    EXPECT_EQ(eval("apply(table_of)", sp).text, "table:S");
    // Pointer parameters get null passed through (the patent's static_method).
    const Order* none = nullptr;
    EXPECT_EQ(eval("apply(count_or_zero)", none).bits, 0u);
    Order o;
    const Order* some = &o;
    EXPECT_EQ(eval("apply(count_or_zero)", some).bits, 100u);
    EXPECT_EQ(eval("apply(count_or_zero)", o).bits, 100u);
    // A reference parameter cannot take null.
    const Item* no_item = nullptr;
    EXPECT_EQ(eval("apply(table_of)", no_item).kind, value_kind::null_in_call);
}

TEST(RuntimeChain, NullsInTheChain) {
    Item item;
    EXPECT_EQ(eval("field(next)|field(sku)", item).kind, value_kind::null_in_call);
    EXPECT_EQ(eval("field(cname)", item).kind, value_kind::null_value);
    EXPECT_EQ(eval("field(note)", item).kind, value_kind::null_value);
    item.note = "n";
    EXPECT_EQ(eval("field(note)", item).text, "n");
    item.next = std::make_unique<Item>();
    item.next->sku = "child";
    EXPECT_EQ(eval("field(next)|field(sku)", item).text, "child");
    EXPECT_EQ(eval("field(next)|deref|field(sku)", item).text, "child");
    Order o;
    EXPECT_EQ(eval("field(first)|field(sku)", o).kind, value_kind::null_in_call);
}

TEST(RuntimeChain, PointerParameterIsTheAddressOfThePointer) {
    Item item;
    Item* p = &item;
    EXPECT_EQ(eval("field(sku)", p).text, "A-100");
    EXPECT_EQ(eval("deref|field(sku)", p).text, "A-100");
    p = nullptr;
    EXPECT_EQ(eval("field(sku)", p).kind, value_kind::null_in_call);
    EXPECT_EQ(eval("deref|field(sku)", p).kind, value_kind::null_in_call);
    std::string s = "text";
    const std::string* ps = nullptr;
    EXPECT_EQ(eval("", ps).kind, value_kind::null_value);
    ps = &s;
    EXPECT_EQ(eval("", ps).text, "text");
}

TEST(RuntimeChain, CastAlongRegisteredBases) {
    Special sp;
    const Entity& as_entity = sp;
    EXPECT_EQ(eval("cast(rtc::Special)|field(detail)", as_entity).text, "special detail");
    EXPECT_EQ(eval("cast(Special)|field(detail)", as_entity).text, "special detail");  // unqualified
    Item plain;
    const Entity& plain_entity = plain;
    EXPECT_EQ(eval("cast(rtc::Special)|field(detail)", plain_entity).kind, value_kind::cast_failed);
    EXPECT_EQ(eval("cast(rtc::Item)|field(sku)", plain_entity).text, "A-100");
    // Upwards always works, and null passes through to the next modifier.
    EXPECT_EQ(static_cast<std::int64_t>(eval("cast(rtc::Entity)|field(id)", sp).bits), 7);
    const Entity* null_entity = nullptr;
    EXPECT_EQ(eval("cast(rtc::Special)|field(detail)", null_entity).kind, value_kind::null_in_call);
    EXPECT_EQ(eval("cast(rtc::Special)|type_of", as_entity).text, "rtc::Special");
}

TEST(RuntimeChain, ObjectIdIsTheObjectsAddress) {
    Special sp;
    const Entity& e = sp;
    const result r = eval("object_id", e);
    EXPECT_EQ(r.kind, value_kind::object_id);
    EXPECT_EQ(r.bits, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&sp)));
    EXPECT_EQ(eval("id", sp).bits, r.bits);
    const Item* none = nullptr;
    EXPECT_EQ(eval("id", none).kind, value_kind::null_in_call);
}

TEST(RuntimeChain, ToStringUsesOperatorShiftBoundedToTheBudget) {
    Order o;
    o.where = Point{3, -4};
    const result r = eval("field(where)|to_string", o);
    EXPECT_EQ(r.kind, value_kind::string);
    EXPECT_EQ(r.text, "(3, -4)");
    EXPECT_FALSE(r.truncated);
    const result small = eval("field(where)|to_string", o, 4);
    EXPECT_EQ(small.text, "(3, ");
    EXPECT_TRUE(small.truncated);
    EXPECT_EQ(small.original_size, 7u);
    EXPECT_EQ(eval("field(where)|to_string|truncate(2)", o).text, "(3");
    EXPECT_EQ(eval("field(id)|to_string", o).text, "order-1");
}

TEST(RuntimeChain, TruncateCutsOnUtf8BoundaryAndKeepsTheSize) {
    Item item;
    item.sku = "h\xC3\xA9llo";  // "héllo": é is two bytes
    const result r = eval("field(sku)|truncate(2)", item);
    EXPECT_EQ(r.text, "h");
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.original_size, 6u);
    const result whole = eval("field(sku)|truncate(64)", item);
    EXPECT_EQ(whole.text, item.sku);
    EXPECT_FALSE(whole.truncated);
}

// Data members one after the other, then the value or a truncate of it,
// run fused (bound_chain::fields_then_write, fields_then_truncate): each
// gives what the same chain gives step by step (bound_chain::run), nulls
// and cuts included; the other shapes run their steps either way.
TEST(RuntimeChain, FusedChainsGiveWhatTheirStepsGive) {
    register_types();
    Order o;
    o.plain.sku = "h\xC3\xA9llo";  // "héllo": é is two bytes
    o.plain.qty = -9;
    const char* const chains[] = {
        "field(plain)|field(sku)",  "field(plain)|field(sku)|truncate(2)", "field(plain)|field(sku)|truncate(0)",
        "field(plain)|field(qty)",  "field(plain)|field(cname)",           "field(plain)|field(cname)|truncate(3)",
        "field(plain)|field(code)|truncate(1)", "field(id)|truncate(5)",   "field(id)",
        "field(plain)|field(id)",   "field(plain)|field(note)",            "field(first)|field(sku)",
        "field(plain)|field(sku)|truncate(3)|truncate(2)",
    };
    for (const char* chain : chains) {
        const auto bound = loupe::detail::bind_chain(chain, loupe::detail::type_desc_of<Order>());
        ASSERT_TRUE(bound) << chain << ": " << bound.error;
        for (const std::size_t capacity : {std::size_t{256}, std::size_t{3}}) {
            std::vector<char> fused_buf(capacity), steps_buf(capacity);
            loupe::value_writer fused(fused_buf.data(), capacity), steps(steps_buf.data(), capacity);
            bound.chain->evaluate(&o, fused);
            bound.chain->run(0, &o, steps);
            const loupe::param_value a = fused.value(), b = steps.value();
            EXPECT_EQ(a.kind, b.kind) << chain << ", capacity " << capacity;
            EXPECT_EQ(a.text, b.text) << chain << ", capacity " << capacity;
            EXPECT_EQ(a.bits, b.bits) << chain << ", capacity " << capacity;
            EXPECT_EQ(a.truncated, b.truncated) << chain << ", capacity " << capacity;
            EXPECT_EQ(a.original_size, b.original_size) << chain << ", capacity " << capacity;
        }
    }
    const result cut = eval("field(plain)|field(sku)|truncate(2)", o);
    EXPECT_EQ(cut.text, "h");
    EXPECT_TRUE(cut.truncated);
    EXPECT_EQ(cut.original_size, 6u);
    EXPECT_EQ(eval("field(plain)|field(cname)|truncate(3)", o).kind, value_kind::null_in_call);
    EXPECT_EQ(static_cast<std::int64_t>(eval("field(plain)|field(qty)", o).bits), -9);
}

namespace rtc {

// The bytes a bound chain's value takes as spec 0x1234 of session 5 with a
// value budget of `budget`: through its encoder (runtime_chain_encoders.hpp)
// when `encoded`, else evaluated and then encoded as a straight binding's
// entry without one does.
std::vector<unsigned char> value_bytes(const loupe::detail::bound_chain& chain, const void* object, std::size_t budget,
                                       bool encoded) {
    using namespace loupe::detail;
    std::vector<unsigned char> bytes(encoded_text_offset + budget + 8, 0xAB);
    std::size_t n = 0;
    if (encoded) {
        n = chain_encoders::choose(chain)(chain, object, bytes.data(), 5, 0x1234, budget);
    } else {
        loupe::value_writer out(reinterpret_cast<char*>(bytes.data() + encoded_text_offset), budget);
        chain.evaluate(object, out);
        n = encode_value(out, 5, 0x1234, bytes.data());
    }
    bytes.resize(n);
    return bytes;
}

// A chain without modifiers on a `T` holding `value`: its encoder gives the
// bytes evaluate + encode_value give.
template <class T>
void expect_value_encodes_as_evaluated(T value) {
    const auto bound = loupe::detail::bind_chain(loupe::detail::parsed_chain{}, loupe::detail::type_desc_of<T>());
    ASSERT_TRUE(bound) << bound.error;
    ASSERT_NE(loupe::detail::chain_encoders::choose(*bound.chain), nullptr) << typeid(T).name();
    for (const std::size_t budget : {std::size_t{256}, std::size_t{3}, std::size_t{0}}) {
        EXPECT_EQ(value_bytes(*bound.chain, &value, budget, true), value_bytes(*bound.chain, &value, budget, false))
            << typeid(T).name() << ", budget " << budget;
    }
}

}  // namespace rtc

// The chains that encode their value in place give the bytes that evaluating
// them and encoding the value give, cuts and UTF-8 boundaries included; the
// shapes and types without an encoder have none (their entries evaluate).
TEST(RuntimeChain, ChainsThatEncodeInPlaceGiveTheBytesOfEvaluateThenEncode) {
    register_types();
    Order o;
    o.plain.sku = "h\xC3\xA9llo w\xC3\xB6rld";  // two-byte characters at 1 and 8
    o.plain.qty = -9;
    o.plain.price = -2.25;
    for (const char* chain : {"field(plain)|field(sku)", "field(plain)|field(sku)|truncate(2)",
                              "field(plain)|field(sku)|truncate(9)", "field(plain)|field(sku)|truncate(0)",
                              "field(plain)|field(qty)", "field(plain)|field(price)", "field(id)",
                              "field(id)|truncate(5)"}) {
        const auto bound = loupe::detail::bind_chain(chain, loupe::detail::type_desc_of<Order>());
        ASSERT_TRUE(bound) << chain << ": " << bound.error;
        ASSERT_NE(loupe::detail::chain_encoders::choose(*bound.chain), nullptr) << chain;
        for (const std::size_t budget : {std::size_t{256}, std::size_t{8}, std::size_t{2}, std::size_t{0}}) {
            EXPECT_EQ(value_bytes(*bound.chain, &o, budget, true), value_bytes(*bound.chain, &o, budget, false))
                << chain << ", budget " << budget;
        }
    }
    for (const char* chain : {"field(plain)|field(cname)", "field(plain)|field(cname)|truncate(3)",
                              "field(plain)|field(note)", "field(first)|field(sku)", "field(plain)|field(code)|truncate(1)",
                              "field(plain)|field(sku)|truncate(3)|truncate(2)", "field(plain)|field(tags)|length",
                              "field(plain)|call(total)"}) {
        const auto bound = loupe::detail::bind_chain(chain, loupe::detail::type_desc_of<Order>());
        ASSERT_TRUE(bound) << chain << ": " << bound.error;
        EXPECT_EQ(loupe::detail::chain_encoders::choose(*bound.chain), nullptr) << chain;
    }
    expect_value_encodes_as_evaluated(true);
    expect_value_encodes_as_evaluated('x');
    expect_value_encodes_as_evaluated(static_cast<signed char>(-3));
    expect_value_encodes_as_evaluated(static_cast<unsigned char>(250));
    expect_value_encodes_as_evaluated(static_cast<short>(-300));
    expect_value_encodes_as_evaluated(static_cast<unsigned short>(65000));
    expect_value_encodes_as_evaluated(-7);
    expect_value_encodes_as_evaluated(4000000000u);
    expect_value_encodes_as_evaluated(-5L);
    expect_value_encodes_as_evaluated(~0UL);
    expect_value_encodes_as_evaluated(-(1LL << 62));
    expect_value_encodes_as_evaluated(~0ULL);
    expect_value_encodes_as_evaluated(1.5f);
    expect_value_encodes_as_evaluated(-0.1);
    expect_value_encodes_as_evaluated(std::string("caf\xC3\xA9"));
    expect_value_encodes_as_evaluated(std::string_view("caf\xC3\xA9"));
}

TEST(RuntimeChain, RedactAndHash) {
    Item item;
    const result red = eval("field(sku)|redact", item);
    EXPECT_EQ(red.kind, value_kind::redacted);
    EXPECT_EQ(red.original_size, 5u);
    EXPECT_TRUE(red.text.empty());
    const result h = eval("field(sku)|hash", item);
    EXPECT_EQ(h.kind, value_kind::hash);
    EXPECT_EQ(h.bits, loupe::detail::keyed_hash("A-100", 5));
    EXPECT_EQ(eval("call(sku_ref)|hash", item).bits, h.bits);
    item.cname = nullptr;
    EXPECT_EQ(eval("field(cname)|hash", item).kind, value_kind::null_in_call);
}

TEST(RuntimeChain, NumbersTakeOnlyToStringRedactAndHash) {
    Item item;
    item.qty = -42;
    EXPECT_EQ(eval("field(qty)|to_string", item).text, "-42");
    EXPECT_EQ(eval("field(price)|to_string", item).text, "2.5");
    EXPECT_EQ(eval("field(flags)|at(0)|to_string", item).text, "true");
    const result red = eval("field(qty)|redact", item);
    EXPECT_EQ(red.kind, value_kind::redacted);
    EXPECT_EQ(red.original_size, sizeof(int));
    const std::uint64_t minus42 = static_cast<std::uint64_t>(std::int64_t{-42});
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(minus42 >> (8 * i));
    EXPECT_EQ(eval("field(qty)|hash", item).bits, loupe::detail::keyed_hash(bytes, 8));
    EXPECT_NE(bind_error<Item>("field(qty)|type_of").find("arithmetic"), std::string::npos);
    EXPECT_NE(bind_error<Item>("field(qty)|truncate(2)").find("is an arithmetic value"), std::string::npos);
}

TEST(RuntimeChain, RedactWipesFormattedTextFromTheScratch) {
    Order o;
    char buf[32];
    std::memset(buf, 0, sizeof buf);
    register_types();
    const auto bound = loupe::detail::bind_chain("field(where)|to_string|redact", loupe::detail::type_desc_of<Order>());
    ASSERT_TRUE(bound) << bound.error;
    loupe::value_writer out(buf, sizeof buf);
    bound.chain->evaluate(&o, out);
    EXPECT_EQ(out.value().kind, value_kind::redacted);
    EXPECT_EQ(out.value().original_size, 6u);
    for (char c : buf) EXPECT_EQ(c, 0);
}

TEST(RuntimeChain, ResultKindIsKnownAtBindTime) {
    register_types();
    using loupe::detail::bind_chain;
    using loupe::detail::type_desc_of;
    EXPECT_EQ(bind_chain("field(sku)", type_desc_of<Item>()).chain->result_kind(), value_kind::string);
    EXPECT_EQ(bind_chain("field(tags)|length", type_desc_of<Item>()).chain->result_kind(),
              value_kind::unsigned_integer);
    EXPECT_EQ(bind_chain("type_of", type_desc_of<Item>()).chain->result_kind(), value_kind::type_name);
    EXPECT_EQ(bind_chain("field(sku)|hash", type_desc_of<Item>()).chain->result_kind(), value_kind::hash);
    EXPECT_EQ(bind_chain("id", type_desc_of<Item*>()).chain->result_kind(), value_kind::object_id);
    EXPECT_EQ(bind_chain("call(total)", type_desc_of<Item>()).chain->result_kind(), value_kind::floating);
}

TEST(RuntimeChain, BindErrorsNameTheModifierAndTheReason) {
    EXPECT_EQ(bind_error<Item>("field(tags) | field(nosuch)"),
              "modifier 2 `field(nosuch)`: std::vector<int, std::allocator<int> > is not registered, so it has no "
              "field 'nosuch' (loupe::reflect<std::vector<int, std::allocator<int> >>(\"std::vector<int, "
              "std::allocator<int> >\").field(...) registers one)");
    EXPECT_EQ(bind_error<Item>("field(nosuch)"),
              "modifier 1 `field(nosuch)`: rtc::Item has no field 'nosuch' (registered fields: sku, price, qty, tags, "
              "flags, next, cname, note, code, id)");
    EXPECT_EQ(bind_error<Item>("call(nosuch)")
                  .rfind("modifier 1 `call(nosuch)`: rtc::Item has no method 'nosuch' "
                         "(registered methods: total, name, label, sku_ref, boom)",
                         0),
              0u);
    EXPECT_NE(bind_error<Order>("field(plain)")
                  .find("modifier 1 `field(plain)`: its result, rtc::Item, is not "
                        "traceable"),
              std::string::npos);
    EXPECT_EQ(bind_error<Item>("field(qty)|length"),
              "modifier 2 `length`: int is an arithmetic value; only to_string, redact and hash apply to it");
    EXPECT_EQ(bind_error<Item>("cast(rtc::Nope)"),
              "modifier 1 `cast(rtc::Nope)`: no registered type 'rtc::Nope' (loupe::reflect<T>(\"rtc::Nope\") "
              "registers one)");
    EXPECT_NE(bind_error<Item>("field(sku)|field(x)").find("modifier 2 `field(x)`"), std::string::npos);
    EXPECT_NE(bind_error<Item>("length").find("modifier 1 `length`: length needs a sequence"), std::string::npos);
    EXPECT_NE(bind_error<Item>("apply(nosuch)").find("no registered function 'nosuch'"), std::string::npos);
    EXPECT_NE(bind_error<Order>("apply(table_of)").find("rtc::table_of takes rtc::Item, not rtc::Order"),
              std::string::npos);
    EXPECT_NE(bind_error<Item>("deref").find("deref needs a pointer"), std::string::npos);
    EXPECT_NE(bind_error<Item>("to_string").find("cannot be formatted"), std::string::npos);
    EXPECT_NE(bind_error<Item>("hash").find("hash needs text or a number"), std::string::npos);
    EXPECT_NE(bind_error<Item>("").find("the value itself: rtc::Item is not traceable"), std::string::npos);
    EXPECT_NE(bind_error<Unregistered>("field(v)").find("is not registered"), std::string::npos);
    EXPECT_NE(bind_error<Order>("field(where)|cast(rtc::Item)").find("cannot cast rtc::Point"), std::string::npos);
    EXPECT_EQ(bind_error<Item>("lenght"),
              "chain offset 0: unknown modifier 'lenght' (expected one of: length, at(i), type_of, call(name), "
              "apply(name), field(name), cast(Type), object_id, deref, to_string, truncate(n), redact, hash, "
              "array_element(i), class, instance_method(name), static_method(name), id)");
}

TEST(RuntimeChain, BoundChainKeepsReplacedEntriesAlive) {
    register_types();
    struct Local {
        std::string a = "a", b = "b";
    };
    loupe::reflect<Local>("rtc::Local").field("x", &Local::a);
    const auto bound = loupe::detail::bind_chain("field(x)", loupe::detail::type_desc_of<Local>());
    ASSERT_TRUE(bound);
    loupe::reflect<Local>("rtc::Local").field("x", &Local::b);  // replaces the entry
    Local l;
    char buf[16];
    loupe::value_writer out(buf, sizeof buf);
    bound.chain->evaluate(&l, out);
    EXPECT_EQ(out.value().text, "a");
    EXPECT_EQ(eval("field(x)", l).text, "b");
}

TEST(RuntimeChain, BaseRegistrationReachesTheClassGraph) {
    register_types();
    const auto bases = loupe::detail::classes().direct_bases("rtc::Special");
    ASSERT_EQ(bases.size(), 1u);
    EXPECT_EQ(bases[0], "rtc::Item");
}

TEST(RuntimeChain, SyntaxErrorsPointAtTheProblem) {
    using loupe::detail::chain_syntax_error;
    using loupe::detail::parse_chain;
    auto offset_of = [](std::string_view text) -> std::size_t {
        try {
            parse_chain(text);
        } catch (const chain_syntax_error& e) {
            EXPECT_LE(e.offset, text.size());
            return e.offset;
        }
        ADD_FAILURE() << "no error for " << text;
        return 0;
    };
    EXPECT_EQ(offset_of("length | lenght"), 9u);
    EXPECT_EQ(offset_of("at(x)"), 3u);
    EXPECT_EQ(offset_of("at(1"), 4u);
    EXPECT_EQ(offset_of("length|"), 7u);
    EXPECT_EQ(offset_of("length||hash"), 7u);
    EXPECT_EQ(offset_of("length hash"), 7u);
    EXPECT_EQ(offset_of("length(1)"), 6u);
    EXPECT_EQ(offset_of("truncate(-1)"), 9u);
    EXPECT_EQ(offset_of("at(99999999999999999999)"), 3u);
    try {
        parse_chain("at(x)");
    } catch (const chain_syntax_error& e) {
        EXPECT_EQ(std::string(e.what()), "at(i): expected an integer index, found 'x'");
    }
    const auto p = parse_chain(" field( sku ) |at( -2 )| cast( shop::Item<int> ) ");
    ASSERT_EQ(p.modifiers.size(), 3u);
    EXPECT_EQ(p.modifiers[0].name, "sku");
    EXPECT_EQ(p.modifiers[0].text, "field( sku )");
    EXPECT_EQ(p.modifiers[1].number, -2);
    EXPECT_EQ(p.modifiers[2].name, "shop::Item<int>");
    EXPECT_EQ(parse_chain("at(-9223372036854775808)").modifiers[0].number, INT64_MIN);
}
