// filtered_sessions: a thread pool serves requests of users alice, bob and
// carol. Every request runs under a context scope (user + request id) that
// follows the task from the submitting thread into the pool. A session with
// the filter `user == "alice"` records only alice's requests (the others run
// at the idle cost); the program then prints that trace's zones per request.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/zone_stats.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// A minimal pool whose tasks carry the submitter's context.
class thread_pool {
public:
    explicit thread_pool(int threads) {
        for (int i = 0; i < threads; ++i) {
            workers_.emplace_back([this, i] {
                LOUPE_THREAD_NAME("pool-" + std::to_string(i));
                run();
            });
        }
    }
    ~thread_pool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_all();
        for (auto& w : workers_) w.join();
    }
    void submit(std::function<void()> work) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            tasks_.push_back([context = loupe::capture_context(), work = std::move(work)] {
                loupe::context_scope adopt(context);  // the task runs as its submitter
                work();
            });
        }
        cv_.notify_one();
    }

private:
    void run() {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                cv_.wait(lock, [this] { return done_ || !tasks_.empty(); });
                if (tasks_.empty()) return;
                task = std::move(tasks_.front());
                tasks_.pop_front();
            }
            task();
            loupe::reset_context();  // nothing of this task leaks into the next
        }
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> tasks_;
    std::vector<std::thread> workers_;
    bool done_ = false;
};

void spin_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

void handle_request(int cost_us) {
    LOUPE_ZONE("handle_request");
    {
        LOUPE_ZONE("load_cart");
        spin_for(std::chrono::microseconds(cost_us));
    }
    {
        LOUPE_ZONE("price");
        spin_for(std::chrono::microseconds(cost_us / 2));
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "alice.loupe";
    loupe::session_config config;
    config.name = "only-alice";
    config.filter = R"(user == "alice")";  // or: (loupe::where::user == "alice").to_string()
    try {
        config.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "filtered_sessions: %s\n", e.what());
        return 1;
    }
    loupe::session session = loupe::start_session(config);
    {
        thread_pool pool(3);
        const char* const users[] = {"alice", "bob", "carol"};
        for (int i = 0; i < 30; ++i) {
            const std::string request = "req-" + std::to_string(i);
            // What a server does when a request arrives: say who it is for.
            loupe::context_scope who({{loupe::context_field::user, users[i % 3]},
                                      {loupe::context_field::request, request}});
            pool.submit([i] { handle_request(20 + 10 * (i % 4)); });
        }
    }
    const loupe::session_stats stats = session.stop();
    std::printf("session only-alice: %llu events recorded (alice's 10 requests x 3 zones; bob's and carol's 20 were not)\n\n",
                static_cast<unsigned long long>(stats.delivered));
    try {
        const loupe::trace trace = loupe::read_trace_file(path);
        const auto report = loupe::report::zone_stats(trace, loupe::report::group_by::request);
        std::fputs(loupe::report::format_zone_stats(report).c_str(), stdout);
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "filtered_sessions: %s\n", e.what());
        return 1;
    }
    return 0;
}
