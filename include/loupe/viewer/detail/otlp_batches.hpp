// Cuts a stream of encoded OTLP spans into ExportTraceServiceRequest
// messages of at most a given size, each complete on its own:
//
//   ExportTraceServiceRequest { resource_spans: ResourceSpans {
//       resource: <the process>, scope_spans: ScopeSpans {
//           scope: <loupe and its version>, spans: <span> <span> ... } } }
//
// The resource and scope are encoded once and repeated in every batch, so
// the batches concatenated parse as one request (repeated resource_spans).
// A batch holds at least one span: a span too large for max_bytes with the
// framing goes out alone, in a batch larger than max_bytes.
//
// Cost: one copy of each span's bytes into the batch, one of the batch to
// frame it. Thread-safety: one batcher per conversion.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "loupe/viewer/detail/otlp_attributes.hpp"
#include "loupe/viewer/detail/protobuf_writer.hpp"

namespace loupe::detail::otlp {

class batcher {
public:
    /// `resource` and `scope` are the encoded bodies of the Resource and
    /// InstrumentationScope messages. `on_batch` receives each finished
    /// request (the view is valid during the call).
    batcher(std::string_view resource, std::string_view scope, std::size_t max_bytes,
            std::function<void(std::string_view)> on_batch)
        : max_bytes_(max_bytes), on_batch_(std::move(on_batch)) {
        pb::append_bytes(resource_field_, field::resource, resource);
        pb::append_bytes(scope_field_, field::scope, scope);
    }

    /// Adds a span whose encoded body (a Span message) is `body`; finishes
    /// the current batch first when the span would not fit in it.
    void add(std::string_view body) {
        const std::size_t framed = 1 + varint_size(body.size()) + body.size();
        if (count_ != 0 && request_size(spans_.size() + framed) > max_bytes_) finish_batch();
        pb::append_tag(spans_, field::spans, pb::length_wire);
        pb::append_varint(spans_, body.size());
        spans_.append(body.data(), body.size());
        ++count_;
        ++spans_total_;
    }

    /// Finishes the last batch. A conversion without spans still sends one
    /// (resource and scope only), so that what it says of the process
    /// (drops) is not lost.
    void finish() {
        if (count_ != 0 || batches_ == 0) finish_batch();
    }

    std::uint64_t spans() const noexcept { return spans_total_; }
    std::uint64_t batches() const noexcept { return batches_; }
    std::uint64_t bytes() const noexcept { return bytes_; }

    /// The size of a request holding spans of `spans_bytes` framed bytes.
    std::size_t request_size(std::size_t spans_bytes) const noexcept {
        const std::size_t scope_spans = scope_field_.size() + spans_bytes;
        const std::size_t resource_spans = resource_field_.size() + 1 + varint_size(scope_spans) + scope_spans;
        return 1 + varint_size(resource_spans) + resource_spans;
    }

private:
    static std::size_t varint_size(std::uint64_t v) noexcept {
        std::size_t n = 1;
        while (v >= 0x80) {
            v >>= 7;
            ++n;
        }
        return n;
    }

    void finish_batch() {
        const std::size_t scope_spans = scope_field_.size() + spans_.size();
        const std::size_t resource_spans = resource_field_.size() + 1 + varint_size(scope_spans) + scope_spans;
        batch_.clear();
        batch_.reserve(request_size(spans_.size()));
        pb::append_tag(batch_, field::request_resource_spans, pb::length_wire);
        pb::append_varint(batch_, resource_spans);
        batch_.append(resource_field_.data(), resource_field_.size());
        pb::append_tag(batch_, field::scope_spans, pb::length_wire);
        pb::append_varint(batch_, scope_spans);
        batch_.append(scope_field_.data(), scope_field_.size());
        if (!spans_.empty()) batch_.append(spans_.view().data(), spans_.size());  // an empty buffer's data may be null
        spans_.clear();
        count_ = 0;
        ++batches_;
        bytes_ += batch_.size();
        on_batch_(batch_.view());
    }

    std::size_t max_bytes_;
    std::function<void(std::string_view)> on_batch_;
    std::string resource_field_;  // field 1 of ResourceSpans, framed
    std::string scope_field_;     // field 1 of ScopeSpans, framed
    pb::buffer spans_;            // the current batch's spans, framed
    pb::buffer batch_;            // the request being handed out
    std::size_t count_ = 0;       // spans in the current batch
    std::uint64_t spans_total_ = 0;
    std::uint64_t batches_ = 0;
    std::uint64_t bytes_ = 0;
};

}  // namespace loupe::detail::otlp
