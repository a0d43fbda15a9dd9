// Binding of runtime modifier chains (Tier B, US 9,129,056 ¶0142–0155):
// chain text such as `field(items) | at(-1) | call(name) | truncate(16)` is
// parsed once (runtime_chain_parser.hpp), bound here once per (site, spec)
// against the parameter's declared type — each modifier's precondition
// checked and its output type computed, as the patent's "MPT Apply Error"
// check — and then evaluated on every call (runtime_chain_steps.hpp).
// Binding does the lookups (registered members, functions, classes, cast
// paths) up front so that evaluation needs none, except type_of's name of a
// dynamic type a step has not seen before (cached per step).
//
// Modifiers (same names and semantics as the compile-time chains,
// params/chain.hpp; patent aliases in brackets):
//   length                     size of a sequence or string          → uint
//   at(i)  [array_element(i)]  element i; i < 0 counts from the end  InvalidIndex
//   type_of  [class]           (dynamic) type name                   → type
//   call(name)  [instance_method(name)]   a registered const method  ExceptionInCall
//   apply(name) [static_method(name)]     a registered function      ExceptionInCall
//   field(name)                a registered data member
//   cast(Type)                 dynamic cast along registered bases;  CastFailed
//                              null passes through (next modifier: NullInCall)
//   object_id  [id]            identity of the object                → object_id
//   deref                      unwraps one pointer level
//   to_string                  text as is, numbers formatted, ADL to_string, or operator<<
//                              bounded into the writer's scratch
//   truncate(n)                first n bytes (UTF-8 boundary), original size kept
//   redact                     only the size of the text (of a number: sizeof) → redacted
//   hash                       keyed hash of the text (of a number: its 8 bytes) → hash
// Pointers, smart pointers and optionals are unwrapped implicitly before a
// modifier that needs an object (null → NullInCall) and at the end of the
// chain (null → NullValue). Numbers (arithmetic, enums) take only
// to_string, redact and hash ("modifiers are not applied to primitive
// values", ¶0151). type_of reports a registered type's registered name.
//
// Cost: parse and bind are slow paths (allocate, lock the registry).
// `bound_chain::evaluate` is noexcept, allocates nothing, and costs one
// indirect call per step (plus the getters it runs).
//
// Thread-safety: parse_chain and bind_chain may run on any thread; a bound
// chain is immutable and may be evaluated by many threads at once.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>
#include <vector>

#include "loupe/params/detail/chain_values.hpp"
#include "loupe/params/detail/modifier_support.hpp"
#include "loupe/params/detail/runtime_chain_parser.hpp"
#include "loupe/params/detail/runtime_chain_steps.hpp"
#include "loupe/params/detail/reflection_registry.hpp"
#include "loupe/params/detail/type_desc.hpp"

namespace loupe::detail {

/// The outcome of bind_chain: a chain, or why the spec does not fit (the
/// spec's values then read EnableFailed).
struct bind_result {
    std::shared_ptr<const bound_chain> chain;  ///< null on failure
    std::string error;                         ///< "modifier 2 `field(nosuch)`: shop::Item has no field 'nosuch' (...)"
    std::size_t failed_modifier = 0;           ///< 1-based; 0 when the chain bound (or the empty chain's end failed)
    explicit operator bool() const noexcept { return chain != nullptr; }
};

/// Binds parsed chains (see bind_chain).
struct chain_binder {
    static constexpr int max_unwrap = 16;

    static std::string name_of(const type_desc* d) { return reflected_name(*d->type); }
    static std::string name_locked(const reflection_registry& reg, const type_desc* d) {
        auto it = reg.classes.find(std::type_index(*d->type));
        return it != reg.classes.end() ? it->second.name : demangle(*d->type);
    }

    // Unwraps pointer-likes; false when too deep (a pointer cycle cannot occur, but be safe).
    static bool unwrap(const type_desc*& d, std::vector<adjust_fn>& adjust) {
        for (int i = 0; d->pointee != nullptr; ++i) {
            if (i == max_unwrap) return false;
            adjust.push_back(d->pointee);
            d = d->pointee_desc();
        }
        return true;
    }

