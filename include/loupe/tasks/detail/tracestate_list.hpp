// The tracestate parser's working state (tracestate.hpp): header field
// values are fed one at a time, members are checked as they come and the
// kept ones are remembered as views into the caller's text, then finish()
// writes the list to keep. No allocation: at most 32 members are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "loupe/tasks/task_context.hpp"
#include "loupe/tasks/tracestate_problem.hpp"

namespace loupe::tasks::detail {

inline constexpr std::size_t tracestate_max_members = 32;
inline constexpr std::size_t tracestate_max_key = 256;
inline constexpr std::size_t tracestate_max_tenant = 241;
inline constexpr std::size_t tracestate_max_system = 14;
inline constexpr std::size_t tracestate_max_value = 256;
/// Members longer than this go first when the list must be cut to 512.
inline constexpr std::size_t tracestate_long_member = 128;

constexpr bool is_lcalpha(char c) noexcept { return c >= 'a' && c <= 'z'; }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_keychar(char c) noexcept {
    return is_lcalpha(c) || is_digit(c) || c == '_' || c == '-' || c == '*' || c == '/';
}

struct member_check {
    tracestate_problem problem = tracestate_problem::none;
    std::size_t offset = 0;  ///< in the member
};

/// Checks a key by W3C Trace Context Level 1:
///   simple-key       = lcalpha 0*255( lcalpha / DIGIT / "_" / "-" / "*" / "/" )
///   multi-tenant-key = tenant-id "@" system-id
///   tenant-id        = ( lcalpha / DIGIT ) 0*240( same )
///   system-id        = lcalpha 0*13( same )
inline member_check check_key(std::string_view key) noexcept {
    std::size_t at = std::string_view::npos;
    for (std::size_t i = 0; i < key.size(); ++i) {
        const char c = key[i];
        if (is_keychar(c)) continue;
        if (c == '@' && at == std::string_view::npos) {
            at = i;
            continue;
        }
        return {tracestate_problem::bad_key, i};
    }
    if (at == std::string_view::npos) {
        if (key.empty() || !is_lcalpha(key[0])) return {tracestate_problem::bad_key, 0};
        if (key.size() > tracestate_max_key) return {tracestate_problem::key_too_long, tracestate_max_key};
        return {};
    }
    if (at == 0 || !(is_lcalpha(key[0]) || is_digit(key[0]))) return {tracestate_problem::bad_key, 0};
    if (at > tracestate_max_tenant) return {tracestate_problem::key_too_long, tracestate_max_tenant};
    const std::size_t system = at + 1;
    if (system == key.size() || !is_lcalpha(key[system])) return {tracestate_problem::bad_key, system};
    if (key.size() - system > tracestate_max_system) {
        return {tracestate_problem::key_too_long, system + tracestate_max_system};
    }
    return {};
}

/// Checks a value (its trailing whitespace already trimmed):
///   value    = 0*255(chr) nblk-chr
///   nblk-chr = %x21-2B / %x2D-3C / %x3E-7E
///   chr      = %x20 / nblk-chr
inline member_check check_value(std::string_view value) noexcept {
    if (value.empty()) return {tracestate_problem::empty_value, 0};
    for (std::size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        if (c < 0x20 || c > 0x7e || c == '=' || c == ',') return {tracestate_problem::bad_value_character, i};
    }
    if (value.size() > tracestate_max_value) return {tracestate_problem::value_too_long, tracestate_max_value};
    return {};
}

/// Splits, checks and remembers the members of one or more tracestate
/// values. The texts given to add_value must outlive finish().
class tracestate_list {
public:
    explicit tracestate_list(tracestate_policy policy) noexcept : policy_(policy) {}

