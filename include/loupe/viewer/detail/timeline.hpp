// What the viewer writers (viewer/perfetto.hpp, viewer/chrome_json.hpp)
// consume: one thread's events in a compact form (timeline_event), replayed
// in the order a timeline viewer needs them (replay_thread: zone begins and
// ends, instants and counters by time, properly nested). Where the events
// come from is sources.hpp.
//
// Replay order: a .loupe trace stores a zone when it ends, so a thread's
// events are in order of "record time" (a zone's end, an instant's time);
// an enclosing zone follows the zones nested in it. The ends, instants and
// counters are therefore already in time order; only the begins are sorted,
// by begin time, outer zone first (skipped when already in order, as for
// zones that do not nest). The two streams are merged: at equal times an end
// or instant comes before a begin (adjacent zones), except that a
// zero-length zone's end waits for the begins at its time up to its own.
//
// Each step also says whether its event ran in a different context (who was
// served) than the zone around it, so writers attach context fields once
// per change instead of to every nested slice.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "loupe/format/decoder.hpp"

namespace loupe::detail {

/// One event of one thread, 24 bytes. `site()` indexes trace::sites;
/// `context` indexes the thread's contexts (sources.hpp).
struct timeline_event {
    static constexpr std::uint32_t no_context = 0xffffffffu;
    std::uint64_t begin_ns = 0;
    std::uint64_t end_or_value = 0;  ///< zone: end time; counter: the value's bits; instant: begin
    std::uint32_t site_and_type = 0;  ///< site index, event_type in the top two bits
    std::uint32_t context = no_context;

    event_type type() const noexcept { return static_cast<event_type>(site_and_type >> 30); }
    std::uint32_t site() const noexcept { return site_and_type & 0x3fffffffu; }
    std::uint64_t end_ns() const noexcept { return type() == event_type::counter ? begin_ns : end_or_value; }
    double value() const noexcept {
        double v;
        std::memcpy(&v, &end_or_value, sizeof v);
        return type() == event_type::counter ? v : 0.0;
    }

    static timeline_event make(event_type type, std::uint32_t site_index, std::uint64_t begin, std::uint64_t end,
                               double value, std::uint32_t context) {
        timeline_event e;
        e.begin_ns = begin;
        if (type == event_type::counter) {
            std::memcpy(&e.end_or_value, &value, sizeof value);
        } else {
            e.end_or_value = end;
        }
        e.site_and_type = (static_cast<std::uint32_t>(type) << 30) | site_index;
        e.context = context;
        return e;
    }
};

struct timeline_step {
    enum kind_type : std::uint8_t { begin, end, instant, counter };
    std::uint64_t time_ns = 0;
    std::uint32_t event = 0;  ///< index into the thread's events
    kind_type kind = begin;
    bool show_context = false;  ///< begin/instant/counter: context differs from the enclosing zone's
};

/// Replays one thread's events (in file order) as steps, calling
/// `on_step(const timeline_step&)` for each. `begins` is scratch space.
template <class OnStep>
void replay_thread(const std::vector<timeline_event>& events, std::vector<std::uint32_t>& begins, OnStep&& on_step) {
    begins.clear();
    for (std::uint32_t i = 0; i < events.size(); ++i) {
        if (events[i].type() == event_type::zone) begins.push_back(i);
    }
    // Outer zone first: earlier begin, then later end, then later in file.
    const auto outer_first = [&](std::uint32_t a, std::uint32_t b) {
        const timeline_event& x = events[a];
        const timeline_event& y = events[b];
        if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
        if (x.end_or_value != y.end_or_value) return x.end_or_value > y.end_or_value;
        return a > b;
    };
    if (!std::is_sorted(begins.begin(), begins.end(), outer_first)) std::sort(begins.begin(), begins.end(), outer_first);

    // Contexts of the zones open at each point, innermost last (fixed depth
    // bound is not needed: the stack only grows with real nesting).
    std::vector<std::uint32_t> open_contexts;
    auto context_around = [&] { return open_contexts.empty() ? timeline_event::no_context : open_contexts.back(); };
    std::size_t next_begin = 0;
    for (std::uint32_t e = 0; e < events.size(); ++e) {
        const timeline_event& ev = events[e];
        const bool zone = ev.type() == event_type::zone;
        const std::uint64_t time = zone ? ev.end_or_value : ev.begin_ns;
        // Begins before this step; for a zero-length zone's end also those
        // at its time, up to its own begin.
        bool own_begin_pending = zone && ev.begin_ns == time;
        while (next_begin < begins.size()) {
            const std::uint32_t b = begins[next_begin];
            const std::uint64_t begin = events[b].begin_ns;
            if (begin >= time && !(own_begin_pending && begin == time)) break;
            if (b == e) own_begin_pending = false;
            ++next_begin;
            const std::uint32_t ctx = events[b].context;
            on_step(timeline_step{begin, b, timeline_step::begin, ctx != context_around()});
            open_contexts.push_back(ctx);
        }
        if (zone) {
            on_step(timeline_step{time, e, timeline_step::end, false});
            if (!open_contexts.empty()) open_contexts.pop_back();
        } else {
            on_step(timeline_step{time, e,
                                  ev.type() == event_type::instant ? timeline_step::instant : timeline_step::counter,
                                  ev.context != context_around()});
        }
    }
}

}  // namespace loupe::detail
