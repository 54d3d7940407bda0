// The block-attention engine on tiny random-weight models (fp32, CPU): cache
// reuse never changes results, the modes agree where the math says they must,
// and the report counts what happened.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "frame_edits.h"
#include "kvframe/kv_diff/assembled_kv.h"
#include "engine_test_util.h"

namespace kvframe::runtime {
namespace {

using namespace engine_test;  // tiny_engine, session_params, open, task, ask (engine_test_util.h)

// The same frame answered by a session that has seen nothing before, on an
// engine whose store is empty: every block encoded from scratch.
Answer recomputed(Engine& engine, const SessionParams& params, const std::string& frame, const Task& t = task()) {
  engine.store().clear();
  auto session = open(engine, params);
  return ask(*session, frame, t);
}

struct ReuseCase {
  kv_diff::Layout layout;
  bool blocks_after_prefix;
  int64_t window = 0;  // > 0: Gemma 3's shape, its local layers windowed
  bool phi3 = false;   // Phi-3's shape: partial rotary, LongRoPE's long factors and attention factor
};

// The default tiny model, Gemma 3's shape at `window`, or Phi-3's, loaded
// for the sessions' context (its short factors hold less).
std::unique_ptr<Engine> engine_for(const ReuseCase& c) {
  if (c.phi3) {
    return tiny_engine_of(kvframe::test::phi3_shape(), int64_t{1} << 30,
                          session_params(AttentionMode::kBlock).context);
  }
  if (c.window == 0) return tiny_engine();
  kvframe::test::TinyModelSpec gemma3;
  gemma3.arch = "gemma3", gemma3.n_head_kv = 1, gemma3.rope_base = 1000000.0f, gemma3.sliding_window = c.window;
  return tiny_engine_of(gemma3);
}

// Past the context LongRoPE's short factors hold, positions rotate wrong:
// a session of any mode asking for more is refused at open, before any
// frame, and the same model loaded for that context (long factors) opens it.
TEST(Phi3Sessions, ShortFactorsRefuseAContextPastTheirs) {
  const kvframe::test::TinyModelSpec spec = kvframe::test::phi3_shape();
  const int64_t limit = spec.n_ctx / 4;  // rope.scaling.original_context_length of the tiny file
  auto engine = tiny_engine_of(spec);
  for (AttentionMode mode : {AttentionMode::kBlock, AttentionMode::kPrefix, AttentionMode::kFull}) {
    SessionParams params = session_params(mode);
    params.context = limit + 1;
    auto refused = Session::open(*engine, params);
    ASSERT_FALSE(refused.ok()) << attention_mode_name(mode);
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.error().message.find("--model-context " + std::to_string(limit + 1)), std::string::npos)
        << refused.error().message;
    params.context = limit;
    EXPECT_TRUE(Session::open(*engine, params).ok()) << attention_mode_name(mode);
  }
  auto long_factors = tiny_engine_of(spec, int64_t{1} << 30, limit + 1);
  SessionParams params = session_params(AttentionMode::kBlock);
  params.context = limit + 1;
  EXPECT_TRUE(Session::open(*long_factors, params).ok());
}

class BlockReuse : public ::testing::TestWithParam<ReuseCase> {};

TEST_P(BlockReuse, SixtyRandomEditsGiveTheLogitsOfRecomputation) {
  auto engine = engine_for(GetParam()), fresh = engine_for(GetParam());
  SessionParams params = session_params(AttentionMode::kBlock);
  params.layout = GetParam().layout;
  params.blocks_after_prefix = GetParam().blocks_after_prefix;
  auto session = open(*engine, params);
  test::FrameEdits frames(7);
  int64_t reused = 0, repositioned = 0;
  for (int i = 0; i < 60; ++i) {
    const char* kind = frames.edit();
    const Answer cached = ask(*session, frames.json());
    const Answer scratch = recomputed(*fresh, params, frames.json());
    ASSERT_LE(relative_error(cached.first_logits, scratch.first_logits), kRelativeTolerance)
        << "frame " << i << " after a '" << kind << "' edit";
    EXPECT_EQ(scratch.report.blocks_encoded, scratch.report.blocks_total);
    reused += cached.report.blocks_reused;
    repositioned += cached.report.blocks_repositioned;
  }
  EXPECT_GT(reused, 0);
  EXPECT_GT(repositioned, 0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, BlockReuse,
                         ::testing::Values(ReuseCase{kv_diff::Layout::kSlack, true},
                                           ReuseCase{kv_diff::Layout::kCompact, true},
                                           ReuseCase{kv_diff::Layout::kSlack, false},
                                           ReuseCase{kv_diff::Layout::kCompact, true, 24},
                                           ReuseCase{kv_diff::Layout::kCompact, false, 24},
                                           ReuseCase{kv_diff::Layout::kSlack, true, 0, true},
                                           ReuseCase{kv_diff::Layout::kCompact, false, 0, true}));

// One block and the query: block attention is full attention when the block
// sees everything before it — encoded after the system prompt, or with no
// system prompt at all.
void expect_one_block_equals_full(const std::string& system_prompt, bool blocks_after_prefix, int64_t window = 0) {
  auto engine = engine_for({kv_diff::Layout::kCompact, blocks_after_prefix, window});
  const std::string frame = R"({"hp":10,"pos":[1,2]})";  // below min_split_bytes: one block
  SessionParams block_params = session_params(AttentionMode::kBlock);
  block_params.rules.min_split_bytes = 256;
  block_params.system_prompt = system_prompt;
  block_params.blocks_after_prefix = blocks_after_prefix;
  SessionParams full_params = block_params;
  full_params.mode = AttentionMode::kFull;
  auto block = open(*engine, block_params);
  auto full = open(*engine, full_params);
  const Answer a = ask(*block, frame), b = ask(*full, frame);
  ASSERT_EQ(a.report.blocks_total, 1);
  EXPECT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance);
}

TEST(Modes, OneBlockAfterTheSystemPromptAndTheQueryEqualFull) {
  expect_one_block_equals_full("You are the game's NPC director.", /*blocks_after_prefix=*/true);
}

// Gemma 3's local layers: the block's keys placed at their base, its window
// over the system prompt and the query's over the block as full attention's.
TEST(Modes, WindowedLayersOneBlockAfterTheSystemPromptEqualsFull) {
  expect_one_block_equals_full("You are the game's NPC director.", /*blocks_after_prefix=*/true, /*window=*/8);
}

TEST(Modes, OneBlockWithoutSystemPromptAndTheQueryEqualFull) {
  expect_one_block_equals_full("", /*blocks_after_prefix=*/false);
}

TEST(Modes, PrefixEqualsFullOnEveryFrame) {
  auto engine = tiny_engine();
  auto prefix = open(*engine, session_params(AttentionMode::kPrefix));
  auto full = open(*engine, session_params(AttentionMode::kFull));
  test::FrameEdits frames(11);
  int64_t kept = 0;
  for (int i = 0; i < 50; ++i) {
    frames.edit();
    const Answer a = ask(*prefix, frames.json(), task(3)), b = ask(*full, frames.json(), task(3));
    ASSERT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance) << "frame " << i;
    EXPECT_EQ(a.tokens, b.tokens) << "frame " << i;
    EXPECT_EQ(b.report.tokens_encoded, b.report.context_tokens + b.report.query_tokens);
    kept += b.report.tokens_encoded - a.report.tokens_encoded;
  }
  EXPECT_GT(kept, 0) << "prefix mode never reused a token";
}

