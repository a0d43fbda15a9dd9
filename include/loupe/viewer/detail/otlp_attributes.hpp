// The OTLP trace schema's field numbers (opentelemetry-proto:
// collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
// common/v1/common.proto, resource/v1/resource.proto) and the encoders of
// its small shared messages: KeyValue attributes of each AnyValue type,
// with text made valid UTF-8 first. Used by otlp_batches.hpp and
// otlp_writer.hpp; see docs/otlp.md for the mapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "loupe/text/printable.hpp"
#include "loupe/viewer/detail/protobuf_writer.hpp"

namespace loupe::detail::otlp {

namespace pb = loupe::detail::protobuf;

namespace field {
// ExportTraceServiceRequest
constexpr std::uint32_t request_resource_spans = 1;
// ResourceSpans, ScopeSpans
constexpr std::uint32_t resource = 1, scope_spans = 2;
constexpr std::uint32_t scope = 1, spans = 2;
// Resource
constexpr std::uint32_t resource_attributes = 1;
// InstrumentationScope
constexpr std::uint32_t scope_name = 1, scope_version = 2, scope_attributes = 3;
// Span
constexpr std::uint32_t trace_id = 1, span_id = 2, parent_span_id = 4, name = 5, kind = 6, start_time = 7,
                        end_time = 8, attributes = 9, events = 11, dropped_events = 12, links = 13,
                        dropped_links = 14, status = 15;
// Span.Event
constexpr std::uint32_t event_time = 1, event_name = 2, event_attributes = 3;
// Span.Link
constexpr std::uint32_t link_trace_id = 1, link_span_id = 2, link_attributes = 4;
// Status
constexpr std::uint32_t status_message = 2, status_code = 3;
// KeyValue, AnyValue
constexpr std::uint32_t key = 1, value = 2;
constexpr std::uint32_t string_value = 1, bool_value = 2, int_value = 3, double_value = 4;
}  // namespace field

constexpr std::uint64_t span_kind_internal = 1;
constexpr std::uint64_t status_error = 2;

/// A protobuf string field's text: valid UTF-8, no copy when ASCII.
using utf8_text = report::printable_view;

/// A string field, its text made valid UTF-8.
template <class Out>
void append_text(Out& out, std::uint32_t number, std::string_view text) {
    pb::append_bytes(out, number, utf8_text(text));
}

/// KeyValue{key, AnyValue{...}} as field `number` (attributes of a span,
/// event, link, resource or scope): the AnyValue is what `value(out)` writes.
template <class Out, class WriteValue>
void append_attribute(Out& out, std::uint32_t number, std::string_view key, WriteValue&& value) {
    const std::size_t kv = pb::open(out, number);
    append_text(out, field::key, key);
    const std::size_t any = pb::open(out, field::value);
    value(out);
    pb::close(out, any);
    pb::close(out, kv);
}

template <class Out>
void append_string_attribute(Out& out, std::uint32_t number, std::string_view key, std::string_view value) {
    append_attribute(out, number, key, [&](Out& o) { append_text(o, field::string_value, value); });
}

template <class Out>
void append_int_attribute(Out& out, std::uint32_t number, std::string_view key, std::int64_t value) {
    append_attribute(out, number, key, [&](Out& o) { pb::append_int(o, field::int_value, value); });
}

template <class Out>
void append_bool_attribute(Out& out, std::uint32_t number, std::string_view key, bool value) {
    append_attribute(out, number, key, [&](Out& o) { pb::append_uint(o, field::bool_value, value ? 1 : 0); });
}

template <class Out>
void append_double_attribute(Out& out, std::uint32_t number, std::string_view key, double value) {
    append_attribute(out, number, key, [&](Out& o) { pb::append_double(o, field::double_value, value); });
}

/// A 16-byte trace id or 8-byte span id field, big-endian (the byte order
/// of the W3C trace context's hex form).
template <class Out>
void append_id(Out& out, std::uint32_t number, std::uint64_t high, std::uint64_t low, bool wide) {
    char bytes[16];
    std::size_t n = 0;
    if (wide) {
        for (int i = 7; i >= 0; --i) bytes[n++] = static_cast<char>(static_cast<unsigned char>(high >> (8 * i)));
    }
    for (int i = 7; i >= 0; --i) bytes[n++] = static_cast<char>(static_cast<unsigned char>(low >> (8 * i)));
    pb::append_bytes(out, number, std::string_view(bytes, n));
}

}  // namespace loupe::detail::otlp
