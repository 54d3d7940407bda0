// LoRA adapter files: GGUF in llama.cpp's adapter layout (see lora.h).
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "kvframe/runtime_gguf/gguf_writer.h"
#include "lora_impl.h"
#include "weights.h"

namespace kvframe::runtime {
namespace {

constexpr const char* kScopeKey = "kvframe.lora.scope";
constexpr const char* kBaseKey = "kvframe.lora.base";

Error not_adapter(const GgufFile& file, const std::string& why) {
  return {ErrorCode::kInvalidArgument, file.path() + " is not a LoRA adapter kvframe can use: " + why};
}

// B's rows between the file's order and the loop's, which weights.cpp gives
// the base weights alike: a 'llama' file's Q and K rows are interleaved, a
// phi3 file's attn_qkv rows in its partial rotary's order.
at::Tensor rows_of_loop(const LoraAdapter::Impl& m, int target, const at::Tensor& b, bool from_file) {
  if (m.arch == "llama" && (target == kAttnQ || target == kAttnK)) {
    const int64_t heads = target == kAttnQ ? m.n_head : m.n_head_kv;
    return from_file ? unpermute_rope_rows(b, heads, m.head_dim) : permute_rope_rows(b, heads, m.head_dim);
  }
  if (target == kAttnQkv && !m.qkv_order.empty()) {
    const at::Tensor order = at::tensor(m.qkv_order, at::kLong).to(b.device());
    return b.index_select(0, from_file ? order : at::argsort(order));
  }
  return b;
}

// "blk.<layer>.<target>.weight.lora_<a|b>" -> (layer, target, is_b); nullopt otherwise.
std::optional<std::tuple<int64_t, int, bool>> parse_name(const std::string& name) {
  constexpr std::string_view blk = "blk.";
  if (name.rfind(blk, 0) != 0) return std::nullopt;
  size_t dot = name.find('.', blk.size());
  if (dot == std::string::npos || dot == blk.size() || dot - blk.size() > 6) return std::nullopt;
  int64_t layer = 0;
  for (size_t i = blk.size(); i < dot; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    layer = layer * 10 + (name[i] - '0');
  }
  const std::string rest = name.substr(dot + 1);
  for (int t = 0; t < kLoraTargets; ++t) {
    const std::string stem = lora_target_name(t) + ".weight.lora_";
    if (rest == stem + "a") return std::tuple{layer, t, false};
    if (rest == stem + "b") return std::tuple{layer, t, true};
  }
  return std::nullopt;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<at::Tensor> read_tensor(const GgufTensorInfo& info) {
  if (info.type != GgmlType::kF32 && info.type != GgmlType::kF16 && info.type != GgmlType::kBF16 &&
      info.type != GgmlType::kQ8_0) {
    return Error{ErrorCode::kUnsupportedType, "adapter tensor '" + info.name + "' is " + ggml_type_name(info.type) +
                                                  "; kvframe reads adapters in F32, F16, BF16 or Q8_0"};
  }
  // torch order: outermost first, the reverse of GGUF's dims.
  at::Tensor out = at::empty({info.dims[1], info.dims[0]}, at::kFloat);
  if (auto status = dequantize_tensor(info, out.data_ptr<float>()); !status.ok()) return status.error();
  if (!at::isfinite(out).all().item<bool>()) {
    return Error{ErrorCode::kCorrupt, "adapter tensor '" + info.name + "' holds NaN or infinite values"};
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<LoraAdapter>> LoraAdapter::load(const std::string& path, const ModelConfig& config,
                                                       at::Device device) {
  auto file = GgufFile::open(path);
  if (!file) return file.error();
  return parse(*file, config, device);
}

Result<std::shared_ptr<LoraAdapter>> LoraAdapter::parse(const GgufFile& file, const ModelConfig& config,
                                                        at::Device device) {
  auto type = file.get_string("general.type");
  if (!type || *type != "adapter") return not_adapter(file, "general.type is not 'adapter'");
  auto adapter_type = file.get_string("adapter.type");
  if (!adapter_type || *adapter_type != "lora") return not_adapter(file, "adapter.type is not 'lora'");
  auto arch = file.get_string("general.architecture");
  if (!arch) return arch.error();
  if (*arch != config.arch) {
    return not_adapter(file, "it adapts a '" + *arch + "' model, and this model is '" + config.arch + "'");
  }
  auto impl = std::make_unique<Impl>();
  impl->set_shape(config);
  impl->params.targets.clear();
  // llama.cpp: no alpha (or 0) scales the update by 1 (alpha = rank, pair by pair).
  auto alpha = file.get_float("adapter.lora.alpha");
  impl->params.alpha = alpha ? *alpha : 0;
  impl->params.scope = LoraScope::kAll;  // what llama.cpp does with any adapter
  if (file.find(kScopeKey)) {
    auto scope_name = file.get_string(kScopeKey);
    if (!scope_name) return scope_name.error();
    auto scope = parse_lora_scope(*scope_name);
    if (!scope) return not_adapter(file, scope.error().message);
    impl->params.scope = *scope;
  }
  if (auto base = file.get_string(kBaseKey)) impl->base_name = *base;

  at::NoGradGuard no_grad;
  impl->layers.resize(static_cast<size_t>(config.n_layer));
  std::string known;
  for (const std::string& n : lora_target_names(config)) known += (known.empty() ? "" : "|") + n;
  std::array<bool, kLoraTargets> adapted{};
  for (const GgufTensorInfo& info : file.tensors()) {
    const auto parsed = parse_name(info.name);
    if (!parsed || !has_lora_target(config, std::get<1>(*parsed))) {
      return not_adapter(file, "tensor '" + info.name + "' is not blk.N.<" + known +
                                   ">.weight.lora_a|lora_b (the projections of this '" + config.arch +
                                   "' model kvframe adapts)");
    }
    const auto [layer, target, is_b] = *parsed;
    if (layer >= config.n_layer) {
      return Error{ErrorCode::kShapeMismatch, "adapter tensor '" + info.name + "' is for layer " +
                                                  std::to_string(layer) + "; the model has " +
                                                  std::to_string(config.n_layer)};
    }
    const auto [out, in] = lora_target_shape(config, target);
    // ggml dims: A [in, rank], B [rank, out].
    const bool fits = info.dims.size() == 2 && info.dims[is_b ? 1 : 0] == (is_b ? out : in) && info.dims[is_b ? 0 : 1] >= 1;
    if (!fits) {
      return Error{ErrorCode::kShapeMismatch, "adapter tensor '" + info.name + "' has ggml shape " +
                                                  dims_text(info.dims) + "; this model needs " +
                                                  (is_b ? "[rank, " + std::to_string(out) + "]"
                                                        : "[" + std::to_string(in) + ", rank]") +
                                                  " — was the adapter trained for another model?"};
    }
    auto values = read_tensor(info);
    if (!values) return values.error();
    Impl::Pair& pair = impl->layers[static_cast<size_t>(layer)][static_cast<size_t>(target)];
    at::Tensor& slot = is_b ? pair.b : pair.a;
    if (slot.defined()) return not_adapter(file, "tensor '" + info.name + "' appears twice");
    slot = (is_b ? rows_of_loop(*impl, target, *values, /*from_file=*/true) : *values).to(device);
    adapted[static_cast<size_t>(target)] = true;
  }
  int64_t rank = 0;
  for (size_t l = 0; l < impl->layers.size(); ++l) {
    for (int t = 0; t < kLoraTargets; ++t) {
      const Impl::Pair& p = impl->layers[l][static_cast<size_t>(t)];
      if (p.a.defined() != p.b.defined()) {
        return not_adapter(file, "layer " + std::to_string(l) + " " + lora_target_name(t) +
                                     " has lora_" + (p.a.defined() ? "a" : "b") + " without lora_" +
                                     (p.a.defined() ? "b" : "a"));
      }
      if (!p.a.defined()) continue;
      if (p.a.size(0) != p.b.size(1)) {
        return Error{ErrorCode::kShapeMismatch, "layer " + std::to_string(l) + " " +
                                                    lora_target_name(t) + ": lora_a has rank " +
                                                    std::to_string(p.a.size(0)) + ", lora_b " + std::to_string(p.b.size(1))};
      }
      rank = std::max(rank, p.a.size(0));
    }
  }
  if (rank == 0) return not_adapter(file, "it holds no LoRA tensors");
  impl->params.rank = rank;
  for (int t = 0; t < kLoraTargets; ++t) {
    if (adapted[static_cast<size_t>(t)]) impl->params.targets.push_back(lora_target_name(t));
  }
  impl->index();
  return std::shared_ptr<LoraAdapter>(new LoraAdapter(std::move(impl)));
}

namespace {

GgufWriter adapter_file(const LoraAdapter::Impl& m, GgmlType type) {
  GgufWriter w;
  w.add_string("general.architecture", m.arch);
  w.add_string("general.type", "adapter");
  w.add_string("general.name", "kvframe LoRA (" + std::string(lora_scope_name(m.params.scope)) + " tokens)");
  w.add_string("adapter.type", "lora");
  w.add_f32("adapter.lora.alpha", static_cast<float>(m.params.alpha));
  w.add_string(kScopeKey, lora_scope_name(m.params.scope));
  w.add_string(kBaseKey, m.base_name);
  const at::ScalarType as = type == GgmlType::kF16 ? at::kHalf : type == GgmlType::kBF16 ? at::kBFloat16 : at::kFloat;
  at::NoGradGuard no_grad;
  for (size_t l = 0; l < m.layers.size(); ++l) {
    for (int t = 0; t < kLoraTargets; ++t) {
      const LoraAdapter::Impl::Pair& p = m.layers[l][static_cast<size_t>(t)];
      if (!p.a.defined()) continue;
      const at::Tensor b = rows_of_loop(m, t, p.b.detach().to(at::kCPU), /*from_file=*/false);
      const std::string base = "blk." + std::to_string(l) + "." + lora_target_name(t) + ".weight";
      for (const auto& [suffix, tensor] : {std::pair{".lora_a", p.a.detach().to(at::kCPU)}, std::pair{".lora_b", b}}) {
        const at::Tensor data = tensor.to(as).contiguous();
        std::vector<uint8_t> raw(static_cast<size_t>(data.nbytes()));
        std::memcpy(raw.data(), data.data_ptr(), raw.size());
        w.add_tensor(base + suffix, {tensor.size(1), tensor.size(0)}, type, std::move(raw));  // ggml order
      }
    }
  }
  return w;
}

bool savable(GgmlType type) { return type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16; }

}  // namespace

std::vector<uint8_t> LoraAdapter::bytes(GgmlType type) const {
  return adapter_file(*impl_, savable(type) ? type : GgmlType::kF32).bytes();
}

Status LoraAdapter::save(const std::string& path, GgmlType type) const {
  if (!savable(type)) return Error{ErrorCode::kInvalidArgument, "adapters are saved as F32, F16 or BF16"};
  return adapter_file(*impl_, type).write(path);
}

}  // namespace kvframe::runtime