// Volatile blocks last (rules "order"): prefix mode over that order still
// equals full mode over it, and keeps a longer prefix than document order
// when the blocks that change sit early in the document.
TEST(Modes, VolatileLastPrefixEqualsFullAndKeepsMoreThanDocumentOrder) {
  auto engine = tiny_engine();
  SessionParams volatile_last = session_params(AttentionMode::kPrefix);
  volatile_last.rules.order = json_blocker::BlockOrder::kVolatileLast;
  SessionParams full_params = volatile_last;
  full_params.mode = AttentionMode::kFull;
  auto prefix = open(*engine, volatile_last);
  auto full = open(*engine, full_params);
  auto document = open(*engine, session_params(AttentionMode::kPrefix));
  test::FrameEdits frames(17);
  int64_t encoded_volatile_last = 0, encoded_document = 0;
  for (int i = 0; i < 40; ++i) {
    frames.edit();
    const Answer a = ask(*prefix, frames.json(), task(3)), b = ask(*full, frames.json(), task(3));
    ASSERT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance) << "frame " << i;
    EXPECT_EQ(a.tokens, b.tokens) << "frame " << i;
    if (i > 0) {
      encoded_volatile_last += a.report.tokens_encoded;
      encoded_document += ask(*document, frames.json(), task(3)).report.tokens_encoded;
    } else {
      ask(*document, frames.json(), task(3));
    }
  }
  EXPECT_LT(encoded_volatile_last, encoded_document);
}

