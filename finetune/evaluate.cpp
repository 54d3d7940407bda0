// Held-out evaluation through real Sessions (see evaluate.h).
#include "kvframe/finetune/evaluate.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace kvframe::finetune {
namespace {

namespace rt = runtime;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

bool same_answer(const std::string& a, const std::string& b, bool as_json) {
  if (!as_json) return a == b;
  const auto x = nlohmann::json::parse(a, nullptr, false), y = nlohmann::json::parse(b, nullptr, false);
  if (x.is_discarded() || y.is_discarded()) return a == b;
  return x == y;
}

Result<EvalReport> evaluate(rt::Engine& engine, const std::vector<Example>& examples, const EvalParams& params,
                            const std::function<void(size_t, size_t, const EvalRecord&)>& on_record) {
  if (params.modes.empty()) return Error{ErrorCode::kInvalidArgument, "evaluate() needs at least one mode"};
  // Sessions hold the longest prompt: each example's context, its task and answer.
  int64_t context = 64;
  for (const Example& e : examples) {
    rt::PromptRenderer renderer(engine, session_params(e, rt::AttentionMode::kBlock));
    auto prompt = renderer.render(e.frame, e.instruction);
    if (!prompt) return Error{ErrorCode::kInvalidArgument, e.id + ": " + prompt.error().message};
    context = std::max(context, prompt->context_tokens() + static_cast<int64_t>(prompt->final_block.size()) +
                                    params.max_tokens + 8);
  }
  // One session per mode, system prompt and rules: consecutive frames share blocks.
  std::map<std::tuple<size_t, std::string, const json_blocker::Rules*>, std::unique_ptr<rt::Session>> sessions;
  auto session_for = [&](size_t m, const Example& e) -> Result<rt::Session*> {
    auto& slot = sessions[{m, e.system, e.rules.get()}];
    if (!slot) {
      rt::SessionParams sp = session_params(e, params.modes[m], params.blocks_after_prefix);
      sp.context = context;
      sp.fidelity = params.fidelity;
      auto opened = rt::Session::open(engine, sp);
      if (!opened) return opened.error();
      slot = std::move(opened).value();
    }
    return slot.get();
  };

  EvalReport report;
  std::vector<std::vector<double>> ms(params.modes.size());
  for (rt::AttentionMode mode : params.modes) report.modes.push_back(ModeSummary{mode});
  for (size_t i = 0; i < examples.size(); ++i) {
    const Example& e = examples[i];
    EvalRecord record{e.id, {}};
    at::Tensor reference_log_probs;
    for (size_t m = 0; m < params.modes.size(); ++m) {
      auto session = session_for(m, e);
      if (!session) return Error{session.error().code, e.id + ": " + session.error().message};
      if (auto updated = (*session)->update(e.frame); !updated) {
        return Error{ErrorCode::kInvalidArgument, e.id + ": the frame: " + updated.error().to_string()};
      }
      rt::Task task;
      task.instruction = e.instruction;
      task.output_schema = e.schema;
      task.generate.max_tokens = params.max_tokens;
      auto answer = (*session)->query(task);
      if (!answer) return Error{answer.error().code, e.id + " (" + rt::attention_mode_name(params.modes[m]) + "): " +
                                                         answer.error().message};
      ModeAnswer a;
      a.text = answer->text;
      a.first_token = answer->first_logits.argmax().item<int64_t>();
      a.ms = answer->report.ms.total;
      a.tokens_encoded = answer->report.tokens_encoded;
      a.matches_target = !e.target.empty() && same_answer(a.text, e.target, !e.schema.empty());
      const at::Tensor log_probs = at::log_softmax(answer->first_logits.to(at::kDouble), -1);
      if (m == 0) {
        reference_log_probs = log_probs;
        a.matches_reference = true;
      } else {
        a.matches_reference = same_answer(a.text, record.modes[0].text, !e.schema.empty());
        a.kl_vs_reference = (reference_log_probs.exp() * (reference_log_probs - log_probs)).sum().item<double>();
      }
      ModeSummary& s = report.modes[m];
      ++s.answers;
      s.correct += a.matches_target;
      s.agree += a.matches_reference;
      s.first_token_agree += m == 0 || a.first_token == record.modes[0].first_token;
      s.kl_mean += a.kl_vs_reference;
      s.tokens_encoded_mean += static_cast<double>(a.tokens_encoded);
      ms[m].push_back(a.ms);
      record.modes.push_back(std::move(a));
    }
    if (on_record) on_record(i + 1, examples.size(), record);
    report.records.push_back(std::move(record));
  }
  for (size_t m = 0; m < report.modes.size(); ++m) {
    ModeSummary& s = report.modes[m];
    if (s.answers) {
      s.kl_mean /= static_cast<double>(s.answers);
      s.tokens_encoded_mean /= static_cast<double>(s.answers);
    }
    s.ms_p50 = median(ms[m]);
  }
  return report;
}

Result<double> perplexity(const rt::Model& model, const std::vector<int32_t>& tokens, int64_t window) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n < 2) return Error{ErrorCode::kInvalidArgument, "perplexity needs at least 2 tokens"};
  if (window < 1) return Error{ErrorCode::kInvalidArgument, "the window must be at least 1 token"};
  const int64_t span = window * 4;  // tokens a cache holds before it restarts
  auto cache = model.new_cache(span);
  if (!cache) return cache.error();
  double nll = 0;
  int64_t scored = 0;
  for (int64_t start = 0; start + 1 < n; start += window) {
    if (cache->length + window > span) cache->length = cache->next_position = 0;
    const int64_t len = std::min(window, n - start);
    const at::Tensor ids = at::tensor(std::vector<int64_t>(tokens.begin() + start, tokens.begin() + start + len), at::kLong);
    auto logits = model.forward(ids, *cache, /*all_logits=*/true);
    if (!logits) return logits.error();
    // Row i predicts token start + i + 1.
    const int64_t rows = std::min(len, n - 1 - start);
    const at::Tensor next =
        at::tensor(std::vector<int64_t>(tokens.begin() + start + 1, tokens.begin() + start + 1 + rows), at::kLong);
    nll += at::cross_entropy_loss(logits->narrow(0, 0, rows), next.to(logits->device()), {}, at::Reduction::Sum)
               .item<double>();
    scored += rows;
  }
  return std::exp(nll / static_cast<double>(scored));
}

}  // namespace kvframe::finetune
