// LoRA adapters in memory: creation, the fused form the forward pass applies,
// fingerprints. Files are lora_file.cpp.
#include <ATen/core/grad_mode.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "lora_impl.h"
#include "weights.h"

namespace kvframe::runtime {

const char* lora_scope_name(LoraScope scope) { return scope == LoraScope::kAll ? "all" : "query"; }

Result<LoraScope> parse_lora_scope(std::string_view name) {
  if (name == "all") return LoraScope::kAll;
  if (name == "query") return LoraScope::kQuery;
  return Error{ErrorCode::kInvalidArgument, "unknown LoRA scope '" + std::string(name) + "': use all or query"};
}

const std::string& lora_target_name(int target) {
  static const std::array<std::string, kLoraTargets> names = {
      "attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
  return names[static_cast<size_t>(target)];
}

bool has_lora_target(const ModelConfig& c, int target) {
  switch (target) {
    case kAttnQ:
    case kAttnK:
    case kAttnV:
    case kFfnGate: return !c.fused_in_file;
    case kAttnQkv: return c.fused_in_file;
    default: return true;
  }
}

std::vector<std::string> lora_target_names(const ModelConfig& config) {
  std::vector<std::string> names;
  for (int t = 0; t < kLoraTargets; ++t) {
    if (has_lora_target(config, t)) names.push_back(lora_target_name(t));
  }
  return names;
}

std::array<int64_t, 2> lora_target_shape(const ModelConfig& c, int target) {
  const int64_t q = c.n_head * c.head_dim, kv = c.n_head_kv * c.head_dim;
  switch (target) {
    case kAttnQ: return {q, c.n_embd};
    case kAttnK:
    case kAttnV: return {kv, c.n_embd};
    case kAttnQkv: return {q + 2 * kv, c.n_embd};
    case kAttnOutput: return {c.n_embd, q};
    case kFfnGate: return {c.n_ff, c.n_embd};
    case kFfnUp: return {c.fused_in_file ? 2 * c.n_ff : c.n_ff, c.n_embd};
    default: return {c.n_embd, c.n_ff};
  }
}

void LoraAdapter::Impl::set_shape(const ModelConfig& config) {
  arch = config.arch;
  n_layer = config.n_layer;
  n_head = config.n_head;
  n_head_kv = config.n_head_kv;
  head_dim = config.head_dim;
  fused_in_file = config.fused_in_file;
  if (fused_in_file) qkv_order = partial_rotary_order(config);
  for (int t = 0; t < kLoraTargets; ++t) shapes[static_cast<size_t>(t)] = lora_target_shape(config, t);
}

void LoraAdapter::Impl::index() {
  parameters.clear();
  names.clear();
  for (size_t l = 0; l < layers.size(); ++l) {
    for (int t = 0; t < kLoraTargets; ++t) {
      const Pair& p = layers[l][static_cast<size_t>(t)];
      if (!p.a.defined()) continue;
      const std::string base = "blk." + std::to_string(l) + "." + lora_target_name(t) + ".weight";
      parameters.push_back(p.a);
      names.push_back(base + ".lora_a");
      parameters.push_back(p.b);
      names.push_back(base + ".lora_b");
    }
  }
}

namespace {

// One fused projection over parts [first, first + count) of a layer's targets.
FusedLora fuse_parts(const std::array<LoraAdapter::Impl::Pair, kLoraTargets>& pairs, int first, int count,
                     const std::vector<int64_t>& out_sizes, double alpha, at::ScalarType dtype,
                     const at::TensorOptions& fp32) {
  std::vector<at::Tensor> as;
  int64_t rank_total = 0;
  for (int t = first; t < first + count; ++t) {
    if (pairs[static_cast<size_t>(t)].a.defined()) rank_total += pairs[static_cast<size_t>(t)].a.size(0);
  }
  if (rank_total == 0) return {};
  std::vector<at::Tensor> rows;  // each part's rows of the block-diagonal B
  int64_t rank_before = 0;
  for (int t = first; t < first + count; ++t) {
    const auto& p = pairs[static_cast<size_t>(t)];
    const int64_t out = out_sizes[static_cast<size_t>(t - first)];
    if (!p.a.defined()) {
      rows.push_back(at::zeros({out, rank_total}, fp32));
      continue;
    }
    const int64_t rank = p.a.size(0);
    as.push_back(p.a);
    // llama.cpp's scaling: alpha / rank of this pair, or 1 when the file
    // gives no alpha.
    at::Tensor b = p.b * (alpha > 0 ? alpha / static_cast<double>(rank) : 1.0);
    rows.push_back(at::cat({at::zeros({out, rank_before}, fp32), b, at::zeros({out, rank_total - rank_before - rank}, fp32)}, 1));
    rank_before += rank;
  }
  return {at::cat(as).to(dtype), at::cat(rows).to(dtype)};
}

}  // namespace

std::vector<LayerLora> LoraAdapter::Impl::fuse(at::ScalarType dtype) const {
  std::vector<LayerLora> out;
  if (parameters.empty()) return out;
  const auto fp32 = at::TensorOptions(at::kFloat).device(parameters.front().device());
  auto out_of = [&](int t) { return shapes[static_cast<size_t>(t)][0]; };
  for (const auto& pairs : layers) {
    LayerLora l;
    // A model whose file fuses Q|K|V and gate|up has one pair for each.
    l.qkv = fused_in_file ? fuse_parts(pairs, kAttnQkv, 1, {out_of(kAttnQkv)}, params.alpha, dtype, fp32)
                          : fuse_parts(pairs, kAttnQ, 3, {out_of(kAttnQ), out_of(kAttnK), out_of(kAttnV)},
                                       params.alpha, dtype, fp32);
    l.o = fuse_parts(pairs, kAttnOutput, 1, {out_of(kAttnOutput)}, params.alpha, dtype, fp32);
    l.gate_up = fused_in_file ? fuse_parts(pairs, kFfnUp, 1, {out_of(kFfnUp)}, params.alpha, dtype, fp32)
                              : fuse_parts(pairs, kFfnGate, 2, {out_of(kFfnGate), out_of(kFfnUp)}, params.alpha,
                                           dtype, fp32);
    l.down = fuse_parts(pairs, kFfnDown, 1, {out_of(kFfnDown)}, params.alpha, dtype, fp32);
    out.push_back(std::move(l));
  }
  return out;
}

int64_t LoraAdapter::Impl::version() const {
  int64_t v = 0;
  for (const at::Tensor& p : parameters) v += static_cast<int64_t>(p._version());
  return v;
}

const std::vector<LayerLora>& LoraAdapter::Impl::fused(at::ScalarType dtype) const {
  const int64_t v = version();
  auto cached = std::find_if(cache_.begin(), cache_.end(), [&](const Cached& c) { return c.dtype == dtype; });
  if (cached == cache_.end()) cached = cache_.insert(cache_.end(), Cached{dtype, -1, {}});
  if (cached->version != v || cached->layers.size() != layers.size()) {
    at::NoGradGuard no_grad;
    cached->layers = fuse(dtype);
    cached->version = v;
  }
  return cached->layers;
}

LoraAdapter::LoraAdapter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoraAdapter::~LoraAdapter() = default;

Result<std::shared_ptr<LoraAdapter>> LoraAdapter::create(const ModelConfig& config, const LoraParams& params,
                                                         at::Device device, uint64_t seed) {
  if (params.rank < 1) return Error{ErrorCode::kInvalidArgument, "LoRA rank must be at least 1"};
  if (!(params.alpha > 0) || !std::isfinite(params.alpha)) {
    return Error{ErrorCode::kInvalidArgument, "LoRA alpha must be a positive number"};
  }
  const std::vector<std::string> model_targets = lora_target_names(config);
  std::string known;
  for (const std::string& n : model_targets) known += (known.empty() ? "" : ", ") + n;
  const std::vector<std::string> targets = params.targets.empty() ? model_targets : params.targets;
  std::array<bool, kLoraTargets> adapted{};
  for (const std::string& target : targets) {
    int found = 0;
    while (found < kLoraTargets && lora_target_name(found) != target) ++found;
    if (found == kLoraTargets) {
      return Error{ErrorCode::kInvalidArgument, "unknown LoRA target '" + target + "': use " + known};
    }
    if (!has_lora_target(config, found)) {
      return Error{ErrorCode::kInvalidArgument,
                   "LoRA target '" + target + "' is not a projection of this '" + config.arch + "' model" +
                       (config.fused_in_file ? " (its file fuses Q|K|V as attn_qkv and gate|up as ffn_up)" : "") +
                       ": use " + known};
    }
    adapted[static_cast<size_t>(found)] = true;
  }
  auto impl = std::make_unique<Impl>();
  impl->params = params;
  impl->params.targets = targets;
  impl->base_name = config.name;
  impl->set_shape(config);
  at::NoGradGuard no_grad;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (int64_t l = 0; l < config.n_layer; ++l) {
    std::array<Impl::Pair, kLoraTargets> pairs;
    for (int t = 0; t < kLoraTargets; ++t) {
      if (!adapted[static_cast<size_t>(t)]) continue;
      const auto [out, in] = lora_target_shape(config, t);
      // PEFT's initialisation: A kaiming-uniform (bound 1/sqrt(in)), B zero,
      // so a fresh adapter changes nothing.
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      at::Tensor a = at::empty({params.rank, in}, at::kFloat).uniform_(-bound, bound, gen);
      pairs[static_cast<size_t>(t)] = {a.to(device), at::zeros({out, params.rank}, at::TensorOptions(at::kFloat).device(device))};
    }
    impl->layers.push_back(std::move(pairs));
  }
  impl->index();
  return std::shared_ptr<LoraAdapter>(new LoraAdapter(std::move(impl)));
}

const LoraParams& LoraAdapter::params() const { return impl_->params; }
const std::string& LoraAdapter::base_name() const { return impl_->base_name; }
void LoraAdapter::set_base_name(std::string name) { impl_->base_name = std::move(name); }
const std::vector<at::Tensor>& LoraAdapter::parameters() const { return impl_->parameters; }
const std::vector<std::string>& LoraAdapter::parameter_names() const { return impl_->names; }

int64_t LoraAdapter::n_parameters() const {
  int64_t n = 0;
  for (const at::Tensor& p : impl_->parameters) n += p.numel();
  return n;
}

uint64_t LoraAdapter::fingerprint() const {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  const std::string head = std::string(lora_scope_name(impl_->params.scope)) + "|" + std::to_string(impl_->params.alpha);
  XXH3_64bits_update(state, head.data(), head.size());
  for (size_t i = 0; i < impl_->parameters.size(); ++i) {
    XXH3_64bits_update(state, impl_->names[i].data(), impl_->names[i].size());
    const at::Tensor values = impl_->parameters[i].detach().to(at::kCPU, at::kFloat).contiguous();
    XXH3_64bits_update(state, values.data_ptr<float>(), static_cast<size_t>(values.numel()) * sizeof(float));
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

}  // namespace kvframe::runtime
