// The four interception points of a call between processes (US 9,619,273
// FIG.2 and FIG.3), as two scopes: one around a call a client makes, one
// around the handling of a request a server receives. Together they carry
// the task's W3C trace context across the call and record where it went, so
// that `loupe merge` joins the processes' traces into one task tree.
//
//     // client
//     std::map<std::string, std::string> headers;
//     loupe::tasks::outgoing_call call("inventory", "GET /stock", headers);  // CALL_OUT (t1), injects
//     auto response = http.get(url, headers);
//     call.returned(response.headers, response.status);                     // RETURN_IN (t4), reads the echo
//
//     // server
//     loupe::tasks::incoming_request req(request.headers, "GET /stock");    // REQUEST_IN (t2), the thread's task
//     ... handle: zones, and the calls it makes, belong to the task ...
//     req.respond(response.headers, 200);                                   // RETURN_OUT (t3), traceresponse
//
// Which calls carry the context (are tagged): while a session records tasks
// (kinds::tasks) on the thread, those its task rules choose
// (session_config::task_rules; every call without rules). While none does,
// a thread that serves a task passes it on, as any W3C participant must; a
// thread without one sends nothing. A tagged call carries a new call id
// (the traceparent's parent-id) under the thread's task, or under a new
// task when the thread serves none. Untagged calls pass unchanged.
//
// incoming_request always makes the caller's task (or a new one, when the
// request carried no valid context) the thread's task for its scope, with
// a new span id of its own, and echoes that span in `traceresponse`.
//
// Records (kinds::tasks): CALL_OUT and RETURN_IN on the client, REQUEST_IN
// and RETURN_OUT on the server, with the ids, the peer, the name and the
// result (base/record.hpp task_point). A call scope that ends without
// returned()/respond() records its return with status -1.
//
// Cost: with nothing recording tasks and no task on the thread, an
// outgoing_call is one load and a branch (two: the thread's task); a
// recorded call, two ring units (with a hint that the ring's lines ahead
// will be written, ring::prefetch_ahead_for_write) and, when tagged, a
// new id and the traceparent written into the carrier. incoming_request
// parses the traceparent (about 16 ns) and sets the thread's task whether
// or not anything records. Peer and name are read only by the constructors
// (the first point records them). Thread-safety: a scope belongs to the
// thread that made it.
#pragma once

#include <cstdint>
#include <new>
#include <string_view>
#include <type_traits>

#include "loupe/base/config.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/tasks/carrier.hpp"
#include "loupe/tasks/detail/task_point_wire.hpp"
#include "loupe/tasks/task_context.hpp"
#include "loupe/tasks/task_scope.hpp"
#include "loupe/tasks/traceparent.hpp"

namespace loupe::tasks {

namespace detail {
/// Sessions that record task points of the calling thread now (0: none).
LOUPE_ALWAYS_INLINE std::uint64_t task_sessions() noexcept {
    if (LOUPE_LIKELY(!(loupe::detail::armed() & kinds::tasks))) return 0;
    return loupe::detail::sessions_for(site_kind::task);
}

/// Writes the traceresponse of `c` into a header map or through a setter.
template <class Carrier>
void write_traceresponse(const task_context& c, Carrier& response) {
    if constexpr (is_setter<Carrier>) {
        inject_response(c, response);
    } else {
        set_header(response, traceresponse_header, format_traceresponse(c).view());
    }
}
}  // namespace detail

/// A call this thread makes to another process (or through a stream to
/// itself). Non-copyable, non-movable; ends with its block.
class outgoing_call {
public:
    /// Decides whether to tag the call, and when it is tagged writes its
    /// traceparent (and tracestate) into `carrier`: a std::map or
    /// std::unordered_map of names to values, or a setter callable
    /// `set(name, value)` (tasks/carrier.hpp). Records CALL_OUT.
    template <class Carrier>
    outgoing_call(std::string_view peer, std::string_view name, Carrier&& carrier) {
        static_assert(detail::is_setter<std::remove_reference_t<Carrier>> ||
                          detail::is_header_map<std::remove_reference_t<Carrier>>,
                      "the carrier is a std::map or std::unordered_map of std::string to std::string, "
                      "or a callable set(std::string_view name, std::string_view value)");
        traceparent_chars text;  // formatted by begin() while it records, else below
        begin(peer, name, &text);
        if (!tagged_) return;
        if (sessions_ == 0) text = format_traceparent(context_);
        try {
            detail::inject_formatted(text, context_, carrier);
        } catch (...) {  // the destructor does not run: the call ends here, failed
            if (sessions_ != 0) record_return(-1, 0);
            throw;
        }
    }
    /// As above, for protocols without headers: read context() and carry it
    /// yourself (tasks/in_band_token.hpp puts it into a name field).
    LOUPE_ALWAYS_INLINE outgoing_call(std::string_view peer, std::string_view name) noexcept {
        begin(peer, name, nullptr);
    }
    ~outgoing_call() {
        if (sessions_ != 0 && !returned_) record_return(-1, 0);
    }
    outgoing_call(const outgoing_call&) = delete;
    outgoing_call& operator=(const outgoing_call&) = delete;
    static void* operator new(std::size_t) = delete;