    // Finds `key` among the fields (or methods) of `cls` and its registered
    // bases (breadth first), appending the upcasts. Call with the registry locked.
    static std::shared_ptr<const member_entry> find_member(const reflection_registry& reg, std::type_index cls,
                                                           const std::string& key, bool methods,
                                                           std::vector<adjust_fn>& adjust,
                                                           std::vector<std::string>& known) {
        struct node {
            std::type_index type;
            std::size_t parent;
            adjust_fn up;
        };
        std::vector<node> queue{{cls, 0, nullptr}};
        for (std::size_t i = 0; i < queue.size() && i < 256; ++i) {
            auto it = reg.classes.find(queue[i].type);
            if (it == reg.classes.end()) continue;
            for (const auto& m : methods ? it->second.methods : it->second.fields) {
                if (m->key == key) {
                    std::vector<adjust_fn> ups;
                    for (std::size_t j = i; j != 0; j = queue[j].parent) ups.push_back(queue[j].up);
                    adjust.insert(adjust.end(), ups.rbegin(), ups.rend());
                    return m;
                }
                known.push_back(m->key);
            }
            for (const auto& b : it->second.bases) {
                bool seen = false;
                for (const auto& n : queue) seen = seen || n.type == b.base;
                if (!seen) queue.push_back({b.base, i, b.up});
            }
        }
        return nullptr;
    }

    // A conversion path from class `from` to class `to` along registered
    // bases (up: always; down: checked, polymorphic bases only). Registry locked.
    static bool cast_path(const reflection_registry& reg, std::type_index from, std::type_index to,
                          std::vector<adjust_fn>& path, std::vector<bool>& may_fail) {
        struct node {
            std::type_index type;
            std::size_t parent;
            adjust_fn fn;
            bool down;
        };
        std::vector<node> queue{{from, 0, nullptr, false}};
        auto seen = [&](std::type_index t) {
            for (const auto& n : queue) {
                if (n.type == t) return true;
            }
            return false;
        };
        for (std::size_t i = 0; i < queue.size() && i < 1024; ++i) {
            if (queue[i].type == to) {
                std::vector<std::size_t> idx;
                for (std::size_t j = i; j != 0; j = queue[j].parent) idx.push_back(j);
                for (auto it = idx.rbegin(); it != idx.rend(); ++it) {
                    path.push_back(queue[*it].fn);
                    may_fail.push_back(queue[*it].down);
                }
                return true;
            }
            const std::type_index cur = queue[i].type;
            auto it = reg.classes.find(cur);
            if (it != reg.classes.end()) {
                for (const auto& b : it->second.bases) {
                    if (!seen(b.base)) queue.push_back({b.base, i, b.up, false});
                }
            }
            for (const auto& [type, entry] : reg.classes) {  // classes deriving from `cur`
                for (const auto& b : entry.bases) {
                    if (b.base == cur && b.down != nullptr && !seen(type)) queue.push_back({type, i, b.down, true});
                }
            }
        }
        return false;
    }

    static const class_entry* find_class_by_name(const reflection_registry& reg, const std::string& name,
                                                 std::string& error) {
        const class_entry* exact = nullptr;
        std::vector<const class_entry*> tail;
        for (const auto& kv : reg.classes) {
            const std::string& n = kv.second.name;
            if (n == name) exact = &kv.second;
            if (n.size() > name.size() && n.compare(n.size() - name.size(), name.size(), name) == 0 &&
                n.compare(n.size() - name.size() - 2, 2, "::") == 0) {
                tail.push_back(&kv.second);
            }
        }
        if (exact != nullptr) return exact;
        if (tail.size() == 1) return tail[0];
        if (tail.size() > 1) {
            error = "type '" + name + "' is ambiguous (";
            for (std::size_t i = 0; i < tail.size(); ++i) error += (i ? ", " : "") + tail[i]->name;
            error += ")";
        } else {
            error = "no registered type '" + name + "' (loupe::reflect<T>(\"" + name + "\") registers one)";
        }
        return nullptr;
    }

