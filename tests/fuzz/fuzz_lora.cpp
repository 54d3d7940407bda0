// Fuzz entry point over LoRA adapter files (LoraAdapter::parse on top of the
// GGUF reader): an adapter is a file a studio may download from anyone. The
// input is the file's bytes, checked against a tiny 'phi3' model (fused
// Q|K|V and gate|up) when the file says phi3, else a tiny 'llama' one. An
// adapter that loads must be usable: finite parameters of the model's
// shapes, a forward pass with it gives finite logits, and writing it and
// reading it back gives the same adapter. One that does not load must say why.
#include <ATen/ATen.h>

#include <memory>

#include "fuzz_check.h"
#include "fuzz_entry.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "tiny_model.h"

namespace {

using namespace kvframe::runtime;
using kvframe::Result;

std::unique_ptr<Model> tiny_model(bool phi3) {
  kvframe::test::TinyModelSpec spec = phi3 ? kvframe::test::phi3_shape() : kvframe::test::TinyModelSpec{};
  spec.n_layer = 2;
  const std::vector<uint8_t> bytes = kvframe::test::tiny_model_bytes(spec);
  return std::move(Model::load(GgufFile::parse(bytes.data(), bytes.size()).value()).value());
}

const Model& tiny(bool phi3) {
  static const std::unique_ptr<Model> llama = tiny_model(false), phi = tiny_model(true);
  return phi3 ? *phi : *llama;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Result<GgufFile> file = GgufFile::parse(data, size);
  if (!file.ok()) return 0;  // the GGUF reader's own target covers this
  const auto arch = file->get_string("general.architecture");
  const bool phi3 = arch.ok() && *arch == "phi3";
  const Model& model = tiny(phi3);
  const auto adapter = LoraAdapter::parse(*file, model.config());
  if (!adapter.ok()) {
    FUZZ_CHECK(!adapter.error().message.empty(), "an error without a message");
    return 0;
  }
  const LoraAdapter& a = **adapter;
  FUZZ_CHECK(a.params().rank >= 1 && !a.parameters().empty(), "an adapter without tensors loaded");
  FUZZ_CHECK(a.parameters().size() == a.parameter_names().size(), "parameters and names disagree");
  for (const at::Tensor& p : a.parameters()) {
    FUZZ_CHECK(p.dim() == 2 && at::isfinite(p).all().item<bool>(), "a non-finite or non-matrix parameter loaded");
  }
  // Usable: a forward pass with it applied.
  std::unique_ptr<Model> copy = tiny_model(phi3);
  FUZZ_CHECK(copy->set_adapter(*adapter).ok(), "an adapter that loaded does not fit its model");
  KvCache cache = copy->new_cache(4).value();
  const auto logits = copy->forward(at::tensor({1, 2, 3}, at::kLong), cache);
  FUZZ_CHECK(logits.ok(), "a forward pass with a loaded adapter failed");
  // Round trip.
  const std::vector<uint8_t> bytes = a.bytes(GgmlType::kF32);
  const auto again = LoraAdapter::parse(GgufFile::parse(bytes.data(), bytes.size()).value(), model.config());
  FUZZ_CHECK(again.ok(), "an adapter's own file does not load");
  FUZZ_CHECK((*again)->fingerprint() == a.fingerprint(), "writing and reading an adapter changed it");
  return 0;
}