TEST(BlockStoreBudget, EvictingConstantlyChangesNothingButTiming) {
  auto roomy = tiny_engine(), starved = tiny_engine(/*cache_bytes=*/0);
  const SessionParams params = session_params(AttentionMode::kBlock);
  auto a = open(*roomy, params), b = open(*starved, params);
  test::FrameEdits frames(5);
  for (int i = 0; i < 50; ++i) {
    frames.edit();
    const Answer x = ask(*a, frames.json()), y = ask(*b, frames.json());
    ASSERT_LE(relative_error(y.first_logits, x.first_logits), kRelativeTolerance) << "frame " << i;
  }
  EXPECT_GT(starved->store().stats().evictions, 0);
  EXPECT_EQ(starved->store().stats().entries, 0);
}

TEST(BlockReuseText, GreedyTextIsIdenticalWithAndWithoutReuseOver200Frames) {
  auto engine = tiny_engine(), fresh = tiny_engine();
  const SessionParams params = session_params(AttentionMode::kBlock);
  auto session = open(*engine, params);
  test::FrameEdits frames(3);
  for (int i = 0; i < 200; ++i) {
    frames.edit();
    const Answer cached = ask(*session, frames.json(), task(6));
    const Answer scratch = recomputed(*fresh, params, frames.json(), task(6));
    ASSERT_EQ(cached.tokens, scratch.tokens) << "frame " << i;
  }
}

// A block encoded once and moved by kv_diff holds the keys the model computes
// for the same tokens at the new position.
TEST(Rerotation, CachedKeysMovedToANewPositionEqualKeysComputedThere) {
  auto engine = tiny_engine();
  const Model& model = engine->model();
  const std::vector<int32_t> block = {72, 105, 116, 32, 112, 111, 105, 110, 116, 115, 58, 32, 52, 50, 10};
  auto encoded = model.encode_blocks({block});
  ASSERT_TRUE(encoded.ok());
  kv_diff::BlockStore store(int64_t{1} << 30);
  const kv_diff::BlockRef ref = store.insert(kv_diff::block_key(block, 0), std::move(encoded->front()));
  auto kv = kv_diff::AssembledKv::create(model.kv_shape(), model.rope(), 512, kv_diff::Layout::kSlack);
  ASSERT_TRUE(kv.ok());
  kv->reset();
  kv->seal_prefix();

  int64_t rotated = 0;
  for (const int64_t position : {5, 9, 130, 2}) {  // the block sits after a filler block of this length
    auto filler_kv = model.encode_blocks({std::vector<int32_t>(static_cast<size_t>(position), 120)});
    ASSERT_TRUE(filler_kv.ok());
    const auto filler = store.insert(kv_diff::block_key({static_cast<int32_t>(position)}, 1),
                                     std::move(filler_kv->front()));
    auto stats = kv->assemble({{1, filler}, {2, ref}});
    ASSERT_TRUE(stats.ok()) << stats.error().to_string();
    rotated += stats->blocks_rotated;
    const kv_diff::SlotInfo slot = kv->slots()[1];
    ASSERT_EQ(slot.position, position);

    KvCache there = *model.new_cache(64);  // the block alone, its first token at `position`
    there.next_position = position;
    ASSERT_TRUE(model.forward(at::tensor(std::vector<int64_t>(block.begin(), block.end())), there).ok());
    for (int64_t l = 0; l < model.config().n_layer; ++l) {
      const at::Tensor moved = kv->cache().k[l].narrow(1, slot.offset, slot.length);
      const at::Tensor computed = there.k[l].narrow(1, 0, there.length);
      EXPECT_LE(relative_error(moved, computed), kRelativeTolerance) << "layer " << l << " at " << position;
    }
  }
  EXPECT_GT(rotated, 0) << "the block was rewritten, never re-rotated in place";
}

