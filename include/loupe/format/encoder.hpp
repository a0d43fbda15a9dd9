// Turns sink records into the bytes of the .loupe format (docs/format.md):
// interns strings, sites and threads per trace, writes each definition before
// its first use, and packs consecutive events of one thread into one EVENTS
// record with delta-encoded timestamps. Runs on the collector thread.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/base/context.hpp"
#include "loupe/format/byte_buffer.hpp"
#include "loupe/format/wire.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/record.hpp"

namespace loupe::detail {

class trace_encoder {
public:
    /// An EVENTS record is closed once its payload reaches this size, so
    /// encoded bytes become writable at a steady pace.
    static constexpr std::size_t max_batch_bytes = 16 * 1024;

    /// Appends the encoding of `r`. Throws loupe::error for a second
    /// session on one encoder (a trace file holds one session).
    void encode(const record& r) {
        if (LOUPE_LIKELY(r.kind == record_kind::zone)) return event(r, format::ev_zone);
        encode_other(r);
    }

    /// Closes the open EVENTS record so that `bytes()` holds whole records.
    void close_batch() {
        if (batch_thread_ == 0) return;
        out_.push_back(format::rec_events);
        append_varint(out_, batch_size_);
        out_.insert(out_.end(), batch_.data(), batch_.data() + batch_size_);
        batch_size_ = 0;
        batch_thread_ = 0;
    }

    /// Encoded bytes not yet taken; the owner writes them out and clears.
    std::vector<unsigned char>& bytes() noexcept { return out_; }
    bool begun() const noexcept { return begun_; }
    bool ended() const noexcept { return ended_; }

private:
    struct thread_entry {
        std::uint32_t name_version = 0;
        std::uint64_t base_ns = 0;  // time of this thread's previous event
    };
    // The longest event in an EVENTS record: tag, site, time, duration or value.
    static constexpr std::size_t max_event_bytes = 1 + 3 * format::max_varint_bytes + 8;

    LOUPE_NOINLINE void encode_other(const record& r) {
        switch (r.kind) {
            case record_kind::session_begin: return begin(*r.session);
            case record_kind::zone: return event(r, format::ev_zone);
            case record_kind::instant: return event(r, format::ev_instant);
            case record_kind::counter: return event(r, format::ev_counter);
            case record_kind::dropped: return dropped(r);
            case record_kind::session_end: return end(r);
            case record_kind::context: return context_change(r);
            case record_kind::io: return io_operation_record(r);
            case record_kind::io_resource: return io_resource_record(r);
            case record_kind::metric_totals: return metric_totals(r);
            case record_kind::param_spec:
                return param_spec(r);
            case record_kind::param_apply_error:
                return apply_error(r);
            case record_kind::flow:
                return flow(r);
            case record_kind::zone_arg:
                return zone_arg(r);
            case record_kind::task_point:
                return task_point_record(r);
        }
    }

    template <class Bytes>
    static void append_varint(Bytes& v, std::uint64_t x) {
        unsigned char tmp[format::max_varint_bytes];
        v.insert(v.end(), tmp, format::put_varint(tmp, x));
    }

    // Writes `kind, varint length, payload` where payload was built in
    // scratch_ after its head room: the head goes right before the payload,
    // and both are one copy onto out_.
    void emit(format::record_kind kind) {
        const std::size_t payload = scratch_.size() - scratch_head_room;
        unsigned char head[1 + format::max_varint_bytes];
        head[0] = kind;
        const auto head_bytes = static_cast<std::size_t>(format::put_varint(head + 1, payload) - head);
        unsigned char* const start = scratch_.data() + scratch_head_room - head_bytes;
        std::memcpy(start, head, head_bytes);
        out_.insert(out_.end(), start, scratch_.data() + scratch_.size());
        scratch_.resize(scratch_head_room);
    }

    // `n` bytes at the end of scratch_ for a payload written through a
    // pointer (the records a busy thread writes many of: a vector insert
    // per field costs more than the field); scratch_end trims to where it
    // ended.
    unsigned char* scratch_room(std::size_t n) {
        const std::size_t at = scratch_.size();
        scratch_.resize(at + n);
        return scratch_.data() + at;
    }
    void scratch_end(const unsigned char* end) { scratch_.resize(static_cast<std::size_t>(end - scratch_.data())); }
    // A text as every record holds one: varint size, then the bytes.
    static unsigned char* put_text(unsigned char* p, std::string_view text) noexcept {
        p = format::put_varint(p, text.size());
        if (!text.empty()) std::memcpy(p, text.data(), text.size());
        return p + text.size();
    }

