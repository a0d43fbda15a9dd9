// Traced parameter values: the typed value a modifier chain ends in, the
// writer a chain writes it through, and the `traceable<T>` customization
// point that says how a type becomes a value (US 9,129,056 ¶0139–0142, ¶0156).
//
// Values stay typed — bool, signed/unsigned integer, floating point, string,
// type name, object id, keyed hash, redacted — or carry the status of the
// first modifier that failed (`null_in_call`, `invalid_index`, …), named as in
// the patent ("NullInCall", …).
//
// Thread-safety: plain values; a writer belongs to one evaluation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "loupe/base/config.hpp"
#include "loupe/base/param_value.hpp"
#include "loupe/params/detail/short_move.hpp"

namespace loupe {

/// The longest prefix of `s` of at most `n` bytes that does not end inside a
/// UTF-8 sequence.
constexpr std::string_view utf8_prefix(std::string_view s, std::size_t n) noexcept {
    if (s.size() <= n) return s;
    std::size_t cut = n;
    // Step back over continuation bytes (10xxxxxx) to the start of the sequence the cut falls in.
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    return std::string_view(s.data(), cut);  // cut < s.size(): no bounds check (substr's is a call on the hot path)
}

/// Where a chain writes its one result: a typed value, or a status. Text is
/// copied into the writer's bounded buffer (cut on a UTF-8 boundary, flagged
/// truncated with the original size); nothing allocates.
///
/// A chain writes exactly once; a later write replaces the earlier one.
/// (The fields are word-sized on purpose: a writer is filled and read back
/// within nanoseconds, and mixed-width stores and loads of one word stall
/// the CPU's store forwarding.)
class value_writer {
public:
    /// `buffer` holds up to `capacity` bytes of text (the value budget).
    value_writer(char* buffer, std::size_t capacity) noexcept : buffer_(buffer), capacity_(capacity) {}

    void write_bool(bool b) noexcept { scalar(value_kind::boolean, b ? 1 : 0); }
    void write_int(std::int64_t i) noexcept { scalar(value_kind::integer, static_cast<std::uint64_t>(i)); }
    void write_uint(std::uint64_t u) noexcept { scalar(value_kind::unsigned_integer, u); }
    void write_double(double d) noexcept {
        std::uint64_t b;
        std::memcpy(&b, &d, sizeof b);
        scalar(value_kind::floating, b);
    }
    void write_object_id(std::uint64_t id) noexcept { scalar(value_kind::object_id, id); }
    void write_hash(std::uint64_t h) noexcept { scalar(value_kind::hash, h); }
    /// Text; `original_size` is the size before an earlier cut (a `truncate`
    /// modifier), or npos for "this is the whole text".
    LOUPE_ALWAYS_INLINE void write_string(std::string_view s, std::size_t original_size = std::string_view::npos) noexcept {
        text(value_kind::string, s, original_size);
    }
    void write_type_name(std::string_view s) noexcept { text(value_kind::type_name, s, std::string_view::npos); }
    /// Keeps only the size of a secret.
    void write_redacted(std::size_t original_size) noexcept {
        scalar(value_kind::redacted, 0);
        original_size_ = clamp32(original_size);
    }
    /// The chain failed: `status` is one of the status kinds.
    void fail(value_kind status) noexcept { scalar(status, 0); }

    /// The text budget (bytes).
    std::size_t capacity() const noexcept { return capacity_; }
    /// Scratch space of `capacity()` bytes for modifiers that format text
    /// (to_string) before passing it on; a later write_string may read from it.
    char* scratch() noexcept { return buffer_; }

    /// The value written (kind `unknown` when nothing was).
    param_value value() const noexcept {
        param_value v;
        v.kind = kind();
        v.truncated = truncated_ != 0;
        v.original_size = original_size_;
        v.bits = bits_;
        v.text = std::string_view(text_size_ != 0 ? buffer_ : "", text_size_);
        return v;
    }
    bool written() const noexcept { return kind_ != static_cast<std::uint32_t>(value_kind::unknown); }

