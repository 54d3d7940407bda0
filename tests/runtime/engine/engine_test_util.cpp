#include "engine_test_util.h"

#include <gtest/gtest.h>

#include "tiny_model.h"

namespace kvframe::runtime::engine_test {

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

std::unique_ptr<Engine> tiny_engine(int64_t cache_bytes, int64_t layers) {
  kvframe::test::TinyModelSpec spec;
  spec.n_layer = layers;
  return tiny_engine_of(spec, cache_bytes);
}

kvframe::test::TinyModelSpec qwen2_spec(int64_t layers) {
  kvframe::test::TinyModelSpec spec;
  spec.arch = "qwen2";
  spec.n_layer = layers;
  spec.n_head_kv = 1;
  spec.qkv_bias = true;
  spec.tied = false;
  spec.rope_base = 1000000.0f;
  spec.seed = 7;
  return spec;
}

std::unique_ptr<Engine> tiny_engine_of(const kvframe::test::TinyModelSpec& spec, int64_t cache_bytes,
                                       int64_t model_context) {
  const std::vector<uint8_t> bytes = kvframe::test::tiny_model_bytes(spec);
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_TRUE(file.ok());
  ModelParams fp32;
  fp32.dtype = "fp32";  // the reference the engine tests compare paths in,
  fp32.int8_activations = false;  // decoding steps included
  fp32.context = model_context;
  auto model = Model::load(*file, fp32);
  auto tokenizer = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(model.ok() && tokenizer.ok());
  EngineParams params;
  params.cache_bytes = cache_bytes;
  auto engine = Engine::create(std::move(model).value(), std::move(tokenizer).value(), std::nullopt, params);
  EXPECT_TRUE(engine.ok()) << (engine.ok() ? "" : engine.error().to_string());
  return std::move(engine).value();
}

SessionParams session_params(AttentionMode mode) {
  SessionParams params;
  params.mode = mode;
  params.system_prompt = "You are the game's NPC director.";
  params.rules.min_split_bytes = 0;  // many small blocks from a small state
  params.context = 8192;
  return params;
}

std::unique_ptr<Session> open(Engine& engine, const SessionParams& params) {
  auto session = Session::open(engine, params);
  EXPECT_TRUE(session.ok()) << (session.ok() ? "" : session.error().to_string());
  return std::move(session).value();
}

Task task(int32_t max_tokens) {
  Task t;
  t.instruction = "\nWhat should unit u3 do next?\n";
  t.generate.max_tokens = max_tokens;
  t.generate.stop_tokens = {-1};  // never stop early: compare whole greedy runs
  return t;
}

Answer ask(Session& session, const std::string& frame, const Task& t) {
  auto diff = session.update(frame);
  EXPECT_TRUE(diff.ok()) << (diff.ok() ? "" : diff.error().to_string());
  auto answer = session.query(t);
  EXPECT_TRUE(answer.ok()) << (answer.ok() ? "" : answer.error().to_string());
  return std::move(answer).value();
}

}  // namespace kvframe::runtime::engine_test
