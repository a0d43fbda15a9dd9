// Puts one thread's events in the order a timeline viewer replays them:
// zone begins and ends, instants and counters by time, properly nested.
// Shared by the Perfetto and Chrome JSON writers (viewer/).
//
// A .loupe trace stores a zone when it ends, so a thread's events are in
// order of "record time" (a zone's end, an instant's time); an enclosing
// zone follows the zones nested in it. The ends, instants and counters are
// therefore already in time order; only the begins are sorted, by begin
// time, outer zone first. The two streams are merged: at equal times an end
// or instant comes before a begin (adjacent zones), except that a
// zero-length zone's end waits for the begins at its time up to its own.
//
// Each step also says whether its event ran in a different context (who was
// served) than the zone around it, so writers attach context fields once
// per change instead of to every nested slice.
//
// Cost: O(n log n) in the thread's zones; memory 16 bytes per step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "loupe/error.hpp"
#include "loupe/reader.hpp"

namespace loupe::detail {

struct timeline_step {
    enum kind_type : std::uint8_t { begin, end, instant, counter };
    std::uint64_t time_ns = 0;
    std::uint32_t event = 0;  ///< index into trace::events
    kind_type kind = begin;
    bool show_context = false;  ///< begin/instant/counter: context differs from the enclosing zone's
};

/// Calls `visit(const trace_thread&, const std::vector<timeline_step>&)` for
/// every thread that has events, in the order of trace::threads.
/// Throws loupe::error for a trace of 2^32 events or more.
template <class Visitor>
void for_each_thread_timeline(const trace& t, Visitor&& visit) {
    if (t.events.size() >= 0xffffffffu) throw error("trace too large to convert: " + std::to_string(t.events.size()) + " events");
    // Event indexes grouped by thread (counting first, so one allocation).
    std::vector<std::uint32_t> thread_of(t.events.size());
    std::vector<std::size_t> first(t.threads.size() + 1, 0);
    std::uint64_t cached_id = 0;
    std::uint32_t cached_index = 0;
    for (std::uint32_t i = 0; i < t.events.size(); ++i) {
        if (t.events[i].thread_id != cached_id || i == 0) {
            const trace_thread* thread = t.find_thread(t.events[i].thread_id);
            cached_id = t.events[i].thread_id;
            cached_index = thread ? static_cast<std::uint32_t>(thread - t.threads.data()) : 0xffffffffu;
        }
        thread_of[i] = cached_index;
        if (cached_index != 0xffffffffu) ++first[cached_index + 1];
    }
    for (std::size_t th = 0; th < t.threads.size(); ++th) first[th + 1] += first[th];
    std::vector<std::uint32_t> grouped(first.back());
    {
        std::vector<std::size_t> fill(first.begin(), first.end() - 1);
        for (std::uint32_t i = 0; i < t.events.size(); ++i) {
            if (thread_of[i] != 0xffffffffu) grouped[fill[thread_of[i]]++] = i;
        }
    }
    thread_of = {};

    std::vector<std::uint32_t> begins;  // zones, in begin order
    std::vector<timeline_step> steps;
    std::vector<std::size_t> open_contexts;
    for (std::size_t th = 0; th < t.threads.size(); ++th) {
        const std::uint32_t* const events_begin = grouped.data() + first[th];
        const std::uint32_t* const events_end = grouped.data() + first[th + 1];
        if (events_begin == events_end) continue;
        begins.clear();
        for (const std::uint32_t* e = events_begin; e != events_end; ++e) {
            if (t.events[*e].type == event_type::zone) begins.push_back(*e);
        }
        // Outer zone first: earlier begin, then later end, then later in file.
        // Zones that do not nest are already in this order (skip the sort).
        const auto outer_first = [&](std::uint32_t a, std::uint32_t b) {
            const trace_event& x = t.events[a];
            const trace_event& y = t.events[b];
            if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
            if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
            return a > b;
        };
        if (!std::is_sorted(begins.begin(), begins.end(), outer_first)) {
            std::sort(begins.begin(), begins.end(), outer_first);
        }

        steps.clear();
        steps.reserve(static_cast<std::size_t>(events_end - events_begin) + begins.size());
        open_contexts.clear();
        auto context_around = [&] { return open_contexts.empty() ? no_context : open_contexts.back(); };
        std::size_t next_begin = 0;
        auto emit_begin = [&] {
            const std::uint32_t e = begins[next_begin++];
            const std::size_t ctx = t.events[e].context;
            steps.push_back({t.events[e].begin_ns, e, timeline_step::begin, ctx != context_around()});
            open_contexts.push_back(ctx);
        };
        for (const std::uint32_t* it = events_begin; it != events_end; ++it) {
            const std::uint32_t e = *it;
            const trace_event& ev = t.events[e];
            const std::uint64_t time = ev.type == event_type::zone ? ev.end_ns : ev.begin_ns;
            // Begins before this step; for a zero-length zone's end also
            // those at its time, up to its own begin.
            bool own_begin_pending = ev.type == event_type::zone && ev.begin_ns == time;
            while (next_begin < begins.size()) {
                const std::uint32_t b = begins[next_begin];
                if (t.events[b].begin_ns >= time && !(own_begin_pending && t.events[b].begin_ns == time)) break;
                if (b == e) own_begin_pending = false;
                emit_begin();
            }
            switch (ev.type) {
                case event_type::zone:
                    steps.push_back({time, e, timeline_step::end, false});
                    if (!open_contexts.empty()) open_contexts.pop_back();
                    break;
                case event_type::instant:
                case event_type::counter:
                    steps.push_back({time, e, ev.type == event_type::instant ? timeline_step::instant : timeline_step::counter,
                                     ev.context != context_around()});
                    break;
            }
        }
        visit(t.threads[th], steps);
    }
}

}  // namespace loupe::detail
