// Block fine-tuning on a tiny random-weight model (CI's smoke test; the real
// runs are in docs/finetune.md): a few steps on a toy game make the
// block-mode loss fall and the block and full answers converge; checkpoints
// resume exactly; bad data is a typed error naming the record.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "kvframe/finetune/dataset.h"
#include "kvframe/finetune/evaluate.h"
#include "kvframe/finetune/trainer.h"

namespace kvframe::finetune {
namespace {

namespace fs = std::filesystem;
namespace rt = runtime;

struct TempDir {
  std::string path;
  TempDir() {
    path = ::testing::TempDir() + "kvframe_finetune_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static inline int counter = 0;
};

// A toy game: a door whose colour the answer must name, among a few other
// blocks. Its frames are JSON objects; the default rules cut them at the
// top-level keys.
std::vector<Example> toy_game(int n) {
  static const char* colours[] = {"red", "blue", "green", "gold"};
  std::vector<Example> out;
  for (int i = 0; i < n; ++i) {
    Example e;
    e.id = "toy-" + std::to_string(i);
    const std::string colour = colours[i % 4];
    e.frame = R"({"room":{"name":"hall","light":)" + std::to_string(i % 3) + R"(},"door":{"colour":")" + colour +
              R"("},"npc":{"mood":"calm","hp":)" + std::to_string(10 + i) + "}}";
    e.instruction = "Door colour?";
    e.target = colour;
    auto rules = std::make_shared<json_blocker::Rules>();
    rules->pin = {"room", "door", "npc"};  // three blocks
    e.rules = rules;
    out.push_back(std::move(e));
  }
  return out;
}

TrainParams toy_params(const std::string& out_dir) {
  TrainParams p;
  p.lora.rank = 8;
  p.lora.alpha = 16;
  p.lora.scope = rt::LoraScope::kAll;
  p.steps = 150;
  p.batch = 4;
  p.lr = 5e-3;
  p.warmup = 2;
  p.out_dir = out_dir;
  p.checkpoint_every = 1000;
  p.consistency = 1.0;
  return p;
}

// Full (the reference) and block answers to the toy game.
EvalReport ask_both(rt::Engine& engine, const std::vector<Example>& examples) {
  EvalParams params;
  params.max_tokens = 8;  // "green" and the end token
  auto report = evaluate(engine, examples, params);
  EXPECT_TRUE(report.ok()) << report.error().to_string();
  return *report;
}

TEST(Finetune, AFewStepsLowerTheBlockLossAndBringBlockToFull) {
  for (rt::LoraScope scope : {rt::LoraScope::kAll, rt::LoraScope::kQuery}) {
    SCOPED_TRACE(rt::lora_scope_name(scope));
    auto engine = rt::engine_test::tiny_engine();
    const std::vector<Example> data = toy_game(8);
    const EvalReport untrained = ask_both(*engine, data);
    TempDir dir;
    TrainParams params = toy_params(dir.path);
    params.lora.scope = scope;
    // A query-side adapter learns slower (it cannot shape the blocks' KV): at
    // 150 steps it sat at the bar, where rounding (fp32 summation order of
    // the CPU's kernels) moved it from 6 of 8 to 4; at 250 it gets all 8.
    if (scope == rt::LoraScope::kQuery) params.steps = 250;
    params.general_texts = {"The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun."};
    params.general_window = 16;
    auto trainer = Trainer::create(*engine, params, data);
    ASSERT_TRUE(trainer.ok()) << trainer.error().to_string();
    const HeldoutLoss before = (*trainer)->heldout_loss(data).value();
    EXPECT_EQ(before.samples, 8);
    double first = 0, last = 0;
    for (int64_t s = 0; s < params.steps; ++s) {
      auto step = (*trainer)->train_step();
      ASSERT_TRUE(step.ok()) << step.error().to_string();
      EXPECT_TRUE(std::isfinite(step->loss));
      EXPECT_EQ(step->samples, params.batch);
      EXPECT_GE(step->kl_general, -1e-9);  // a KL, to rounding
      EXPECT_GE(step->consistency, -1e-6);  // near-one-hot logits of a random model: rounding
      // A fresh adapter is the base model: nothing to diverge from yet.
      if (s == 0) {
        EXPECT_NEAR(step->kl_general, 0, 1e-6);
      }
      (s == 0 ? first : last) = step->loss_block;
    }
    const HeldoutLoss after = (*trainer)->heldout_loss(data).value();
    EXPECT_LT(after.block, 0.5 * before.block) << "block-mode loss " << before.block << " -> " << after.block;
    EXPECT_LT(last, first);
    // Trained on both masks, both modes now give the target: every time when
    // the adapter also shapes the blocks' KV; a query-side adapter reads the
    // random base model's block KV and gets most of the way. (Untrained, the
    // random model's answers are the same babble in both modes: agreement
    // alone says nothing.)
    const EvalReport trained = ask_both(*engine, data);
    const int64_t least = scope == rt::LoraScope::kAll ? 8 : 6;
    for (size_t m = 0; m < 2; ++m) {
      EXPECT_LE(untrained.modes[m].correct, 2) << "mode " << m;
      EXPECT_GE(trained.modes[m].correct, least) << "mode " << m;
    }
    EXPECT_GE(trained.modes[1].agree, least);
  }
}

