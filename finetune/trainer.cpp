// Block fine-tuning's training loop (see trainer.h).
#include "kvframe/finetune/trainer.h"

#include <ATen/core/grad_mode.h>
#include <c10/util/Exception.h>
#include <torch/types.h>  // before clip_grad.h, which does not include it
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include "checkpoint.h"
#include "kvframe/common/named_values.h"
#include "kvframe/runtime_engine/sample_context.h"

namespace kvframe::finetune {

namespace rt = runtime;

constexpr NamedValue<Schedule> kScheduleNames[] = {
    {Schedule::kCosine, "cosine"}, {Schedule::kLinear, "linear"}, {Schedule::kConstant, "constant"}};

const char* schedule_name(Schedule schedule) { return name_of_value(kScheduleNames, schedule, "cosine"); }

Result<Schedule> parse_schedule(std::string_view name) {
  if (const std::optional<Schedule> schedule = value_of_name(kScheduleNames, name)) return *schedule;
  return Error{ErrorCode::kInvalidArgument, "unknown schedule '" + std::string(name) + "': use cosine, linear or constant"};
}

std::string checkpoint_adapter_path(const std::string& out_dir) { return out_dir + "/checkpoint.adapter.gguf"; }
std::string checkpoint_state_path(const std::string& out_dir) { return out_dir + "/checkpoint.state.gguf"; }

namespace {

// The learning rate of step `step` (0-based): linear warm-up, then the decay.
double learning_rate(const TrainParams& p, int64_t step) {
  if (step < p.warmup) return p.lr * static_cast<double>(step + 1) / static_cast<double>(p.warmup);
  const double span = static_cast<double>(std::max<int64_t>(1, p.steps - p.warmup));
  const double progress = std::min(1.0, static_cast<double>(step - p.warmup) / span);
  switch (p.schedule) {
    case Schedule::kCosine: return p.lr * (p.min_lr + (1 - p.min_lr) * 0.5 * (1 + std::cos(M_PI * progress)));
    case Schedule::kLinear: return p.lr * (1 - (1 - p.min_lr) * progress);
    case Schedule::kConstant: break;
  }
  return p.lr;
}

// Whether sample `index` of step `step` also trains under the causal mask: a
// hash, not a generator's state, so a resumed run decides as the first did.
bool with_causal(const TrainParams& p, int64_t step, int64_t index) {
  if (p.causal_fraction >= 1) return true;
  if (p.causal_fraction <= 0) return false;
  const uint64_t key[3] = {p.seed, static_cast<uint64_t>(step), static_cast<uint64_t>(index)};
  return static_cast<double>(XXH3_64bits(key, sizeof key) >> 11) * 0x1p-53 < p.causal_fraction;
}

std::vector<int32_t> query_tokens(const rt::PromptSample& s) {
  std::vector<int32_t> q = s.final_block;
  q.insert(q.end(), s.answer.begin(), s.answer.end() - 1);  // the last answer token predicts nothing
  return q;
}

at::Tensor answer_ids(const rt::PromptSample& s, at::Device device) {
  return at::tensor(std::vector<int64_t>(s.answer.begin(), s.answer.end()), at::kLong).to(device);
}

uint64_t data_hash(const std::vector<rt::PromptSample>& samples) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  auto add = [&](const std::vector<int32_t>& t) { XXH3_64bits_update(state, t.data(), t.size() * sizeof(int32_t)); };
  for (const rt::PromptSample& s : samples) {
    add(s.prefix);
    for (const auto& b : s.blocks) add(b);
    add(s.final_block);
    add(s.answer);
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

Status check_params(const TrainParams& p) {
  auto bad = [](const std::string& why) { return Error{ErrorCode::kInvalidArgument, why}; };
  if (p.steps < 1) return bad("--steps must be at least 1");
  if (p.batch < 1) return bad("--batch must be at least 1");
  if (!(p.lr > 0)) return bad("--lr must be positive");
  if (p.warmup < 0) return bad("--warmup must not be negative");
  if (p.min_lr < 0 || p.min_lr > 1) return bad("--min-lr must lie in [0, 1] (a share of --lr)");
  if (p.weight_decay < 0) return bad("--weight-decay must not be negative");
  if (p.clip < 0) return bad("--clip must not be negative");
  if (p.causal_fraction < 0 || p.causal_fraction > 1) return bad("--causal-fraction must lie in [0, 1]");
  if (p.consistency < 0) return bad("--consistency must not be negative");
  if (p.checkpoint_every < 1) return bad("--checkpoint-every must be at least 1");
  if (p.general_window < 2) return bad("--general-window must be at least 2 tokens");
  if (p.general_per_step < 0 || p.general_weight < 0) return bad("--general-per-step and --general-weight must not be negative");
  return {};
}

}  // namespace

struct Trainer::Impl {
  Impl(rt::Engine& e, TrainParams p) : engine(e), params(std::move(p)) {}
  rt::Engine& engine;
  TrainParams params;
  std::vector<rt::PromptSample> samples;
  int64_t skipped = 0;
  uint64_t data = 0;
  std::shared_ptr<rt::LoraAdapter> adapter;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  TrainerState state;  // step, epoch, cursor
  std::vector<size_t> order;  // this epoch's sample order
  bool resumed = false;
  // Query scope: the base model's context KV, as sessions of each mode hold it.
  std::unique_ptr<rt::SampleContext> block_context, causal_context;
  // The general texts' windows, and the next one to take.
  std::vector<std::vector<int32_t>> general;
  size_t next_general = 0;
  rt::KvCache nothing;  // an empty context for the general windows

