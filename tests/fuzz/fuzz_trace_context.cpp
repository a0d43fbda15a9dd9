// Fuzz target: task context from outside (W3C Trace Context), by reader —
// the first byte picks it: 0 traceparent, 1 tracestate (the rest split at
// '\n' into header values), 2 a raw HTTP header block, 3 an in-band token
// in front of a name, 4 a header map (the rest split at '\n' into
// "name:value" entries). Whatever the bytes, nothing throws, and:
//  - a valid traceparent has non-zero ids, and a version-00 one formats back
//    to the very text it was read from (whitespace trimmed); any other
//    valid one formats to a version-00 text that reads back the same;
//  - a rejected one says where, within the value;
//  - a kept tracestate is at most 512 characters and 32 members, and reads
//    back unchanged and without a problem;
//  - an extracted context is valid exactly when the extract is ok;
//  - a stripped token has non-zero ids and re-encodes to the prefix it came
//    from; otherwise the name is left whole.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <loupe/tasks.hpp>

namespace {

namespace tasks = loupe::tasks;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

std::vector<std::string_view> lines(std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t nl = text.find('\n', start);
        out.push_back(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
        if (nl == std::string_view::npos) return out;
        start = nl + 1;
    }
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

void check_traceparent(std::string_view text) {
    const tasks::traceparent_result r = tasks::parse_traceparent(text);
    if (!r.ok()) {
        check(r.position <= text.size());
        return;
    }
    check(r.trace.valid() && r.span != 0);
    tasks::task_context c;
    c.trace = r.trace;
    c.span = r.span;
    c.flags = r.flags;
    const tasks::traceparent_chars again = tasks::format_traceparent(c);
    if (r.version == 0) check(again.view() == trimmed(text));
    const tasks::traceparent_result back = tasks::parse_traceparent(again.view());
    check(back.ok() && back.trace == r.trace && back.span == r.span && back.flags == r.flags);
}

void check_kept_tracestate(const tasks::tracestate_text& text, const tasks::tracestate_summary& summary) {
    check(text.size() <= tasks::tracestate_text::capacity);
    check(summary.members_kept <= 32);
    const tasks::tracestate_result back = tasks::parse_tracestate(text.view());
    check(back.ok() && back.text == text && back.summary.members_kept == summary.members_kept);
}

void check_tracestate(std::string_view text) {
    const std::vector<std::string_view> values = lines(text);
    for (const tasks::tracestate_policy policy :
         {tasks::tracestate_policy::drop_invalid_members, tasks::tracestate_policy::discard_on_any_error}) {
        const tasks::tracestate_result r = tasks::parse_tracestate(values.data(), values.size(), policy);
        check(r.summary.position <= text.size());
        check_kept_tracestate(r.text, r.summary);
        if (policy == tasks::tracestate_policy::discard_on_any_error && !r.ok()) check(r.text.empty());
    }
}

void check_extracted(const tasks::extract_result& r) {
    check(r.ok() == r.context.valid());
    if (!r.ok()) {
        check(r.context.trace == tasks::trace_id{} && r.context.span == 0 && r.context.state.empty());
        return;
    }
    check((r.context.flags & ~tasks::trace_flags::known) == 0);
    check_kept_tracestate(r.context.state, r.tracestate);
}

void check_strip(std::string_view name) {
    const tasks::strip_result r = tasks::strip(name);
    if (!r.found()) {
        check(r.rest == name && !r.context.valid());
        return;
    }
    check(r.context.valid());
    check(std::string(tasks::encode_prefix(r.context).view()) + std::string(r.rest) == name);
}

void check_map(std::string_view text) {
    std::map<std::string, std::string> headers;
    for (const std::string_view entry : lines(text)) {
        const std::size_t colon = entry.find(':');
        if (colon == std::string_view::npos) continue;
        headers[std::string(entry.substr(0, colon))] = std::string(entry.substr(colon + 1));
    }
    const tasks::extract_result r = tasks::extract(headers);
    check_extracted(r);
    if (!r.ok()) return;
    std::map<std::string, std::string> out;
    check(tasks::inject(r.context, out));
    const tasks::extract_result back = tasks::extract(out);
    check(back.ok() && back.context == r.context);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] % 5) {
        case 0:
            check_traceparent(text);
            break;
        case 1:
            check_tracestate(text);
            break;
        case 2:
            check_extracted(tasks::extract_header_block(text));
            check_extracted(tasks::extract_response_header_block(text));
            break;
        case 3:
            check_strip(text);
            break;
        default:
            check_map(text);
            break;
    }
    return 0;
}