TEST(Finetune, ResumingFromACheckpointContinuesExactly) {
  const std::vector<Example> data = toy_game(8);
  TempDir straight_dir, resumed_dir;
  TrainParams params = toy_params(straight_dir.path);
  params.steps = 4;
  params.causal_fraction = 0.5;
  auto engine = rt::engine_test::tiny_engine();
  auto straight = Trainer::create(*engine, params, data).value();
  for (int s = 0; s < 4; ++s) ASSERT_TRUE(straight->train_step().ok());

  params.out_dir = resumed_dir.path;
  params.checkpoint_every = 2;
  auto second_engine = rt::engine_test::tiny_engine();
  {
    auto first = Trainer::create(*second_engine, params, data).value();
    for (int s = 0; s < 3; ++s) ASSERT_TRUE(first->train_step().ok());  // checkpoint at 2, step 3 lost
  }
  auto resumed = Trainer::create(*second_engine, params, data, /*resume=*/true);
  ASSERT_TRUE(resumed.ok()) << resumed.error().to_string();
  EXPECT_TRUE((*resumed)->resumed());
  EXPECT_EQ((*resumed)->step(), 2);
  while ((*resumed)->step() < 4) ASSERT_TRUE((*resumed)->train_step().ok());
  const auto& a = straight->adapter()->parameters();
  const auto& b = (*resumed)->adapter()->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(at::allclose(a[i], b[i], 1e-5, 1e-6)) << straight->adapter()->parameter_names()[i];
  }

  // Other options or data: refused, not silently mixed.
  TrainParams other = params;
  other.lora.rank = 4;
  auto refused = Trainer::create(*second_engine, other, data, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  auto other_data = Trainer::create(*second_engine, params, toy_game(9), true);
  ASSERT_FALSE(other_data.ok());
  EXPECT_NE(other_data.error().message.find("other training data"), std::string::npos);

  // A damaged state file: the reader's typed error.
  const std::string state = checkpoint_state_path(params.out_dir);
  fs::resize_file(state, fs::file_size(state) / 2);
  auto damaged = Trainer::create(*second_engine, params, data, true);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().code, ErrorCode::kTruncated);
}

TEST(Finetune, AdaptersItWritesLoadIntoTheEngine) {
  auto engine = rt::engine_test::tiny_engine();
  TempDir dir;
  TrainParams params = toy_params(dir.path);
  params.steps = 2;
  auto trainer = Trainer::create(*engine, params, toy_game(4)).value();
  ASSERT_TRUE(trainer->train_step().ok());
  const std::string path = dir.path + "/adapter.gguf";
  ASSERT_TRUE(trainer->save_adapter(path).ok());
  auto loaded = rt::LoraAdapter::load(path, engine->model().config());
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  EXPECT_EQ((*loaded)->params().scope, rt::LoraScope::kAll);
  EXPECT_EQ((*loaded)->n_parameters(), trainer->adapter()->n_parameters());
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(FinetuneData, RecordsAreCheckedAndErrorsNameTheLine) {
  TempDir dir;
  const std::string path = dir.path + "/data.jsonl";
  write_file(dir.path + "/rules.json", R"({"pin": ["a.*"]})");
  write_file(path, R"({"frame": {"a": {"b": 1}}, "instruction": "go", "target": "x", "id": "first"})"
                   "\n\n"
                   R"({"frame": {"a": {"b": 2}}, "instruction": "go", "schema": {"type": "string"}})"
                   "\n");
  auto examples = read_examples(path);
  ASSERT_TRUE(examples.ok()) << examples.error().to_string();
  ASSERT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[0].id, "first");
  EXPECT_EQ((*examples)[1].id, path + ":3");
  EXPECT_EQ((*examples)[1].target, "");
  EXPECT_EQ((*examples)[1].schema, R"({"type":"string"})");
  ASSERT_TRUE((*examples)[0].rules);
  EXPECT_EQ((*examples)[0].rules->pin.size(), 1u);

  for (const auto& [line, words] : std::vector<std::pair<std::string, std::string>>{
           {"not json", "not a JSON object"},
           {R"({"instruction": "go"})", "\"frame\""},
           {R"({"frame": {}, "instruction": 3})", "\"instruction\" must be a string"},
           {R"({"frame": {}})", "\"instruction\" is missing"},
           {R"({"frame": {}, "instruction": "go", "schema": "no"})", "\"schema\""},
           {R"({"frame": {}, "instruction": "go", "rules": "missing.json"})", "missing.json"}}) {
    write_file(path, R"({"frame": {"a": 1}, "instruction": "go", "target": "x"})"
                     "\n" +
                         line + "\n");
    auto bad = read_examples(path);
    ASSERT_FALSE(bad.ok()) << line;
    EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(bad.error().message.find(path + ":2"), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find(words), std::string::npos) << bad.error().message;
  }
  EXPECT_EQ(read_examples(dir.path + "/absent.jsonl").error().code, ErrorCode::kIo);

  // Write and read back.
  ASSERT_TRUE(write_examples(path, toy_game(3)).ok());
  auto back = read_examples(path);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[2].target, "green");
}

