// How a method call travels from its thread to the collector: the values its
// specs produced at entry wait until the call returns — in unpublished slots
// of the thread's ring (ring::open_frame), or on the thread's value stack —
// then one ring unit carries the call: a header record (marker, entry ticks,
// payload size, sessions) and a payload, the call's exit details followed by
// its encoded values. One unit per call, so a call is delivered whole or
// counted as dropped, and an exit never arrives without its entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "loupe/base/config.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/unit_codec.hpp"
#include "loupe/params/method_site.hpp"
#include "loupe/params/value.hpp"
#include "loupe/base/site.hpp"

namespace loupe::detail {

/// The most payload bytes one call carries (exit details + values). Values
/// beyond it are cut to fit (strings) or left out (counted in the flags).
inline constexpr std::size_t max_method_payload = 4096;

enum method_flags : std::uint8_t {
    method_exceptional = 1,  ///< left by an exception
    method_has_cpu = 2,      ///< cpu_begin/cpu_end are set
    method_values_lost = 4,  ///< some values did not fit the value stack or the payload
    /// Producer only, never in a payload: the call's unit was opened in
    /// place in its thread's ring (ring::open_frame).
    method_frame_in_ring = 0x80,
};

/// First bytes of a method-call payload. The unit's header record carries
/// the marker, the entry ticks (t0), the exit ticks (t1) and the sessions;
/// the payload size follows from this header (the collector reads it from
/// the first payload record).
struct method_payload_header {
    const method_site* site;
    std::uint32_t values_bytes;  ///< encoded values that follow (after the CPU times, if any)
    std::uint16_t value_count;
    std::uint8_t flags;
    std::uint8_t reserved;
};
static_assert(sizeof(method_payload_header) == 16, "method payload header layout");

/// With method_has_cpu: thread CPU times right after the header.
struct method_cpu_times {
    std::uint64_t begin_ns;
    std::uint64_t end_ns;
};

/// The most encoded-value bytes one call carries.
inline constexpr std::size_t max_method_values =
    max_method_payload - sizeof(method_payload_header) - sizeof(method_cpu_times);

/// The payload bytes a unit whose payload starts with `h` takes.
inline std::size_t method_payload_size(const method_payload_header& h) noexcept {
    const std::size_t n = sizeof h + ((h.flags & method_has_cpu) ? sizeof(method_cpu_times) : 0) + h.values_bytes;
    return n < max_method_payload ? n : max_method_payload;
}

/// One encoded value: this header, then — for strings, type names and
/// redacted values — the original size (u32), then `size` bytes (the
/// scalar's 8 bytes, or the text).
struct encoded_value_header {
    std::uint8_t slot;  ///< session slot whose spec produced it
    std::uint8_t kind;
    std::uint8_t truncated;
    std::uint8_t reserved;
    std::uint16_t spec;  ///< spec ids are capped at 65535 per session (param_specs.hpp)
    std::uint16_t size;
};
static_assert(sizeof(encoded_value_header) == 8, "encoded value header layout");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "encode_value writes the header as a little-endian word");

/// True for the kinds whose encoding carries the original size.
constexpr bool carries_original_size(value_kind k) noexcept {
    return k == value_kind::string || k == value_kind::type_name || k == value_kind::redacted;
}

/// Where a value's text goes relative to its encoding's start (the writer
/// writes it there directly).
inline constexpr std::size_t encoded_text_offset = sizeof(encoded_value_header) + sizeof(std::uint32_t);

/// Encodes the value `w` holds as spec `spec` of session `slot` at `out`. Its
/// text is already at `out + encoded_text_offset` (the writer's buffer);
/// scalars go right after the header.
LOUPE_ALWAYS_INLINE std::size_t encode_value(const value_writer& w, std::uint8_t slot, std::uint16_t spec,
                                unsigned char* out) noexcept {
    const value_kind kind = w.kind();
    std::size_t size = 0;
    std::size_t at = sizeof(encoded_value_header);
    if (carries_original_size(kind)) {
        const std::uint32_t original = w.original_size();
        std::memcpy(out + at, &original, sizeof original);
        at += sizeof original;
        if (kind != value_kind::redacted) {
            size = w.text_size();
            if (reinterpret_cast<const unsigned char*>(w.buffer()) != out + at) short_move(out + at, w.buffer(), size);
        }
    } else if (!is_status(kind)) {
        size = 8;
        const std::uint64_t bits = w.bits();
        std::memcpy(out + at, &bits, 8);
    }
    // encoded_value_header as one little-endian word, built in a register
    // (a byte-wise aggregate goes through the stack field by field).
    const std::uint64_t header = std::uint64_t{slot} | std::uint64_t{static_cast<std::uint8_t>(kind)} << 8 |
                                 std::uint64_t{w.truncated()} << 16 | std::uint64_t{spec} << 32 |
                                 std::uint64_t{size} << 48;
    std::memcpy(out, &header, sizeof header);
    return at + size;
}

