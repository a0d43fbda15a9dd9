// Test helper: collects what loupe's error handler receives while it is
// alive (set_error_handler), from any thread; restores the default handler
// when destroyed.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include <loupe/base/error_handler.hpp>

namespace loupe_test {

class captured_errors {
public:
    captured_errors() {
        loupe::set_error_handler([this](const std::string& m) {
            std::lock_guard<std::mutex> lock(mutex_);
            messages_.push_back(m);
        });
    }
    ~captured_errors() { loupe::set_error_handler(nullptr); }
    captured_errors(const captured_errors&) = delete;
    captured_errors& operator=(const captured_errors&) = delete;

    /// The messages so far, in order.
    std::vector<std::string> messages() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return messages_;
    }
    /// The messages so far, one per line.
    std::string all() const {
        std::string out;
        for (const std::string& m : messages()) out += m + "\n";
        return out;
    }
    /// How many messages contain `needle`.
    std::size_t count_containing(const std::string& needle) const {
        std::size_t n = 0;
        for (const std::string& m : messages()) n += m.find(needle) != std::string::npos;
        return n;
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::string> messages_;
};

}  // namespace loupe_test