  // This epoch's order: runs of `batch` consecutive samples (a game's
  // consecutive frames share most blocks, so a step encodes little), the
  // runs shuffled.
  void shuffle() {
    const auto run = static_cast<size_t>(params.batch);
    std::vector<size_t> runs((samples.size() + run - 1) / run);
    std::iota(runs.begin(), runs.end(), size_t{0});
    std::mt19937_64 rng(params.seed * 1000003 + static_cast<uint64_t>(state.epoch));
    std::shuffle(runs.begin(), runs.end(), rng);
    order.clear();
    for (size_t r : runs) {
      for (size_t i = r * run; i < std::min(samples.size(), (r + 1) * run); ++i) order.push_back(i);
    }
  }

  const rt::PromptSample& next_sample() {
    if (state.cursor >= static_cast<int64_t>(order.size())) {
      ++state.epoch;
      state.cursor = 0;
      shuffle();
    }
    return samples[order[static_cast<size_t>(state.cursor++)]];
  }

  bool query_scope() const { return params.lora.scope == rt::LoraScope::kQuery; }

  // The sample's context under `mask`, and the tokens run to get it.
  Result<rt::KvCache> context(const rt::PromptSample& s, rt::AttentionMask mask, int64_t& tokens) {
    if (!query_scope()) {
      tokens += s.context_tokens();
      return engine.model().context_kv(s, mask, params.blocks_after_prefix);
    }
    rt::QueryReport report;
    auto& ctx = mask == rt::AttentionMask::kBlock ? block_context : causal_context;
    auto cache = ctx->prepare(s, report);
    if (!cache) return cache.error();
    tokens += report.tokens_encoded;
    return **cache;  // a shallow copy: the same tensors
  }

  // The base model's next-token log-probabilities on a general window: for a
  // query-scope adapter the context's pass (which it leaves alone), for an
  // all-scope one the model with the adapter taken off for the pass.
  Result<at::Tensor> base_log_probs(const std::vector<int32_t>& window) {
    at::NoGradGuard no_grad;
    const auto rows = static_cast<int64_t>(window.size());
    if (query_scope()) {
      auto logits = engine.model().forward_over(window, nothing, rt::PromptPart::kContext, rows);
      if (!logits) return logits.error();
      return at::log_softmax(*logits, -1);
    }
    if (auto status = engine.set_adapter(nullptr); !status.ok()) return status.error();
    auto logits = engine.model().forward_over(window, nothing, rt::PromptPart::kQuery, rows);
    if (auto status = engine.set_adapter(adapter); !status.ok()) return status.error();
    if (!logits) return logits.error();
    return at::log_softmax(*logits, -1);
  }

