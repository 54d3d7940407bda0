// The fuzz entry point, shared by the libFuzzer target (fuzz_json_blocker) and
// the plain corpus replay driver (fuzz_corpus_replay). fuzz_gguf.cpp defines
// the same entry point for fuzz_gguf / fuzz_gguf_corpus_replay; its input is
// a GGUF file's bytes as they are, not the layout below.
//
// Input layout: the first byte picks a mode ('0'..'6', any byte works modulo
// the mode count); the rest is one or more parts separated by kPartSeparator,
// which cannot occur in valid JSON (a raw newline is not allowed in a string):
//   '0' FRAME                partition with the default rules
//   '1' FRAME                partition with tight rules (small budgets, pins, drops)
//   '2' RULES SEP FRAME      partition with rules parsed from the input
//   '3' DOCUMENT SEP PATCH   apply an RFC 7386 merge patch
//   '4' DOCUMENT SEP PATCH   apply an RFC 6902 JSON Patch
//   '5' FRAME SEP FRAME      diff two partitions
//   '6' K FRAME SEP K FRAME  a FrameStream session; K per frame: '0' whole,
//                            '1' merge patch, '2' JSON Patch (modulo 3)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kvframe::fuzz {
inline constexpr std::string_view kPartSeparator = "\n--\n";
}  // namespace kvframe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
