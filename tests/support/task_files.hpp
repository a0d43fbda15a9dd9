// Test helper: the .loupe bytes of one process that took part in tasks, made
// through the encoder (what file_sink writes, without a session): its
// identity (program, host, clock domain), zones on its threads and the task
// points of its calls, at exactly the times a test chooses.
#pragma once

#include <loupe/base/record.hpp>
#include <loupe/format/encoder.hpp>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace loupe_test {

class process_file {
public:
    /// A session of `program` (pid `pid`) on `host`, in clock domain
    /// `domain`, started at `start` on its clock.
    process_file(std::string program, std::uint32_t pid, std::string domain, std::uint64_t start = 1000,
                 std::string host = "host")
        : program_(std::move(program)), host_(std::move(host)), domain_(std::move(domain)), name_(program_ + "-session") {
        session_.name = name_;
        session_.start_ns = start;
        session_.wall_anchor_ns = 1'700'000'000'000'000'000ull;
        session_.pid = pid;
        session_.clock = loupe::clock_source::tsc;
        session_.program = program_;
        session_.host = host_;
        session_.clock_domain = domain_;
        loupe::record r;
        r.session = &session_;
        r.kind = loupe::record_kind::session_begin;
        encoder_.encode(r);
    }

    /// A zone `name` on thread `thread` (threads are named "t<id>").
    void zone(std::uint64_t thread, const std::string& name, std::uint64_t begin, std::uint64_t end) {
        loupe::record r = base(thread);
        r.kind = loupe::record_kind::zone;
        r.where = &site_named(name);
        r.begin_ns = begin;
        r.end_ns = end;
        encoder_.encode(r);
        ++events_;
    }

    /// A task point (trace id {high, low}).
    void point(loupe::task_point_kind kind, std::uint64_t time, std::uint64_t trace_high, std::uint64_t trace_low,
               std::uint64_t call_id, std::uint64_t span_id, const std::string& name, std::uint64_t thread = 1,
               const std::string& peer = {}) {
        const std::string& kept_name = keep(name);
        const std::string& kept_peer = keep(peer);
        loupe::task_point p;
        p.kind = kind;
        p.trace_high = trace_high;
        p.trace_low = trace_low;
        p.call_id = call_id;
        p.span_id = span_id;
        p.name = kept_name;
        p.peer = kept_peer;
        p.tagged = kind == loupe::task_point_kind::call_out || kind == loupe::task_point_kind::return_in;
        loupe::record r = base(thread);
        r.kind = loupe::record_kind::task_point;
        r.begin_ns = r.end_ns = time;
        r.task = &p;
        encoder_.encode(r);
    }
    /// CALL_OUT at t1 and RETURN_IN at t4 of call `call_id` made by span `span`.
    void client(std::uint64_t high, std::uint64_t low, std::uint64_t call_id, std::uint64_t span, std::uint64_t t1,
                std::uint64_t t4, const std::string& name, std::uint64_t thread = 1, const std::string& peer = {}) {
        point(loupe::task_point_kind::call_out, t1, high, low, call_id, span, name, thread, peer);
        point(loupe::task_point_kind::return_in, t4, high, low, call_id, span, name, thread, peer);
    }
    /// REQUEST_IN at t2 and RETURN_OUT at t3, the handler running as `span`.
    void server(std::uint64_t high, std::uint64_t low, std::uint64_t call_id, std::uint64_t span, std::uint64_t t2,
                std::uint64_t t3, const std::string& name, std::uint64_t thread = 1) {
        point(loupe::task_point_kind::request_in, t2, high, low, call_id, span, name, thread);
        point(loupe::task_point_kind::return_out, t3, high, low, call_id, span, name, thread);
    }

    /// The whole trace, its session ended at `end`.
    std::vector<unsigned char> finish(std::uint64_t end) {
        loupe::record r;
        r.session = &session_;
        r.kind = loupe::record_kind::session_end;
        r.end_ns = end;
        r.count = events_;
        encoder_.encode(r);
        encoder_.close_batch();
        return encoder_.bytes();
    }

    /// finish(end), written to `path`.
    void write(const std::string& path, std::uint64_t end) {
        const std::vector<unsigned char> bytes = finish(end);
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (f == nullptr) return;
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
    }

private:
    loupe::record base(std::uint64_t thread) {
        auto it = threads_.find(thread);
        if (it == threads_.end()) {
            const std::string& name = keep("t" + std::to_string(thread));
            it = threads_.emplace(thread, loupe::thread_info{thread, 100 + thread, name, 1}).first;
        }
        loupe::record r;
        r.session = &session_;
        r.thread = &it->second;
        return r;
    }
    const std::string& keep(const std::string& s) {
        strings_.push_back(s);
        return strings_.back();
    }
    const loupe::site& site_named(const std::string& name) {
        auto it = sites_.find(name);
        if (it == sites_.end()) {
            const std::string& kept = keep(name);
            it = sites_.emplace(name, loupe::site{kept.c_str(), "task.cpp", "", 1, loupe::site_kind::zone}).first;
        }
        return it->second;
    }

    std::string program_, host_, domain_, name_;
    loupe::session_info session_;
    loupe::detail::trace_encoder encoder_;
    std::deque<std::string> strings_;
    std::map<std::string, loupe::site> sites_;
    std::map<std::uint64_t, loupe::thread_info> threads_;
    std::uint64_t events_ = 0;
};

}  // namespace loupe_test
