// How both kinds of chain turn a value into text (`to_string`) and into an
// object id (`object_id`), so that a value reads the same whether a
// compile-time chain (chain_modifiers.hpp) or a runtime chain (the
// descriptors of type_desc.hpp) recorded it:
//
//   bool           true / false
//   integers       decimal
//   floating       %.17g
//   class types    to_string(const T&) found by ADL, else operator<< into
//                  the writer's scratch buffer (bounded by its capacity, cut
//                  on a UTF-8 boundary; the full size is kept)
//   enums          like a class type when they have either, else their number
//
// Thread-safety: stateless; runs on the evaluating thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <string_view>
#include <type_traits>
#include <utility>

#include "loupe/base/config.hpp"
#include "loupe/params/detail/chain_values.hpp"
#include "loupe/params/value.hpp"

// The numbers' and the streams' formatting are shared parts (base/config.hpp):
// a file with method sites needs neither <charconv> nor <ostream> when the
// implementation file compiles them.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
#    include <charconv>
#    include <cstdio>
#    include <ostream>
#    include <streambuf>
#endif

#if defined(__cpp_rtti) || defined(__GXX_RTTI)
#define LOUPE_DETAIL_CHAIN_RTTI 1
#else
#define LOUPE_DETAIL_CHAIN_RTTI 0
#endif

namespace loupe::detail {

namespace adl {
void to_string() = delete;  // hides loupe::to_string from ordinary lookup: only ADL finds a user's to_string

template <class T, class = void>
struct has_to_string : std::false_type {};
template <class T>
struct has_to_string<T, std::void_t<decltype(std::string_view(to_string(std::declval<const T&>())))>> : std::true_type {
};

template <class T>
decltype(auto) call_to_string(const T& v) {
    return to_string(v);
}
}  // namespace adl

namespace stream {
/// A non-member `operator<<(std::ostream&, const T&)` (a hidden friend, one
/// found by ADL, or one in an enclosing namespace) prints T. Written as a
/// call, so that the answer does not depend on whether std::ostream is
/// complete in this file (its members, the arithmetic inserters, are never
/// candidates: numbers are formatted without a stream).
template <class T, class = void>
struct has_insert : std::false_type {};
template <class T>
struct has_insert<T, std::void_t<decltype(operator<<(std::declval<std::ostream&>(), std::declval<const T&>()))>>
    : std::true_type {};

/// Prints the T at `v` into `os`: compiled where T's operator<< is known,
/// run by format_streamed_at, which owns the stream.
template <class T>
void insert(std::ostream& os, const void* v) {
    operator<<(os, *static_cast<const T*>(v));
}
}  // namespace stream

/// `loupe_object_id(const T&)`, found by ADL, gives the id `object_id` records.
template <class T, class = void>
struct has_object_id_hook : std::false_type {};
template <class T>
struct has_object_id_hook<
    T, std::enable_if_t<std::is_convertible_v<decltype(loupe_object_id(std::declval<const T&>())), std::uint64_t>>>
    : std::true_type {};

/// What `to_string` can format besides text.
template <class T>
inline constexpr bool is_formattable_v =
    std::is_arithmetic_v<T> || std::is_enum_v<T> || adl::has_to_string<T>::value || stream::has_insert<T>::value;

#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
/// A streambuf over a fixed buffer: keeps the first bytes, counts the rest.
class bounded_streambuf final : public std::streambuf {
public:
    bounded_streambuf(char* buffer, std::size_t capacity) noexcept { setp(buffer, buffer + capacity); }
    std::size_t kept() const noexcept { return static_cast<std::size_t>(pptr() - pbase()); }
    std::size_t total() const noexcept { return kept() + dropped_; }

protected:
    int_type overflow(int_type c) override {
        if (!traits_type::eq_int_type(c, traits_type::eof())) ++dropped_;
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        const auto room = static_cast<std::streamsize>(epptr() - pptr());
        const std::streamsize take = n < room ? n : room;
        if (take > 0) {
            std::memcpy(pptr(), s, static_cast<std::size_t>(take));
            pbump(static_cast<int>(take));
        }
        dropped_ += static_cast<std::size_t>(n - take);
        return n;
    }

private:
    std::size_t dropped_ = 0;
};

/// A number as text, in `buf`.
LOUPE_DETAIL_SHARED_PART std::string_view format_number(std::int64_t v, char (&buf)[32]) noexcept {
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return {buf, static_cast<std::size_t>(r.ptr - buf)};
}
LOUPE_DETAIL_SHARED_PART std::string_view format_number(std::uint64_t v, char (&buf)[32]) noexcept {
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return {buf, static_cast<std::size_t>(r.ptr - buf)};
}
LOUPE_DETAIL_SHARED_PART std::string_view format_number(double v, char (&buf)[32]) noexcept {
    const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
    return {buf, static_cast<std::size_t>(n < 0 ? 0 : n)};
}

/// `insert(os, v)` into `out.scratch()`: the text kept (cut on a UTF-8
/// boundary when it did not fit) and the size of the whole. Throws what
/// operator<< throws.
LOUPE_DETAIL_SHARED_PART text_piece format_streamed_at(void (*insert)(std::ostream&, const void*), const void* v,
                                                      value_writer& out) {
    bounded_streambuf buf(out.scratch(), out.capacity());
    {
        std::ostream os(&buf);
        insert(os, v);
    }
    const std::size_t total = buf.total();
    std::string_view view(out.scratch(), buf.kept());
    if (total > view.size()) view = utf8_complete_prefix(view);
    return {view, total};
}
#else
// Compiled by the implementation file alone (base/config.hpp).
std::string_view format_number(std::int64_t v, char (&buf)[32]) noexcept;
std::string_view format_number(std::uint64_t v, char (&buf)[32]) noexcept;
std::string_view format_number(double v, char (&buf)[32]) noexcept;
text_piece format_streamed_at(void (*insert)(std::ostream&, const void*), const void* v, value_writer& out);
#endif

/// A bool or a number as text, in `buf`.
template <class V>
std::string_view format_number(V v, char (&buf)[32]) noexcept {
    if constexpr (std::is_same_v<V, bool>) {
        return v ? std::string_view("true") : std::string_view("false");
    } else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
        return format_number(static_cast<std::int64_t>(v), buf);
    } else if constexpr (std::is_integral_v<V>) {
        return format_number(static_cast<std::uint64_t>(v), buf);
    } else {
        return format_number(static_cast<double>(v), buf);
    }
}

