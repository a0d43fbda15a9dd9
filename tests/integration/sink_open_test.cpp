// The file sinks open their files when a session starts, after its whole
// configuration was checked: a session that does not start leaves no file
// behind and truncates none; an unwritable path makes start_session throw.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/sinks/chrome_json_sink.hpp>
#include <loupe/sinks/perfetto_sink.hpp>
#include <loupe/format/reader.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "support/trace_files.hpp"

namespace {

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string start_error(const loupe::session_config& cfg) {
    try {
        loupe::start_session(cfg);
    } catch (const loupe::error& e) {
        return e.what();
    }
    return "";
}

struct three_files {
    std::string native = loupe_test::temp_trace_path("sink_open_native");
    std::string perfetto = native + ".pftrace";
    std::string chrome = native + ".json";
    ~three_files() {
        std::remove(native.c_str());
        std::remove(perfetto.c_str());
        std::remove(chrome.c_str());
    }
    loupe::session_config config(const std::string& name) const {
        loupe::session_config cfg;
        cfg.name = name;
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(native),
                     std::make_shared<loupe::sinks::perfetto_sink>(perfetto),
                     std::make_shared<loupe::sinks::chrome_json_sink>(chrome)};
        return cfg;
    }
};

TEST(SinkOpen, MakingAFileSinkCreatesNoFile) {
    three_files f;
    const loupe::session_config cfg = f.config("unused");
    EXPECT_FALSE(exists(f.native));
    EXPECT_FALSE(exists(f.perfetto));
    EXPECT_FALSE(exists(f.chrome));
}

TEST(SinkOpen, ASessionWhoseFilterDoesNotParseLeavesNoFileBehind) {
    three_files f;
    loupe::session_config cfg = f.config("notes");
    cfg.filter = "user ==";
    const std::string error = start_error(cfg);
    EXPECT_NE(error.find("session 'notes'"), std::string::npos) << error;
    EXPECT_FALSE(exists(f.native));
    EXPECT_FALSE(exists(f.perfetto));
    EXPECT_FALSE(exists(f.chrome));
}

TEST(SinkOpen, ASessionWhoseParameterSpecsDoNotParseLeavesNoFileBehind) {
    three_files f;
    loupe::session_config cfg = f.config("specs");
    cfg.kinds = loupe::kinds::methods;
    cfg.params = "method=shop::Cart::add(int); param=x";
    EXPECT_NE(start_error(cfg), "");
    EXPECT_FALSE(exists(f.native));
    EXPECT_FALSE(exists(f.perfetto));
    EXPECT_FALSE(exists(f.chrome));
}

TEST(SinkOpen, AnUnwritablePathFailsTheStartNamingTheSessionAndThePath) {
    loupe::session_config cfg;
    cfg.name = "nowhere";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>("/nonexistent-dir/x/trace.loupe")};
    EXPECT_EQ(start_error(cfg),
              "cannot start session 'nowhere': cannot open '/nonexistent-dir/x/trace.loupe' for writing: "
              "No such file or directory");
    cfg.sinks = {std::make_shared<loupe::sinks::perfetto_sink>("/nonexistent-dir/out.pftrace")};
    EXPECT_EQ(start_error(cfg),
              "cannot start session 'nowhere': cannot open '/nonexistent-dir/out.pftrace' for writing: "
              "No such file or directory");
}

// The second sink refuses: the first one's file, which it had created, is
// removed; an existing file it had opened keeps its bytes.
TEST(SinkOpen, WhenOneSinkRefusesTheOthersGiveTheirFilesBack) {
    three_files f;
    write_text(f.perfetto, "an older trace");
    loupe::session_config cfg;
    cfg.name = "half";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(f.native),
                 std::make_shared<loupe::sinks::perfetto_sink>(f.perfetto),
                 std::make_shared<loupe::sinks::file_sink>("/nonexistent-dir/y.loupe")};
    EXPECT_NE(start_error(cfg).find("/nonexistent-dir/y.loupe"), std::string::npos);
    EXPECT_FALSE(exists(f.native));
    EXPECT_EQ(loupe_test::slurp(f.perfetto), "an older trace");
}

// A session that starts replaces what an existing file held.
TEST(SinkOpen, AStartedSessionReplacesAnExistingFile) {
    three_files f;
    write_text(f.native, std::string(100000, 'x'));
    loupe::session_config cfg;
    cfg.name = "replace";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(f.native)};
    auto session = loupe::start_session(cfg);
    {
        LOUPE_ZONE("sink_open.zone");
    }
    session.stop();
    const std::string bytes = loupe_test::slurp(f.native);
    EXPECT_LT(bytes.size(), 100000u);
    EXPECT_EQ(bytes.find("xxxx"), std::string::npos);
    const loupe::trace t = loupe::read_trace_file(f.native);
    EXPECT_EQ(t.session.name, "replace");
}

// A sink shared by a running session and one that does not start keeps its
// file for the running one.
TEST(SinkOpen, ASharedSinkStaysOpenForTheSessionThatStarted) {
    three_files f;
    auto shared = std::make_shared<loupe::sinks::file_sink>(f.native);
    loupe::session_config good;
    good.name = "good";
    good.sinks = {shared};
    auto session = loupe::start_session(good);
    loupe::session_config bad = good;
    bad.name = "bad";
    bad.filter = "user ==";
    EXPECT_NE(start_error(bad), "");
    {
        LOUPE_ZONE("sink_open.shared");
    }
    session.stop();
    ASSERT_TRUE(exists(f.native));
    const loupe::trace t = loupe::read_trace_file(f.native);
    EXPECT_EQ(t.session.name, "good");
}

}  // namespace
