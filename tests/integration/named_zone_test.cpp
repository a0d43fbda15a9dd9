// Zones named at run time (LOUPE_ZONE_NAMED): each distinct name at a call
// site is one site, interned when first recorded, shown by name in traces
// and reports; nothing is interned while nothing records; the number of
// names kept is bounded.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/zone_stats.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/trace_files.hpp"

namespace {

void serve(const std::string& endpoint) { LOUPE_ZONE_NAMED(endpoint); }
void serve_elsewhere(const char* endpoint) { LOUPE_ZONE_NAMED(endpoint); }

TEST(NamedZone, EachNameIsOneSiteAndReportsGroupByIt) {
    const std::string path = loupe_test::temp_trace_path("named_zones");
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.name = "named";
    cfg.sinks = {memory, std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    for (const char* endpoint : {"GET /notes", "POST /notes", "GET /notes", "GET /notes"}) serve(endpoint);
    serve_elsewhere("GET /notes");
    {
        std::string built = "DELETE /notes/";
        built += "42";
        LOUPE_ZONE_NAMED(built);
        built = "changed after the zone began";  // the name was read when it began
    }
    session.stop();

    std::map<std::string, std::vector<const loupe::site*>> by_name;
    for (const auto& e : memory->events()) {
        if (e.kind == loupe::record_kind::zone) by_name[e.name].push_back(e.where);
    }
    ASSERT_EQ(by_name["GET /notes"].size(), 4u);
    ASSERT_EQ(by_name["POST /notes"].size(), 1u);
    ASSERT_EQ(by_name["DELETE /notes/42"].size(), 1u);
    EXPECT_EQ(by_name.count("changed after the zone began"), 0u);
    const auto& get = by_name["GET /notes"];
    EXPECT_EQ(get[0], get[1]);  // one site per name and call site
    EXPECT_EQ(get[0], get[2]);
    EXPECT_NE(get[0], get[3]);  // the same name at another call site
    EXPECT_NE(get[0]->line, get[3]->line);
    EXPECT_NE(get[0], by_name["POST /notes"][0]);
    EXPECT_EQ(std::string_view(get[0]->file), std::string_view(__FILE__));

    const loupe::report::zone_report stats = loupe::report::zone_stats(loupe::read_trace_file(path));
    std::remove(path.c_str());
    std::map<std::string, std::uint64_t> calls;
    for (const auto& z : stats.zones) calls[z.name] += z.overall.count;
    EXPECT_EQ(calls["GET /notes"], 4u);
    EXPECT_EQ(calls["POST /notes"], 1u);
    EXPECT_EQ(calls["DELETE /notes/42"], 1u);
}

TEST(NamedZone, NothingIsInternedWhileNothingRecords) {
    const std::size_t before = loupe::detail::zone_names().size();
    for (int i = 0; i < 100; ++i) serve("idle " + std::to_string(i));
    EXPECT_EQ(loupe::detail::zone_names().size(), before);
}

TEST(NamedZone, PastTheLimitAZoneKeepsItsCallSitesName) {
    static constexpr loupe::site where{"(more zone names than loupe keeps)", "f.cpp", "f", 7, loupe::site_kind::zone};
    loupe::detail::site_interner names;  // a fresh one: the process's stays as it is
    const loupe::site* first = names.intern(where, "name 0");
    EXPECT_EQ(names.intern(where, "name 0"), first);
    for (std::size_t i = 1; i < loupe::detail::max_interned_zone_names; ++i) {
        ASSERT_NE(names.intern(where, "name " + std::to_string(i)), &where) << i;
    }
    EXPECT_EQ(names.size(), loupe::detail::max_interned_zone_names);
    EXPECT_EQ(names.intern(where, "one too many"), &where);
    EXPECT_EQ(names.intern(where, "name 0"), first);  // names kept stay
    EXPECT_EQ(std::string_view(first->name), "name 0");
    EXPECT_EQ(first->line, 7u);
}

}  // namespace
