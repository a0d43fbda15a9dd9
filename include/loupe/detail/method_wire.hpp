// How a method call travels from its thread to the collector: the values its
// specs produced at entry wait on the thread's value stack until the call
// returns; then one ring unit carries the call — a header record (marker,
// entry ticks, payload size, sessions) and a payload: the call's exit
// details followed by its encoded values. One unit per call, so a call is
// delivered whole or counted as dropped, and an exit never arrives without
// its entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "loupe/config.hpp"
#include "loupe/params/method_site.hpp"
#include "loupe/params/value.hpp"
#include "loupe/site.hpp"

namespace loupe::detail {

/// Header marker of a method-call unit.
LOUPE_API inline constexpr site method_call_marker{"loupe.method_call", "", "", 0, site_kind::method};

/// The most payload bytes one call carries (exit details + values). Values
/// beyond it are cut to fit (strings) or left out (counted in the flags).
inline constexpr std::size_t max_method_payload = 4096;

enum method_flags : std::uint8_t {
    method_exceptional = 1,  ///< left by an exception
    method_has_cpu = 2,      ///< cpu_begin/cpu_end are set
    method_values_lost = 4,  ///< some values did not fit the value stack or the payload
};

/// First bytes of a method-call payload.
struct method_payload_header {
    const method_site* site;
    std::uint64_t end_ticks;
    std::uint64_t cpu_begin_ns;
    std::uint64_t cpu_end_ns;
    std::uint32_t values_bytes;  ///< encoded values that follow
    std::uint16_t value_count;
    std::uint8_t flags;
    std::uint8_t reserved;
};
static_assert(sizeof(method_payload_header) == 40, "method payload header layout");

/// One encoded value: this header, then `size` bytes (the scalar's 8 bytes,
/// or the text).
struct encoded_value_header {
    std::uint8_t slot;  ///< session slot whose spec produced it
    std::uint8_t kind;
    std::uint8_t truncated;
    std::uint8_t reserved;
    std::uint32_t spec;
    std::uint32_t original_size;
    std::uint32_t size;
};
static_assert(sizeof(encoded_value_header) == 16, "encoded value header layout");

/// Bytes `v` takes encoded.
inline std::size_t encoded_size(const param_value& v) noexcept {
    return sizeof(encoded_value_header) + (v.kind == value_kind::string || v.kind == value_kind::type_name
                                               ? v.text.size()
                                               : (is_status(v.kind) || v.kind == value_kind::redacted ? 0 : 8));
}

/// Encodes `v` of session `slot` at `out` (room for encoded_size(v)). `v.text`
/// may already sit right after the header (the writer wrote it there).
inline std::size_t encode_value(const param_value& v, std::uint8_t slot, unsigned char* out) noexcept {
    encoded_value_header h{slot, static_cast<std::uint8_t>(v.kind), static_cast<std::uint8_t>(v.truncated), 0,
                           v.spec, v.original_size, 0};
    unsigned char* body = out + sizeof h;
    if (v.kind == value_kind::string || v.kind == value_kind::type_name) {
        h.size = static_cast<std::uint32_t>(v.text.size());
        if (!v.text.empty() && reinterpret_cast<const unsigned char*>(v.text.data()) != body) {
            std::memmove(body, v.text.data(), v.text.size());
        }
    } else if (!is_status(v.kind) && v.kind != value_kind::redacted) {
        h.size = 8;
        std::memcpy(body, &v.bits, 8);
    }
    std::memcpy(out, &h, sizeof h);
    return sizeof h + h.size;
}

/// Decodes the value at `in` (at most `n` bytes); its text points into `in`.
/// Returns the bytes it took, 0 when the bytes are not a whole value.
inline std::size_t decode_value(const unsigned char* in, std::size_t n, param_value& v, std::uint8_t& slot) noexcept {
    encoded_value_header h;
    if (n < sizeof h) return 0;
    std::memcpy(&h, in, sizeof h);
    if (h.size > n - sizeof h) return 0;
    slot = h.slot;
    v = param_value{};
    v.spec = h.spec;
    v.kind = h.kind <= static_cast<std::uint8_t>(value_kind::unknown) ? static_cast<value_kind>(h.kind) : value_kind::unknown;
    v.truncated = h.truncated != 0;
    v.original_size = h.original_size;
    const unsigned char* body = in + sizeof h;
    if (v.kind == value_kind::string || v.kind == value_kind::type_name) {
        v.text = std::string_view(reinterpret_cast<const char*>(body), h.size);
    } else if (h.size == 8) {
        std::memcpy(&v.bits, body, 8);
    }
    return sizeof h + h.size;
}

/// A thread's values of the calls it is inside, innermost last. Bounded:
/// values of calls nested beyond its capacity are left out (flagged).
struct value_stack {
    static constexpr std::size_t capacity = 32 * 1024;
    std::size_t top = 0;
    alignas(8) unsigned char bytes[capacity];
};

/// The calling thread's value stack, made on first use (null when memory is
/// out). Freed when the thread exits.
inline value_stack* thread_value_stack() noexcept {
    struct holder {
        std::unique_ptr<value_stack> stack;
    };
    static thread_local holder h;
    if (LOUPE_UNLIKELY(!h.stack)) h.stack.reset(new (std::nothrow) value_stack);
    return h.stack.get();
}

}  // namespace loupe::detail