  // KL(base || adapted) per token on the next general window; backward() of it * weight.
  Result<double> general_kl(double weight, int64_t& tokens) {
    const std::vector<int32_t>& window = general[next_general++ % general.size()];
    auto base = base_log_probs(window);
    if (!base) return base.error();
    auto logits = engine.model().forward_over(window, nothing, rt::PromptPart::kQuery, static_cast<int64_t>(window.size()));
    if (!logits) return logits.error();
    tokens += static_cast<int64_t>(window.size());
    at::Tensor kl = (base->exp() * (*base - at::log_softmax(*logits, -1))).sum(-1).mean();
    if (weight > 0) (kl * weight).backward();
    return kl.item<double>();
  }

  // Logits of the answer tokens under `mask`.
  Result<at::Tensor> answer_logits(const rt::PromptSample& s, rt::AttentionMask mask, int64_t& tokens) {
    auto ctx = context(s, mask, tokens);
    if (!ctx) return ctx.error();
    const std::vector<int32_t> query = query_tokens(s);
    tokens += static_cast<int64_t>(query.size());
    return engine.model().forward_over(query, *ctx, rt::PromptPart::kQuery, static_cast<int64_t>(s.answer.size()));
  }

  struct SampleLoss {
    double block = 0, causal = 0, consistency = 0;  // causal, consistency: 0 without the causal mask
  };

