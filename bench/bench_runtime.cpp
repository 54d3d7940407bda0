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

#include "kvframe/runtime/cpu_process.h"
#include "kvframe/runtime/default_model.h"
#include "kvframe/runtime/model.h"
#include "kvframe/runtime/tokenizer.h"
#include "moba/moba_stream.h"

namespace {

namespace rt = kvframe::runtime;
using Clock = std::chrono::steady_clock;

// Published shapes (config.json of each model) for random-weight runs.
rt::ModelConfig shape(const std::string& name) {
  rt::ModelConfig c;
  c.arch = "llama";
  c.name = name + " (random weights)";
  c.n_ctx_train = 8192;
  c.rms_eps = 1e-5;
  if (name == "llama3-8b") {
    c.n_layer = 32, c.n_embd = 4096, c.n_head = 32, c.n_head_kv = 8, c.n_ff = 14336, c.n_vocab = 128256;
    c.rope.freq_base = 500000.0;
  } else if (name == "llama3.2-1b") {
    c.n_layer = 16, c.n_embd = 2048, c.n_head = 32, c.n_head_kv = 8, c.n_ff = 8192, c.n_vocab = 128256;
    c.rope.freq_base = 500000.0;
    c.tied_embeddings = true;
  }
  c.head_dim = c.n_embd / std::max<int64_t>(c.n_head, 1);
  c.rope.head_dim = c.head_dim;
  return c;
}

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

// Draws prefill tokens/s and the share of the roofline against prompt length
// with gnuplot (scripts/setup.sh installs gnuplot-nox): plotting by hand is
// not this project's business. Returns false when gnuplot is missing or fails.
bool write_plot(const std::string& path, const std::string& title, const std::vector<int64_t>& tokens,
                const std::vector<double>& tokens_per_second, const std::vector<double>& of_roofline) {
  std::FILE* gnuplot = popen("gnuplot 2>/dev/null", "w");
  if (!gnuplot) return false;
  std::fprintf(gnuplot, "$data << EOD\n");
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::fprintf(gnuplot, "%lld %.1f %.1f\n", static_cast<long long>(tokens[i]), tokens_per_second[i], of_roofline[i]);
  }
  std::fprintf(gnuplot,
               "EOD\n"
               "set terminal pngcairo size 900,540 font ',11'\n"
               "set output '%s'\n"
               "set title '%s' noenhanced\n"
               "set logscale x 2\n"
               "set xlabel 'prompt tokens'\n"
               "set ylabel 'prefill tokens/s'\n"
               "set y2label '%% of at::matmul roofline'\n"
               "set yrange [0:*]\n"
               "set y2range [0:100]\n"
               "set ytics nomirror\n"
               "set y2tics\n"
               "set grid\n"
               "set key top right\n"
               "plot $data using 1:2 with linespoints lw 2 pt 7 title 'prefill tokens/s', "
               "$data using 1:3 axes x1y2 with linespoints lw 2 pt 5 dt 2 title '%% of roofline'\n",
               path.c_str(), title.c_str());
  return pclose(gnuplot) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path = rt::default_model_path(), shape_name, device = "cpu", dtype;
  std::vector<int64_t> lengths = {512, 2048, 8192};
  std::string plot = "bench_runtime.png";
  int decode_steps = 64, threads = 0, reps = 2;
  CLI::App app{"Prefill and decode tokens/s of a model beside an at::matmul roofline from the same run."};
  app.add_option("--model", model_path, "GGUF model")->capture_default_str();
  app.add_option("--shape", shape_name, "instead of --model: random weights of this shape")
      ->check(CLI::IsMember({"llama3-8b", "llama3.2-1b"}));
  app.add_option("--device", device, "cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--dtype", dtype, "fp32, bf16 or fp16 (default: fp32 on cpu, bf16 on cuda)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--lengths", lengths, "prompt lengths to prefill (comma-separated)")->delimiter(',')->capture_default_str();
  app.add_option("--decode", decode_steps, "decode steps after a 512-token prompt")->capture_default_str();
  app.add_option("--reps", reps, "repetitions per measurement (best is kept)")->capture_default_str();
  app.add_option("--threads", threads, "CPU threads (default: all cores)");
  app.add_option("--plot", plot, "write a PNG plot of prefill speed here (empty: none)")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // --help is success; CLI11's own codes are not ours
  }
  rt::tune_cpu_process(argv, threads);

  rt::ModelParams params;
  params.device = device;
  params.dtype = dtype;
  std::unique_ptr<rt::Model> model;
  std::vector<int64_t> prompt;
  const int64_t longest = std::max<int64_t>(*std::max_element(lengths.begin(), lengths.end()), 512);
  if (!shape_name.empty()) {
    auto made = rt::Model::with_random_weights(shape(shape_name), params);
    if (!made) {
      std::fprintf(stderr, "bench_runtime: %s\n", made.error().to_string().c_str());
      return 2;
    }
    model = std::move(made).value();
    const at::Tensor ids = at::randint(model->config().n_vocab, {longest}, at::kLong);  // seeded by with_random_weights
    prompt.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + longest);
  } else {
    auto file = rt::GgufFile::open(model_path);
    if (!file) {
      std::fprintf(stderr, "bench_runtime: %s\n  next: run scripts/fetch-model.sh\n", file.error().to_string().c_str());
      return 2;
    }
    auto tokenizer = rt::Tokenizer::from_gguf(*file);
    auto loaded = rt::Model::load(*file, params);
    if (!tokenizer || !loaded) {
      std::fprintf(stderr, "bench_runtime: %s\n", (!tokenizer ? tokenizer.error() : loaded.error()).to_string().c_str());
      return 2;
    }
    model = std::move(loaded).value();
    prompt = gamecore_tokens(*tokenizer, longest);
  }
  const rt::ModelConfig& c = model->config();
  std::fprintf(stderr, "[bench] %s: %lld layers, dim %lld; %s %s; %s\n", c.name.c_str(),
               static_cast<long long>(c.n_layer), static_cast<long long>(c.n_embd), device.c_str(),
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
    std::fprintf(stderr, "[bench] decode %d steps after 512 tokens\n", decode_steps);
    rt::KvCache cache = *model->new_cache(512 + decode_steps);
    sync(*model->forward(at::tensor(std::vector<int64_t>(prompt.begin(), prompt.begin() + 512)), cache));
    auto t = Clock::now();
    at::Tensor logits;
    for (int i = 0; i < decode_steps; ++i) logits = *model->forward(at::tensor({prompt[static_cast<size_t>(i)]}), cache);
    sync(logits);
    const double per_token = 2.0 * static_cast<double>(c.matmul_params()) +
                             4.0 * static_cast<double>(c.n_layer * c.n_head * c.head_dim) * (512 + decode_steps / 2.0);
    rows.push_back({"decode", decode_steps, since(t), per_token * decode_steps});
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
    std::vector<int64_t> tokens;
    std::vector<double> tokens_per_second, of_roofline;
    for (const Row& r : rows) {
      if (r.phase != "prefill") continue;
      tokens.push_back(r.tokens);
      tokens_per_second.push_back(static_cast<double>(r.tokens) / r.seconds);
      of_roofline.push_back(100.0 * r.flops / r.seconds / 1e9 / roof);
    }
    const std::string title = c.name + " · " + device + " " + at::toString(model->dtype()) + " · roofline " +
                              std::to_string(static_cast<int>(roof)) + " GFLOP/s";
    if (write_plot(plot, title, tokens, tokens_per_second, of_roofline)) {
      std::fprintf(stderr, "[bench] plot: %s\n", plot.c_str());
    } else {
      std::fprintf(stderr, "[bench] no plot: gnuplot is missing or failed (scripts/setup.sh installs gnuplot-nox)\n");
    }
  }
  return 0;
}
