// Writes the fuzz targets' seed corpus into a folder: small .loupe traces
// recorded here with every kind of record (zones, instants, counters,
// contexts, method calls with values and apply errors, I/O, flows, zone
// metrics, drops) for fuzz_trace_reader and fuzz_viewers, and texts for each
// parser of fuzz_text_inputs (first byte: 0 filter, 1 specs, 2 chain,
// 3 signature, 4 task rules), and task context for fuzz_trace_context (first byte:
// 0 traceparent, 1 tracestate, 2 header block, 3 in-band token, 4 header
// map).
//
//   loupe_fuzz_seeds OUT_DIR      (makes OUT_DIR/traces, text, tasks, control and export)
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/params.hpp>
#include <loupe/session.hpp>
#include <loupe/tasks.hpp>

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
    {
        // A call to another process and the request it makes there (TASK and
        // TASK_CONTEXT records).
        std::map<std::string, std::string> request, response;
        loupe::tasks::outgoing_call call("inventory", "GET /stock", request);
        {
            loupe::tasks::incoming_request served(request, "GET /stock");
            LOUPE_ZONE("serve stock");
            served.respond(response, 200);
        }
        call.returned(response, 200);
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
    std::filesystem::create_directories(out / "tasks");
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
    tiny.memory_budget = 0;
    seeds::record(out / "traces" / "drops.loupe", tiny);

    {  // a trace set, as `loupe merge -o X.loupe` writes it: two traces back to back
        std::ofstream set(out / "traces" / "set_of_two.loupe", std::ios::binary);
        for (const char* part : {"everything.loupe", "filtered_with_metrics.loupe"}) {
            std::ifstream in(out / "traces" / part, std::ios::binary);
            set << in.rdbuf();
        }
    }

    seeds::write_text(out / "text" / "filter_1", 0, "user == \"alice\" && (request ~ \"r-*\" || !(component == \"db\"))");
    seeds::write_text(out / "text" / "filter_2", 0, "thread ~ \"worker-?\" || process in [\"app\", \"a\\tb\"]");
    seeds::write_text(out / "text" / "filter_3", 0, "trace == \"4bf92f3577b34da6a3ce929d0e0e4736\" || !(trace exists)");
    seeds::write_text(out / "text" / "task_rules_1", 4,
                      "skip call=\"GET /health\" # probes\ntag peer=inventory*; profiled 10.0.0.7:80, payments\n"
                      "tag profiled\nskip all");
    seeds::write_text(out / "text" / "specs_1", 1,
                      "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16); name=sku\n"
                      "method=Cart::*; match=subclasses; data=cpu\n");
    seeds::write_text(out / "text" / "chain_1", 2, "field(items)|at(-1)|call(total)|to_string|truncate(8)");
    seeds::write_text(out / "text" / "chain_2", 2, "cast(shop::Special)|deref|apply(shop::table_of)|hash");
    seeds::write_text(out / "text" / "signature_1", 3,
                      "std::map<std::string, std::vector<int>> ns::C<T>::f(const char*, int (*)(double)) const");

    const std::string parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    seeds::write_text(out / "tasks" / "traceparent_1", 0, parent);
    seeds::write_text(out / "tasks" / "traceparent_2", 0,
                      " cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future\t");
    seeds::write_text(out / "tasks" / "traceparent_3", 0, "00-4BF92F3577B34DA6A3CE929D0E0E4736-0000000000000000-0");
    seeds::write_text(out / "tasks" / "tracestate_1", 1, "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE ,\t\n"
                                                         "tenant@sys= spaced value,foo=1,foo=2,FOO=3,bad=a=b,empty=");
    seeds::write_text(out / "tasks" / "header_block_1", 2,
                      "GET /orders HTTP/1.1\r\nHost: example.com\r\nTraceParent: " + parent +
                          "\r\ntracestate: congo=t61rcWkgMzE\r\n folded=1\r\nTRACESTATE: rojo=1\r\n"
                          "traceresponse: " + parent + "\r\n\r\nbody");
    seeds::write_text(out / "tasks" / "header_block_2", 2,
                      "traceparent: " + parent + "\r\ntraceparent: " + parent + "\r\n\r\n");
    seeds::write_text(out / "tasks" / "in_band_1", 3,
                      "__lt1-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01__orders.created");
    seeds::write_text(out / "tasks" / "in_band_2", 3, "__lt1-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01_x");
    seeds::write_text(out / "tasks" / "header_map_1", 4,
                      "TraceParent:" + parent + "\ntracestate:congo=t61rcWkgMzE,rojo=1\nTraceState:a=1");
    // fuzz_control: request lines (first byte 0) and reply lines (1).
    std::filesystem::create_directories(out / "control");
    seeds::write_text(out / "control" / "request_info", 0, "info");
    seeds::write_text(out / "control" / "request_start", 0,
                      "start name=alice; kinds=zones,io,methods; filter=\"user == \\\"alice\\\"\"; "
                      "params=\"method=f(int); param=1\\nmethod=g(); data=cpu\"; metrics=cpu_time,alloc_bytes; "
                      "ring_bytes=65536; memory_budget=0; overflow=block; output=sub/alice.loupe; duration_ms=10000; "
                      "otlp=\"http://127.0.0.1:4318/v1/traces\"");
    seeds::write_text(out / "control" / "request_set", 0, "set alice filter=\"app in [\\\"shop\\\"]\"; params=\"\"");
    seeds::write_text(out / "control" / "request_stop", 0, "stop alice");
    seeds::write_text(out / "control" / "reply_list", 1,
                      "{\"ok\":true,\"sessions\":[{\"name\":\"a\",\"running\":false,\"output\":\"/t/a\\u00e9\",\"delivered\":18446744073709551615}]}");
    seeds::write_text(out / "control" / "reply_error", 1,
                      "{\"ok\":false,\"error\":\"column 7: unknown key\",\"column\":7,\"x\":[null,-1.5e3,\"\\ud83d\\ude00\"]}");
    // fuzz_export: an endpoint URL (0), a key=value list (1), a reply head
    // (2), a chunked body (3), an ExportTraceServiceResponse (4).
    std::filesystem::create_directories(out / "export");
    seeds::write_text(out / "export" / "url", 0, "http://[::1]:4318/v1/traces");
    seeds::write_text(out / "export" / "key_values", 1, "api-key=a%20b,service.name=shop, deployment.environment=prod");
    seeds::write_text(out / "export" / "reply_head", 2,
                      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n");
    seeds::write_text(out / "export" / "chunked", 3, "4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nTrailer: x\r\n\r\n");
    seeds::write_text(out / "export" / "response", 4, std::string("\x0a\x09\x08\x03\x12\x05shape", 11));
    std::printf("seed corpus in %s\n", out.string().c_str());
    return 0;
}
