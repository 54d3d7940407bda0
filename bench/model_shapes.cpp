#include "model_shapes.h"

#include <algorithm>

namespace kvframe::bench {

std::vector<std::string> model_shape_names() { return {"llama3-8b", "llama3.2-1b", "smollm2-135m", "smollm2-360m"}; }

runtime::ModelConfig model_shape(const std::string& name) {
  runtime::ModelConfig c;
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
  } else if (name == "smollm2-135m") {  // the default model's shape
    c.n_layer = 30, c.n_embd = 576, c.n_head = 9, c.n_head_kv = 3, c.n_ff = 1536, c.n_vocab = 49152;
    c.rope.freq_base = 100000.0;
    c.tied_embeddings = true;
  } else if (name == "smollm2-360m") {
    c.n_layer = 32, c.n_embd = 960, c.n_head = 15, c.n_head_kv = 5, c.n_ff = 2560, c.n_vocab = 49152;
    c.rope.freq_base = 100000.0;
    c.tied_embeddings = true;
  }
  c.head_dim = c.n_embd / std::max<int64_t>(c.n_head, 1);
  c.rope.head_dim = c.head_dim;
  return c;
}

Result<std::unique_ptr<runtime::Model>> random_weight_model(const std::string& name, const std::string& device,
                                                            const std::string& dtype) {
  runtime::ModelParams params;
  params.device = device;
  params.dtype = dtype;
  return runtime::Model::with_random_weights(model_shape(name), params);
}

}  // namespace kvframe::bench