/// `v << ` into `out.scratch()` (format_streamed_at). Throws what
/// operator<< throws.
template <class V>
text_piece format_streamed(const V& v, value_writer& out) {
    return format_streamed_at(&stream::insert<V>, &v, out);
}

/// Formats `v` (not text; is_formattable_v) as the table above says and
/// calls `k(text_piece)` while the text lives. A to_string or operator<<
/// that throws fails `out` with ExceptionInCall.
template <class V, class K>
void format_value(const V& v, value_writer& out, K&& k) {
    if constexpr (std::is_arithmetic_v<V>) {
        char buf[32];
        const std::string_view s = format_number(v, buf);
        // The text is in `buf` (format_number is out of line: say so, so that
        // the copy after it is not thought to read past it).
        if (s.size() > sizeof buf) __builtin_unreachable();
        k(text_piece{s, s.size()});
    } else if constexpr (adl::has_to_string<V>::value) {
        try {
            const auto& r = adl::call_to_string(v);  // lives while the rest of the chain runs
            const std::string_view view(r);
            k(text_piece{view, view.size()});
        } catch (...) {
            out.fail(value_kind::exception_in_call);
        }
    } else if constexpr (stream::has_insert<V>::value) {
        text_piece t;
        try {
            t = format_streamed(v, out);
        } catch (...) {
            out.fail(value_kind::exception_in_call);
            return;
        }
        k(t);
    } else if constexpr (std::is_enum_v<V>) {
        format_value(static_cast<std::underlying_type_t<V>>(v), out, k);
    } else {
        static_assert(dependent_false<V>,
                      "loupe: to_string found no way to format this value: provide to_string(const T&) "
                      "(found by ADL) or operator<<(std::ostream&, const T&)");
    }
}

/// The id `object_id` records for `v`: loupe_object_id(v) found by ADL, else
/// the address of the most-derived object (with RTTI), else of `v`. Throws
/// what loupe_object_id throws.
template <class T>
std::uint64_t object_id_of(const T& v) {
    if constexpr (has_object_id_hook<T>::value) {
        return static_cast<std::uint64_t>(loupe_object_id(v));
    } else {
        const void* address = __builtin_addressof(v);
#if LOUPE_DETAIL_CHAIN_RTTI
        if constexpr (std::is_polymorphic_v<T>) address = dynamic_cast<const void*>(__builtin_addressof(v));
#endif
        return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(address));
    }
}

}  // namespace loupe::detail
