// A zone in a function template: one site per instantiation in the program,
// one site in the trace (grouped by name, file, line and kind), so every
// report and viewer shows one row for it.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/call_tree_builder.hpp>
#include <loupe/report/cost_reports.hpp>
#include <loupe/report/zone_stats.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "support/trace_files.hpp"

namespace {

template <class T>
T twice(T value) {
    LOUPE_ZONE("template_sites.twice");
    return value + value;
}

TEST(TemplateSites, EveryInstantiationOfAZoneIsOneSiteAndOneRow) {
    const std::string path = loupe_test::temp_trace_path("template_sites");
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.name = "templates";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path), memory};
    auto session = loupe::start_session(cfg);
    twice(1);
    twice(2.5);
    twice(std::string("ab"));
    session.stop();

    // Three instantiations: three site objects in the program.
    std::vector<const loupe::site*> objects;
    for (const auto& e : memory->events()) {
        if (e.kind == loupe::record_kind::zone && e.name == "template_sites.twice") objects.push_back(e.where);
    }
    ASSERT_EQ(objects.size(), 3u);
    EXPECT_NE(objects[0], objects[1]);

    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    std::size_t sites = 0;
    for (const auto& s : t.sites) sites += s.name == "template_sites.twice";
    EXPECT_EQ(sites, 1u);

    const loupe::report::zone_report stats = loupe::report::zone_stats(t);
    std::size_t rows = 0;
    for (const auto& z : stats.zones) {
        if (z.name != "template_sites.twice") continue;
        ++rows;
        EXPECT_EQ(z.overall.count, 3u);
    }
    EXPECT_EQ(rows, 1u);

    const loupe::report::flat_report flat = loupe::report::report_flat(loupe::report::build_call_tree(t));
    std::size_t routines = 0;
    for (const auto& line : flat.routines) {
        if (line.name != "template_sites.twice") continue;
        ++routines;
        EXPECT_EQ(line.calls, 3u);
    }
    EXPECT_EQ(routines, 1u);
}

}  // namespace
