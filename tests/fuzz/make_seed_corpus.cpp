// Writes the fuzz targets' seed corpus into a folder: small .loupe traces
// recorded here with every kind of record (zones, instants, counters,
// contexts, method calls with values and apply errors, I/O, flows, zone
// metrics, drops) for fuzz_trace_reader and fuzz_viewers, and texts for each
// parser of fuzz_text_inputs (first byte: 0 filter, 1 specs, 2 chain,
// 3 signature).
//
//   loupe_fuzz_seeds OUT_DIR      (makes OUT_DIR/traces and OUT_DIR/text)
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/params.hpp>
#include <loupe/session.hpp>

namespace seeds {

struct Item {
    std::string sku = "A-1";
    int qty = 2;
};

int add(const Item& item, int times) {
    LOUPE_FUNCTION_PARAMS("seeds::add(Item const&,int)", item, times);
    return item.qty * times;
}

void record_everything() {
    LOUPE_THREAD_NAME("seed worker");
    loupe::context_scope who({{loupe::context_field::user, "alice"}, {loupe::context_field::request, "r-1"}});
    for (int i = 0; i < 3; ++i) {
        LOUPE_ZONE_AS(outer, "outer");
        LOUPE_ZONE_ARG(outer, "round", i);
        {
            LOUPE_ZONE_AS(inner, "inner");
            LOUPE_ZONE_ARG(inner, "note", "seed");
            LOUPE_ZONE_ARG(outer, "ratio", 0.5 * i);
            LOUPE_INSTANT("tick");
            LOUPE_COUNTER("queue", i);
        }
        (void)add(Item{}, i);
        const std::uint64_t flow = loupe::new_flow_id();
        LOUPE_FLOW("handed over", flow);
        LOUPE_FLOW_END("taken", flow);
    }
    const int fd = loupe::io::open("/dev/null", O_RDONLY);
    if (fd >= 0) {
        char buf[8];
        (void)loupe::io::read(fd, buf, sizeof buf);
        loupe::io::close(fd);
    }
}

void record(const std::filesystem::path& file, loupe::session_config cfg) {
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(file.string())};
    auto s = loupe::start_session(cfg);
    std::thread(record_everything).join();
    s.stop();
}

void write_text(const std::filesystem::path& file, char parser, const std::string& text) {
    std::ofstream out(file, std::ios::binary);
    out.put(parser);
    out << text;
}

}  // namespace seeds

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    const std::filesystem::path out(argv[1]);
    std::filesystem::create_directories(out / "traces");
    std::filesystem::create_directories(out / "text");
    loupe::reflect<seeds::Item>("seeds::Item").field("sku", &seeds::Item::sku);

    loupe::session_config all;
    all.name = "everything";
    all.params = "method=seeds::add(Item const&,int); param=1; chain=field(sku)\n"
                 "method=seeds::add(Item const&,int); param=2; data=cpu\n"
                 "method=seeds::add(Item const&,int); param=1; chain=field(nosuch)\n";  // an apply error
    seeds::record(out / "traces" / "everything.loupe", all);

    loupe::session_config filtered;
    filtered.name = "filtered";
    filtered.filter = "user == \"alice\" && !(component ~ \"*\") || thread in [\"seed worker\", \"other\"]";
    filtered.metrics = {"cpu_time", "wall_time"};
    seeds::record(out / "traces" / "filtered_with_metrics.loupe", filtered);

    loupe::session_config tiny;  // a ring this small drops: the trace carries drop records
    tiny.name = "drops";
    tiny.ring_bytes = 256;
    seeds::record(out / "traces" / "drops.loupe", tiny);

    seeds::write_text(out / "text" / "filter_1", 0, "user == \"alice\" && (request ~ \"r-*\" || !(component == \"db\"))");
    seeds::write_text(out / "text" / "filter_2", 0, "thread ~ \"worker-?\" || process in [\"app\", \"a\\tb\"]");
    seeds::write_text(out / "text" / "specs_1", 1,
                      "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16); name=sku\n"
                      "method=Cart::*; match=subclasses; data=cpu\n");
    seeds::write_text(out / "text" / "chain_1", 2, "field(items)|at(-1)|call(total)|to_string|truncate(8)");
    seeds::write_text(out / "text" / "chain_2", 2, "cast(shop::Special)|deref|apply(shop::table_of)|hash");
    seeds::write_text(out / "text" / "signature_1", 3,
                      "std::map<std::string, std::vector<int>> ns::C<T>::f(const char*, int (*)(double)) const");
    std::printf("seed corpus in %s\n", out.string().c_str());
    return 0;
}
