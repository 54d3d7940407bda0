// kvframe-finetune: block fine-tuning of a LoRA adapter on a game's own
// frames (train), its held-out evaluation in block and full mode side by
// side (eval), and targets from the base model for data that has none
// (distill). docs/finetune.md walks through it.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gnuplot_plot.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_options/fidelity_options.h"
#include "kvframe/cli_model/model_params.h"
#include "kvframe/finetune/dataset.h"
#include "kvframe/finetune/evaluate.h"
#include "kvframe/finetune/trainer.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/runtime_engine/session.h"

namespace {

namespace ft = kvframe::finetune;
namespace rt = kvframe::runtime;
namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFooter =
    "Exit status:\n"
    "  0  done\n"
    "  1  usage error\n"
    "  2  the model, adapter, data or checkpoint cannot be used (the reason is printed)\n"
    "  3  training or evaluation failed while running (libtorch; the last checkpoint is kept)\n"
    "\n"
    "Data: JSONL records {frame, instruction, target, system?, schema?, rules?} (docs/finetune.md);\n"
    "kvframe-holdem --dataset and kvframe-stream --dataset write them from the games.";

// --model, --device, --dtype, --threads, and --lora where a subcommand applies one.
using kvframe::cli::ModelOptions;

void add_model_options(CLI::App& app, ModelOptions& o, bool lora) {
  kvframe::cli::ModelOptionsSpec which;
  which.lora = lora;
  kvframe::cli::add_model_options(app, o, which);
}

int fail(const kvframe::Error& error, const std::string& next, int code = kvframe::kExitBadInput) {
  std::cerr << "kvframe-finetune: " << error.to_string() << "\n  next: " << next << "\n";
  return code;
}

// `game` names whose shipped adapter --lora auto picks (see data_game).
kvframe::Result<std::unique_ptr<rt::Engine>> load_engine(const ModelOptions& o, bool with_lora,
                                                         std::string_view game = {}) {
  rt::ModelParams params = kvframe::cli::model_params(o, game);
  if (!with_lora) params.lora.clear();  // train: the base model, under the adapter it trains
  std::cerr << "[finetune] loading " << o.model << (params.lora.empty() ? "" : " + " + params.lora) << " ("
            << (o.dtype.empty() ? "dtype auto" : o.dtype) << ", " << rt::cpu_backend_description() << ")\n";
  return rt::Engine::load(o.model, params);
}

kvframe::Result<std::vector<ft::Example>> read_all(const std::vector<std::string>& paths) {
  std::vector<ft::Example> all;
  for (const std::string& path : paths) {
    auto examples = ft::read_examples(path);
    if (!examples) return examples.error();
    all.insert(all.end(), examples->begin(), examples->end());
  }
  return all;
}

// Whose shipped adapter --lora auto takes: `game` (--game) when given, else
// the game the examples come from, by their ids' first word (kvframe-holdem
// writes "holdem-s<seed>-...", kvframe-stream "moba-s<seed>-..."); empty when
// the ids do not all share one.
std::string data_game(const std::vector<ft::Example>& examples, const std::string& game) {
  if (!game.empty() || examples.empty()) return game;
  const std::string first = examples.front().id.substr(0, examples.front().id.find('-'));
  for (const ft::Example& e : examples) {
    if (e.id.compare(0, first.size() + 1, first + "-") != 0) return {};
  }
  return first;
}

constexpr const char* kGameHelp =
    "whose shipped adapter --lora auto picks (holdem, moba; default: the game the data's ids name, as "
    "kvframe-holdem and kvframe-stream write them)";

std::string duration(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds));
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ldh%02ldm", static_cast<long>(s / 3600), static_cast<long>(s / 60 % 60));
  } else {
    std::snprintf(text, sizeof text, "%ldm%02lds", static_cast<long>(s / 60), static_cast<long>(s % 60));
  }
  return text;
}

// ---- train ------------------------------------------------------------------