TEST(FinetuneData, FramesKeepTheOrderTheGameWroteTheirKeysIn) {
  // A session reads a frame's blocks in document order, so a record's frame
  // must come back as the game streamed it, not with its keys sorted.
  TempDir dir;
  const std::string path = dir.path + "/data.jsonl";
  const std::string frame = R"({"state":{"pot":15,"board":[],"chips":{"p2":1,"p1":2}},"history":[{"z":1,"a":0.25}]})";
  const std::string schema = R"({"type":"object","properties":{"b":{},"a":{}}})";
  write_file(path, R"({"frame": )" + frame + R"(, "instruction": "go", "target": "x", "schema": )" + schema + "}\n");
  auto examples = read_examples(path);
  ASSERT_TRUE(examples.ok()) << examples.error().to_string();
  EXPECT_EQ((*examples)[0].frame, frame);
  EXPECT_EQ((*examples)[0].schema, schema);

  ASSERT_TRUE(write_examples(path, *examples).ok());
  auto back = read_examples(path);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ((*back)[0].frame, frame);
}

TEST(FinetuneData, TokenizedSamplesAreWhatTheSessionRuns) {
  auto engine = rt::engine_test::tiny_engine();
  const Example e = toy_game(1)[0];
  auto samples = tokenize(*engine, {e});
  ASSERT_EQ(samples.size(), 1u);
  auto& sample = samples[0];
  ASSERT_TRUE(sample.ok()) << sample.error().to_string();
  EXPECT_EQ(sample->blocks.size(), 3u);  // room, door, npc
  EXPECT_EQ(sample->answer.back(), engine->stop_tokens().back());
  // The session's own prompt for the same frame: its context token count.
  auto session = rt::Session::open(*engine, session_params(e, rt::AttentionMode::kBlock)).value();
  ASSERT_TRUE(session->update(e.frame).ok());
  rt::Task task;
  task.instruction = e.instruction;
  task.generate.max_tokens = 1;
  auto answer = session->query(task);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->report.context_tokens, sample->context_tokens());
  EXPECT_EQ(answer->report.query_tokens, static_cast<int64_t>(sample->final_block.size()));

  Example no_target = e;
  no_target.target.clear();
  Example bad_frame = e;
  bad_frame.frame = "{";
  auto bad = tokenize(*engine, {no_target, bad_frame, e});
  EXPECT_EQ(bad[0].error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad[1].error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(bad[2].ok());  // one bad record does not spoil the rest
}

// The logits of the prompt's last token, the whole prompt run causally.
at::Tensor last_logits(const rt::Model& model, const rt::PromptSample& sample) {
  std::vector<int64_t> ids(sample.prefix.begin(), sample.prefix.end());
  for (const auto& block : sample.blocks) ids.insert(ids.end(), block.begin(), block.end());
  ids.insert(ids.end(), sample.final_block.begin(), sample.final_block.end());
  rt::KvCache cache = model.new_cache(static_cast<int64_t>(ids.size())).value();
  const at::Tensor logits = model.forward(at::tensor(ids, at::kLong), cache, /*all_logits=*/false).value();
  return logits.reshape({-1}).to(at::kFloat);
}

