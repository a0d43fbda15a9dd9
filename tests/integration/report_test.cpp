// Reports over a read trace: the slowest zones with their contexts.
#include <gtest/gtest.h>

#include <loupe/report/slowest.hpp>

#include "support/trace_files.hpp"

using namespace loupe_test;

TEST(Report, SlowestZonesComeLongestFirstWithTheirThreadAndContext) {
    const std::string path = temp_trace_path("report_slowest");
    write_small_trace(path);
    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());

    const auto top = loupe::report::slowest(t, "outer", 3);
    ASSERT_EQ(top.size(), 3u);
    for (std::size_t i = 1; i < top.size(); ++i) EXPECT_GE(top[i - 1].duration_ns, top[i].duration_ns);
    std::vector<std::uint64_t> all;
    for (const auto& e : t.events) {
        if (e.type == loupe::event_type::zone && t.find_site(e.site_id)->name == "outer") all.push_back(e.end_ns - e.begin_ns);
    }
    ASSERT_EQ(all.size(), 5u);
    EXPECT_EQ(top[0].duration_ns, *std::max_element(all.begin(), all.end()));
    for (const auto& z : top) {
        EXPECT_EQ(z.name, "outer");
        ASSERT_NE(z.context, nullptr);
        EXPECT_EQ(z.context->get(loupe::context_field::app), "shop");
        EXPECT_TRUE(z.thread == "alpha" || z.thread == "beta") << z.thread;
    }
    const std::string text = loupe::report::format_slowest(top);
    EXPECT_NE(text.find("app=shop"), std::string::npos) << text;
    EXPECT_EQ(text.find('\xff'), std::string::npos) << "invalid UTF-8 is escaped";

    EXPECT_EQ(loupe::report::slowest(t, "", 100).size(), 10u);  // every zone
    EXPECT_TRUE(loupe::report::slowest(t, "no-such-zone", 3).empty());
}