/// Decodes the value at `in` (at most `n` bytes); its text points into `in`.
/// Returns the bytes it took, 0 when the bytes are not a whole value.
inline std::size_t decode_value(const unsigned char* in, std::size_t n, param_value& v, std::uint8_t& slot) noexcept {
    encoded_value_header h;
    if (n < sizeof h) return 0;
    std::memcpy(&h, in, sizeof h);
    slot = h.slot;
    v = param_value{};
    v.spec = h.spec;
    v.kind = h.kind <= static_cast<std::uint8_t>(value_kind::unknown) ? static_cast<value_kind>(h.kind) : value_kind::unknown;
    v.truncated = h.truncated != 0;
    std::size_t at = sizeof h;
    if (carries_original_size(v.kind)) {
        if (n - at < sizeof(std::uint32_t)) return 0;
        std::memcpy(&v.original_size, in + at, sizeof(std::uint32_t));
        at += sizeof(std::uint32_t);
    }
    if (h.size > n - at) return 0;
    if (v.kind == value_kind::string || v.kind == value_kind::type_name) {
        v.text = std::string_view(reinterpret_cast<const char*>(in + at), h.size);
    } else if (h.size == 8) {
        std::memcpy(&v.bits, in + at, 8);
    }
    return at + h.size;
}

/// The calling thread's value stack, made on first use (null when memory is
/// out). Kept in the thread's state; freed when the thread exits (runtime.hpp).
inline value_stack* thread_value_stack(thread_state& ts) noexcept {
    if (LOUPE_UNLIKELY(ts.values == nullptr)) {
        internal_allocation_scope internal;
        ts.values = new (std::nothrow) value_stack;
    }
    return ts.values;
}

namespace method_wire_detail {

inline std::size_t announced_bytes(const raw_record&) noexcept { return sizeof(method_payload_header); }

inline std::size_t bytes_from_first(const raw_record& first) noexcept {
    method_payload_header h;
    std::memcpy(&h, &first, sizeof h);
    return method_payload_size(h);
}

// The collector's decoded values of one call, all sessions' and one
// session's, made once on the heap (in static storage they would share cache
// lines with data the hosts read on every call). Collector thread only.
struct method_scratch {
    static constexpr std::size_t max_values = max_method_payload / sizeof(encoded_value_header);
    param_value all[max_values];
    param_value mine[max_values];
    std::uint8_t slot[max_values];
};

// One zone record per session the call was captured for, carrying that
// session's values (and the session's spec definitions before them).
inline void deliver(unit_delivery& unit) noexcept {
    method_payload_header h;
    if (unit.bytes < sizeof h) return;  // cannot happen with loupe's own producer; never read past the payload
    std::memcpy(&h, unit.data, sizeof h);
    method_cpu_times cpu{0, 0};
    std::size_t values_at = sizeof h;
    if ((h.flags & method_has_cpu) && unit.bytes >= sizeof h + sizeof cpu) {
        std::memcpy(&cpu, unit.data + sizeof h, sizeof cpu);
        values_at += sizeof cpu;
    }
    static method_scratch* scratch = nullptr;
    if (scratch == nullptr) {
        internal_allocation_scope internal;
        scratch = new (std::nothrow) method_scratch;
        if (scratch == nullptr) return;  // out of memory: the call is not delivered
    }
    std::size_t count = 0;
    std::uint32_t max_spec = 0;
    const unsigned char* at = unit.data + values_at;
    std::size_t left = unit.bytes - values_at < h.values_bytes ? unit.bytes - values_at : h.values_bytes;
    while (count < h.value_count && count < method_scratch::max_values) {
        const std::size_t used = decode_value(at, left, scratch->all[count], scratch->slot[count]);
        if (used == 0) break;
        if (scratch->all[count].spec + 1 > max_spec) max_spec = scratch->all[count].spec + 1;
        at += used;
        left -= used;
        ++count;
    }
    method_call call;
    call.exceptional = (h.flags & method_exceptional) != 0;
    call.values_lost = (h.flags & method_values_lost) != 0;
    call.has_cpu = (h.flags & method_has_cpu) != 0;
    call.cpu_begin_ns = cpu.begin_ns;
    call.cpu_end_ns = cpu.end_ns;
    record& rec = *unit.rec;
    rec.kind = record_kind::zone;
    rec.where = &h.site->zone;
    rec.value = 0.0;
    rec.flow_id = 0;
    rec.begin_ns = unit.to_ns(unit.ticks);
    rec.end_ns = unit.to_ns(unit.end_ticks);
    rec.method = &call;
    unit.send(true, [&](unit_session& s) noexcept {
        s.send_param_specs(max_spec);  // definitions before their first value
        const int slot = s.slot();
        std::size_t n = 0;
        while (n < count && scratch->slot[n] == slot) ++n;
        if (n == count) {  // every value is this session's (one session records the call): no copy
            call.values = scratch->all;
            call.value_count = count;
            return;
        }
        n = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (scratch->slot[i] == slot) scratch->mine[n++] = scratch->all[i];
        }
        call.values = scratch->mine;
        call.value_count = n;
    });
}

inline constexpr unit_codec codec{&announced_bytes, &bytes_from_first, &deliver};

}  // namespace method_wire_detail

/// Header marker of a method-call unit: t0 entry ticks, t1 exit ticks; the
/// payload size comes with its first record (method_payload_header).
LOUPE_API inline constexpr unit_marker method_call_marker =
    make_unit_marker("loupe.method_call", method_wire_detail::codec);

}  // namespace loupe::detail
