// Fuzz target: a .loupe file's bytes, read as a trace and summarised by every
// report the CLI prints (zone statistics, call tree, parameter, I/O and flow
// reports), then read as a trace set (several traces back to back) and
// joined into task trees as `loupe merge` and `loupe report --tasks` do. A
// malformed file must give loupe::trace_error, nothing else: no crash, no
// hang, no other exception.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <loupe/format/trace_set.hpp>
#include <loupe/reader.hpp>
#include <loupe/report/call_tree_builder.hpp>
#include <loupe/report/flow_stats.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/report/param_stats.hpp>
#include <loupe/report/task_join.hpp>
#include <loupe/report/task_report.hpp>
#include <loupe/report/zone_stats.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const loupe::trace t = loupe::read_trace(data, size);
        (void)loupe::report::zone_stats(t);
        (void)loupe::report::build_call_tree(t);
        (void)loupe::report::param_stats(t);
        (void)loupe::report::io_stats(t);
        (void)loupe::report::flow_stats(t);
    } catch (const loupe::trace_error&) {
        // what a malformed file must give
    }
    try {
        const std::vector<loupe::trace> set = loupe::read_trace_set(data, size);
        const loupe::report::task_report r = loupe::report::report_tasks(loupe::report::join_tasks(set));
        (void)loupe::report::format_task_report(r);
        (void)loupe::report::task_report_json(r);
    } catch (const loupe::trace_error&) {
    }
    return 0;
}
