#include "checkpoint.h"

#include <ATen/core/grad_mode.h>

#include <cstring>
#include <sstream>
#include <type_traits>

#include "kvframe/runtime_gguf/gguf_writer.h"

namespace kvframe::finetune {
namespace {

namespace rt = runtime;

constexpr const char* kStep = "kvframe.checkpoint.step";
constexpr const char* kEpoch = "kvframe.checkpoint.epoch";
constexpr const char* kCursor = "kvframe.checkpoint.cursor";
constexpr const char* kAdamStep = "kvframe.checkpoint.adam_step";
constexpr const char* kData = "kvframe.checkpoint.data";
constexpr const char* kRun = "kvframe.checkpoint.run";

// What a resumed run must share with the first: the adapter's shape and what
// decides the samples and their order. (Rates and step counts may change.)
std::string run_identity(const TrainParams& p) {
  std::string targets;
  for (const std::string& t : p.lora.targets) targets += (targets.empty() ? "" : ",") + t;
  return "rank=" + std::to_string(p.lora.rank) + " alpha=" + std::to_string(p.lora.alpha) + " targets=" + targets +
         " scope=" + rt::lora_scope_name(p.lora.scope) + " batch=" + std::to_string(p.batch) +
         " seed=" + std::to_string(p.seed) + " causal_fraction=" + std::to_string(p.causal_fraction) +
         " consistency=" + std::to_string(p.consistency) +
         " blocks_after_prefix=" + std::to_string(p.blocks_after_prefix) +
         " max_context=" + std::to_string(p.max_context) + " general=" + std::to_string(p.general_texts.size()) + "x" +
         std::to_string(p.general_window) + "x" + std::to_string(p.general_per_step);
}

// torch::optim keys a parameter's state by its TensorImpl: as a string of the
// pointer up to libtorch 1.13, as the pointer itself in 2.x.
using AdamStateKey = std::decay_t<decltype(std::declval<torch::optim::AdamW&>().state())>::key_type;

template <typename Key>
Key state_key(c10::TensorImpl* impl) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;  // as 1.13's c10::guts::to_string(impl), gone in 2.x
    key << impl;
    return key.str();
  } else {
    return static_cast<Key>(impl);
  }
}

AdamStateKey adam_state_key(const at::Tensor& p) { return state_key<AdamStateKey>(p.unsafeGetTensorImpl()); }

std::vector<uint8_t> f32_bytes(const at::Tensor& t) {
  const at::Tensor data = t.detach().to(at::kCPU, at::kFloat).contiguous();
  std::vector<uint8_t> raw(static_cast<size_t>(data.nbytes()));
  std::memcpy(raw.data(), data.data_ptr(), raw.size());
  return raw;
}

std::vector<int64_t> ggml_dims(const at::Tensor& t) {
  std::vector<int64_t> dims(t.sizes().rbegin(), t.sizes().rend());
  return dims;
}

Result<int64_t> read_int(const rt::GgufFile& file, const char* key) {
  auto v = file.get_int(key);
  if (!v) return v.error();
  if (*v < 0) return Error{ErrorCode::kCorrupt, file.path() + ": " + key + " is negative"};
  return *v;
}

}  // namespace