    /// Whether the call carries the context (the rules chose it, or the
    /// thread's task is passed on).
    bool tagged() const noexcept { return tagged_; }
    /// The context the call carries (valid when tagged): the task's trace id
    /// and this call's new id.
    const task_context& context() const noexcept {
        static const task_context none{};
        return tagged_ || sessions_ != 0 ? context_ : none;
    }

    /// The return arrived with `status` (an HTTP status, or your own code;
    /// < 0: failed). `response` (a header map or a getter, as for extract)
    /// may carry the callee's traceresponse, whose id is recorded as the echo.
    /// Records RETURN_IN once; later calls do nothing.
    template <class Carrier>
    void returned(const Carrier& response, std::int64_t status) {
        if (sessions_ == 0 || returned_) return;
        const extract_result echo = extract_response(response);
        const bool same_task = echo.ok() && echo.context.trace == context_.trace;
        record_return(status, same_task ? echo.context.span : 0);
    }
    /// The return arrived, without headers to read.
    void returned(std::int64_t status) noexcept {
        if (sessions_ == 0 || returned_) return;
        record_return(status, 0);
    }

private:
    // `text`: where a recorded, tagged call formats its traceparent.
    LOUPE_ALWAYS_INLINE void begin(std::string_view peer, std::string_view name, traceparent_chars* text) noexcept {
        sessions_ = detail::task_sessions();
        const loupe::detail::task_slot& ambient = loupe::detail::t_context.task;
        if (LOUPE_LIKELY(sessions_ == 0)) {
            tagged_ = ambient.valid();
            if (LOUPE_UNLIKELY(tagged_)) pass_on();  // nothing records, but the thread's task goes on
            return;
        }
        begin_recorded(ambient, peer, name, text);
    }

    // A W3C participant passes the task it serves on, recorded or not.
    LOUPE_NOINLINE void pass_on() noexcept { new (&context_) task_context(child_task(current_task())); }

    // `text`, when given, receives the tagged call's traceparent before
    // CALL_OUT goes into the ring. The carrier copies it with loads wider
    // than the formatter's stores, which cannot take their bytes from
    // pending stores and wait until those reach the cache: written first,
    // the text does not wait behind the ring's stores.
    LOUPE_NOINLINE void begin_recorded(const loupe::detail::task_slot& ambient, std::string_view peer,
                                       std::string_view name, traceparent_chars* text) noexcept {
        tagged_ = (sessions_ & loupe::detail::g_task_rules_slots.load(std::memory_order_acquire)) == 0 ||
                  loupe::detail::tagging(sessions_, peer, name) != 0;
        // An untagged call still gets ids: its records must name a task, and
        // a call the thread makes without one is the root of a local task.
        parent_span_ = ambient.span;
        returned_ = false;
        new (&context_) task_context;
        if (ambient.valid()) {  // a call within the thread's task: its trace, flags and tracestate
            context_.trace = ambient.trace();
            context_.flags = ambient.flags;
            if (ambient.state_length != 0) context_.state.assign(loupe::detail::t_context.tracestate());
            context_.span = new_span_id();
        } else {
            context_.trace = new_trace_id();
            context_.span = new_span_id();
        }
        if (text != nullptr && tagged_) format_traceparent(context_, text->data);
        loupe::detail::push_task_first_point(sessions_, task_point_kind::call_out, tagged_, ids(), peer, name);
    }
    // The return names its call by its id only (the peer and name are the
    // CALL_OUT's).
    void record_return(std::int64_t status, std::uint64_t echoed) noexcept {
        returned_ = true;
        loupe::detail::push_task_return_point(sessions_, task_point_kind::return_in, tagged_, ids(), echoed, status);
    }
    loupe::detail::task_point_ids ids() const noexcept {
        return {context_.trace.high, context_.trace.low, context_.span, parent_span_};
    }