    /// One header field value (several are one list, in order, as if joined
    /// by ','). Empty and whitespace-only members are skipped (the spec
    /// allows them) and do not count towards the 32.
    void add_value(std::string_view value) noexcept {
        if (values_ != 0) ++base_;  // the ',' that joins it to the previous value
        ++values_;
        std::size_t start = 0;
        for (;;) {
            const std::size_t comma = value.find(',', start);
            const std::size_t stop = comma == std::string_view::npos ? value.size() : comma;
            add_member(value.substr(start, stop - start), base_ + start);
            if (comma == std::string_view::npos) break;
            start = comma + 1;
        }
        base_ += value.size();
    }

    /// The list to keep, and what was dropped.
    void finish(tracestate_text& text, tracestate_summary& summary) noexcept {
        summary = summary_;
        text.clear();
        if (policy_ == tracestate_policy::discard_on_any_error && summary.problem != tracestate_problem::none) {
            summary.members_dropped = static_cast<std::uint16_t>(summary.members_dropped + count_);
            return;
        }
        // Cut to 512 characters by whole members, as the spec says: members
        // over 128 characters first (from the right), then from the right.
        bool keep[tracestate_max_members];
        std::size_t total = count_ == 0 ? 0 : count_ - 1;  // the commas
        for (std::size_t i = 0; i < count_; ++i) {
            keep[i] = true;
            total += members_[i].size();
        }
        std::size_t kept = count_;
        for (std::size_t i = count_; i-- > 0 && total > tracestate_text::capacity;) {
            if (members_[i].size() <= tracestate_long_member) continue;
            keep[i] = false;
            total -= members_[i].size() + (--kept != 0 ? 1 : 0);
        }
        for (std::size_t i = count_; i-- > 0 && total > tracestate_text::capacity;) {
            if (!keep[i]) continue;
            keep[i] = false;
            total -= members_[i].size() + (--kept != 0 ? 1 : 0);
        }
        char out[tracestate_text::capacity];
        std::size_t size = 0;
        for (std::size_t i = 0; i < count_; ++i) {
            if (!keep[i]) continue;
            if (size != 0) out[size++] = ',';
            for (const char c : members_[i]) out[size++] = c;
        }
        text.assign(std::string_view(out, size));
        summary.members_kept = static_cast<std::uint16_t>(kept);
        summary.members_truncated = static_cast<std::uint16_t>(count_ - kept);
    }

private:
    void note(tracestate_problem p, std::size_t position) noexcept {
        ++summary_.members_dropped;
        if (summary_.problem != tracestate_problem::none) return;
        summary_.problem = p;
        summary_.position = position;
    }

    void add_member(std::string_view m, std::size_t position) noexcept {
        std::size_t b = 0, e = m.size();
        while (b < e && (m[b] == ' ' || m[b] == '\t')) ++b;
        while (e > b && (m[e - 1] == ' ' || m[e - 1] == '\t')) --e;
        if (b == e) return;
        m = m.substr(b, e - b);
        position += b;
        const std::size_t eq = m.find('=');
        if (eq == std::string_view::npos) return note(tracestate_problem::missing_equals, position);
        const std::string_view key = m.substr(0, eq);
        const member_check k = check_key(key);
        if (k.problem != tracestate_problem::none) return note(k.problem, position + k.offset);
        const member_check v = check_value(m.substr(eq + 1));
        if (v.problem != tracestate_problem::none) return note(v.problem, position + eq + 1 + v.offset);
        for (std::size_t i = 0; i < count_; ++i) {
            if (members_[i].substr(0, key_sizes_[i]) == key) return note(tracestate_problem::duplicate_key, position);
        }
        if (count_ == tracestate_max_members) return note(tracestate_problem::too_many_members, position);
        members_[count_] = m;
        key_sizes_[count_] = static_cast<std::uint16_t>(eq);
        ++count_;
    }

    tracestate_policy policy_;
    tracestate_summary summary_;
    std::string_view members_[tracestate_max_members];
    std::uint16_t key_sizes_[tracestate_max_members] = {};
    std::size_t count_ = 0;
    std::size_t base_ = 0;    ///< position of the current value's first character
    std::size_t values_ = 0;  ///< values added
};

}  // namespace loupe::tasks::detail
