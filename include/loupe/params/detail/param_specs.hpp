// A session's parameter specs as binding reads them: an immutable snapshot
// per session slot, parsed from session_config::params / set_params, with
// spec ids taken from the session's log (core/params_backend.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/params/detail/param_spec.hpp"
#include "loupe/params/detail/runtime_chain_parser.hpp"
#include "loupe/core/params_backend.hpp"
#include "loupe/base/error.hpp"

namespace loupe::detail {

/// One spec a session runs: the parsed line, its chain parsed once, and its
/// index in the session's log (what param_value::spec says).
struct active_spec {
    std::uint32_t id = 0;
    param_spec spec;
    std::shared_ptr<const parsed_chain> chain;  ///< null for `@name` chains and specs without a chain
};

/// The specs of one session slot at one moment. Immutable once published.
struct slot_specs {
    int slot = -1;
    std::uint64_t version = 0;  ///< unique per compiled set in the process (bindings compare it)
    std::uint32_t value_bytes = 256;
    std::vector<active_spec> specs;
};

/// Parses `text` (session_config::params) for session `session_name` into
/// specs whose ids come from `log` (a line already in the log keeps its id;
/// new lines are appended). Throws loupe::error naming the line and column of
/// the first mistake; the log is unchanged then.
inline std::shared_ptr<slot_specs> compile_param_specs(const std::string& session_name, std::string_view text,
                                                       std::size_t value_bytes, session_param_log& log) {
    std::vector<param_spec> parsed;
    try {
        parsed = parse_param_specs(text);
    } catch (const param_spec_error& e) {
        throw error("session '" + session_name + "': " + e.what());
    }
    static std::atomic<std::uint64_t> versions{0};
    auto out = std::make_shared<slot_specs>();
    out->version = versions.fetch_add(1, std::memory_order_relaxed) + 1;
    out->value_bytes = static_cast<std::uint32_t>(value_bytes);
    for (param_spec& p : parsed) {
        active_spec a;
        if (p.compiled_chain.empty() && !p.chain.empty()) {
            try {
                a.chain = std::make_shared<const parsed_chain>(parse_chain(p.chain));
            } catch (const chain_syntax_error& e) {
                throw error("session '" + session_name + "': params line " + std::to_string(p.line) + ", column " +
                            std::to_string(p.chain_column + e.offset) + ": " + e.what());
            }
        }
        a.spec = std::move(p);
        out->specs.push_back(std::move(a));
    }
    std::lock_guard<std::mutex> lock(log.mutex);
    for (active_spec& a : out->specs) {
        std::uint32_t id = 0;
        while (id < log.specs.size() && log.specs[id].text != a.spec.text) ++id;
        if (id == log.specs.size()) {
            if (id > 0xFFFF) {
                throw error("session '" + session_name + "': params line " + std::to_string(a.spec.line) +
                            ": the session has had 65536 distinct specs; restart it to use more");
            }
            log.specs.push_back({a.spec.text, a.spec.name, a.spec.method.text, false});
        }
        a.id = id;
    }
    return out;
}

}  // namespace loupe::detail
