// metrics: what each zone costs besides wall time, charged to the thread
// that caused it. Two kinds of worker run at once: "allocating" workers
// build and parse order documents (heap traffic), "computing" workers price
// baskets (CPU only). Every global operator new/delete is counted
// (LOUPE_COUNT_GLOBAL_ALLOCATIONS below), a custom metric counts priced
// items, and a session records cpu_time, alloc_bytes, alloc_count and
// "shop.items". The call trees then show, per thread, each routine's base
// (self) and cum (inclusive) cost in allocated bytes and in CPU time.
//
// usage: metrics [TRACE]   (default metrics.loupe; then try
//        loupe report metrics.loupe --tree --metric alloc_bytes
//        loupe report metrics.loupe --callers --metric cpu_time
//        loupe report metrics.loupe --per-thread)
#include <loupe/metrics/allocations.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/metrics/metric.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/call_tree.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

// Exactly one translation unit of a program counts the global allocations.
LOUPE_COUNT_GLOBAL_ALLOCATIONS()

namespace {

const loupe::metric_id items_priced = loupe::metric("shop.items", "items");

std::string render_order(int order, int lines) {
    LOUPE_ZONE("render_order");
    std::string doc = "order " + std::to_string(order) + "\n";
    for (int i = 0; i < lines; ++i) doc += "line " + std::to_string(i) + " sku-" + std::to_string(order * 31 + i) + "\n";
    return doc;
}

std::map<std::string, int> parse_order(const std::string& doc) {
    LOUPE_ZONE("parse_order");
    std::map<std::string, int> skus;
    for (std::size_t at = doc.find("sku-"); at != std::string::npos; at = doc.find("sku-", at + 1)) {
        ++skus[doc.substr(at, doc.find('\n', at) - at)];
    }
    return skus;
}

void allocating_worker(int id) {
    loupe::set_thread_name("allocating-" + std::to_string(id));
    for (int order = 0; order < 300; ++order) {
        LOUPE_ZONE("handle_order");
        const std::string doc = render_order(order, 20 + order % 40);
        volatile std::size_t n = parse_order(doc).size();
        (void)n;
    }
}

double price(int item) {
    LOUPE_ZONE("price");
    double p = 1.0;
    for (int k = 0; k < 2000; ++k) p = p * 1.0000001 + static_cast<double>((item * k) % 7) * 1e-9;
    loupe::metric_add(items_priced, 1);
    return p;
}

void computing_worker(int id) {
    loupe::set_thread_name("computing-" + std::to_string(id));
    volatile double total = 0;
    for (int basket = 0; basket < 300; ++basket) {
        LOUPE_ZONE("price_basket");
        for (int item = 0; item < 10; ++item) total = total + price(basket * 10 + item);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "metrics.loupe";
    loupe::session_config config;
    config.name = "metrics-example";
    config.metrics = {"cpu_time", "alloc_bytes", "alloc_count", "shop.items"};
    config.overflow = loupe::overflow_policy::block;
    config.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    loupe::session session = loupe::start_session(config);

    std::vector<std::thread> workers;
    for (int i = 1; i <= 2; ++i) workers.emplace_back(allocating_worker, i);
    for (int i = 1; i <= 2; ++i) workers.emplace_back(computing_worker, i);
    for (auto& w : workers) w.join();
    session.stop();

    const loupe::trace trace = loupe::read_trace_file(path);
    const loupe::report::call_tree tree = loupe::report::build_call_tree(trace);
    std::fputs(loupe::report::format_tree_report(loupe::report::report_tree(tree, "alloc_bytes")).c_str(), stdout);
    std::fputs("\n", stdout);
    std::fputs(loupe::report::format_flat_report(loupe::report::report_flat(tree, "cpu_time")).c_str(), stdout);
    std::fputs("\n", stdout);
    std::fputs(loupe::report::format_per_thread_report(loupe::report::report_per_thread(tree)).c_str(), stdout);
    std::printf("\ntrace written to %s\n", path.c_str());
    return 0;
}
