// bench_schema: what schema-constrained decoding costs a game per frame.
//
//   build/bench/bench_schema [--frames N] [--model M.gguf] [--synthetic] [--seed S]
//
// A Hold'em table whose legal actions and raise bounds change every frame,
// so every frame brings a new schema. Per frame: compile_schema (measured),
// then one action decoded by a random walk through the masks (a stand-in for
// the model: uniform among the allowed tokens, 64-token budget), every
// allowed() and accept() timed; allowed() calls that computed a new mask are
// "cold", the rest "cached". Then a second action on the same compiled
// schema (what a SchemaCache hit gets). The vocabulary is the default
// model's tokenizer (SmolLM2, 49K tokens) when its GGUF is there, else a
// synthetic one of the same size.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_options/model_options.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime_output/json_schema.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"
#include "sample_stats.h"

namespace {

namespace rt = kvframe::runtime;
using Clock = std::chrono::steady_clock;
using kvframe::bench::mean;
using kvframe::bench::percentile;

double us_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

struct VocabularyParts {
  std::string source;
  std::vector<std::string> bytes;
  std::vector<bool> special;
  std::vector<int32_t> end_tokens;
};

bool from_model(const std::string& path, VocabularyParts& out) {
  auto file = rt::GgufFile::open(path);
  if (!file) return false;
  auto tokenizer = rt::Tokenizer::from_gguf(*file);
  if (!tokenizer) return false;
  out.source = path;
  for (rt::TokenId id = 0; id < tokenizer->n_vocab(); ++id) {
    out.bytes.push_back(tokenizer->token_bytes(id));
    out.special.push_back(tokenizer->is_special(id));
  }
  if (auto eos = tokenizer->eos_id()) out.end_tokens.push_back(*eos);
  if (auto eot = tokenizer->find_token("<|im_end|>"); eot && (out.end_tokens.empty() || *eot != out.end_tokens[0])) {
    out.end_tokens.push_back(*eot);
  }
  return true;
}

// 256 byte tokens, then 49K words: letters with and without a leading
// space, digit runs, punctuation pairs, the way BPE vocabularies look.
VocabularyParts synthetic(uint64_t seed) {
  VocabularyParts out;
  out.source = "synthetic (49152 tokens)";
  for (int b = 0; b < 256; ++b) out.bytes.emplace_back(1, static_cast<char>(b));
  std::mt19937_64 rng(seed);
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const std::string punctuation = "{}[]\":,. -_'!?";
  while (out.bytes.size() < 49151) {
    std::string token;
    switch (rng() % 4) {
      case 0: token = " "; [[fallthrough]];
      case 1:
        for (size_t n = 2 + rng() % 8; n > 0; --n) token += letters[rng() % letters.size()];
        break;
      case 2:
        for (size_t n = 1 + rng() % 4; n > 0; --n) token += static_cast<char>('0' + rng() % 10);
        break;
      default:
        for (size_t n = 2 + rng() % 2; n > 0; --n) token += punctuation[rng() % punctuation.size()];
    }
    out.bytes.push_back(token);
  }
  out.bytes.emplace_back("<|im_end|>");
  out.special.assign(out.bytes.size(), false);
  out.special.back() = true;
  out.end_tokens = {static_cast<int32_t>(out.bytes.size() - 1)};
  return out;
}

// The frame's legal actions and raise bounds, as the game would send them.
std::string holdem_schema(std::mt19937_64& rng) {
  static const std::vector<std::string> kActions = {"fold", "check", "call", "raise", "all_in"};
  std::string actions;
  for (const std::string& a : kActions) {
    if (rng() % 3 != 0 || a == "fold") actions += (actions.empty() ? "\"" : ",\"") + a + "\"";
  }
  const int64_t min_raise = 20 + static_cast<int64_t>(rng() % 200);
  const int64_t max_raise = min_raise + static_cast<int64_t>(rng() % 5000);
  return R"({"type":"object","properties":{"action":{"type":"string","enum":[)" + actions +
         R"(]},"amount":{"type":"integer","minimum":)" + std::to_string(min_raise) + R"(,"maximum":)" +
         std::to_string(max_raise) +
         R"(},"say":{"type":"string","maxLength":60}},"required":["action","amount"],"additionalProperties":false})";
}

struct Samples {
  std::vector<double> compile_us, cold_us, cached_us, accept_us, fresh_action_ms, warm_action_ms, tokens, states,
      mask_kb;
};

// One action: a random walk through the masks; returns the mask + accept time in ms.
double decode_action(const std::shared_ptr<rt::CompiledSchema>& schema, int32_t budget, std::mt19937_64& rng,
                     Samples& samples) {
  rt::JsonConstraint c(schema);
  double total_us = 0;
  int tokens = 0;
  while (!c.finished() && budget > 0) {
    const int64_t masks_before = schema->stats().masks;
    auto start = Clock::now();
    const rt::TokenMask& mask = c.allowed(budget);
    const double allowed_us = us_since(start);
    (schema->stats().masks > masks_before ? samples.cold_us : samples.cached_us).push_back(allowed_us);
    const int32_t token = mask.ids()[rng() % mask.ids().size()];
    start = Clock::now();
    if (auto accepted = c.accept(token); !accepted.ok()) {
      std::fprintf(stderr, "bench_schema: %s\n", accepted.error().to_string().c_str());
      std::exit(kvframe::kExitFailed);
    }
    const double accept_us = us_since(start);
    samples.accept_us.push_back(accept_us);
    total_us += allowed_us + accept_us;
    --budget;
    ++tokens;
  }
  samples.tokens.push_back(tokens);
  return total_us / 1e3;
}

void row(const char* name, const std::vector<double>& v) {
  std::printf("%-34s %7zu %10.2f %10.2f %10.2f\n", name, v.size(), percentile(v, 50), percentile(v, 99), mean(v));
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 200;
  int budget = 64;
  kvframe::cli::ModelOptions model_options;  // --model only: its tokenizer
  bool use_synthetic = false;
  uint64_t seed = 1;
  CLI::App app{"Schema-constrained decoding costs per frame: compile, masks, per action."};
  app.add_option("--frames", frames, "frames (each a new Hold'em action schema)")->capture_default_str();
  app.add_option("--budget", budget, "token budget per action")->capture_default_str();
  kvframe::cli::ModelOptionsSpec which;
  which.device = which.dtype = which.threads = which.lora = false;
  which.model_note = "its tokenizer is the vocabulary";
  kvframe::cli::add_model_options(app, model_options, which);
  app.add_flag("--synthetic", use_synthetic, "a synthetic 49K-token vocabulary instead of the model's");
  app.add_option("--seed", seed, "random seed")->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;

  VocabularyParts parts;
  if (use_synthetic || !from_model(model_options.model, parts)) {
    if (!use_synthetic) {
      std::fprintf(stderr, "[bench] no tokenizer at %s: synthetic vocabulary\n", model_options.model.c_str());
    }
    parts = synthetic(seed);
  }
  const size_t n_tokens = parts.bytes.size();
  auto start = Clock::now();
  auto vocab = std::make_shared<const rt::TokenVocabulary>(std::move(parts.bytes), std::move(parts.special),
                                                          std::move(parts.end_tokens));
  const double vocab_ms = us_since(start) / 1e3;

  std::mt19937_64 rng(seed);
  Samples s;
  for (int f = 0; f < frames; ++f) {
    const std::string text = holdem_schema(rng);
    start = Clock::now();
    auto compiled = rt::compile_schema(text, vocab);
    s.compile_us.push_back(us_since(start));
    if (!compiled) {
      std::fprintf(stderr, "bench_schema: %s\n", compiled.error().to_string().c_str());
      return kvframe::kExitBadInput;
    }
    if ((*compiled)->min_tokens() > budget) {
      std::fprintf(stderr, "bench_schema: budget %d below min_tokens %d\n", budget, (*compiled)->min_tokens());
      return kvframe::kExitUsage;
    }
    s.fresh_action_ms.push_back(decode_action(*compiled, budget, rng, s));
    s.warm_action_ms.push_back(decode_action(*compiled, budget, rng, s));
    s.states.push_back(static_cast<double>((*compiled)->stats().states));
    s.mask_kb.push_back(static_cast<double>((*compiled)->stats().mask_bytes) / 1024);
  }

  std::printf("vocabulary: %s, %zu tokens; TokenVocabulary built in %.1f ms\n", parts.source.c_str(), n_tokens,
              vocab_ms);
  std::printf("%d frames, a new Hold'em action schema each; %d-token budget per action\n\n", frames, budget);
  std::printf("%-34s %7s %10s %10s %10s\n", "measure", "n", "p50", "p99", "mean");
  row("compile_schema (us)", s.compile_us);
  row("allowed(), new mask (us)", s.cold_us);
  row("allowed(), cached mask (us)", s.cached_us);
  row("accept() (us)", s.accept_us);
  row("masks per action, new schema (ms)", s.fresh_action_ms);
  row("masks per action, seen schema (ms)", s.warm_action_ms);
  row("tokens per action", s.tokens);
  row("DFA states per schema", s.states);
  row("mask memory per schema (KiB)", s.mask_kb);
  return kvframe::kExitOk;
}