    static bind_result bind(const parsed_chain& parsed, const type_desc* start) {
        bind_result result;
        auto chain = std::make_shared<bound_chain>();
        const type_desc* cur = start;
        reflection_registry& reg = reflection();
        std::size_t number = 0;
        auto fail = [&](const parsed_modifier& m, const std::string& reason) {
            result.error = "modifier " + std::to_string(number) + " `" + m.text + "`: " + reason;
            result.failed_modifier = number;
            return result;
        };
        for (const parsed_modifier& m : parsed.modifiers) {
            ++number;
            bound_step s;
            if (m.op == modifier_op::deref) {
                if (cur->pointee == nullptr) {
                    return fail(m, "deref needs a pointer, smart pointer or optional; " + name_of(cur) + " is not one");
                }
                s.adjust.push_back(cur->pointee);
                cur = cur->pointee_desc();
                s.in = cur;
                s.run = &chain_steps::deref;
                chain->steps_.push_back(std::move(s));
                continue;
            }
            if (m.op != modifier_op::apply) {
                if (!unwrap(cur, s.adjust)) return fail(m, "too many pointer levels");
                const bool numbers_ok =
                    m.op == modifier_op::to_string || m.op == modifier_op::redact || m.op == modifier_op::hash;
                if (cur->arithmetic && !numbers_ok) {
                    return fail(m, name_of(cur) +
                                       " is an arithmetic value; only to_string, redact and hash apply "
                                       "to it");
                }
            }
            s.in = cur;
            switch (m.op) {
                case modifier_op::length:
                case modifier_op::at:
                    if (cur->text == nullptr && cur->size == nullptr) {
                        return fail(m, std::string(m.op == modifier_op::length ? "length" : "at(i)") +
                                           " needs a sequence (a random-access container, array or string); " +
                                           name_of(cur) + " is not one");
                    }
                    s.number = m.number;
                    s.run = m.op == modifier_op::length ? &chain_steps::length : &chain_steps::at;
                    cur = m.op == modifier_op::length ? type_desc_of<std::size_t>() : cur->element_desc();
                    break;
                case modifier_op::type_of:
                    s.names = std::make_unique<bound_step::name_cache>();
                    s.run = &chain_steps::type_of;
                    cur = type_desc_of<type_name_value>();
                    break;
                case modifier_op::object_id:
                    if (cur->object_id == nullptr) return fail(m, name_of(cur) + " has no object identity");
                    s.run = &chain_steps::object_id;
                    cur = type_desc_of<object_id_value>();
                    break;
                case modifier_op::call:
                case modifier_op::field: {
                    const bool methods = m.op == modifier_op::call;
                    const char* what = methods ? "method" : "field";
                    std::vector<std::string> known;
                    std::lock_guard<std::mutex> lock(reg.mutex);
                    auto cls = reg.classes.find(std::type_index(*cur->type));
                    if (cls == reg.classes.end()) {
                        const std::string n = demangle(*cur->type);
                        return fail(m, n + " is not registered, so it has no " + what + " '" + m.name +
                                           "' (loupe::reflect<" + n + ">(\"" + n + "\")." + what +
                                           "(...) registers one)");
                    }
                    s.member = find_member(reg, std::type_index(*cur->type), m.name, methods, s.adjust, known);
                    if (!s.member) {
                        std::string list;
                        for (std::size_t i = 0; i < known.size(); ++i) {
                            bool dup = false;
                            for (std::size_t j = 0; j < i; ++j) dup = dup || known[j] == known[i];
                            if (!dup) list += (list.empty() ? "" : ", ") + known[i];
                        }
                        return fail(m, cls->second.name + " has no " + what + " '" + m.name + "' (registered " + what +
                                           "s: " + (list.empty() ? "none" : list) + ")");
                    }
                    s.run = s.member->address != nullptr ? &chain_steps::field : &chain_steps::member;
                    cur = s.member->result;
                    break;
                }
                case modifier_op::apply: {
                    if (cur->arithmetic) {
                        return fail(m, name_of(cur) + " is an arithmetic value; modifiers do not apply to it");
                    }
                    std::lock_guard<std::mutex> lock(reg.mutex);
                    for (const auto& f : reg.functions) {
                        if (f->key == m.name) s.function = f;
                    }
                    if (!s.function) {
                        std::string tail;  // unqualified: a unique match on the last component
                        int count = 0;
                        for (const auto& f : reg.functions) {
                            const std::string& k = f->key;
                            if (k.size() > m.name.size() + 2 &&
                                k.compare(k.size() - m.name.size(), m.name.size(), m.name) == 0 &&
                                k.compare(k.size() - m.name.size() - 2, 2, "::") == 0) {
                                s.function = f;
                                ++count;
                            }
                        }
                        if (count > 1) return fail(m, "function name '" + m.name + "' is ambiguous");
                    }
                    if (!s.function) {
                        std::string known;
                        for (const auto& f : reg.functions) known += (known.empty() ? "" : ", ") + f->key;
                        return fail(m, "no registered function '" + m.name +
                                           "' (registered functions: " + (known.empty() ? "none" : known) + ")");
                    }
                    // Reach the parameter type: unwrap pointer-likes, then upcast along registered bases.
                    const type_desc* target = s.function->param;
                    const type_desc* d = cur;
                    bool reached = false;
                    for (int i = 0; i <= max_unwrap; ++i) {
                        if (d->type == target->type || *d->type == *target->type) {
                            reached = true;
                            break;
                        }
                        std::vector<adjust_fn> path;
                        std::vector<bool> may_fail;
                        if (reg.classes.count(std::type_index(*d->type)) != 0 &&
                            cast_path(reg, std::type_index(*d->type), std::type_index(*target->type), path, may_fail)) {
                            bool up_only = true;
                            for (bool f : may_fail) up_only = up_only && !f;
                            if (up_only) {
                                s.adjust.insert(s.adjust.end(), path.begin(), path.end());
                                reached = true;
                                break;
                            }
                        }
                        if (d->pointee == nullptr) break;
                        s.adjust.push_back(d->pointee);
                        d = d->pointee_desc();
                    }
                    if (!reached) {
                        return fail(m, s.function->name + " takes " + name_locked(reg, target) + ", not " +
                                           name_locked(reg, cur));
                    }
                    s.in = d;
                    s.run = &chain_steps::apply;
                    cur = s.function->result;
                    break;
                }
                case modifier_op::cast: {
                    std::lock_guard<std::mutex> lock(reg.mutex);
                    std::string error;
                    const class_entry* target = find_class_by_name(reg, m.name, error);
                    if (target == nullptr) return fail(m, error);
                    if (!cast_path(reg, std::type_index(*cur->type), std::type_index(*target->desc->type), s.cast_path,
                                   s.cast_may_fail)) {
                        return fail(m, "cannot cast " + name_locked(reg, cur) + " to " + target->name +
                                           " (no registered base/derived path; a downcast needs a polymorphic "
                                           "base registered with .base<B>())");
                    }
                    s.as_pointer = target->as_pointer;
                    s.run = &chain_steps::cast;
                    cur = target->pointer_desc;
                    break;
                }
                case modifier_op::to_string:
                    if (cur->format == nullptr) {
                        return fail(m, name_of(cur) +
                                           " cannot be formatted (no to_string found by ADL, no operator<<, not text)");
                    }
                    s.run = &chain_steps::to_string;
                    cur = type_desc_of<text_piece>();
                    break;
                case modifier_op::truncate:
                case modifier_op::redact:
                case modifier_op::hash:
                    if (cur->text == nullptr && (m.op == modifier_op::truncate || cur->number_bits == nullptr)) {
                        const bool t = m.op == modifier_op::truncate;
                        return fail(m, std::string(t                           ? "truncate(n) needs text"
                                                   : m.op == modifier_op::hash ? "hash needs text or a number"
                                                                               : "redact needs text or a number") +
                                           " (a string, string_view, const char* or to_string's result); " +
                                           name_of(cur) + (t ? " is not text" : " is neither"));
                    }
                    s.number = m.number;
                    s.run = m.op == modifier_op::truncate ? &chain_steps::truncate
                            : m.op == modifier_op::redact ? &chain_steps::redact
                                                          : &chain_steps::hash;
                    cur = m.op == modifier_op::truncate ? type_desc_of<text_piece>()
                          : m.op == modifier_op::redact ? type_desc_of<redacted_value>()
                                                        : type_desc_of<hash_value>();
                    break;
                case modifier_op::deref:
                    break;  // handled above
            }
            chain->steps_.push_back(std::move(s));
        }
        // The end: unwrap pointer-likes (null → NullValue) to a traceable type.
        const type_desc* end = cur;
        std::vector<adjust_fn> final_adjust;
        while (end->write == nullptr && end->pointee != nullptr && final_adjust.size() < max_unwrap) {
            final_adjust.push_back(end->pointee);
            end = end->pointee_desc();
        }
        if (end->write == nullptr) {
            const std::string why =
                " is not traceable (end the chain with a field, call or to_string giving a traceable value, or "
                "specialize loupe::traceable)";
            if (parsed.modifiers.empty()) {
                result.error = "the value itself: " + name_of(cur) + why;
                return result;
            }
            number = parsed.modifiers.size();
            return fail(parsed.modifiers.back(), "its result, " + name_of(cur) + "," + why);
        }
        chain->step_count_ = chain->steps_.size();
        chain->final_adjust_ = std::move(final_adjust);
        chain->final_write_ = end->write;
        chain->result_kind_ = end->kind;
        chain->end_ = end;
        fuse(*chain);
        result.chain = std::move(chain);
        return result;
    }

