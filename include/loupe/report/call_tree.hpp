// Call trees of a trace's metrics (US 6,904,594, FIGS. 11-17): what
// `loupe report FILE --tree/--flat/--callers/--per-thread/--per-cpu` prints.
// The one header to include for them; it includes the parts:
// - call_tree_model.hpp: call_tree, call_node, call_tree_thread, and what
//   base, cum, level and RL mean;
// - call_tree_builder.hpp: build_call_tree(trace);
// - cost_reports.hpp: report_tree, report_flat, report_callers (and
//   verify_stanzas), for one metric chosen by name;
// - totals_reports.hpp: report_per_thread, report_per_cpu.
// Each report is a struct with a text form (format_*) and a JSON form (*_json).
// The text forms print metrics in ns (wall_time, cpu_time) as integers, or in
// human units ("214 ms") given time_format::human.
//
//   const loupe::trace t = loupe::read_trace_file("out.loupe");
//   const loupe::report::call_tree tree = loupe::report::build_call_tree(t);
//   std::cout << loupe::report::format_tree_report(loupe::report::report_tree(tree, "cpu_time"));
//   std::cout << loupe::report::flat_report_json(loupe::report::report_flat(tree, "db.rows"));
//
// Cost: building, O(z log z) in zones; each report O(n log n) in nodes.
// Thread-safety: pure functions over values; a call_tree is a plain value.
// Reads traces only: compiles with LOUPE_READER_ONLY.
#pragma once

#include "loupe/report/call_tree_builder.hpp"
#include "loupe/report/call_tree_model.hpp"
#include "loupe/report/cost_reports.hpp"
#include "loupe/report/totals_reports.hpp"