  // One sample's losses: the answer's cross-entropy under the block mask,
  // and with `causal` under the causal mask too, plus the consistency term
  // KL(full || block) of the answer tokens with full mode's distribution as
  // a fixed teacher. backward() of their weighted sum when weight > 0.
  Result<SampleLoss> sample_loss(const rt::PromptSample& s, bool causal, double weight, int64_t& tokens) {
    const at::Tensor target = answer_ids(s, engine.model().device());
    SampleLoss out;
    at::Tensor total, teacher;
    if (causal) {
      auto logits = answer_logits(s, rt::AttentionMask::kCausal, tokens);
      if (!logits) return logits.error();
      total = at::cross_entropy_loss(*logits, target);
      out.causal = total.item<double>();
      teacher = at::log_softmax(logits->detach(), -1);
    }
    auto logits = answer_logits(s, rt::AttentionMask::kBlock, tokens);
    if (!logits) return logits.error();
    at::Tensor block = at::cross_entropy_loss(*logits, target);
    out.block = block.item<double>();
    total = total.defined() ? total + block : block;
    if (teacher.defined()) {
      at::Tensor kl = (teacher.exp() * (teacher - at::log_softmax(*logits, -1))).sum(-1).mean();
      out.consistency = kl.item<double>();
      total = total + params.consistency * kl;
    }
    if (weight > 0) (total * weight).backward();
    return out;
  }
};

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;

Result<std::unique_ptr<Trainer>> Trainer::create(rt::Engine& engine, const TrainParams& params,
                                                 const std::vector<Example>& train, bool resume) {
  if (auto checked = check_params(params); !checked.ok()) return checked.error();
  auto impl = std::make_unique<Impl>(engine, params);
  // No targets: every projection of the model, named, so a checkpoint and an
  // --init adapter are compared with the same list.
  if (impl->params.lora.targets.empty()) impl->params.lora.targets = rt::lora_target_names(engine.model().config());
  int64_t longest = 0;
  for (auto& sample : tokenize(engine, train)) {
    if (!sample || (params.max_context > 0 && sample->context_tokens() > params.max_context) ||
        sample->context_tokens() == 0) {
      ++impl->skipped;
      continue;
    }
    longest = std::max(longest, sample->context_tokens());
    impl->samples.push_back(std::move(sample).value());
  }
  if (impl->samples.empty()) {
    return Error{ErrorCode::kInvalidArgument, "no usable training examples (" + std::to_string(impl->skipped) +
                                                  " left out: no target, too long for --max-context, or not "
                                                  "tokenizable); check the data files"};
  }
  impl->data = data_hash(impl->samples);
  for (const std::string& text : params.general_texts) {
    const std::vector<int32_t> tokens = engine.tokenizer().encode(text);
    for (size_t at = 0; at + 2 <= tokens.size(); at += static_cast<size_t>(params.general_window)) {
      const size_t end = std::min(tokens.size(), at + static_cast<size_t>(params.general_window));
      impl->general.emplace_back(tokens.begin() + static_cast<std::ptrdiff_t>(at),
                                 tokens.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  {
    auto nothing = engine.model().new_cache(1);
    if (!nothing) return nothing.error();
    impl->nothing = std::move(nothing).value();
  }

  const rt::Model& model = engine.model();
  std::optional<CheckpointState> saved;
  if (resume && !params.out_dir.empty() && std::filesystem::exists(checkpoint_state_path(params.out_dir))) {
    auto loaded = load_checkpoint(params.out_dir, model, impl->params, impl->data);
    if (!loaded) return loaded.error();
    saved = std::move(loaded).value();
    impl->adapter = saved->adapter;
    impl->state = saved->state;
    impl->resumed = true;
  } else if (!params.init.empty()) {
    auto adapter = rt::LoraAdapter::load(params.init, model.config(), model.device());
    if (!adapter) return adapter.error();
    const rt::LoraParams& got = (*adapter)->params();
    if (got.rank != params.lora.rank || got.alpha != params.lora.alpha || got.scope != params.lora.scope ||
        got.targets != impl->params.lora.targets) {
      return Error{ErrorCode::kInvalidArgument, params.init + " has rank " + std::to_string(got.rank) + ", alpha " +
                                                    std::to_string(got.alpha) + ", scope " +
                                                    rt::lora_scope_name(got.scope) +
                                                    "; train with the same --rank, --alpha, --scope and --targets"};
    }
    impl->adapter = std::move(adapter).value();
  } else {
    auto adapter = rt::LoraAdapter::create(model.config(), params.lora, model.device(), params.seed);
    if (!adapter) return adapter.error();
    impl->adapter = std::move(adapter).value();
  }
  impl->adapter->set_base_name(model.config().name);
  for (const at::Tensor& p : impl->adapter->parameters()) p.requires_grad_(true);
  if (auto status = engine.set_adapter(impl->adapter); !status.ok()) return status.error();

  torch::optim::AdamWOptions options(params.lr);
  options.weight_decay(params.weight_decay);
  impl->optimizer = std::make_unique<torch::optim::AdamW>(impl->adapter->parameters(), options);
  if (saved) restore_optimizer(*impl->optimizer, *saved);
  impl->shuffle();

  if (impl->query_scope()) {
    rt::SessionParams context_params;
    context_params.context = longest;
    context_params.blocks_after_prefix = params.blocks_after_prefix;
    context_params.mode = rt::AttentionMode::kBlock;
    auto block = rt::SampleContext::open(engine, context_params);
    if (!block) return block.error();
    context_params.mode = rt::AttentionMode::kFull;
    auto causal = rt::SampleContext::open(engine, context_params);
    if (!causal) return causal.error();
    impl->block_context = std::move(block).value();
    impl->causal_context = std::move(causal).value();
  }
  return std::unique_ptr<Trainer>(new Trainer(std::move(impl)));
}

int64_t Trainer::step() const { return impl_->state.step; }
int64_t Trainer::samples() const { return static_cast<int64_t>(impl_->samples.size()); }
int64_t Trainer::skipped() const { return impl_->skipped; }
bool Trainer::resumed() const { return impl_->resumed; }
const std::shared_ptr<rt::LoraAdapter>& Trainer::adapter() const { return impl_->adapter; }

Result<StepStats> Trainer::train_step() {
  Impl& m = *impl_;
  const auto start = std::chrono::steady_clock::now();
  StepStats stats;
  stats.lr = learning_rate(m.params, m.state.step);
  for (auto& group : m.optimizer->param_groups()) group.options().set_lr(stats.lr);
  const TrainerState before = m.state;
  auto untaken = [&](const Error& error) {  // the step is not taken: as if never begun
    m.state = before;
    m.optimizer->zero_grad();
    return error;
  };
  try {
    at::AutoGradMode grad(true);
    double block_sum = 0, causal_sum = 0, consistency_sum = 0;
    const double weight = 1.0 / static_cast<double>(m.params.batch);
    for (int64_t i = 0; i < m.params.batch; ++i) {
      const rt::PromptSample& s = m.next_sample();
      const bool causal = with_causal(m.params, m.state.step, i);
      auto loss = m.sample_loss(s, causal, weight, stats.tokens);
      if (!loss) return untaken(loss.error());
      block_sum += loss->block;
      causal_sum += loss->causal;
      consistency_sum += loss->consistency;
      stats.causal_samples += causal;
      ++stats.samples;
    }
    for (int64_t g = 0; g < m.params.general_per_step && !m.general.empty(); ++g) {
      auto kl = m.general_kl(m.params.general_weight / static_cast<double>(m.params.general_per_step), stats.tokens);
      if (!kl) return untaken(kl.error());
      stats.kl_general += *kl / static_cast<double>(m.params.general_per_step);
    }
    stats.loss_block = block_sum / static_cast<double>(stats.samples);
    stats.loss_causal = stats.causal_samples ? causal_sum / static_cast<double>(stats.causal_samples) : 0;
    stats.consistency = stats.causal_samples ? consistency_sum / static_cast<double>(stats.causal_samples) : 0;
    stats.loss = (block_sum + causal_sum) / static_cast<double>(stats.samples + stats.causal_samples);
    const double max_norm = m.params.clip > 0 ? m.params.clip : std::numeric_limits<double>::infinity();
    stats.grad_norm = torch::nn::utils::clip_grad_norm_(m.adapter->parameters(), max_norm);
    m.optimizer->step();
    m.optimizer->zero_grad();
  } catch (const c10::Error& e) {
    return untaken({ErrorCode::kBackend, std::string("libtorch failed in a training step: ") +
                                             e.what_without_backtrace() + " — lower --max-context or --batch, or free memory"});
  }
  ++m.state.step;
  stats.step = m.state.step;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!m.params.out_dir.empty() &&
      (m.state.step % m.params.checkpoint_every == 0 || m.state.step == m.params.steps)) {
    if (auto saved = save_checkpoint(); !saved.ok()) return saved.error();
  }
  return stats;
}

Result<HeldoutLoss> Trainer::heldout_loss(const std::vector<Example>& examples) {
  Impl& m = *impl_;
  HeldoutLoss out;
  at::NoGradGuard no_grad;
  try {
    for (auto& sample : tokenize(m.engine, examples)) {
      if (!sample || sample->context_tokens() == 0 ||
          (m.params.max_context > 0 && sample->context_tokens() > m.params.max_context)) {
        continue;
      }
      int64_t tokens = 0;
      auto loss = m.sample_loss(*sample, /*causal=*/true, 0, tokens);
      if (!loss) return loss.error();
      out.block += loss->block;
      out.causal += loss->causal;
      out.consistency += loss->consistency;
      ++out.samples;
    }
  } catch (const c10::Error& e) {
    return Error{ErrorCode::kBackend, std::string("libtorch failed on a held-out sample: ") + e.what_without_backtrace()};
  }
  if (out.samples) {
    out.block /= static_cast<double>(out.samples);
    out.causal /= static_cast<double>(out.samples);
    out.consistency /= static_cast<double>(out.samples);
  }
  return out;
}

Status Trainer::save_checkpoint() const {
  const Impl& m = *impl_;
  if (m.params.out_dir.empty()) return Error{ErrorCode::kInvalidArgument, "no output folder for checkpoints"};
  return write_checkpoint(m.params.out_dir, *m.adapter, *m.optimizer, m.params, m.data, m.state);
}

Status Trainer::save_adapter(const std::string& path) const { return impl_->adapter->save(path); }

}  // namespace kvframe::finetune
