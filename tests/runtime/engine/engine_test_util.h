// What the engine tests share: tiny random-weight engines (fp32, CPU),
// sessions over them, and the exactness measure cached paths are held to.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kvframe/runtime_engine/session.h"
#include "tiny_model.h"

namespace kvframe::runtime::engine_test {

// Relative error bound (max |a - b| / max |b|) between a cached or batched
// path and its recomputation in fp32: both run the same arithmetic on
// differently batched tensors, so only summation order differs.
constexpr double kRelativeTolerance = 1e-4;
double relative_error(const at::Tensor& a, const at::Tensor& b);

// A tiny model (2 layers unless asked) with a byte-level vocabulary (tests/support/tiny_model.h).
std::unique_ptr<Engine> tiny_engine(int64_t cache_bytes = int64_t{1} << 30, int64_t layers = 2);
// The same for any tiny model; qwen2_spec: the second architecture the
// runtime runs (Qwen2: q/k/v biases, one KV head, untied output).
// model_context: ModelParams::context (a phi3 spec past its short factors'
// context rotates with its long ones).
std::unique_ptr<Engine> tiny_engine_of(const kvframe::test::TinyModelSpec& spec,
                                       int64_t cache_bytes = int64_t{1} << 30, int64_t model_context = 0);
kvframe::test::TinyModelSpec qwen2_spec(int64_t layers);
// The tests' session: a system prompt, many small blocks, an 8K context.
SessionParams session_params(AttentionMode mode);
std::unique_ptr<Session> open(Engine& engine, const SessionParams& params);
// A task that never stops early (so whole greedy runs are compared).
Task task(int32_t max_tokens = 1);
// update(frame) then query(t), both expected to succeed.
Answer ask(Session& session, const std::string& frame, const Task& t = task());

}  // namespace kvframe::runtime::engine_test