struct TrainOptions {
  ModelOptions model;
  std::vector<std::string> train, heldout, general;
  std::string out;
  std::string targets;  // empty: every projection of the model
  std::string scope = "query";
  std::string schedule = "cosine";
  int64_t eval_every = 50;
  int64_t heldout_limit = 32;
  int64_t stop_after = 0;  // 0: every --steps
  bool resume = false;
  ft::TrainParams params;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void plot_losses(const std::string& out_dir) {
  std::ifstream log(out_dir + "/train_log.jsonl");
  kvframe::plot::PlotSeries block{"train, block mask", {}, {}, false, "lines lw 1"};
  kvframe::plot::PlotSeries causal{"train, causal mask", {}, {}, false, "lines lw 1 dt 2"};
  kvframe::plot::PlotSeries held_block{"held out, block mask", {}, {}, false, "linespoints lw 2 pt 7"};
  kvframe::plot::PlotSeries held_causal{"held out, causal mask", {}, {}, false, "linespoints lw 2 pt 5"};
  for (std::string line; std::getline(log, line);) {
    const json r = json::parse(line, nullptr, false);
    if (!r.is_object()) continue;
    const double step = r.value("step", 0.0);
    if (r.contains("heldout_block")) {
      held_block.x.push_back(step), held_block.y.push_back(r["heldout_block"]);
      held_causal.x.push_back(step), held_causal.y.push_back(r["heldout_causal"]);
    } else if (r.contains("loss_block")) {
      block.x.push_back(step), block.y.push_back(r["loss_block"]);
      if (r.value("causal_samples", 0) > 0) causal.x.push_back(step), causal.y.push_back(r["loss_causal"]);
    }
  }
  kvframe::plot::PlotOptions options;
  options.title = "kvframe-finetune: answer loss per token";
  options.x.label = "optimizer step";
  options.y.label = "cross-entropy (nats / token)";
  options.y.range = "0:*";
  const std::string path = out_dir + "/loss.png";
  if (kvframe::plot::write_plot(path, options, {block, causal, held_block, held_causal})) {
    std::cerr << "[finetune] wrote " << path << "\n";
  } else {
    std::cerr << "[finetune] no loss plot (gnuplot missing or failed)\n";
  }
}

int run_train(TrainOptions& o) {
  ft::TrainParams& p = o.params;
  p.out_dir = o.out;
  p.lora.targets = split_commas(o.targets);
  auto scope = rt::parse_lora_scope(o.scope);
  if (!scope) return fail(scope.error(), "--scope all or query", kvframe::kExitUsage);
  p.lora.scope = *scope;
  auto schedule = ft::parse_schedule(o.schedule);
  if (!schedule) return fail(schedule.error(), "--schedule cosine, linear or constant", kvframe::kExitUsage);
  p.schedule = *schedule;
  std::error_code made;
  fs::create_directories(o.out, made);
  if (made) return fail({kvframe::ErrorCode::kIo, "cannot create " + o.out + ": " + made.message()}, "check --out");

  auto train = read_all(o.train);
  if (!train) return fail(train.error(), "fix the --train files");
  for (const std::string& path : o.general) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return fail({kvframe::ErrorCode::kIo, "cannot read " + path}, "check --general");
    p.general_texts.push_back(text.str());
  }
  auto heldout = read_all(o.heldout);
  if (!heldout) return fail(heldout.error(), "fix the --heldout files");
  if (static_cast<int64_t>(heldout->size()) > o.heldout_limit) heldout->resize(static_cast<size_t>(o.heldout_limit));
  auto engine = load_engine(o.model, /*with_lora=*/false);
  if (!engine) return fail(engine.error(), "check --model, --device and --dtype");
  auto trainer = ft::Trainer::create(**engine, p, *train, o.resume);
  if (!trainer) return fail(trainer.error(), "check the data and options (see --help)");
  ft::Trainer& t = **trainer;
  std::cerr << "[finetune] " << t.samples() << " samples (" << t.skipped() << " left out), adapter rank "
            << p.lora.rank << " scope " << o.scope << ", " << t.adapter()->n_parameters() << " parameters"
            << (t.resumed() ? ", resumed at step " + std::to_string(t.step()) : "") << "\n";

