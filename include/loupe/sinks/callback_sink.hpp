// A sink that hands each record to a function of yours.
#pragma once

#include <functional>
#include <utility>

#include "loupe/core/sink.hpp"

namespace loupe::sinks {

/// Calls `on_record` for every record, on loupe's collector thread. The view
/// and the strings it points at are valid only during the call. If the
/// function throws, the sink counts as failed (see `loupe::sink`).
/// Must not start or stop sessions.
class callback_sink final : public sink {
public:
    explicit callback_sink(std::function<void(const record&)> on_record,
                           std::function<void()> on_flush = {})
        : on_record_(std::move(on_record)), on_flush_(std::move(on_flush)) {}

    void write(const record& r) override { on_record_(r); }
    void flush() override {
        if (on_flush_) on_flush_();
    }
    void close() override {}

private:
    std::function<void(const record&)> on_record_;
    std::function<void()> on_flush_;
};

}  // namespace loupe::sinks