    // Set in the order the idle path needs them: the rest only when
    // something records (sessions_ != 0) or the call is tagged.
    std::uint64_t sessions_;
    bool tagged_;
    bool returned_;
    std::uint64_t parent_span_;
    static_assert(std::is_trivially_destructible_v<task_context>, "the union is never destroyed");
    union {
        task_context context_;  // constructed when tagged or recorded
    };
};

/// The handling of a request this thread received. Makes the caller's task
/// the thread's task for the scope (a new one when the request carried no
/// valid context). Non-copyable, non-movable; ends with its block.
class incoming_request {
public:
    /// Reads the caller's context from `carrier` (a header map or a getter,
    /// as for tasks::extract; malformed input starts a new task and is
    /// counted, see propagation_errors.hpp). `name` and `peer` (the caller,
    /// when known) label the records. Records REQUEST_IN.
    template <class Carrier>
    explicit incoming_request(const Carrier& carrier, std::string_view name = {}, std::string_view peer = {})
        : incoming_request(extract(carrier), name, peer) {}
    /// As above, from a context you extracted yourself (an invalid one: no
    /// caller, the task starts here).
    incoming_request(const extract_result& caller, std::string_view name, std::string_view peer) noexcept
        : context_(handler_context(caller)),
          call_id_(caller.ok() ? caller.context.span : 0),
          scope_(context_) {
        sessions_ = detail::task_sessions();
        if (sessions_ != 0) {
            loupe::detail::push_task_first_point(sessions_, task_point_kind::request_in, false, ids(), peer, name);
        }
    }
    ~incoming_request() {
        if (sessions_ != 0 && !responded_) record_return(-1);
    }
    incoming_request(const incoming_request&) = delete;
    incoming_request& operator=(const incoming_request&) = delete;
    static void* operator new(std::size_t) = delete;

    /// The handler's task: the caller's trace id, flags and tracestate, with
    /// a span id of its own (the parent of the calls it makes).
    const task_context& context() const noexcept { return context_; }
    /// Whether a valid context came in (else the task started here).
    bool has_caller() const noexcept { return call_id_ != 0; }
    /// The `traceresponse` value to send back (55 characters).
    traceparent_chars traceresponse() const noexcept { return format_traceresponse(context_); }

    /// The response leaves with `status`: writes `traceresponse` into
    /// `response` (a header map or a setter) and records RETURN_OUT once.
    template <class Carrier>
    void respond(Carrier& response, std::int64_t status) {
        detail::write_traceresponse(context_, response);
        responded(status);
    }
    /// The response leaves, without headers to write.
    void responded(std::int64_t status) noexcept {
        if (sessions_ == 0 || responded_) return;
        record_return(status);
    }

private:
    static task_context handler_context(const extract_result& caller) noexcept {
        if (!caller.ok()) return new_task();
        task_context c = caller.context;
        c.span = new_span_id();
        return c;
    }
    // The return names its call by id only (the peer and name are
    // REQUEST_IN's) and echoes the handler's span.
    void record_return(std::int64_t status) noexcept {
        responded_ = true;
        loupe::detail::push_task_return_point(sessions_, task_point_kind::return_out, false, ids(), context_.span,
                                              status);
    }
    loupe::detail::task_point_ids ids() const noexcept {
        return {context_.trace.high, context_.trace.low, call_id_, context_.span};
    }

    task_context context_;
    std::uint64_t call_id_;
    task_scope scope_;
    std::uint64_t sessions_ = 0;
    bool responded_ = false;
};

}  // namespace loupe::tasks