TEST(Report, CountsReusedEncodedAndSharedBlocks) {
  auto engine = tiny_engine();
  const SessionParams params = session_params(AttentionMode::kBlock);
  auto first = open(*engine, params);
  test::FrameEdits frames(1);
  const Answer cold = ask(*first, frames.json());
  EXPECT_EQ(cold.report.blocks_encoded, cold.report.blocks_total);
  EXPECT_GT(cold.report.blocks_total, 10);
  EXPECT_EQ(cold.report.tokens_encoded, cold.report.context_tokens + cold.report.query_tokens);

  const Answer again = ask(*first, frames.json());  // the same frame: only the final block runs
  EXPECT_EQ(again.report.blocks_reused, again.report.blocks_total);
  EXPECT_EQ(again.report.tokens_encoded, again.report.query_tokens);

  frames.edit();  // one tick at least: the match block changes
  const Answer next = ask(*first, frames.json());
  EXPECT_GE(next.report.blocks_encoded, 1);
  EXPECT_LT(next.report.blocks_encoded, next.report.blocks_total / 2);

  auto second = open(*engine, params);  // another match, same rules and state: the store has it all
  const Answer shared = ask(*second, frames.json());
  EXPECT_EQ(shared.report.cache_hits, shared.report.blocks_total);
  EXPECT_EQ(shared.report.blocks_encoded, 0);
}

// warm() moves a frame's encoding ahead of its query and changes nothing
// else: the same logits and tokens as a session that never warms, the same
// work counted, and the query itself runs only its final block — with
// several frames between warm and query too, whose work on the frames it
// superseded is counted apart (tokens_encoded_superseded). In full mode, the
// baseline that recomputes everything at each query, it does nothing.
class Warm : public ::testing::TestWithParam<AttentionMode> {};

TEST_P(Warm, EncodesAheadWithoutChangingAnswersOrCounts) {
  auto engine = tiny_engine(), other = tiny_engine(), third = tiny_engine();
  const SessionParams params = session_params(GetParam());
  // every: asked at every frame, the superseded ones too, so its reports
  // give each frame's work, which warm() did ahead in `warmed`.
  auto warmed = open(*engine, params), plain = open(*other, params), every = open(*third, params);
  EXPECT_TRUE(warmed->warm().ok()) << "before the first frame: nothing to do";
  const bool full = GetParam() == AttentionMode::kFull;
  auto work_of = [&](const std::string& frame) {
    const Answer asked = ask(*every, frame, task(1));
    return full ? 0 : asked.report.tokens_encoded - asked.report.query_tokens;
  };
  test::FrameEdits frames(13);
  for (int i = 0; i < 30; ++i) {
    frames.edit();
    ASSERT_TRUE(warmed->update(frames.json()));
    ASSERT_TRUE(warmed->warm().ok());
    int64_t superseded = 0;
    if (i % 5 == 4) {  // a frame warmed, then another before the query
      superseded = work_of(frames.json());
      frames.edit();
      ASSERT_TRUE(warmed->update(frames.json()));
      ASSERT_TRUE(warmed->warm().ok());
    }
    work_of(frames.json());
    auto a = warmed->query(task(3));
    ASSERT_TRUE(a) << a.error().to_string();
    const Answer b = ask(*plain, frames.json(), task(3));
    ASSERT_LE(relative_error(a->first_logits, b.first_logits), kRelativeTolerance) << "frame " << i;
    EXPECT_EQ(a->tokens, b.tokens) << "frame " << i;
    EXPECT_EQ(a->report.blocks_total, b.report.blocks_total);
    EXPECT_EQ(a->report.tokens_encoded_superseded, superseded) << "frame " << i;
    if (i % 5 != 4) {  // one frame per query: the same work, counted alike
      EXPECT_EQ(a->report.tokens_encoded, b.report.tokens_encoded) << "frame " << i;
      EXPECT_EQ(a->report.blocks_encoded, b.report.blocks_encoded) << "frame " << i;
      EXPECT_EQ(a->report.blocks_repositioned, b.report.blocks_repositioned) << "frame " << i;
    }
    // The report tells how its own frame's blocks came to be, not an earlier frame's.
    EXPECT_EQ(a->report.blocks_reused + a->report.blocks_encoded + a->report.cache_hits, a->report.blocks_total)
        << "frame " << i;
  }
  // Warmed and asked again: the query runs nothing but its final block.
  ASSERT_TRUE(warmed->warm().ok());
  auto again = warmed->query(task(1));
  ASSERT_TRUE(again);
  const int64_t frame_work = full ? again->report.context_tokens : 0;
  EXPECT_EQ(again->report.tokens_encoded, frame_work + again->report.query_tokens);
  EXPECT_EQ(again->report.tokens_encoded_superseded, 0);

  // A game that sends the frame it streamed once more with its question:
  // the warmed frame is superseded by its copy, so its work counts apart and
  // the query encodes only its final block.
  frames.edit();
  ASSERT_TRUE(warmed->update(frames.json()));
  ASSERT_TRUE(warmed->warm().ok());
  ASSERT_TRUE(warmed->update(frames.json()));
  auto resent = warmed->query(task(1));
  ASSERT_TRUE(resent);
  EXPECT_EQ(resent->report.tokens_encoded,
            (full ? resent->report.context_tokens : 0) + resent->report.query_tokens);
  EXPECT_EQ(resent->report.tokens_encoded_superseded, work_of(frames.json()));
}