    void begin(const session_info& s) {
        if (begun_) {
            throw error("trace encoder: a .loupe file holds one session; session '" + std::string(s.name) +
                        "' was given a file sink already used by another session");
        }
        begun_ = true;
        start_ns_ = s.start_ns;
        unsigned char header[format::header_size];
        unsigned char* p = header;
        for (unsigned char m : format::magic) *p++ = m;
        p = format::put_u16(p, format::version_major);
        p = format::put_u16(p, format::version_minor);
        format::put_u32(p, 0);
        out_.insert(out_.end(), header, header + format::header_size);
        unsigned char fixed[16];
        format::put_u64(format::put_u64(fixed, s.start_ns), s.wall_anchor_ns);
        scratch_.insert(scratch_.end(), fixed, fixed + 16);
        append_varint(scratch_, s.pid);
        scratch_.push_back(static_cast<unsigned char>(s.clock));
        append_varint(scratch_, s.name.size());
        scratch_.insert(scratch_.end(), s.name.begin(), s.name.end());
        emit(format::rec_session);
        if (!s.program.empty()) {
            append_text(s.program);
            emit(format::rec_process);
        }
        if (!s.host.empty() || !s.boot_id.empty() || !s.clock_domain.empty() || s.process_start_ns != 0) {
            append_text(s.host);
            append_text(s.boot_id);
            append_text(s.clock_domain);
            append_varint(scratch_, s.process_start_ns);
            emit(format::rec_host);
        }
        for (std::size_t i = 0; i < s.metric_count; ++i) metric(s.metrics[i]);
    }

    void append_text(std::string_view text) {
        scratch_end(put_text(scratch_room(format::max_varint_bytes + text.size()), text));
    }

    void metric(const metric_info& m) {
        append_varint(scratch_, m.id);
        scratch_.push_back(static_cast<unsigned char>(m.source));
        scratch_.push_back(m.available ? 1 : 0);
        append_text(m.name);
        append_text(m.unit);
        append_text(m.unavailable_reason);
        emit(format::rec_metric);
    }

    void append_metric_values(const record& r) {
        append_varint(scratch_, r.metric_count);
        for (std::size_t i = 0; i < r.metric_count; ++i) {
            append_varint(scratch_, r.metrics[i].id);
            append_varint(scratch_, format::zigzag(r.metrics[i].value));
        }
    }

    // A zone's deltas: a record of its own right after the zone's event, so
    // readers before 1.3 still read the zone (and skip this).
    void zone_metrics(const record& r) {
        close_batch();
        append_varint(scratch_, r.thread->id);
        append_metric_values(r);
        emit(format::rec_zone_metrics);
    }

    // A method call's values and exit details: like ZONE_METRICS, a record
    // of its own right after the zone's event (readers before 1.4 skip it).
    // Text values are written inline: they are unbounded.
    void method_call_record(const record& r) {
        close_batch();
        const loupe::method_call& m = *r.method;
        std::size_t bound = 1 + 4 * format::max_varint_bytes;
        for (std::size_t i = 0; i < m.value_count; ++i) bound += param_value_bound(m.values[i]);
        unsigned char* p = scratch_room(bound);
        p = format::put_varint(p, r.thread->id);
        *p++ = static_cast<unsigned char>((m.exceptional ? format::call_exceptional : 0) |
                                          (m.has_cpu ? format::call_has_cpu : 0) |
                                          (m.values_lost ? format::call_values_lost : 0));
        if (m.has_cpu) {
            p = format::put_varint(p, m.cpu_begin_ns);
            p = format::put_varint(p, format::zigzag(static_cast<std::int64_t>(m.cpu_end_ns - m.cpu_begin_ns)));
        }
        p = format::put_varint(p, m.value_count);
        for (std::size_t i = 0; i < m.value_count; ++i) p = put_param_value(p, m.values[i]);
        scratch_end(p);
        emit(format::rec_method_call);
    }