  std::ofstream log(o.out + "/train_log.jsonl", t.resumed() ? std::ios::app : std::ios::trunc);
  auto held_out = [&]() -> int {
    if (heldout->empty()) return kvframe::kExitOk;
    auto loss = t.heldout_loss(*heldout);
    if (!loss) return fail(loss.error(), "lower --max-context or free memory", kvframe::kExitFailed);
    std::cerr << "[finetune] step " << t.step() << " held-out loss: block " << loss->block << ", causal "
              << loss->causal << ", KL(full || block) " << loss->consistency << " (" << loss->samples << " samples)\n";
    log << json{{"step", t.step()}, {"heldout_block", loss->block}, {"heldout_causal", loss->causal},
                {"heldout_consistency", loss->consistency}, {"heldout_samples", loss->samples}}.dump()
        << "\n" << std::flush;
    return kvframe::kExitOk;
  };
  if (!t.resumed()) {
    if (int code = held_out()) return code;
  }
  const auto start = std::chrono::steady_clock::now();
  const int64_t first = t.step();
  const int64_t last = o.stop_after > 0 ? std::min(o.stop_after, p.steps) : p.steps;
  while (t.step() < last) {
    auto step = t.train_step();
    if (!step) return fail(step.error(), "resume with --resume from the last checkpoint", kvframe::kExitFailed);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = elapsed / static_cast<double>(t.step() - first) * static_cast<double>(last - t.step());
    char line[256];
    std::snprintf(line, sizeof line,
                  "step %ld/%ld  loss %.4f (block %.4f, causal %.4f x%ld)  KL full||block %.4f  KL general %.4f  "
                  "lr %.2e  |g| %.3f  %.0f tok/s  %s  eta %s",
                  static_cast<long>(step->step), static_cast<long>(p.steps), step->loss, step->loss_block,
                  step->loss_causal, static_cast<long>(step->causal_samples), step->consistency, step->kl_general, step->lr,
                  step->grad_norm, static_cast<double>(step->tokens) / step->seconds,
                  duration(step->seconds).c_str(), duration(eta).c_str());
    std::cerr << line << "\n";
    log << json{{"step", step->step}, {"loss", step->loss}, {"loss_block", step->loss_block},
                {"loss_causal", step->loss_causal}, {"causal_samples", step->causal_samples},
                {"consistency", step->consistency}, {"kl_general", step->kl_general}, {"lr", step->lr},
                {"grad_norm", step->grad_norm}, {"samples", step->samples}, {"tokens", step->tokens},
                {"seconds", step->seconds}}.dump()
        << "\n" << std::flush;
    if ((o.eval_every > 0 && t.step() % o.eval_every == 0) || t.step() == last) {
      if (int code = held_out()) return code;
    }
  }
  const std::string adapter = o.out + "/adapter.gguf";
  if (auto saved = t.save_adapter(adapter); !saved.ok()) return fail(saved.error(), "check --out");
  std::cerr << "[finetune] wrote " << adapter << " (" << fs::file_size(adapter) / 1024 << " KiB)\n";
  plot_losses(o.out);
  return kvframe::kExitOk;
}

// ---- eval -------------------------------------------------------------------

struct EvalOptions {
  ModelOptions model;
  std::vector<std::string> data;
  std::string modes = "full,block";
  int64_t limit = 0;
  int32_t max_tokens = 32;
  bool blocks_after_prefix = false;
  kvframe::common::BlockFidelity fidelity;  // block sessions' knobs
  bool json_output = false;
  std::string game;
  std::string records;  // each example's answers, one JSON line each
};

// One example's answers as --records writes them.
json record_json(const ft::EvalRecord& r, const ft::Example& e, const std::vector<rt::AttentionMode>& modes) {
  json answers = json::array();
  for (size_t m = 0; m < r.modes.size(); ++m) {
    const ft::ModeAnswer& a = r.modes[m];
    answers.push_back({{"mode", rt::attention_mode_name(modes[m])}, {"text", a.text},
                       {"matches_target", a.matches_target}, {"matches_reference", a.matches_reference},
                       {"first_token", a.first_token}, {"kl_vs_reference", a.kl_vs_reference},
                       {"tokens_encoded", a.tokens_encoded}, {"ms", a.ms}});
  }
  return {{"id", r.id}, {"target", e.target}, {"answers", answers}};
}

