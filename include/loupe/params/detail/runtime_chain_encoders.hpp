// Runtime chains that encode their value in place (method_wire.hpp) in one
// function: the shapes bound_chain runs fused (data members one inside the
// other, then the value, or a truncate of text; bound_chain::fields_then_write,
// fields_then_truncate), and a chain without modifiers, when the value is a
// std::string, a std::string_view or a built-in number. A straight binding's
// entry (params/method.hpp: evaluate_straight) calls the encoder instead of
// the chain and then encode_value: the writer stays in registers, and the
// value's type is known here, so there is no call to its writer. The bytes
// are those of evaluate + encode_value (runtime_chain_test checks them).
//
// Chosen once, when a site binds (method_registry.hpp); compiled where the
// registry is, not in files with method sites.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <typeinfo>

#include "loupe/params/detail/method_wire.hpp"
#include "loupe/params/detail/runtime_chain_steps.hpp"
#include "loupe/params/detail/site_binding.hpp"
#include "loupe/params/value.hpp"

namespace loupe::detail {

struct chain_encoders {
    // The chain's data members, then the value (a T), within `budget` bytes
    // of text.
    template <class T>
    static std::size_t fields_then_value(const bound_chain& chain, const void* object, unsigned char* at,
                                         std::uint8_t slot, std::uint16_t spec, std::size_t budget) noexcept {
        value_writer out(reinterpret_cast<char*>(at + encoded_text_offset), budget);
        traceable<T>::write(*static_cast<const T*>(chain.follow_fields(object)), out);
        return encode_value(out, slot, spec, at);
    }

    // The chain's data members, then the first truncate(n) bytes of a T (text).
    template <class T>
    static std::size_t fields_then_cut_text(const bound_chain& chain, const void* object, unsigned char* at,
                                            std::uint8_t slot, std::uint16_t spec, std::size_t budget) noexcept {
        const T& text = *static_cast<const T*>(chain.follow_fields(object));
        value_writer out(reinterpret_cast<char*>(at + encoded_text_offset), budget);
        chain.write_fused_cut(std::string_view(text.data(), text.size()), out);
        return encode_value(out, slot, spec, at);
    }

    /// The encoder for `chain`, null when its shape or its value's type has
    /// none (the entry then evaluates the chain).
    static runtime_chain_ref::encode_fn choose(const bound_chain& chain) noexcept {
        if (!chain.final_adjust_.empty() || chain.end_ == nullptr) return nullptr;
        const std::type_info& end = *chain.end_->type;
        if (chain.fused_ == &bound_chain::fields_then_truncate) {
            const std::type_info& cut = *chain.steps_[chain.fused_fields_].in->type;
            if (cut == typeid(std::string)) return &fields_then_cut_text<std::string>;
            if (cut == typeid(std::string_view)) return &fields_then_cut_text<std::string_view>;
            return nullptr;
        }
        if (chain.fused_ != &bound_chain::fields_then_write && !chain.steps_.empty()) return nullptr;
        return value_encoder<std::string, std::string_view, bool, char, signed char, unsigned char, short,
                             unsigned short, int, unsigned, long, unsigned long, long long, unsigned long long, float,
                             double>(end);
    }

private:
    template <class... T>
    static runtime_chain_ref::encode_fn value_encoder(const std::type_info& end) noexcept {
        runtime_chain_ref::encode_fn found = nullptr;
        static_cast<void>(((end == typeid(T) ? (found = &fields_then_value<T>, true) : false) || ...));
        return found;
    }
};

}  // namespace loupe::detail