    // The most bytes put_param_value writes for `v`.
    static std::size_t param_value_bound(const param_value& v) noexcept {
        return 1 + 3 * format::max_varint_bytes + 1 + 8 + v.text.size();
    }
    // u8 kind, varint spec, bytes payload (by kind; see docs/format.md), at
    // `p` (param_value_bound(v) bytes of room); returns the end.
    static unsigned char* put_param_value(unsigned char* p, const param_value& v) noexcept {
        *p++ = static_cast<unsigned char>(v.kind);
        p = format::put_varint(p, v.spec);
        unsigned char buf[2 * format::max_varint_bytes + 1];
        unsigned char* fixed_end = buf;
        std::string_view text;
        switch (v.kind) {
            case value_kind::boolean:
                *fixed_end++ = v.bits != 0 ? 1 : 0;
                break;
            case value_kind::integer:
                fixed_end = format::put_varint(fixed_end, format::zigzag(v.as_int()));
                break;
            case value_kind::unsigned_integer:
            case value_kind::object_id:
                fixed_end = format::put_varint(fixed_end, v.bits);
                break;
            case value_kind::floating:
            case value_kind::hash:
                fixed_end = format::put_u64(fixed_end, v.bits);
                break;
            case value_kind::string:
            case value_kind::type_name:
                *fixed_end++ = v.truncated ? format::value_truncated : 0;
                fixed_end = format::put_varint(fixed_end, v.original_size);
                text = v.text;
                break;
            case value_kind::redacted:
                fixed_end = format::put_varint(fixed_end, v.original_size);
                break;
            default:
                break;  // statuses: no payload
        }
        const std::size_t fixed = static_cast<std::size_t>(fixed_end - buf);
        p = format::put_varint(p, fixed + text.size());
        std::memcpy(p, buf, fixed);
        p += fixed;
        if (!text.empty()) std::memcpy(p, text.data(), text.size());
        return p + text.size();
    }

    // A zone argument: a record of its own before its zone's event (readers
    // before 1.8 skip it), naming the zone by its thread and begin time.
    void zone_arg(const record& r) {
        thread(*r.thread);
        const std::uint64_t key = string_id(r.arg->key);
        close_batch();
        unsigned char* p = scratch_room(3 * format::max_varint_bytes + param_value_bound(r.arg->value));
        p = format::put_varint(p, r.thread->id);
        p = format::put_varint(p, format::zigzag(static_cast<std::int64_t>(r.begin_ns - start_ns_)));
        p = format::put_varint(p, key);
        scratch_end(put_param_value(p, r.arg->value));
        emit(format::rec_zone_arg);
    }

    // Each spec once, and again only when it changes.
    void param_spec(const record& r) {
        const param_spec_info& s = *r.spec;
        auto [it, fresh] = specs_.try_emplace(s.index);
        if (!fresh && it->second.first == s.text && it->second.second == s.name) return;
        it->second = {std::string(s.text), std::string(s.name)};
        close_batch();
        append_varint(scratch_, s.index);
        append_text(s.text);
        append_text(s.name);
        emit(format::rec_param_spec);
    }

    void apply_error(const record& r) {
        const std::uint64_t site = site_id(r.where);
        close_batch();
        append_varint(scratch_, site);
        append_varint(scratch_, r.apply_error->spec);
        append_text(r.apply_error->reason);
        emit(format::rec_apply_error);
    }

    // A thread that exited before the stop comes without its name: one the
    // trace already knows keeps the name it has there.
    void metric_totals(const record& r) {
        if (r.thread && threads_.find(r.thread->id) == threads_.end()) thread(*r.thread);
        close_batch();
        scratch_.push_back(r.thread ? 0 : 1);
        append_varint(scratch_, r.thread ? r.thread->id : r.cpu);
        append_metric_values(r);
        emit(format::rec_metric_totals);
    }

    std::uint64_t string_id(std::string_view text) {
        auto it = strings_.find(std::string(text));
        if (it != strings_.end()) return it->second;
        const std::uint64_t id = strings_.size() + 1;
        strings_.emplace(std::string(text), id);
        close_batch();
        append_varint(scratch_, id);
        append_varint(scratch_, text.size());
        scratch_.insert(scratch_.end(), text.begin(), text.end());
        emit(format::rec_string);
        return id;
    }