int run_eval(const EvalOptions& o) {
  ft::EvalParams params;
  params.modes.clear();
  for (const std::string& name : split_commas(o.modes)) {
    auto mode = rt::parse_attention_mode(name);
    if (!mode) return fail(mode.error(), "--modes full,block (the first is the reference)", kvframe::kExitUsage);
    params.modes.push_back(*mode);
  }
  if (params.modes.empty()) {
    return fail({kvframe::ErrorCode::kInvalidArgument, "no --modes"}, "--modes full,block", kvframe::kExitUsage);
  }
  params.max_tokens = o.max_tokens;
  params.blocks_after_prefix = o.blocks_after_prefix;
  params.fidelity = o.fidelity;
  auto examples = read_all(o.data);
  if (!examples) return fail(examples.error(), "fix the --data files");
  if (o.limit > 0 && static_cast<int64_t>(examples->size()) > o.limit) examples->resize(static_cast<size_t>(o.limit));
  auto engine = load_engine(o.model, /*with_lora=*/true, data_game(*examples, o.game));
  if (!engine) return fail(engine.error(), "check --model, --lora, --device and --dtype");
  std::ofstream records;
  if (!o.records.empty()) {
    records.open(o.records);
    if (!records) return fail({kvframe::ErrorCode::kIo, "cannot write " + o.records}, "check --records");
  }
  auto report = ft::evaluate(**engine, *examples, params, [&](size_t done, size_t total, const ft::EvalRecord& r) {
    if (records.is_open()) records << record_json(r, (*examples)[done - 1], params.modes).dump() << "\n" << std::flush;
    std::cerr << "[" << done << "/" << total << "] " << r.id;
    for (size_t m = 0; m < r.modes.size(); ++m) {
      std::cerr << "  " << rt::attention_mode_name(params.modes[m]) << ": " << r.modes[m].text
                << (m > 0 && !r.modes[m].matches_reference ? " (differs)" : "");
    }
    std::cerr << "\n";
  });
  if (!report) return fail(report.error(), "check the data and the model", kvframe::kExitFailed);
  if (o.json_output) {
    json out = json::array();
    for (const ft::ModeSummary& s : report->modes) {
      out.push_back({{"mode", rt::attention_mode_name(s.mode)}, {"answers", s.answers}, {"correct", s.correct},
                     {"agree", s.agree}, {"first_token_agree", s.first_token_agree}, {"kl_mean", s.kl_mean},
                     {"ms_p50", s.ms_p50}, {"tokens_encoded_mean", s.tokens_encoded_mean}});
    }
    std::cout << json{{"modes", out}}.dump(2) << "\n";
    return kvframe::kExitOk;
  }
  const char* reference = rt::attention_mode_name(params.modes[0]);
  std::printf("%-8s %8s %14s %16s %22s %14s %10s %10s\n", "mode", "answers", "= target",
              (std::string("= ") + reference).c_str(), (std::string("1st token = ") + reference).c_str(),
              "KL 1st token", "p50 ms", "tokens/q");
  for (const ft::ModeSummary& s : report->modes) {
    auto pct = [&](int64_t n) {
      char text[32];
      std::snprintf(text, sizeof text, "%ld (%.1f%%)", static_cast<long>(n),
                    s.answers ? 100.0 * static_cast<double>(n) / static_cast<double>(s.answers) : 0.0);
      return std::string(text);
    };
    std::printf("%-8s %8ld %14s %16s %22s %14.4f %10.0f %10.0f\n", rt::attention_mode_name(s.mode),
                static_cast<long>(s.answers), pct(s.correct).c_str(), pct(s.agree).c_str(),
                pct(s.first_token_agree).c_str(), s.kl_mean, s.ms_p50, s.tokens_encoded_mean);
  }
  return kvframe::kExitOk;
}

// ---- distill ----------------------------------------------------------------

struct DistillOptions {
  ModelOptions model;
  std::string data, out;
  int32_t max_tokens = 32;
  std::string game;
};

int run_distill(const DistillOptions& o) {
  auto examples = ft::read_examples(o.data);
  if (!examples) return fail(examples.error(), "fix --data");
  auto engine = load_engine(o.model, /*with_lora=*/true, data_game(*examples, o.game));
  if (!engine) return fail(engine.error(), "check --model, --lora, --device and --dtype");
  std::vector<ft::Example> missing;
  for (const ft::Example& e : *examples) {
    if (e.target.empty()) missing.push_back(e);
  }
  ft::EvalParams params;
  params.modes = {rt::AttentionMode::kFull};
  params.max_tokens = o.max_tokens;
  auto report = ft::evaluate(**engine, missing, params, [](size_t done, size_t total, const ft::EvalRecord& r) {
    std::cerr << "[" << done << "/" << total << "] " << r.id << ": " << r.modes[0].text << "\n";
  });
  if (!report) return fail(report.error(), "check the data and the model", kvframe::kExitFailed);
  size_t next = 0;
  for (ft::Example& e : *examples) {
    if (e.target.empty()) e.target = report->records[next++].modes[0].text;
  }
  if (auto written = ft::write_examples(o.out, *examples); !written.ok()) return fail(written.error(), "check --out");
  std::cerr << "[finetune] " << missing.size() << " targets from full mode; wrote " << o.out << "\n";
  return kvframe::kExitOk;
}

