#include "engine_setup.h"

#include <algorithm>
#include <cstdio>

#include "kvframe/cli_model/model_params.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/runtime/cpu_process.h"
#include "model_shapes.h"

namespace kvframe::bench {

namespace rt = runtime;

void add_engine_options(CLI::App& app, EngineOptions& o) {
  cli::ModelOptionsSpec which;
  which.model_note = "with --shape: its tokenizer and chat template only";
  cli::add_model_options(app, o, which);
  app.add_option("--shape", o.shape, "instead of --model's weights: random weights of this shape")
      ->check(CLI::IsMember(model_shape_names()));
  app.add_flag("!--no-cuda-graphs", o.cuda_graphs, "decode on CUDA eagerly, not from captured CUDA graphs");
}

Result<std::unique_ptr<rt::Engine>> load_engine(const EngineOptions& o, const char* program,
                                                int64_t min_context) {
  auto failed = [&](const Error& error, const char* next) {
    std::fprintf(stderr, "%s: %s\n  next: %s\n", program, error.to_string().c_str(), next);
    return error;
  };
  auto file = rt::GgufFile::open(o.model);
  if (!file) return failed(file.error(), "run scripts/fetch-model.sh, or give --model");
  auto tokenizer = rt::Tokenizer::from_gguf(*file);
  if (!tokenizer) return failed(tokenizer.error(), "use a model with a supported tokenizer");
  std::optional<rt::ChatTemplate> chat;
  if (auto found = rt::ChatTemplate::from_gguf(*file)) chat = *found;
  std::fprintf(stderr, "[bench] loading %s\n", o.shape.empty() ? o.model.c_str() : o.shape.c_str());
  rt::ModelParams params = cli::model_params(o, o.game);
  params.cuda_graphs = o.cuda_graphs;
  if (!o.shape.empty()) params.lora.clear();  // random weights take none
  rt::ModelConfig shape;
  if (!o.shape.empty()) {
    shape = model_shape(o.shape);
    shape.n_vocab = tokenizer->n_vocab();  // the tokenizer's ids must all be rows of the embedding
    shape.n_ctx_train = std::max(shape.n_ctx_train, min_context);
  }
  auto model = o.shape.empty() ? rt::Model::load(*file, params) : rt::Model::with_random_weights(shape, params);
  if (!model) return failed(model.error(), "check --device, --dtype and --lora");
  auto engine = rt::Engine::create(std::move(model).value(), std::move(tokenizer).value(), chat);
  if (!engine) return failed(engine.error(), "check --model");
  const rt::ModelConfig& config = (*engine)->model().config();
  std::fprintf(stderr, "[bench] %s: %lld layers, dim %lld; %s %s%s; LoRA %s; %s\n", config.name.c_str(),
               static_cast<long long>(config.n_layer), static_cast<long long>(config.n_embd), o.device.c_str(),
               at::toString((*engine)->model().dtype()),
               o.device == "cpu" ? "" : (o.cuda_graphs ? ", CUDA graphs" : ", no CUDA graphs"),
               params.lora.empty() ? "none" : params.lora.c_str(), rt::cpu_backend_description().c_str());
  return engine;
}

std::optional<int64_t> blocked_tokens(const rt::Tokenizer& tokenizer, const json_blocker::Rules& rules,
                                      const std::string& json) {
  auto partition = json_blocker::partition(json, rules);
  if (!partition) return std::nullopt;
  int64_t n = 0;
  for (const json_blocker::Block& block : partition->blocks()) {
    n += static_cast<int64_t>(tokenizer.encode(std::string(block.text) + "\n").size());
  }
  return n;
}

}  // namespace kvframe::bench