    // One SITE per (kind, name, file, line): the sites of one macro in a
    // template's instantiations are one site in the trace (the first one's
    // function names it), so every report groups them as one row.
    std::uint64_t site_id(const site* where) {
        const cached_site& cached = site_cache_[site_slot(where)];
        if (LOUPE_LIKELY(cached.where == where)) return cached.id;
        return look_up_site(where);
    }
    static std::size_t site_slot(const site* where) noexcept {
        return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(where) * 0x9E3779B97F4A7C15ull) >>
                                        (64 - site_cache_bits));
    }
    LOUPE_NOINLINE std::uint64_t look_up_site(const site* where) {
        auto it = sites_.find(where);
        std::uint64_t id;
        if (it != sites_.end()) {
            id = it->second;
        } else {
            const std::uint64_t name = string_id(where->name);
            const std::uint64_t file = string_id(where->file);
            const site_key key{name, file, where->line, static_cast<std::uint8_t>(where->kind)};
            const auto same = sites_by_key_.find(key);
            if (same != sites_by_key_.end()) {
                sites_.emplace(where, same->second);
                site_cache_[site_slot(where)] = {where, same->second};
                return same->second;
            }
            id = ++site_count_;
            const std::uint64_t function = string_id(where->function);
            sites_.emplace(where, id);
            sites_by_key_.emplace(key, id);
            close_batch();
            append_varint(scratch_, id);
            scratch_.push_back(static_cast<unsigned char>(file_site_kind(where->kind)));
            append_varint(scratch_, name);
            append_varint(scratch_, file);
            append_varint(scratch_, where->line);
            append_varint(scratch_, function);
            emit(format::rec_site);
        }
        site_cache_[site_slot(where)] = {where, id};
        return id;
    }

    // A flow point's site is an instant site in the file (readers before 1.6
    // know kinds 1-3 only); its FLOW record says what it does.
    static site_kind file_site_kind(site_kind k) noexcept {
        return k == site_kind::flow || k == site_kind::flow_end ? site_kind::instant : k;
    }

    // A flow point: a record of its own (readers before 1.6 skip it), with
    // its time, so that it can be read without the EVENTS records.
    void flow(const record& r) {
        thread(*r.thread);
        const std::uint64_t site = site_id(r.where);
        close_batch();
        append_varint(scratch_, r.thread->id);
        append_varint(scratch_, site);
        append_varint(scratch_, format::zigzag(static_cast<std::int64_t>(r.begin_ns - start_ns_)));
        unsigned char fixed[8];
        format::put_u64(fixed, r.flow_id);
        scratch_.insert(scratch_.end(), fixed, fixed + 8);
        scratch_.push_back(r.where->kind == site_kind::flow_end ? format::flow_terminates : 0);
        emit(format::rec_flow);
    }

    // Defines (or renames) the thread when needed; returns its entry. The
    // last thread's entry is kept at hand: records come in runs of one
    // thread (a ring at a time), and most are not in a batch (task points,
    // I/O, definitions).
    thread_entry& thread(const thread_info& t) {
        if (last_entry_ != nullptr && t.id == last_thread_ && last_entry_->name_version == t.name_version) {
            return *last_entry_;
        }
        auto [it, fresh] = threads_.try_emplace(t.id);
        thread_entry& e = it->second;
        last_thread_ = t.id;
        last_entry_ = &e;  // an unordered_map's elements stay where they are
        if (fresh || e.name_version != t.name_version) {
            if (fresh) e.base_ns = start_ns_;
            e.name_version = t.name_version;
            const std::uint64_t name = t.name.empty() ? 0 : string_id(t.name);
            close_batch();
            append_varint(scratch_, t.id);
            append_varint(scratch_, t.os_tid);
            append_varint(scratch_, name);
            emit(format::rec_thread);
        }
        return e;
    }

    // Appends an event to the open EVENTS record. Inline for the common case
    // (the record's thread, not renamed, a site in the cache); open_event
    // does the rest first.
    LOUPE_ALWAYS_INLINE void event(const record& r, format::event_tag tag) {
        const cached_site& site = site_cache_[site_slot(r.where)];
        if (LOUPE_UNLIKELY(r.thread->id != batch_thread_ || site.where != r.where || renamed(*r.thread))) open_event(r);
        thread_entry& t = *batch_entry_;
        unsigned char* const start = batch_.data() + batch_size_;  // room: see batch_
        unsigned char* p = start;
        *p++ = tag;
        p = format::put_varint(p, site.id);
        p = format::put_varint(p, format::zigzag(static_cast<std::int64_t>(r.begin_ns - t.base_ns)));
        if (tag == format::ev_zone) p = format::put_varint(p, r.end_ns - r.begin_ns);
        if (tag == format::ev_counter) p = format::put_f64(p, r.value);
        batch_size_ += static_cast<std::size_t>(p - start);
        t.base_ns = r.begin_ns;
        ++events_written_;
        if (r.metric_count != 0) zone_metrics(r);
        if (r.method && tag == format::ev_zone) return method_call_record(r);
        if (batch_size_ >= max_batch_bytes) close_batch();
    }

    // Defines the event's thread and site where needed (records before the
    // EVENTS record) and opens the thread's EVENTS record: then the site is
    // in the cache and batch_entry_ is the thread's.
    LOUPE_NOINLINE void open_event(const record& r) {
        thread_entry& t = thread(*r.thread);
        site_id(r.where);
        if (batch_thread_ != r.thread->id) {
            close_batch();
            batch_thread_ = r.thread->id;
            batch_entry_ = &t;
            batch_size_ = static_cast<std::size_t>(format::put_varint(batch_.data(), r.thread->id) - batch_.data());
        }
    }

    bool renamed(const thread_info& t) const noexcept { return batch_entry_->name_version != t.name_version; }

    void dropped(const record& r) {
        const std::uint64_t id = r.thread ? r.thread->id : 0;
        if (r.thread) thread(*r.thread);
        close_batch();
        append_varint(scratch_, id);
        append_varint(scratch_, r.count);
        emit(format::rec_dropped);
        events_dropped_ += r.count;
    }

    // Values are written inline, not interned: request ids are unbounded.
    void context_change(const record& r) {
        thread(*r.thread);
        close_batch();
        append_varint(scratch_, r.thread->id);
        unsigned char fixed[8];
        format::put_u64(fixed, r.begin_ns);
        scratch_.insert(scratch_.end(), fixed, fixed + 8);
        std::uint8_t truncated = 0;
        for (unsigned f = 0; f < context_field_count; ++f) {
            if (r.context->truncated(static_cast<context_field>(f))) truncated = static_cast<std::uint8_t>(truncated | (1u << f));
        }
        scratch_.push_back(truncated);
        for (unsigned f = 0; f < context_field_count; ++f) {
            const std::string_view v = r.context->get(static_cast<context_field>(f));
            append_varint(scratch_, v.size());
            scratch_.insert(scratch_.end(), v.begin(), v.end());
        }
        emit(format::rec_context);
        const tasks::task_context& task = r.context->task();
        if (task.valid()) {  // amends the CONTEXT just written (older readers skip it)
            append_varint(scratch_, r.thread->id);
            unsigned char ids[32];
            unsigned char* p = format::put_u64(ids, r.begin_ns);
            p = format::put_u64(format::put_u64(p, task.trace.high), task.trace.low);
            format::put_u64(p, task.span);
            scratch_.insert(scratch_.end(), ids, ids + sizeof ids);
            scratch_.push_back(task.flags);
            append_text(task.state.view());
            emit(format::rec_task_context);
        }
    }

    void task_point_record(const record& r) {
        thread(*r.thread);
        close_batch();
        const task_point& t = *r.task;
        unsigned char* p = scratch_room(1 + 5 * format::max_varint_bytes + 5 * 8 + 1 + t.peer.size() + t.name.size());
        p = format::put_varint(p, r.thread->id);
        *p++ = static_cast<unsigned char>(t.kind);
        p = format::put_varint(p, format::zigzag(static_cast<std::int64_t>(r.begin_ns - start_ns_)));
        p = format::put_u64(format::put_u64(p, t.trace_high), t.trace_low);
        p = format::put_u64(format::put_u64(p, t.call_id), t.span_id);
        p = format::put_u64(p, t.echoed_id);
        p = format::put_varint(p, format::zigzag(t.status));
        *p++ = t.tagged ? format::task_tagged : 0;
        p = put_text(put_text(p, t.peer), t.name);
        scratch_end(p);
        emit(format::rec_task);
    }

    // One IO record per operation: I/O is rare next to zones, and a record
    // of its own keeps 1.1 readers able to skip it.
    void io_operation_record(const record& r) {
        thread(*r.thread);
        close_batch();
        const io_operation& op = *r.io;
        unsigned char* p = scratch_room(1 + 6 * format::max_varint_bytes);
        p = format::put_varint(p, r.thread->id);
        *p++ = static_cast<unsigned char>(op.op);
        p = format::put_varint(p, format::zigzag(static_cast<std::int64_t>(r.begin_ns - start_ns_)));
        p = format::put_varint(p, r.end_ns - r.begin_ns);
        p = format::put_varint(p, op.resource_id);
        p = format::put_varint(p, format::zigzag(op.fd));
        p = format::put_varint(p, format::zigzag(op.result));
        scratch_end(p);
        emit(format::rec_io);
    }

    // Each resource once per trace, however many threads announce it.
    void io_resource_record(const record& r) {
        const io_resource& res = *r.resource;
        if (!resources_.insert(res.id).second) return;
        close_batch();
        append_varint(scratch_, res.id);
        scratch_.push_back(static_cast<unsigned char>(res.kind));
        scratch_.push_back(static_cast<unsigned char>((res.name_truncated ? 1 : 0) | (res.backfilled ? 2 : 0)));
        unsigned char fixed[8];
        format::put_u64(fixed, res.open_ns);
        scratch_.insert(scratch_.end(), fixed, fixed + 8);
        append_varint(scratch_, res.opener_os_tid);
        append_varint(scratch_, res.name.size());
        scratch_.insert(scratch_.end(), res.name.begin(), res.name.end());
        emit(format::rec_io_resource);
    }

    void end(const record& r) {
        close_batch();
        append_varint(scratch_, events_written_);
        append_varint(scratch_, events_dropped_);
        unsigned char fixed[8];
        format::put_u64(fixed, r.end_ns);
        scratch_.insert(scratch_.end(), fixed, fixed + 8);
        emit(format::rec_end);
        ended_ = true;
    }

    std::vector<unsigned char> out_;
    // Payload of the open EVENTS record, written in place: it holds less than
    // max_batch_bytes before an event (else it was closed), so an event
    // always fits, as does the thread id that opens it.
    std::vector<unsigned char> batch_ = std::vector<unsigned char>(max_batch_bytes + max_event_bytes);
    std::size_t batch_size_ = 0;
    // The record being built: room for its kind and length, then its
    // payload. Grows without zeroing (byte_buffer).
    static constexpr std::size_t scratch_head_room = 1 + format::max_varint_bytes;
    format::byte_buffer scratch_ = format::byte_buffer(scratch_head_room);
    std::uint64_t batch_thread_ = 0;      // 0: no EVENTS record open
    thread_entry* batch_entry_ = nullptr;
    std::uint64_t last_thread_ = 0;  // thread(): the last thread asked for (last_entry_ null: none)
    thread_entry* last_entry_ = nullptr;
    std::unordered_map<std::string, std::uint64_t> strings_;
    struct site_key {
        std::uint64_t name, file;
        std::uint32_t line;
        std::uint8_t kind;
        bool operator==(const site_key& o) const noexcept {
            return name == o.name && file == o.file && line == o.line && kind == o.kind;
        }
    };
    struct site_key_hash {
        std::size_t operator()(const site_key& k) const noexcept {
            return static_cast<std::size_t>((k.name * 0x9E3779B97F4A7C15ull) ^ (k.file << 20) ^
                                            (std::uint64_t{k.line} << 4) ^ k.kind);
        }
    };
    std::unordered_map<const site*, std::uint64_t> sites_;
    std::unordered_map<site_key, std::uint64_t, site_key_hash> sites_by_key_;
    std::uint64_t site_count_ = 0;
    std::unordered_map<std::uint64_t, thread_entry> threads_;
    std::unordered_set<std::uint64_t> resources_;
    std::unordered_map<std::uint32_t, std::pair<std::string, std::string>> specs_;  // index -> (text, name) written
    // Site ids of recently seen sites, direct-mapped by address: the events
    // of a handful of nested zones find theirs without a hash lookup.
    struct cached_site {
        const site* where = nullptr;
        std::uint64_t id = 0;
    };
    static constexpr unsigned site_cache_bits = 8;
    std::array<cached_site, std::size_t{1} << site_cache_bits> site_cache_{};
    std::uint64_t start_ns_ = 0;
    std::uint64_t events_written_ = 0;
    std::uint64_t events_dropped_ = 0;
    bool begun_ = false;
    bool ended_ = false;
};

}  // namespace loupe::detail
