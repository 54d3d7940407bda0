// A deliberately naive decoder for tests: scalar double-precision loops over
// the GGUF tensors exactly as stored, with llama.cpp's RoPE conventions
// (interleaved pairs for 'llama' files, whose Q/K rows the converter permuted;
// half-split pairs for 'qwen2'). Agreement with runtime::Model — which
// unpermutes at load and uses one half-split convention — checks the
// permutation, the RoPE pairing and the rest of the forward pass at once.
#pragma once

#include <vector>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::test {

// Logits [tokens.size()][n_vocab] for a prompt processed from position 0.
// long_factors: a phi3 file rotates with its LongRoPE long factors (llama.cpp's
// choice for a context past rope.scaling.original_context_length), else the short ones.
std::vector<std::vector<double>> naive_logits(const runtime::GgufFile& file, const std::vector<int>& tokens,
                                              bool long_factors = false);

// The largest |a - b| over two such sets of logits.
double largest_difference(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b);

}  // namespace kvframe::test