INSTANTIATE_TEST_SUITE_P(Modes, Warm,
                         ::testing::Values(AttentionMode::kBlock, AttentionMode::kPrefix, AttentionMode::kFull),
                         [](const auto& mode) { return std::string(attention_mode_name(mode.param)); });

// warm_step() splits warm() into steps of at most N tokens (a block whole):
// each step leaves fewer tokens to encode, none is larger than N unless a
// block is, and a query after all the steps, or after only some (the query
// finishes the rest), answers and counts as a session that never warms.
class WarmStep : public ::testing::TestWithParam<int64_t> {};

TEST_P(WarmStep, EncodesAFrameInStepsWithoutChangingAnswersOrCounts) {
  const int64_t step = GetParam();
  auto engine = tiny_engine(), other = tiny_engine();
  const SessionParams params = session_params(AttentionMode::kBlock);
  auto stepped = open(*engine, params), plain = open(*other, params);
  auto before = stepped->warm_step(step);
  ASSERT_TRUE(before);
  EXPECT_EQ(*before, 0) << "before the first frame: nothing to do";
  test::FrameEdits frames(17);
  for (int i = 0; i < 12; ++i) {
    frames.edit();
    if (i % 4 == 0) frames.edit();  // now and then, more of the frame changes
    ASSERT_TRUE(stepped->update(frames.json()));
    int64_t left = -1, steps = 0;
    // Every third frame stops after one step: the query finishes the frame.
    while (left != 0 && !(i % 3 == 2 && steps == 1)) {
      auto r = stepped->warm_step(step);
      ASSERT_TRUE(r) << r.error().to_string();
      if (left >= 0) {
        EXPECT_LT(*r, left) << "a step that did nothing";
      }
      left = *r;
      ++steps;
    }
    auto a = stepped->query(task(3));
    ASSERT_TRUE(a) << a.error().to_string();
    const Answer b = ask(*plain, frames.json(), task(3));
    ASSERT_LE(relative_error(a->first_logits, b.first_logits), kRelativeTolerance) << "frame " << i;
    EXPECT_EQ(a->tokens, b.tokens) << "frame " << i;
    EXPECT_EQ(a->report.tokens_encoded, b.report.tokens_encoded) << "frame " << i;
    EXPECT_EQ(a->report.blocks_encoded, b.report.blocks_encoded) << "frame " << i;
    EXPECT_EQ(a->report.cache_hits, b.report.cache_hits) << "frame " << i;
    EXPECT_EQ(a->report.blocks_reused, b.report.blocks_reused) << "frame " << i;
    if (a->report.tokens_encoded > a->report.query_tokens) {
      EXPECT_GT(a->report.ms.encode, 0) << "frame " << i << ": the steps' encoding is the query's encode time";
    }
    if (i == 0) {
      EXPECT_GT(steps, 1) << "the first frame encodes every block: more than " << step << " tokens";
    }
  }
}

