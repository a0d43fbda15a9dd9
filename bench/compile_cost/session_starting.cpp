// Compile cost of the file that starts and stops a session with a file sink
// (bench/compile_cost.sh).
#include <loupe/session.hpp>

#include <memory>

void compile_cost_profile() {
    loupe::session_config cfg;
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>("compile_cost.loupe")};
    loupe::session s = loupe::start_session(cfg);
    s.stop();
}