// ---- perplexity -------------------------------------------------------------

struct PerplexityOptions {
  ModelOptions model;
  std::vector<std::string> text;
  int64_t max_tokens = 4096;
  int64_t window = 512;
};

int run_perplexity(const PerplexityOptions& o) {
  auto engine = load_engine(o.model, /*with_lora=*/true);
  if (!engine) return fail(engine.error(), "check --model, --lora, --device and --dtype");
  std::printf("%-48s %8s %12s\n", "text", "tokens", "perplexity");
  for (const std::string& path : o.text) {
    std::ifstream in(path);
    if (!in) return fail({kvframe::ErrorCode::kIo, "cannot read " + path}, "check --text");
    std::stringstream text;
    text << in.rdbuf();
    std::vector<int32_t> tokens = (*engine)->tokenizer().encode(text.str());
    if (static_cast<int64_t>(tokens.size()) > o.max_tokens) tokens.resize(static_cast<size_t>(o.max_tokens));
    auto ppl = ft::perplexity((*engine)->model(), tokens, o.window);
    if (!ppl) return fail(ppl.error(), "check the text and the model", kvframe::kExitFailed);
    std::printf("%-48s %8zu %12.3f\n", path.c_str(), tokens.size(), *ppl);
  }
  return kvframe::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Block fine-tuning: trains a LoRA adapter so block mode answers as full mode does, and measures it."};
  app.footer(kFooter);
  app.require_subcommand(1);

  TrainOptions train;
  CLI::App* train_cmd = app.add_subcommand("train", "train an adapter (checkpoints, --resume, loss curve)");
  add_model_options(*train_cmd, train.model, /*lora=*/false);
  train_cmd->add_option("--train", train.train, "training data (JSONL; repeat for several)")->required();
  train_cmd->add_option("--heldout", train.heldout, "held-out data for the loss curve (JSONL)");
  train_cmd->add_option("--general", train.general,
                        "plain text files (prose, code) the adapter must leave as the base model has them: "
                        "KL to the base model on them joins the loss (repeat for several)");
  train_cmd->add_option("--general-window", train.params.general_window, "tokens per general window")
      ->capture_default_str();
  train_cmd->add_option("--general-per-step", train.params.general_per_step, "general windows per step")
      ->capture_default_str();
  train_cmd->add_option("--general-weight", train.params.general_weight, "weight of the KL term")
      ->capture_default_str();
  train_cmd->add_option("--heldout-limit", train.heldout_limit, "held-out examples used")->capture_default_str();
  train_cmd->add_option("--out", train.out, "folder for checkpoints, the log, adapter.gguf and loss.png")->required();
  train_cmd->add_option("--rank", train.params.lora.rank, "LoRA rank")->check(CLI::PositiveNumber)->capture_default_str();
  train_cmd->add_option("--alpha", train.params.lora.alpha, "LoRA alpha (scale alpha / rank)")->capture_default_str();
  train_cmd->add_option("--targets", train.targets,
                        "projections to adapt, by GGUF tensor name (default: all the model has: "
                        "attn_q,attn_k,attn_v,attn_output,ffn_gate,ffn_up,ffn_down; phi3, whose file fuses them: "
                        "attn_qkv,attn_output,ffn_up,ffn_down)");
  train_cmd->add_option("--scope", train.scope,
                        "query: the final block and answer only (block KV stays the base model's); all: every token")
      ->capture_default_str();
  train_cmd->add_option("--steps", train.params.steps, "optimizer steps")->capture_default_str();
  train_cmd->add_option("--batch", train.params.batch, "samples per step (gradient accumulation)")->capture_default_str();
  train_cmd->add_option("--lr", train.params.lr, "peak learning rate")->capture_default_str();
  train_cmd->add_option("--warmup", train.params.warmup, "warm-up steps")->capture_default_str();
  train_cmd->add_option("--schedule", train.schedule, "cosine, linear or constant")->capture_default_str();
  train_cmd->add_option("--min-lr", train.params.min_lr, "final learning rate, as a share of --lr")->capture_default_str();
  train_cmd->add_option("--weight-decay", train.params.weight_decay, "AdamW weight decay")->capture_default_str();
  train_cmd->add_option("--clip", train.params.clip, "gradient norm clipping (0: none)")->capture_default_str();
  train_cmd->add_option("--causal-fraction", train.params.causal_fraction,
                        "share of samples also trained under the causal mask (full mode)")->capture_default_str();
  train_cmd->add_option("--consistency", train.params.consistency,
                        "weight of KL(full || block) on the answer for samples under both masks: block mode "
                        "taught to answer as full mode does")->capture_default_str();
  train_cmd->add_flag("--blocks-after-prefix", train.params.blocks_after_prefix,
                      "blocks encoded after the system prompt, as sessions with that option");
  train_cmd->add_option("--max-context", train.params.max_context, "leave out samples with more context tokens (0: none)")
      ->capture_default_str();
  train_cmd->add_option("--seed", train.params.seed, "adapter initialisation and sample order")->capture_default_str();
  train_cmd->add_option("--checkpoint-every", train.params.checkpoint_every, "steps between checkpoints")
      ->capture_default_str();
  train_cmd->add_option("--eval-every", train.eval_every, "steps between held-out losses (0: start and end only)")
      ->capture_default_str();
  train_cmd->add_option("--stop-after", train.stop_after,
                        "end after this step and write the adapter; the learning-rate schedule stays the one "
                        "planned for --steps (0: run every step)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train_cmd->add_flag("--resume", train.resume, "continue from --out's checkpoint, if there is one");
  train_cmd->add_option("--init", train.params.init,
                        "start from this adapter (e.g. one trained on other data) instead of a fresh one");

  EvalOptions eval;
  CLI::App* eval_cmd = app.add_subcommand("eval", "answers in several modes side by side: agreement, accuracy, KL");
  add_model_options(*eval_cmd, eval.model, /*lora=*/true);
  eval_cmd->add_option("--data", eval.data, "examples (JSONL; repeat for several)")->required();
  eval_cmd->add_option("--modes", eval.modes, "modes, the first the reference")->capture_default_str();
  eval_cmd->add_option("--limit", eval.limit, "first N examples only (0: all)")->capture_default_str();
  eval_cmd->add_option("--max-tokens", eval.max_tokens, "most tokens per answer")->capture_default_str();
  eval_cmd->add_flag("--blocks-after-prefix", eval.blocks_after_prefix, "block sessions encode blocks after the prefix");
  kvframe::cli::add_fidelity_options(*eval_cmd, eval.fidelity, "for the block sessions");
  eval_cmd->add_flag("--json", eval.json_output, "the summary as JSON on stdout");
  eval_cmd->add_option("--game", eval.game, kGameHelp);
  eval_cmd->add_option("--records", eval.records,
                       "also write each example's answers here, a JSON line each (id, target, answers: mode, text, "
                       "matches_target, matches_reference, first_token, kl_vs_reference, tokens_encoded, ms)");

  DistillOptions distill;
  CLI::App* distill_cmd = app.add_subcommand("distill", "fill missing targets with the model's full-mode answers");
  add_model_options(*distill_cmd, distill.model, /*lora=*/true);
  distill_cmd->add_option("--data", distill.data, "examples (JSONL)")->required();
  distill_cmd->add_option("--out", distill.out, "where to write them with targets (JSONL)")->required();
  distill_cmd->add_option("--max-tokens", distill.max_tokens, "most tokens per target")->capture_default_str();
  distill_cmd->add_option("--game", distill.game, kGameHelp);

  PerplexityOptions perplexity;
  CLI::App* perplexity_cmd =
      app.add_subcommand("perplexity", "perplexity of plain text files, with and without an adapter (--lora none)");
  add_model_options(*perplexity_cmd, perplexity.model, /*lora=*/true);
  perplexity_cmd->add_option("--text", perplexity.text, "text files (repeat for several)")->required();
  perplexity_cmd->add_option("--max-tokens", perplexity.max_tokens, "first N tokens of each file")->capture_default_str();
  perplexity_cmd->add_option("--window", perplexity.window, "tokens per forward pass")->capture_default_str();

  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  const ModelOptions& model = train_cmd->parsed()        ? train.model
                              : eval_cmd->parsed()       ? eval.model
                              : perplexity_cmd->parsed() ? perplexity.model
                                                         : distill.model;
  rt::tune_cpu_process(argv, model.threads);
  if (train_cmd->parsed()) return run_train(train);
  if (eval_cmd->parsed()) return run_eval(eval);
  if (perplexity_cmd->parsed()) return run_perplexity(perplexity);
  return run_distill(distill);
}
