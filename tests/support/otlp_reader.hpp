// Test helper: an independent reader of OTLP trace requests (protobuf wire
// format, the fields loupe writes), so the OTLP tests check structure where
// protoc is missing. Written from the schema (tests/data/otlp/), sharing
// nothing with loupe's writer. Malformed input throws std::runtime_error.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace loupe_test::otlp {

/// One field of a message: varint and fixed64 values in `number`, length-
/// delimited ones in `bytes`.
struct wire_field {
    std::uint32_t id = 0;
    std::uint32_t wire = 0;
    std::uint64_t number = 0;
    std::string_view bytes;
};

inline std::uint64_t read_varint(std::string_view s, std::size_t& at) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (at >= s.size()) throw std::runtime_error("varint cut short");
        const auto b = static_cast<unsigned char>(s[at++]);
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    throw std::runtime_error("varint too long");
}

/// The fields of one message, in order.
inline std::vector<wire_field> parse_message(std::string_view s) {
    std::vector<wire_field> fields;
    std::size_t at = 0;
    while (at < s.size()) {
        const std::uint64_t tag = read_varint(s, at);
        wire_field f;
        f.id = static_cast<std::uint32_t>(tag >> 3);
        f.wire = static_cast<std::uint32_t>(tag & 7);
        if (f.id == 0) throw std::runtime_error("field number 0");
        switch (f.wire) {
            case 0: f.number = read_varint(s, at); break;
            case 1:
                if (s.size() - at < 8) throw std::runtime_error("fixed64 cut short");
                for (int i = 0; i < 8; ++i) f.number |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
                at += 8;
                break;
            case 2: {
                const std::uint64_t n = read_varint(s, at);
                if (n > s.size() - at) throw std::runtime_error("length past the end");
                f.bytes = s.substr(at, n);
                at += n;
                break;
            }
            case 5:
                if (s.size() - at < 4) throw std::runtime_error("fixed32 cut short");
                for (int i = 0; i < 4; ++i) f.number |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
                at += 4;
                break;
            default: throw std::runtime_error("wire type " + std::to_string(f.wire));
        }
        fields.push_back(f);
    }
    return fields;
}

/// An AnyValue: which of its types it holds, and the value.
struct any_value {
    enum kind_type { none, string, boolean, integer, floating } kind = none;
    std::string text;
    bool flag = false;
    std::int64_t integer_value = 0;
    double floating_value = 0;
};

using attributes = std::map<std::string, any_value>;

inline void read_attribute(std::string_view key_value, attributes& out) {
    std::string key;
    any_value value;
    for (const wire_field& f : parse_message(key_value)) {
        if (f.id == 1) key = std::string(f.bytes);
        if (f.id != 2) continue;
        for (const wire_field& v : parse_message(f.bytes)) {
            switch (v.id) {
                case 1: value.kind = any_value::string; value.text = std::string(v.bytes); break;
                case 2: value.kind = any_value::boolean; value.flag = v.number != 0; break;
                case 3: value.kind = any_value::integer; value.integer_value = static_cast<std::int64_t>(v.number); break;
                case 4:
                    value.kind = any_value::floating;
                    std::memcpy(&value.floating_value, &v.number, sizeof(double));
                    break;
                default: break;
            }
        }
    }
    if (out.count(key)) throw std::runtime_error("attribute '" + key + "' twice");
    out[key] = value;
}

struct span_event {
    std::uint64_t time = 0;
    std::string name;
    attributes attrs;
};

struct span_link {
    std::string trace_id;
    std::string span_id;
    attributes attrs;
};

struct span {
    std::string trace_id, span_id, parent_span_id;
    std::string name;
    std::uint64_t kind = 0;
    std::uint64_t start = 0, end = 0;
    attributes attrs;
    std::vector<span_event> events;
    std::vector<span_link> links;
    std::uint64_t dropped_events = 0, dropped_links = 0;
    std::uint64_t status_code = 0;
    std::string status_message;
};

/// One ResourceSpans with its single ScopeSpans (what loupe writes).
struct resource_spans {
    attributes resource;
    std::string scope_name, scope_version;
    attributes scope_attrs;
    std::vector<span> spans;
};

inline span read_span(std::string_view s) {
    span out;
    for (const wire_field& f : parse_message(s)) {
        switch (f.id) {
            case 1: out.trace_id = std::string(f.bytes); break;
            case 2: out.span_id = std::string(f.bytes); break;
            case 4: out.parent_span_id = std::string(f.bytes); break;
            case 5: out.name = std::string(f.bytes); break;
            case 6: out.kind = f.number; break;
            case 7: out.start = f.number; break;
            case 8: out.end = f.number; break;
            case 9: read_attribute(f.bytes, out.attrs); break;
            case 11: {
                span_event e;
                for (const wire_field& g : parse_message(f.bytes)) {
                    if (g.id == 1) e.time = g.number;
                    if (g.id == 2) e.name = std::string(g.bytes);
                    if (g.id == 3) read_attribute(g.bytes, e.attrs);
                }
                out.events.push_back(e);
                break;
            }
            case 12: out.dropped_events = f.number; break;
            case 13: {
                span_link l;
                for (const wire_field& g : parse_message(f.bytes)) {
                    if (g.id == 1) l.trace_id = std::string(g.bytes);
                    if (g.id == 2) l.span_id = std::string(g.bytes);
                    if (g.id == 4) read_attribute(g.bytes, l.attrs);
                }
                out.links.push_back(l);
                break;
            }
            case 14: out.dropped_links = f.number; break;
            case 15:
                for (const wire_field& g : parse_message(f.bytes)) {
                    if (g.id == 2) out.status_message = std::string(g.bytes);
                    if (g.id == 3) out.status_code = g.number;
                }
                break;
            default: break;
        }
    }
    return out;
}

/// The ResourceSpans of an ExportTraceServiceRequest (or of several
/// concatenated).
inline std::vector<resource_spans> read_request(std::string_view request) {
    std::vector<resource_spans> out;
    for (const wire_field& rs : parse_message(request)) {
        if (rs.id != 1 || rs.wire != 2) throw std::runtime_error("not an ExportTraceServiceRequest");
        resource_spans r;
        for (const wire_field& f : parse_message(rs.bytes)) {
            if (f.id == 1) {
                for (const wire_field& a : parse_message(f.bytes)) {
                    if (a.id == 1) read_attribute(a.bytes, r.resource);
                }
            } else if (f.id == 2) {
                for (const wire_field& g : parse_message(f.bytes)) {
                    if (g.id == 1) {
                        for (const wire_field& sc : parse_message(g.bytes)) {
                            if (sc.id == 1) r.scope_name = std::string(sc.bytes);
                            if (sc.id == 2) r.scope_version = std::string(sc.bytes);
                            if (sc.id == 3) read_attribute(sc.bytes, r.scope_attrs);
                        }
                    } else if (g.id == 2) {
                        r.spans.push_back(read_span(g.bytes));
                    }
                }
            }
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace loupe_test::otlp
