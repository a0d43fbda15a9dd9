// The I/O handle registry's overflow: what it knows of descriptors beyond
// its direct array, as a vector sorted by descriptor. Few descriptors land
// here (a process rarely opens past the array's capacity), so a binary
// search and an insertion that shifts are cheap, and the table costs an
// instrumenting file no hash-table header. Not thread-safe: the registry
// holds its overflow mutex around every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace loupe::io::detail {

template <class Info>
class fd_table {
public:
    using entry = std::pair<std::int64_t, Info>;

    /// The entry of `fd`, or null.
    Info* find(std::int64_t fd) noexcept {
        const std::size_t i = position(fd);
        return i < entries_.size() && entries_[i].first == fd ? &entries_[i].second : nullptr;
    }
    const Info* find(std::int64_t fd) const noexcept { return const_cast<fd_table*>(this)->find(fd); }

    /// The entry of `fd`, added (value-initialized) if absent. May throw
    /// std::bad_alloc; the table is unchanged then.
    Info& get_or_add(std::int64_t fd) {
        const std::size_t i = position(fd);
        if (i == entries_.size() || entries_[i].first != fd) {
            entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(i), entry{fd, Info{}});
        }
        return entries_[i].second;
    }

    /// Removes the entry of `fd`; false when there was none.
    bool erase(std::int64_t fd) noexcept {
        const std::size_t i = position(fd);
        if (i == entries_.size() || entries_[i].first != fd) return false;
        entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
    }

    /// The entries, by ascending descriptor.
    typename std::vector<entry>::const_iterator begin() const noexcept { return entries_.begin(); }
    typename std::vector<entry>::const_iterator end() const noexcept { return entries_.end(); }

private:
    // The first index whose descriptor is not below `fd`.
    std::size_t position(std::int64_t fd) const noexcept {
        std::size_t low = 0;
        std::size_t high = entries_.size();
        while (low < high) {
            const std::size_t mid = low + (high - low) / 2;
            if (entries_[mid].first < fd) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    std::vector<entry> entries_;
};

}  // namespace loupe::io::detail