// Under volatile_last rules a session reads the blocks that have changed
// since its first frame last; records of one session (same system prompt and
// rules) are tokenized as that session reads them, so training sees what its
// full-mode answers (distill's targets) were read from.
TEST(FinetuneData, VolatileLastSamplesReadChangedBlocksLastAsTheSessionDoes) {
  auto engine = rt::engine_test::tiny_engine();
  std::vector<Example> frames = toy_game(1);
  auto rules = std::make_shared<json_blocker::Rules>(*frames[0].rules);
  rules->order = json_blocker::BlockOrder::kVolatileLast;
  frames[0].rules = rules;
  frames.push_back(frames[0]);
  frames[1].frame = R"({"room":{"name":"hall","light":0},"door":{"colour":"blue"},"npc":{"mood":"calm","hp":10}})";
  frames[1].target = "blue";
  auto samples = tokenize(*engine, frames);
  ASSERT_TRUE(samples[0].ok() && samples[1].ok());
  const auto& first = samples[0]->blocks;
  const auto& second = samples[1]->blocks;
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[0], first[0]);  // room, unchanged
  EXPECT_EQ(second[1], first[2]);  // npc, unchanged, before the door now
  EXPECT_NE(second[2], first[1]);  // the door, changed: last
  // A full-mode session given both frames answers from exactly this prompt.
  rt::SessionParams params = session_params(frames[1], rt::AttentionMode::kFull);
  auto session = rt::Session::open(*engine, params).value();
  rt::Task task;
  task.instruction = frames[1].instruction;
  task.generate.max_tokens = 1;
  at::Tensor answer_logits;
  for (const Example& frame : frames) {
    ASSERT_TRUE(session->update(frame.frame).ok());
    auto answer = session->query(task);
    ASSERT_TRUE(answer.ok()) << answer.error().to_string();
    answer_logits = answer->first_logits.reshape({-1}).to(at::kFloat);
  }
  EXPECT_TRUE(at::allclose(answer_logits, last_logits(engine->model(), *samples[1]), 1e-4, 1e-4));
  // The same frame read alone (document order) is another prompt.
  Example alone = frames[1];
  auto document = tokenize(*engine, {alone});
  ASSERT_TRUE(document[0].ok());
  EXPECT_EQ(document[0]->blocks[1], second[2]);
  EXPECT_FALSE(at::allclose(answer_logits, last_logits(engine->model(), *document[0]), 1e-4, 1e-4));
}

TEST(FinetuneParams, BadParamsAndNoDataAreRefused) {
  auto engine = rt::engine_test::tiny_engine();
  TrainParams params = toy_params("");
  params.batch = 0;
  EXPECT_EQ(Trainer::create(*engine, params, toy_game(2)).error().code, ErrorCode::kInvalidArgument);
  params = toy_params("");
  params.causal_fraction = 2;
  EXPECT_EQ(Trainer::create(*engine, params, toy_game(2)).error().code, ErrorCode::kInvalidArgument);
  params = toy_params("");
  std::vector<Example> untargeted = toy_game(2);
  for (Example& e : untargeted) e.target.clear();
  EXPECT_EQ(Trainer::create(*engine, params, untargeted).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_schedule("step").error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kvframe::finetune

namespace kvframe::finetune {
namespace {

TEST(FinetunePerplexity, WindowsGiveWhatOnePassGives) {
  auto engine = runtime::engine_test::tiny_engine();
  const runtime::Model& model = engine->model();
  std::vector<int32_t> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back((i * 37 + 11) % 250);
  // One pass over all of them, by hand.
  runtime::KvCache cache = model.new_cache(64).value();
  const at::Tensor logits =
      model.forward(at::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), at::kLong), cache, true).value();
  const at::Tensor next = at::tensor(std::vector<int64_t>(tokens.begin() + 1, tokens.end()), at::kLong);
  const double expected = std::exp(at::cross_entropy_loss(logits.narrow(0, 0, 39), next).item<double>());
  EXPECT_NEAR(perplexity(model, tokens, 64).value(), expected, 1e-6 * expected);
  // In windows of 10 (the cache, 4 windows long, carries the earlier ones): the same.
  EXPECT_NEAR(perplexity(model, tokens, 10).value(), expected, 1e-4 * expected);
  EXPECT_EQ(perplexity(model, {1}).error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kvframe::finetune
