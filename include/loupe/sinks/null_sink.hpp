// A sink that discards everything (for measuring loupe itself).
#pragma once

#include "loupe/core/sink.hpp"

namespace loupe::sinks {

/// Discards records. Cost: one virtual call per record on the collector.
class null_sink final : public sink {
public:
    void write(const record&) override {}
    bool write_batch(const record*, std::size_t) override { return true; }
    void flush() override {}
    void close() override {}
};

}  // namespace loupe::sinks