Status write_checkpoint(const std::string& out_dir, const rt::LoraAdapter& adapter,
                        const torch::optim::AdamW& optimizer, const TrainParams& params, uint64_t data_hash,
                        const TrainerState& state) {
  rt::GgufWriter w;
  w.add_string("general.type", "kvframe-checkpoint");
  w.add_i64(kStep, state.step);
  w.add_i64(kEpoch, state.epoch);
  w.add_i64(kCursor, state.cursor);
  w.add_string(kData, std::to_string(data_hash));
  w.add_string(kRun, run_identity(params));
  int64_t adam_step = 0;
  const auto& names = adapter.parameter_names();
  for (size_t i = 0; i < adapter.parameters().size(); ++i) {
    const at::Tensor& p = adapter.parameters()[i];
    auto found = optimizer.state().find(adam_state_key(p));
    at::Tensor m = at::zeros_like(p), v = at::zeros_like(p);
    if (found != optimizer.state().end()) {
      const auto& s = static_cast<const torch::optim::AdamWParamState&>(*found->second);
      adam_step = s.step();
      m = s.exp_avg();
      v = s.exp_avg_sq();
    }
    w.add_tensor(names[i] + ".adam_m", ggml_dims(p), rt::GgmlType::kF32, f32_bytes(m));
    w.add_tensor(names[i] + ".adam_v", ggml_dims(p), rt::GgmlType::kF32, f32_bytes(v));
  }
  w.add_i64(kAdamStep, adam_step);
  // The adapter first: a state file never names an adapter that is not there.
  if (Status saved = adapter.save(checkpoint_adapter_path(out_dir), rt::GgmlType::kF32); !saved.ok()) return saved;
  return w.write(checkpoint_state_path(out_dir));
}

Result<CheckpointState> load_checkpoint(const std::string& out_dir, const rt::Model& model, const TrainParams& params,
                                        uint64_t data_hash) {
  auto file = rt::GgufFile::open(checkpoint_state_path(out_dir));
  if (!file) return file.error();
  auto type = file->get_string("general.type");
  if (!type || *type != "kvframe-checkpoint") {
    return Error{ErrorCode::kCorrupt, file->path() + " is not a kvframe training checkpoint"};
  }
  auto run = file->get_string(kRun);
  if (!run) return run.error();
  if (*run != run_identity(params)) {
    return Error{ErrorCode::kInvalidArgument, "the checkpoint in " + out_dir + " was made with '" + *run +
                                                  "'; this run has '" + run_identity(params) +
                                                  "' — use the same options, or another --out to start afresh"};
  }
  auto data = file->get_string(kData);
  if (!data) return data.error();
  if (*data != std::to_string(data_hash)) {
    return Error{ErrorCode::kInvalidArgument, "the checkpoint in " + out_dir +
                                                  " was made with other training data; use the same --train files, "
                                                  "or another --out to start afresh"};
  }
  CheckpointState out;
  for (auto [key, slot] : {std::pair{kStep, &out.state.step}, std::pair{kEpoch, &out.state.epoch},
                           std::pair{kCursor, &out.state.cursor}, std::pair{kAdamStep, &out.adam_step}}) {
    auto v = read_int(*file, key);
    if (!v) return v.error();
    *slot = *v;
  }
  auto adapter = rt::LoraAdapter::load(checkpoint_adapter_path(out_dir), model.config(), model.device());
  if (!adapter) return adapter.error();
  out.adapter = std::move(adapter).value();
  at::NoGradGuard no_grad;
  const auto& names = out.adapter->parameter_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const at::Tensor& p = out.adapter->parameters()[i];
    for (auto [suffix, into] : {std::pair{".adam_m", &out.exp_avg}, std::pair{".adam_v", &out.exp_avg_sq}}) {
      const rt::GgufTensorInfo* info = file->find_tensor(names[i] + suffix);
      if (!info || info->type != rt::GgmlType::kF32 || info->dims != ggml_dims(p)) {
        return Error{ErrorCode::kCorrupt, file->path() + ": the optimizer state of " + names[i] +
                                              " is missing or does not match the adapter; start afresh"};
      }
      at::Tensor t = at::empty(p.sizes(), at::kFloat);
      std::memcpy(t.data_ptr(), info->data, static_cast<size_t>(info->nbytes));
      into->push_back(t.to(p.device()));
    }
  }
  return out;
}

void restore_optimizer(torch::optim::AdamW& optimizer, const CheckpointState& checkpoint) {
  if (checkpoint.adam_step == 0) return;
  const auto& params = checkpoint.adapter->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(checkpoint.adam_step);
    state->exp_avg(checkpoint.exp_avg[i].clone());
    state->exp_avg_sq(checkpoint.exp_avg_sq[i].clone());
    optimizer.state()[adam_state_key(params[i])] = std::move(state);
  }
}

}  // namespace kvframe::finetune
