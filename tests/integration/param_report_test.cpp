// `loupe stats --params` (report/param_stats.hpp) on a trace whose session
// had a spec with a typo: the spec is listed as matching no recorded method,
// with the method it was probably meant for.
#include <loupe/loupe.hpp>
#include <loupe/params.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/param_stats.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "support/trace_files.hpp"

namespace typo_shop {
int checkout(int items) {
    LOUPE_FUNCTION_PARAMS("typo_shop::checkout(int)", items);
    return items;
}
}  // namespace typo_shop

namespace {

TEST(ParamReport, ASpecThatRecordedNoValueIsListedWithTheMethodItWasMeantFor) {
    const std::string path = loupe_test::temp_trace_path("param_report_typo");
    loupe::session_config cfg;
    cfg.name = "typos";
    cfg.kinds = loupe::kinds::methods;
    cfg.params =
        "method=typo_shop::checkout(int); param=1; name=items\n"
        "method=typo_shop::chekout; param=1; name=typo\n"
        "method=typo_shop::checkout(int); data=cpu; name=timing\n";  // no param=: no value to expect
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    typo_shop::checkout(3);
    typo_shop::checkout(5);
    session.stop();

    const loupe::report::param_report r = loupe::report::param_stats(loupe::read_trace_file(path));
    std::remove(path.c_str());
    ASSERT_EQ(r.unmatched.size(), 1u);
    EXPECT_EQ(r.unmatched[0].label, "typo");
    EXPECT_EQ(r.unmatched[0].method, "typo_shop::chekout");
    EXPECT_EQ(r.unmatched[0].close_matches, std::vector<std::string>{"typo_shop::checkout(int)"});
    const std::string text = loupe::report::format_param_stats(r);
    EXPECT_NE(text.find("specs that matched no recorded method:\n"
                        "  spec 1 (typo): method=typo_shop::chekout; param=1; name=typo\n"
                        "    did you mean: typo_shop::checkout(int)\n"),
              std::string::npos)
        << text;
    const std::string json = loupe::report::param_stats_json(r);
    EXPECT_NE(json.find("\"unmatched\":[{\"spec\":1,\"label\":\"typo\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"close_matches\":[\"typo_shop::checkout(int)\"]"), std::string::npos) << json;
}

}  // namespace
