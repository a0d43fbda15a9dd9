// The plug-in point of parameter tracing (params/): what the core knows of
// parameter specs without the parameter machinery. The log of every spec a
// session had and the apply errors waiting to be written (the collector
// sends both to the session's sinks before the first value that needs
// them), and the backend that params/ installs to parse specs and publish
// them to method sites. Sessions configured with specs when no backend is
// installed fail with a clear error; nothing here is on a hot path.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/base/site.hpp"
#include "loupe/core/session_config.hpp"

namespace loupe::detail {

/// Everything a session's sinks must hear about its specs. Shared by the
/// session (collector side) and the binding registry (host side).
struct session_param_log {
    struct entry {
        std::string text;
        std::string name;
        std::string method;    ///< the `method=` selector
        bool matched = false;  ///< it matched a method site that ran (set by the binding registry)
    };
    struct apply_error {
        const site* method;  ///< the method site's zone (what the sinks see)
        std::uint32_t spec;
        std::string reason;
    };

    std::mutex mutex;  // guards everything below
    std::vector<entry> specs;  ///< index = spec id; append-only
    std::size_t sent = 0;      ///< collector: specs already sent to the sinks
    std::vector<apply_error> pending_errors;
    std::set<std::pair<const site*, std::uint32_t>> reported;  ///< (method, spec) already queued

    /// Host side, under no other loupe lock: spec `spec` matched a site.
    void mark_matched(std::uint32_t spec) {
        std::lock_guard<std::mutex> lock(mutex);
        if (spec < specs.size()) specs[spec].matched = true;
    }

    /// Host side, under no other loupe lock: queues an apply error once per (site, spec).
    void add_error(const site* method, std::uint32_t spec, std::string reason) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!reported.insert({method, spec}).second) return;
        pending_errors.push_back({method, spec, std::move(reason)});
    }
};

/// Parameter spec handling, installed by params/method.hpp (included by
/// loupe.hpp). Both functions throw loupe::error for bad input.
struct params_backend {
    /// Parses `text` for session `session_name`; spec ids come from `log`.
    std::shared_ptr<void> (*compile)(const std::string& session_name, std::string_view text, std::size_t value_bytes,
                                     session_param_log& log);
    /// Session slot `slot` now runs `specs` (a result of `compile`; null: none).
    void (*publish)(int slot, std::shared_ptr<void> specs, std::shared_ptr<session_param_log> log);
    /// The specs of `log` that matched no site, with the sites that ran
    /// spelled close to each.
    std::vector<unmatched_spec> (*unmatched)(session_param_log& log);
};

LOUPE_API inline std::atomic<const params_backend*> g_params_backend{nullptr};

}  // namespace loupe::detail