    // Gives `chain` a fused form (bound_chain::fields_then_write,
    // fields_then_truncate) when its shape has one: data members without
    // unwrapping or upcasts, then nothing or a truncate of text (not of a
    // text an earlier step cut, whose original size it carries), and a
    // value that needs no unwrapping.
    static void fuse(bound_chain& chain) noexcept {
        if (!chain.final_adjust_.empty()) return;
        const std::vector<bound_step>& steps = chain.steps_;
        std::size_t fields = 0;
        while (fields < steps.size() && steps[fields].run == &chain_steps::field && steps[fields].adjust.empty()) {
            ++fields;
        }
        if (fields == steps.size() && fields != 0) {
            chain.fused_ = &bound_chain::fields_then_write;
        } else if (fields + 1 == steps.size() && steps[fields].run == &chain_steps::truncate &&
                   steps[fields].adjust.empty() && steps[fields].in != type_desc_of<text_piece>()) {
            chain.fused_ = &bound_chain::fields_then_truncate;
        } else {
            return;
        }
        chain.fused_fields_ = fields;
    }
};

/// Binds a parsed chain to values of the type `start` describes: checks
/// each modifier's precondition and computes its output type (patent
/// ¶0151–0155), then that the end is traceable. On failure `error` names the
/// modifier (1-based number and text) and the reason. Looks names up in the
/// reflection registry (locks it). Any thread; slow path.
inline bind_result bind_chain(const parsed_chain& parsed, const type_desc* start) {
    if (start == nullptr) {
        bind_result r;
        r.error = "no value to bind to (no type descriptor)";
        return r;
    }
    try {
        return chain_binder::bind(parsed, start);
    } catch (const std::exception& e) {
        bind_result r;
        r.error = std::string("binding failed: ") + e.what();
        return r;
    }
}

/// Parses and binds in one go; a syntax error becomes the bind error.
inline bind_result bind_chain(std::string_view text, const type_desc* start) {
    try {
        return bind_chain(parse_chain(text), start);
    } catch (const chain_syntax_error& e) {
        bind_result r;
        r.error = "chain offset " + std::to_string(e.offset) + ": " + e.what();
        return r;
    }
}

}  // namespace loupe::detail
