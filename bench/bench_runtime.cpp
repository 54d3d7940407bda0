// bench_runtime: the model runtime's prefill and decode speed against a plain
// at::matmul roofline measured in the same run, on the same device and dtype.
//
//   prefill FLOPs = 2 x (layer matmul parameters) x tokens          projections + MLP
//                 + 2 x 2 x n_layer x n_head x head_dim x T(T+1)/2  causal attention
//                 + 2 x n_vocab x n_embd                            the head, last token only
// Prefill runs exactly as generate() does: chunks of 512 tokens over a KV cache.
// With the default model the prompt is real gamecore JSON (the MOBA
// generator) under its tokenizer; --shape runs a random-weight model of a real
// architecture's shape (e.g. Llama-3-8B on a GPU) on random token ids.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gnuplot_plot.h"
#include "model_shapes.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_model/model_params.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/runtime/generate.h"
#include "kvframe/runtime/model.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"
#include "moba/moba_stream.h"

namespace {

namespace rt = kvframe::runtime;
using Clock = std::chrono::steady_clock;

// Waits for the device's queued work (timings on CUDA are asynchronous otherwise).
void sync(const at::Tensor& t) { (void)t.sum().item<double>(); }

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Best-of-reps GFLOP/s of an [m, k] x [k, n] matmul on the model's device and dtype.
double matmul_gflops(const rt::Model& model, int64_t m, int64_t k, int64_t n, int reps) {
  const auto options = at::TensorOptions(model.dtype()).device(model.device());
  at::Tensor a = at::randn({m, k}, options), b = at::randn({k, n}, options);
  sync(at::matmul(a, b));  // warm-up
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t = Clock::now();
    at::Tensor c = at::matmul(a, b);
    sync(c);
    best = std::min(best, since(t));
  }
  return 2.0 * static_cast<double>(m * k * n) / best / 1e9;
}

double prefill_flops(const rt::ModelConfig& c, int64_t T) {
  const double layer_params = static_cast<double>(c.matmul_params() - c.n_vocab * c.n_embd);
  const double attention = 4.0 * static_cast<double>(c.n_layer * c.n_head * c.head_dim) *
                           static_cast<double>(T) * static_cast<double>(T + 1) / 2.0;
  return 2.0 * layer_params * static_cast<double>(T) + attention + 2.0 * static_cast<double>(c.n_vocab * c.n_embd);
}

// Gamecore JSON tokens, n of them.
std::vector<int64_t> gamecore_tokens(const rt::Tokenizer& tokenizer, int64_t n) {
  std::vector<int64_t> out;
  kvframe::examples::moba::StreamGenerator frames(kvframe::examples::moba::params_for_bytes(64 * 1024));
  while (static_cast<int64_t>(out.size()) < n) {
    for (rt::TokenId id : tokenizer.encode(frames.next().json)) out.push_back(id);
  }
  out.resize(static_cast<size_t>(n));
  return out;
}

