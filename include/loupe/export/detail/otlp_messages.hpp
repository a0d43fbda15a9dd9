// Reads the few OTLP messages the exporter needs, from untrusted bytes:
// the number of spans in an ExportTraceServiceRequest it is about to send
// (so that a result can say how many spans were sent), the collector's
// ExportTraceServiceResponse (field 1 partial_success: 1 rejected_spans
// int64, 2 error_message string) and the google.rpc.Status an OTLP/HTTP
// error reply carries (2 message string). Unknown fields are skipped;
// malformed bytes give false, never a read out of bounds.
//
// Cost: linear in the message (the span count skips each span's bytes).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loupe::detail::otlp_messages {

/// One field: varint and fixed values in `number`, length-delimited ones in `bytes`.
struct field {
    std::uint32_t id = 0;
    std::uint32_t wire = 0;
    std::uint64_t number = 0;
    std::string_view bytes;
};

inline bool read_varint(std::string_view s, std::size_t& at, std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && at < s.size(); shift += 7) {
        const auto b = static_cast<unsigned char>(s[at++]);
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/// Reads the field at `at` and moves past it; false when the bytes are malformed.
inline bool next_field(std::string_view s, std::size_t& at, field& f) {
    std::uint64_t tag = 0;
    if (!read_varint(s, at, tag)) return false;
    f = field{};
    f.id = static_cast<std::uint32_t>(tag >> 3);
    f.wire = static_cast<std::uint32_t>(tag & 7);
    if (f.id == 0 || tag >> 32 != 0) return false;
    switch (f.wire) {
        case 0: return read_varint(s, at, f.number);
        case 1:
            if (s.size() - at < 8) return false;
            for (int i = 0; i < 8; ++i) f.number |= std::uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
            at += 8;
            return true;
        case 2: {
            std::uint64_t n = 0;
            if (!read_varint(s, at, n) || n > s.size() - at) return false;
            f.bytes = s.substr(at, static_cast<std::size_t>(n));
            at += static_cast<std::size_t>(n);
            return true;
        }
        case 5:
            if (s.size() - at < 4) return false;
            for (int i = 0; i < 4; ++i) f.number |= std::uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
            at += 4;
            return true;
        default: return false;
    }
}

/// The spans of an ExportTraceServiceRequest (resource_spans 1 ->
/// scope_spans 2 -> spans 2); false when it does not parse.
inline bool count_spans(std::string_view request, std::uint64_t& spans) {
    spans = 0;
    field rs, ss, sp;
    for (std::size_t a = 0; a < request.size();) {
        if (!next_field(request, a, rs)) return false;
        if (rs.id != 1 || rs.wire != 2) continue;
        for (std::size_t b = 0; b < rs.bytes.size();) {
            if (!next_field(rs.bytes, b, ss)) return false;
            if (ss.id != 2 || ss.wire != 2) continue;
            for (std::size_t c = 0; c < ss.bytes.size();) {
                if (!next_field(ss.bytes, c, sp)) return false;
                if (sp.id == 2 && sp.wire == 2) ++spans;
            }
        }
    }
    return true;
}

/// What an ExportTraceServiceResponse says.
struct export_response {
    bool partial = false;  ///< partial_success was present
    std::int64_t rejected_spans = 0;
    std::string error_message;
};

/// Decodes an ExportTraceServiceResponse (an empty body is a full
/// success); false when it does not parse.
inline bool decode_response(std::string_view body, export_response& out) {
    out = export_response{};
    field f, g;
    for (std::size_t a = 0; a < body.size();) {
        if (!next_field(body, a, f)) return false;
        if (f.id != 1 || f.wire != 2) continue;
        out.partial = true;
        for (std::size_t b = 0; b < f.bytes.size();) {
            if (!next_field(f.bytes, b, g)) return false;
            if (g.id == 1 && g.wire == 0) out.rejected_spans = static_cast<std::int64_t>(g.number);
            if (g.id == 2 && g.wire == 2) out.error_message = std::string(g.bytes);
        }
    }
    return true;
}

/// The message of a google.rpc.Status (empty when there is none or the
/// body is not one).
inline std::string status_message(std::string_view body) {
    field f;
    std::string message;
    for (std::size_t a = 0; a < body.size();) {
        if (!next_field(body, a, f)) return {};
        if (f.id == 2 && f.wire == 2) message = std::string(f.bytes);
    }
    return message;
}

}  // namespace loupe::detail::otlp_messages