// A frame encoded in part, then a newer frame before any query (the one
// asked about the first was refused): the query's report counts its own
// frame's blocks, which add up to its total.
TEST_P(WarmStep, WorkForAFrameNobodyAskedAboutIsNotCountedInTheNext) {
  auto engine = tiny_engine();
  auto session = open(*engine, session_params(AttentionMode::kBlock));
  test::FrameEdits frames(5);
  for (int i = 0; i < 6; ++i) {
    frames.edit();
    ASSERT_TRUE(session->update(frames.json()));
    ASSERT_TRUE(session->warm_step(GetParam()));
    frames.edit();
    frames.edit();
    ASSERT_TRUE(session->update(frames.json()));
    ASSERT_TRUE(session->warm_step(GetParam()));
    auto a = session->query(task(2));
    ASSERT_TRUE(a) << a.error().to_string();
    EXPECT_EQ(a->report.blocks_reused + a->report.blocks_encoded + a->report.cache_hits, a->report.blocks_total)
        << "frame " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Tokens, WarmStep, ::testing::Values(int64_t{16}, int64_t{200}));

// Sessions' answers decoded together (query_together) are each what query()
// gives alone: the same greedy tokens and first-token logits, over frames
// that change between rounds, in block and prefix modes side by side; a
// task that cannot start fails alone.
TEST(QueryTogether, EachSessionAnswersAsAlone) {
  auto engine = tiny_engine(), alone_engine = tiny_engine();
  const std::vector<AttentionMode> modes = {AttentionMode::kBlock, AttentionMode::kBlock, AttentionMode::kPrefix};
  std::vector<std::unique_ptr<Session>> together, alone;
  std::vector<test::FrameEdits> frames;
  for (size_t i = 0; i < modes.size(); ++i) {
    together.push_back(open(*engine, session_params(modes[i])));
    alone.push_back(open(*alone_engine, session_params(modes[i])));
    frames.emplace_back(static_cast<uint32_t>(50 + i));
  }
  for (int round = 0; round < 6; ++round) {
    std::vector<Session::SessionTask> tasks;
    for (size_t i = 0; i < modes.size(); ++i) {
      frames[i].edit();
      ASSERT_TRUE(together[i]->update(frames[i].json()));
      tasks.push_back({together[i].get(), task(4 + static_cast<int32_t>(i)), {}});
    }
    const auto answers = Session::query_together(tasks);
    ASSERT_EQ(answers.size(), modes.size());
    for (size_t i = 0; i < modes.size(); ++i) {
      ASSERT_TRUE(answers[i].ok()) << answers[i].error().to_string();
      const Answer want = ask(*alone[i], frames[i].json(), task(4 + static_cast<int32_t>(i)));
      EXPECT_EQ(answers[i]->tokens, want.tokens) << "round " << round << ", session " << i;
      EXPECT_LE(relative_error(answers[i]->first_logits, want.first_logits), kRelativeTolerance);
      EXPECT_EQ(answers[i]->report.tokens_encoded, want.report.tokens_encoded);
    }
  }

  // The shorter answer is handed over first, before the longer is done; a
  // task that cannot start, at once.
  std::vector<Session::SessionTask> tasks = {{together[0].get(), task(12), {}}, {together[1].get(), task(2), {}},
                                             {together[2].get(), task(3), {}}};
  tasks[2].task.output_schema = "{not json";
  std::vector<size_t> handed;
  for (size_t i = 0; i < tasks.size(); ++i) tasks[i].on_answer = [&handed, i](Result<Answer>&) { handed.push_back(i); };
  const auto mixed = Session::query_together(tasks);
  EXPECT_TRUE(mixed[0].ok());
  EXPECT_TRUE(mixed[1].ok());
  ASSERT_FALSE(mixed[2].ok());
  EXPECT_EQ(mixed[2].error().code, ErrorCode::kSchemaNotJson);
  EXPECT_EQ(handed, (std::vector<size_t>{2, 1, 0}));

  const auto twice = Session::query_together({{together[0].get(), task(3), {}}, {together[0].get(), task(3), {}}});
  EXPECT_EQ(twice[0].error().code, ErrorCode::kInvalidArgument);
  const auto foreign = Session::query_together({{together[0].get(), task(3), {}}, {alone[1].get(), task(3), {}}});
  EXPECT_EQ(foreign[1].error().code, ErrorCode::kInvalidArgument);
}

// A server answers other sessions between the decoding steps of one
// (GenerateParams::between_steps): neither the interrupted answer nor the
// ones run inside it change, in tokens or first-token logits.
TEST(BetweenSteps, OtherSessionsAnsweredBetweenStepsChangeNoAnswer) {
  auto engine = tiny_engine(), alone_engine = tiny_engine();
  auto running = open(*engine, session_params(AttentionMode::kBlock));
  auto running_alone = open(*alone_engine, session_params(AttentionMode::kBlock));
  std::vector<std::unique_ptr<Session>> others, others_alone;
  for (AttentionMode mode : {AttentionMode::kBlock, AttentionMode::kFull}) {
    others.push_back(open(*engine, session_params(mode)));
    others_alone.push_back(open(*alone_engine, session_params(mode)));
  }
  test::FrameEdits frames(11), other_frames(12);
  for (int round = 0; round < 3; ++round) {
    frames.edit();
    std::vector<Answer> inside;  // the other sessions' answers, run between steps
    Task interrupted = task(10);
    interrupted.generate.between_steps = [&] {
      if (inside.size() >= others.size()) return;
      other_frames.edit();
      inside.push_back(ask(*others[inside.size()], other_frames.json(), task(3)));
      const Answer want = ask(*others_alone[inside.size() - 1], other_frames.json(), task(3));
      EXPECT_EQ(inside.back().tokens, want.tokens) << "round " << round;
      EXPECT_LE(relative_error(inside.back().first_logits, want.first_logits), kRelativeTolerance);
    };
    const Answer answer = ask(*running, frames.json(), interrupted);
    const Answer want = ask(*running_alone, frames.json(), task(10));
    EXPECT_EQ(inside.size(), others.size()) << "the hook ran between steps";
    EXPECT_EQ(answer.tokens, want.tokens) << "round " << round;
    EXPECT_LE(relative_error(answer.first_logits, want.first_logits), kRelativeTolerance);
  }
}

TEST(CacheScope, SessionsShareBlocksWithinTheirScopeOnlyAndAnswerAlike) {
  auto engine = tiny_engine();
  SessionParams scoped = session_params(AttentionMode::kBlock);
  scoped.cache_scope = 1;
  test::FrameEdits frames(3);
  auto owner = open(*engine, scoped);
  const Answer first = ask(*owner, frames.json());

  SessionParams other = scoped;
  other.cache_scope = 2;
  auto stranger = open(*engine, other);
  const Answer probe = ask(*stranger, frames.json());
  EXPECT_EQ(probe.report.cache_hits, 0) << "another scope's blocks are never found";
  EXPECT_EQ(probe.report.blocks_encoded, probe.report.blocks_total);
  EXPECT_LE(relative_error(probe.first_logits, first.first_logits), kRelativeTolerance);

  auto sibling = open(*engine, scoped);
  const Answer shared = ask(*sibling, frames.json());
  EXPECT_EQ(shared.report.cache_hits, shared.report.blocks_total) << "its own scope's are";
  EXPECT_EQ(engine->store().scope_stats(1).hits, shared.report.blocks_total);
  EXPECT_EQ(engine->store().scope_stats(2).hits, 0);
}

TEST(Errors, AreTypedAndLeaveTheSessionServing) {
  auto engine = tiny_engine();
  SessionParams params = session_params(AttentionMode::kBlock);
  auto session = open(*engine, params);
  auto early = session->query(task());
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().code, ErrorCode::kInvalidArgument);

  test::FrameEdits frames(2);
  const Answer good = ask(*session, frames.json());
  EXPECT_FALSE(session->update("{\"units\": [").ok());  // the previous frame stays current
  auto after = session->query(task());
  ASSERT_TRUE(after.ok());
  EXPECT_LE(relative_error(after->first_logits, good.first_logits), kRelativeTolerance);

  params.context = 64;
  auto small = open(*engine, params);
  ASSERT_TRUE(small->update(frames.json()).ok());
  auto full = small->query(task());
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, ErrorCode::kContextFull);
}

}  // namespace
}  // namespace kvframe::runtime