// Seconds to prefill `tokens` in 512-token chunks (best of reps).
double time_prefill(const rt::Model& model, const std::vector<int64_t>& tokens, int reps) {
  const auto n = static_cast<int64_t>(tokens.size());
  const at::Tensor ids = at::tensor(tokens, at::kLong);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    rt::KvCache cache = *model.new_cache(n);
    auto t = Clock::now();
    at::Tensor logits;
    for (int64_t i = 0; i < n; i += 512) logits = *model.forward(ids.narrow(0, i, std::min<int64_t>(512, n - i)), cache);
    sync(logits);
    best = std::min(best, since(t));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  kvframe::cli::ModelOptions model_options;  // --model, --device, --dtype, --threads, --lora
  std::string shape_name;
  std::vector<int64_t> lengths = {512, 2048, 8192};
  std::string plot = "bench_runtime.png";
  int decode_steps = 64, decode_after = 512, reps = 2;
  bool step_kernels = true, int8_activations = true;
  CLI::App app{"Prefill and decode tokens/s of a model beside an at::matmul roofline from the same run."};
  kvframe::cli::ModelOptionsSpec which;
  which.lora_note = "applied on the fly, as to a query";
  kvframe::cli::add_model_options(app, model_options, which);
  app.add_option("--shape", shape_name, "instead of --model: random weights of this shape")
      ->check(CLI::IsMember(kvframe::bench::model_shape_names()));
  app.add_option("--lengths", lengths, "prompt lengths to prefill (comma-separated)")->delimiter(',')->capture_default_str();
  app.add_option("--decode", decode_steps, "decode steps after the prompt")->capture_default_str();
  app.add_option("--decode-after", decode_after, "prompt tokens before decoding (llama-bench's -d)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("--step-kernels", step_kernels, "decode with the CPU step kernels (false: libtorch ops, the reference)")
      ->capture_default_str();
  app.add_option("--int8-activations", int8_activations,
                 "steps round activations to int8 where a matrix's type has such a kernel (false: fp32)")
      ->capture_default_str();
  app.add_option("--reps", reps, "repetitions per measurement (best is kept)")->capture_default_str();
  app.add_option("--plot", plot, "write a PNG plot of prefill speed here (empty: none)")->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  rt::tune_cpu_process(argv, model_options.threads);

  rt::ModelParams params = kvframe::cli::model_params(model_options);
  params.step_kernels = step_kernels;
  params.int8_activations = int8_activations;
  std::unique_ptr<rt::Model> model;
  std::vector<int64_t> prompt;
  const int64_t longest = std::max<int64_t>(*std::max_element(lengths.begin(), lengths.end()), decode_after + decode_steps);
  if (!shape_name.empty()) {
    params.lora.clear();  // random weights take none
    auto made = rt::Model::with_random_weights(kvframe::bench::model_shape(shape_name), params);
    if (!made) {
      std::fprintf(stderr, "bench_runtime: %s\n", made.error().to_string().c_str());
      return kvframe::kExitBadInput;
    }
    model = std::move(made).value();
    const at::Tensor ids = at::randint(model->config().n_vocab, {longest}, at::kLong);  // seeded by with_random_weights
    prompt.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + longest);
  } else {
    auto file = rt::GgufFile::open(model_options.model);
    if (!file) {
      std::fprintf(stderr, "bench_runtime: %s\n  next: run scripts/fetch-model.sh\n", file.error().to_string().c_str());
      return kvframe::kExitBadInput;
    }
    auto tokenizer = rt::Tokenizer::from_gguf(*file);
    std::fprintf(stderr, "[bench] LoRA: %s\n", params.lora.empty() ? "none" : params.lora.c_str());
    auto loaded = rt::Model::load(*file, params);
    if (!tokenizer || !loaded) {
      std::fprintf(stderr, "bench_runtime: %s\n", (!tokenizer ? tokenizer.error() : loaded.error()).to_string().c_str());
      return kvframe::kExitBadInput;
    }
    model = std::move(loaded).value();
    prompt = gamecore_tokens(*tokenizer, longest);
  }
  const rt::ModelConfig& c = model->config();
  std::fprintf(stderr, "[bench] %s: %lld layers, dim %lld; %s %s; %s\n", c.name.c_str(),
               static_cast<long long>(c.n_layer), static_cast<long long>(c.n_embd), model_options.device.c_str(),
               at::toString(model->dtype()), rt::cpu_backend_description().c_str());

  // The roofline: the better of a large square matmul and the model's own
  // largest projection at a 512-token chunk, measured before and after the
  // model runs (the machine is shared; the mean of the two is reported).
  const int64_t square = model->device().is_cuda() ? 8192 : 2048;
  auto roofline = [&] {
    return std::max(matmul_gflops(*model, square, square, square, 3),
                    matmul_gflops(*model, 512, c.n_embd, 2 * c.n_ff, 5));
  };
  const double roof_before = roofline();

  struct Row {
    std::string phase;
    int64_t tokens;
    double seconds, flops;
  };
  std::vector<Row> rows;
  for (int64_t T : lengths) {
    std::fprintf(stderr, "[bench] prefill %lld tokens x %d\n", static_cast<long long>(T), reps);
    const std::vector<int64_t> tokens(prompt.begin(), prompt.begin() + T);
    rows.push_back({"prefill", T, time_prefill(*model, tokens, reps), prefill_flops(c, T)});
  }
  {
    // Best of reps, each from the same prompt: as llama-bench's tg at depth -d.
    std::fprintf(stderr, "[bench] decode %d steps after %d tokens x %d\n", decode_steps, decode_after, reps);
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      rt::KvCache cache = *model->new_cache(decode_after + decode_steps);
      sync(*rt::prefill(*model, std::vector<rt::TokenId>(prompt.begin(), prompt.begin() + decode_after), cache, 512));
      auto t = Clock::now();
      at::Tensor logits;
      for (int i = 0; i < decode_steps; ++i) logits = *model->forward(at::tensor({prompt[static_cast<size_t>(decode_after + i)]}), cache);
      sync(logits);
      best = std::min(best, since(t));
    }
    const double per_token = 2.0 * static_cast<double>(c.matmul_params()) +
                             4.0 * static_cast<double>(c.n_layer * c.n_head * c.head_dim) * (decode_after + decode_steps / 2.0);
    rows.push_back({"decode", decode_steps, best, per_token * decode_steps});
  }
  const double roof = (roof_before + roofline()) / 2.0;

  std::printf("\n%-10s %8s %10s %10s %10s %12s\n", "phase", "tokens", "seconds", "tok/s", "GFLOP/s", "of roofline");
  for (const Row& r : rows) {
    const double gflops = r.flops / r.seconds / 1e9;
    std::printf("%-10s %8lld %10.3f %10.1f %10.1f %11.0f%%\n", r.phase.c_str(), static_cast<long long>(r.tokens),
                r.seconds, static_cast<double>(r.tokens) / r.seconds, gflops, 100.0 * gflops / roof);
  }
  std::printf("%-10s %8s %10s %10s %10.1f %12s\n", "roofline", "", "", "", roof, "at::matmul");

  if (!plot.empty()) {
    // Prefill tokens/s and the share of the roofline against prompt length.
    kvframe::plot::PlotSeries speed{"prefill tokens/s", {}, {}, false, "linespoints lw 2 pt 7"};
    kvframe::plot::PlotSeries share{"% of roofline", {}, {}, true, "linespoints lw 2 pt 5 dt 2"};
    for (const Row& r : rows) {
      if (r.phase != "prefill") continue;
      speed.x.push_back(static_cast<double>(r.tokens));
      speed.y.push_back(static_cast<double>(r.tokens) / r.seconds);
      share.x.push_back(static_cast<double>(r.tokens));
      share.y.push_back(100.0 * r.flops / r.seconds / 1e9 / roof);
    }
    kvframe::plot::PlotOptions options;
    options.title = c.name + " · " + model_options.device + " " + at::toString(model->dtype()) + " · roofline " +
                    std::to_string(static_cast<int>(roof)) + " GFLOP/s";
    options.x = {"prompt tokens", 2, "*:*"};
    options.y = {"prefill tokens/s", 0, "0:*"};
    options.y2 = {"% of at::matmul roofline", 0, "0:100"};
    if (kvframe::plot::write_plot(plot, options, {speed, share})) {
      std::fprintf(stderr, "[bench] plot: %s\n", plot.c_str());
    } else {
      std::fprintf(stderr, "[bench] no plot: gnuplot is missing or failed (scripts/setup.sh installs gnuplot-nox)\n");
    }
  }
  return kvframe::kExitOk;
}