    value_kind kind() const noexcept { return static_cast<value_kind>(kind_); }
    bool truncated() const noexcept { return truncated_ != 0; }
    std::uint32_t original_size() const noexcept { return original_size_; }
    std::uint64_t bits() const noexcept { return bits_; }
    /// The text, at the start of the buffer.
    std::size_t text_size() const noexcept { return text_size_; }
    const char* buffer() const noexcept { return buffer_; }

private:
    static std::uint32_t clamp32(std::size_t n) noexcept {
        return n > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<std::uint32_t>(n);
    }
    void scalar(value_kind k, std::uint64_t bits) noexcept {
        kind_ = static_cast<std::uint32_t>(k);
        bits_ = bits;
        text_size_ = 0;
        truncated_ = 0;
        original_size_ = 0;
    }
    LOUPE_ALWAYS_INLINE void text(value_kind k, std::string_view s, std::size_t original_size) noexcept {
        const std::string_view kept = utf8_prefix(s, capacity_);
        if (kept.data() != buffer_) detail::short_move(buffer_, kept.data(), kept.size());
        kind_ = static_cast<std::uint32_t>(k);
        bits_ = 0;
        text_size_ = kept.size();
        const std::size_t original = original_size == std::string_view::npos ? s.size() : original_size;
        truncated_ = original > kept.size() ? 1 : 0;
        original_size_ = clamp32(original);
    }

    char* buffer_;
    std::size_t capacity_;
    std::uint32_t kind_ = static_cast<std::uint32_t>(value_kind::unknown);
    std::uint32_t truncated_ = 0;
    std::uint32_t original_size_ = 0;
    std::uint64_t bits_ = 0;
    std::size_t text_size_ = 0;
};

/// Customization point: how a value of type T is traced directly (the end of
/// a chain). Specialize it for your own types:
///
///     template <> struct loupe::traceable<Money> {
///         static void write(const Money& m, loupe::value_writer& out) noexcept { out.write_int(m.cents); }
///     };
///
/// Built in: bool, integers (char types too, as integers), enums (their
/// underlying integer), floating point, std::string, std::string_view,
/// `const char*` (null gives NullValue), char arrays.
template <class T, class = void>
struct traceable {
    static constexpr bool defined = false;
};

/// True when T can end a chain.
template <class T>
inline constexpr bool is_traceable_v = traceable<std::remove_cv_t<std::remove_reference_t<T>>>::defined;

template <>
struct traceable<bool> {
    static constexpr bool defined = true;
    static void write(bool b, value_writer& out) noexcept { out.write_bool(b); }
};

template <class T>
struct traceable<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
    static constexpr bool defined = true;
    static void write(T v, value_writer& out) noexcept {
        if constexpr (std::is_signed_v<T>) {
            out.write_int(static_cast<std::int64_t>(v));
        } else {
            out.write_uint(static_cast<std::uint64_t>(v));
        }
    }
};

template <class T>
struct traceable<T, std::enable_if_t<std::is_enum_v<T>>> {
    static constexpr bool defined = true;
    static void write(T v, value_writer& out) noexcept {
        traceable<std::underlying_type_t<T>>::write(static_cast<std::underlying_type_t<T>>(v), out);
    }
};

template <class T>
struct traceable<T, std::enable_if_t<std::is_floating_point_v<T>>> {
    static constexpr bool defined = true;
    static void write(T v, value_writer& out) noexcept { out.write_double(static_cast<double>(v)); }
};

template <class Traits, class Alloc>
struct traceable<std::basic_string<char, Traits, Alloc>> {
    static constexpr bool defined = true;
    LOUPE_ALWAYS_INLINE static void write(const std::basic_string<char, Traits, Alloc>& s, value_writer& out) noexcept {
        out.write_string(std::string_view(s.data(), s.size()));
    }
};

template <class Traits>
struct traceable<std::basic_string_view<char, Traits>> {
    static constexpr bool defined = true;
    LOUPE_ALWAYS_INLINE static void write(std::basic_string_view<char, Traits> s, value_writer& out) noexcept {
        out.write_string(std::string_view(s.data(), s.size()));
    }
};

template <>
struct traceable<const char*> {
    static constexpr bool defined = true;
    static void write(const char* s, value_writer& out) noexcept {
        if (s == nullptr) {
            out.fail(value_kind::null_value);
        } else {
            out.write_string(std::string_view(s));
        }
    }
};

template <>
struct traceable<char*> : traceable<const char*> {};

template <std::size_t N>
struct traceable<char[N]> {
    static constexpr bool defined = true;
    static void write(const char (&s)[N], value_writer& out) noexcept {
        out.write_string(std::string_view(s, ::strnlen(s, N)));
    }
};

/// Writes `v` through its traceable specialization.
template <class T>
LOUPE_ALWAYS_INLINE void write_traceable(const T& v, value_writer& out) noexcept {
    traceable<std::remove_cv_t<std::remove_reference_t<T>>>::write(v, out);
}

}  // namespace loupe
