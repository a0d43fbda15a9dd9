// Task rules: which outgoing calls a session tags (tasks/call_scopes.hpp),
// i.e. carry the task's context to the callee so that `loupe merge` can join
// the two processes' records (US 9,619,273: "a set of rules" the controller
// gives each profiler instance).
//
// Text, one rule per line or separated by ';', the first rule that matches a
// call decides; a call no rule matches is not tagged. Empty text: every call
// is tagged.
//
//     tag peer=inventory*          # the destination: service name or host:port (a glob)
//     skip call="GET /health"      # the call's name (a glob; quote to keep spaces)
//     profiled 127.0.0.1:8081, inventory   # the peers the controller knows are profiled
//     tag profiled                 # calls to one of them
//     tag all                      # anything
//
// Globs: `*` any run, `?` one byte, `\` escapes (docs/filters.md).
// Errors throw loupe::error naming the column and what was expected.
//
// Cost: task_rules::tags is a glob match per rule (no allocation); a session
// without rules costs nothing (the call is tagged without looking).
// Thread-safety: immutable after parse; any thread may call `tags`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/core/detail/glob.hpp"

namespace loupe {

class task_rules {
public:
    /// Longest rules text accepted, in bytes.
    static constexpr std::size_t max_text_bytes = 4096;

    /// Parses `text`. Throws loupe::error ("task rules, line L column C:
    /// expected …, found …") for invalid text.
    static task_rules parse(std::string_view text) {
        task_rules r;
        r.text_ = std::string(text);
        if (text.size() > max_text_bytes) {
            throw error("task rules: expected at most " + std::to_string(max_text_bytes) + " bytes, found " +
                        std::to_string(text.size()));
        }
        parser p{text, r};
        p.run();
        return r;
    }

    /// Whether a call to `peer` named `name` is tagged. Empty rules tag
    /// every call.
    bool tags(std::string_view peer, std::string_view name) const noexcept {
        if (rules_.empty()) return true;
        for (const rule& r : rules_) {
            if (matches(r, peer, name)) return r.tag;
        }
        return false;
    }

    /// True when there are no rules (every call is tagged).
    bool empty() const noexcept { return rules_.empty(); }
    /// The text as given.
    const std::string& text() const noexcept { return text_; }
    /// The peers a `profiled` line named.
    const std::vector<std::string>& profiled_peers() const noexcept { return profiled_; }

private:
    enum class test : std::uint8_t { all, peer, call, profiled };
    struct rule {
        bool tag;
        test what;
        std::string pattern;
    };

    bool matches(const rule& r, std::string_view peer, std::string_view name) const noexcept {
        switch (r.what) {
            case test::all: return true;
            case test::peer: return detail::glob_match(r.pattern, peer);
            case test::call: return detail::glob_match(r.pattern, name);
            case test::profiled:
                for (const std::string& p : profiled_) {
                    if (p == peer) return true;
                }
                return false;
        }
        return false;
    }

    struct parser {
        std::string_view text;
        task_rules& out;
        std::size_t at = 0;
        std::size_t line_start = 0;
        std::size_t line = 1;

        [[noreturn]] void fail(std::size_t pos, const std::string& what) const {
            throw error("task rules, line " + std::to_string(line) + " column " + std::to_string(pos - line_start + 1) +
                        ": " + what);
        }
        std::string found(std::size_t pos) const {
            if (pos >= text.size() || text[pos] == '\n' || text[pos] == ';') return "end of rule";
            const unsigned char c = static_cast<unsigned char>(text[pos]);
            if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
            static const char hex[] = "0123456789abcdef";
            return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
        }
        void blanks() {
            while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r')) ++at;
        }
        bool end_of_rule() const { return at >= text.size() || text[at] == '\n' || text[at] == ';' || text[at] == '#'; }
        std::string_view word() {
            const std::size_t from = at;
            while (at < text.size() && ((text[at] >= 'a' && text[at] <= 'z') || text[at] == '_')) ++at;
            return text.substr(from, at - from);
        }
        // A bare value (up to a blank, ',', ';', '#' or end) or a "quoted" one.
        std::string value(const char* what) {
            blanks();
            std::string v;
            const std::size_t from = at;
            if (at < text.size() && text[at] == '"') {
                ++at;
                while (at < text.size() && text[at] != '"' && text[at] != '\n') {
                    if (text[at] == '\\' && at + 1 < text.size()) v += text[at++];
                    v += text[at++];
                }
                if (at >= text.size() || text[at] != '"') fail(from, std::string("expected a closing '\"' for ") + what);
                ++at;
            } else {
                while (at < text.size() && text[at] != ' ' && text[at] != '\t' && text[at] != '\r' && text[at] != ',' &&
                       !end_of_rule()) {
                    v += text[at++];
                }
            }
            if (v.empty()) fail(from, std::string("expected ") + what + ", found " + found(from));
            for (std::size_t i = 0; i < v.size(); ++i) {
                if (static_cast<unsigned char>(v[i]) < 0x20) fail(from, std::string("expected ") + what + " without control characters");
            }
            return v;
        }
        void finish_rule() {
            blanks();
            if (at < text.size() && text[at] == '#') {
                while (at < text.size() && text[at] != '\n') ++at;
            }
            if (!end_of_rule()) fail(at, "expected the end of the rule (a new line or ';'), found " + found(at));
        }
        void run() {
            while (at < text.size()) {
                blanks();
                if (at < text.size() && (text[at] == '\n' || text[at] == ';')) {
                    if (text[at] == '\n') {
                        ++line;
                        line_start = at + 1;
                    }
                    ++at;
                    continue;
                }
                if (at >= text.size()) break;
                if (text[at] == '#') {
                    finish_rule();
                    continue;
                }
                const std::size_t word_at = at;
                const std::string_view verb = word();
                if (verb == "profiled") {
                    do {
                        if (at < text.size() && text[at] == ',') ++at;
                        out.profiled_.push_back(value("a peer (service name or host:port)"));
                        blanks();
                    } while (at < text.size() && text[at] == ',');
                    finish_rule();
                    continue;
                }
                if (verb != "tag" && verb != "skip") {
                    fail(word_at, "expected 'tag', 'skip' or 'profiled', found " +
                                      (verb.empty() ? found(word_at) : "'" + std::string(verb) + "'"));
                }
                rule r{verb == "tag", test::all, {}};
                blanks();
                const std::size_t what_at = at;
                const std::string_view what = word();
                if (what == "all") {
                    r.what = test::all;
                } else if (what == "profiled") {
                    r.what = test::profiled;
                } else if (what == "peer" || what == "call") {
                    r.what = what == "peer" ? test::peer : test::call;
                    if (at >= text.size() || text[at] != '=') fail(at, "expected '=' after '" + std::string(what) + "', found " + found(at));
                    ++at;
                    const std::size_t pattern_at = at;
                    r.pattern = value(what == "peer" ? "a peer glob" : "a call name glob");
                    if (detail::glob_invalid_escape(r.pattern) != std::string_view::npos) {
                        fail(pattern_at, "expected a glob whose '\\' escapes a character, found a lone '\\' at its end");
                    }
                } else {
                    fail(what_at, "expected 'peer=', 'call=', 'profiled' or 'all' after '" + std::string(verb) + "', found " +
                                      (what.empty() ? found(what_at) : "'" + std::string(what) + "'"));
                }
                out.rules_.push_back(std::move(r));
                finish_rule();
            }
        }
    };

    std::string text_;
    std::vector<rule> rules_;
    std::vector<std::string> profiled_;
};

}  // namespace loupe
