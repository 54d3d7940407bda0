// The scheduler through the handler: ordering, latest state wins, fairness,
// deadlines at arrival and at dispatch, back-pressure, session state errors.
#include "handler_fixture.h"

#include <algorithm>
#include <unordered_map>

namespace kvframe::server::test {
namespace {

using std::chrono::milliseconds;

// A Result's text or an Error's message.
std::string text_of(const fb::Message& m) {
  if (m.body_type() == fb::Body::Error) return m.body_as_Error()->message()->str();
  return m.body_type() == fb::Body::Result ? m.body_as_Result()->text()->str() : std::string();
}

TEST_F(HandlerTest, SessionRunsFrameQueryCloseWithOneReplyEach) {
  const uint64_t session = open();
  EXPECT_NE(session, 0u);
  send(frame_message(10, session, 1, kTinyState));
  send(query_message(11, session));
  send(close_session_message(12, session));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->request_id(), 10u);
  ASSERT_EQ(all[0]->body_type(), fb::Body::FrameAck);
  EXPECT_EQ(all[0]->body_as_FrameAck()->frame_number(), 1u);
  EXPECT_GT(all[0]->body_as_FrameAck()->blocks_total(), 0u);
  EXPECT_FALSE(all[0]->body_as_FrameAck()->superseded());
  EXPECT_EQ(all[1]->request_id(), 11u);
  ASSERT_EQ(all[1]->body_type(), fb::Body::Result);
  EXPECT_EQ(all[1]->body_as_Result()->frame_number(), 1u);
  EXPECT_EQ(text_of(*all[1]).rfind("frame 1 ", 0), 0u) << text_of(*all[1]);
  EXPECT_EQ(all[2]->request_id(), 12u);
  EXPECT_EQ(all[2]->body_type(), fb::Body::SessionClosed);
  EXPECT_EQ(backend.open_sessions(), 0u);

  send(frame_message(13, session, 2, kTinyState));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::UnknownSession);
}

TEST_F(HandlerTest, RepliesFollowRequestOrder) {
  const uint64_t session = open_with_frame();
  for (uint64_t frame = 2; frame <= 4; ++frame) {
    send(frame_message(100 + frame, session, frame, kTinyState));
    send(query_message(200 + frame, session));
  }
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 6u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const uint64_t frame = 2 + i / 2;
    EXPECT_EQ(all[i]->request_id(), (i % 2 ? 200 : 100) + frame);
    EXPECT_EQ(all[i]->body_type(), i % 2 ? fb::Body::Result : fb::Body::FrameAck);
  }
}

uint32_t batch_size(const fb::Message& m) {
  return m.body_type() == fb::Body::Result ? m.body_as_Result()->report()->batch_size() : 0;
}

TEST_F(HandlerTest, QueriesQueuedBehindEachOtherRunAsOneBatch) {
  const uint64_t session = open_with_frame();
  for (uint64_t id = 1; id <= 3; ++id) send(query_message(id, session));
  send(frame_message(4, session, 2, kTinyState));
  for (uint64_t id = 5; id <= 6; ++id) send(query_message(id, session));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 6u);
  const uint32_t expected_batch[] = {3, 3, 3, 0, 2, 2};  // the frame between them splits the batches
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i]->request_id(), i + 1);
    EXPECT_EQ(batch_size(*all[i]), expected_batch[i]) << "reply " << i;
  }
  EXPECT_EQ(text_of(*all[4]).rfind("frame 2 ", 0), 0u) << text_of(*all[4]);
}

TEST_F(HandlerTest, MaxBatchBoundsABatch) {
  HandlerParams params;
  params.scheduler.max_batch = 2;
  start(params);
  const uint64_t session = open_with_frame();
  for (uint64_t id = 1; id <= 5; ++id) send(query_message(id, session));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 5u);
  const uint32_t expected_batch[] = {2, 2, 2, 2, 1};
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(batch_size(*all[i]), expected_batch[i]) << "reply " << i;
}

// Idle engine time encodes the frame just applied; with a request waiting,
// that request goes first (a query would encode the frame itself).
TEST_F(HandlerTest, AFrameIsWarmedOnlyWhenNothingWaits) {
  const uint64_t session = open_with_frame();
  EXPECT_EQ(backend.warmed, std::vector<uint64_t>{session});
  send(frame_message(next_id++, session, 2, kTinyState));
  send(query_message(next_id++, session));
  run_all();
  EXPECT_EQ(take().size(), 2u);
  EXPECT_EQ(backend.warmed.size(), 1u) << "frame 2 had a query behind it";

  HandlerParams cold;
  cold.warm_frames = false;
  start(cold);
  backend.warmed.clear();
  open_with_frame();
  EXPECT_TRUE(backend.warmed.empty());
}

// A game streaming one frame to each of several sessions (an NPC each, or
// the same state in two modes) sends them back to back: each frame but the
// last has another session's frame behind it, and is warmed once the engine
// is idle instead of not at all.
TEST_F(HandlerTest, FramesSentTogetherToSeveralSessionsAreAllWarmed) {
  const uint64_t a = open_with_frame(), b = open_with_frame(), c = open_with_frame();
  backend.warmed.clear();
  send(frame_message(next_id++, a, 2, kTinyState));
  send(frame_message(next_id++, b, 2, kTinyState));
  send(frame_message(next_id++, c, 2, kTinyState));
  run_all();
  EXPECT_EQ(take().size(), 3u);
  std::vector<uint64_t> warmed = backend.warmed;
  std::sort(warmed.begin(), warmed.end());
  std::vector<uint64_t> all = {a, b, c};
  std::sort(all.begin(), all.end());
  EXPECT_EQ(warmed, all) << "every session's frame warmed once, whatever waited behind it";
}

// step_tokens: a frame that takes several steps to encode gets one step per
// engine turn while other sessions have work — their queries are answered
// between its steps — and its query, deferred meanwhile, is answered once,
// after its last step. Idle time warms a frame a step at a time too.
TEST_F(HandlerTest, ALargeFrameIsEncodedAStepPerTurnWhileOthersAreAnswered) {
  HandlerParams stepped;
  stepped.step_tokens = 64;
  start(stepped);
  const uint64_t a = open_with_frame("game-a"), b = open_with_frame("game-b"), c = open_with_frame("game-c");
  backend.frame_steps = 3;
  send(frame_message(next_id++, a, 2, kTinyState), "game-a");
  const uint64_t a_query = next_id;
  send(query_message(next_id++, a), "game-a");
  send(frame_message(next_id++, b, 2, kTinyState), "game-b");
  const uint64_t b_query = next_id;
  send(query_message(next_id++, b), "game-b");
  backend.warmed.clear();
  for (int turn = 0; turn < 3; ++turn) ASSERT_TRUE(handler->run_next(replies));  // both frames, a's first step
  EXPECT_EQ(backend.warmed, std::vector<uint64_t>{a});
  const uint64_t c_query = next_id;
  send(query_message(next_id++, c), "game-c");  // c, with nothing to encode, comes after a and b's turns
  run_all();
  std::vector<uint64_t> results;
  for (const fb::Message* m : take()) {
    if (m->body_type() == fb::Body::Result) results.push_back(m->request_id());
  }
  EXPECT_EQ(results, (std::vector<uint64_t>{c_query, a_query, b_query})) << "c's query went between the steps";
  EXPECT_EQ(backend.answered, (std::vector<uint64_t>{c, a, b}));
  // One step per turn, in turn order (c's query asks for a step too: it has none left).
  EXPECT_EQ(backend.warmed, (std::vector<uint64_t>{a, b, a, c, b, a, b}));
  EXPECT_EQ(handler->scheduler().queue_depth(), 0u);

  backend.warmed.clear();  // nothing waits: the frame is warmed a step per idle turn
  send(frame_message(next_id++, c, 2, kTinyState), "game-c");
  ASSERT_TRUE(handler->run_next(replies));
  EXPECT_EQ(backend.warmed, std::vector<uint64_t>{c});
  run_all();
  EXPECT_EQ(backend.warmed, (std::vector<uint64_t>{c, c, c}));
  EXPECT_EQ(only().body_type(), fb::Body::FrameAck);
}

// Queries of different sessions waiting at once are taken together (one
// engine turn answers them all), each session then free for its next request;
// with max_sessions_together 1, one session a turn as before.
TEST_F(HandlerTest, QueriesOfDifferentSessionsAreAnsweredTogether) {
  HandlerParams together;
  together.max_sessions_together = 8;
  start(together);
  const uint64_t a = open_with_frame("game-a"), b = open_with_frame("game-b"), c = open_with_frame("game-c");
  send(query_message(next_id++, a), "game-a");
  send(query_message(next_id++, b), "game-b");
  send(query_message(next_id++, c), "game-c");
  ASSERT_TRUE(handler->run_next(replies));
  auto all = take();
  ASSERT_EQ(all.size(), 3u) << "one turn answered all three";
  for (const fb::Message* m : all) EXPECT_EQ(m->body_type(), fb::Body::Result);
  EXPECT_EQ(backend.answered, (std::vector<uint64_t>{a, b, c}));
  send(frame_message(next_id++, b, 2, kTinyState), "game-b");
  send(query_message(next_id++, b), "game-b");
  run_all();
  EXPECT_EQ(take().size(), 2u) << "a companion's session is free again";

  HandlerParams one_at_a_time;
  one_at_a_time.max_sessions_together = 1;
  start(one_at_a_time);
  const uint64_t d = open_with_frame("game-a"), e = open_with_frame("game-b");
  send(query_message(next_id++, d), "game-a");
  send(query_message(next_id++, e), "game-b");
  ASSERT_TRUE(handler->run_next(replies));
  EXPECT_EQ(take().size(), 1u);
  run_all();
  EXPECT_EQ(take().size(), 1u);
}

TEST_F(HandlerTest, WholeFrameSupersedesFramesQueuedAfterTheLastQuery) {
  const uint64_t session = open_with_frame();
  send(frame_message(2, session, 2, kTinyState));  // answered by the query after it: kept
  send(query_message(3, session));
  send(frame_message(4, session, 3, kTinyState));
  send(frame_message(5, session, 4, R"({"turn":2})", fb::FrameFormat::MergePatch));
  send(frame_message(6, session, 5, kTinyState));  // whole: 3 and 4 will never be applied
  send(query_message(7, session));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 6u);
  const bool superseded[] = {false, false, true, true, false, false};
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i]->request_id(), i + 2);
    if (all[i]->body_type() == fb::Body::FrameAck) {
      EXPECT_EQ(all[i]->body_as_FrameAck()->superseded(), superseded[i]) << "request " << i + 2;
    }
  }
  EXPECT_EQ(text_of(*all[1]).rfind("frame 2 ", 0), 0u);
  EXPECT_EQ(text_of(*all[5]).rfind("frame 3 ", 0), 0u) << "two frames skipped: the backend saw 3 in all";
  EXPECT_EQ(all[5]->body_as_Result()->frame_number(), 5u);
  EXPECT_EQ(handler->stats().snapshot().counters.frames_superseded, 2u);
}

TEST_F(HandlerTest, PatchSupersedesNothing) {
  const uint64_t session = open_with_frame();
  send(frame_message(2, session, 2, R"({"turn":2})", fb::FrameFormat::MergePatch));
  send(frame_message(3, session, 3, R"([{"op":"replace","path":"/turn","value":3}])", fb::FrameFormat::JsonPatch));
  run_all();
  for (const fb::Message* m : take()) {
    ASSERT_EQ(m->body_type(), fb::Body::FrameAck);
    EXPECT_FALSE(m->body_as_FrameAck()->superseded());
  }
}

TEST_F(HandlerTest, APatchAppliesOnlyToTheFrameItWasMadeAgainst) {
  const uint64_t session = open_with_frame();
  send(frame_message(2, session, 2, R"({"turn":)"));  // refused: the session keeps frame 1
  send(frame_message(3, session, 3, R"({"turn":3})", fb::FrameFormat::MergePatch));  // made against frame 2
  send(frame_message(4, session, 4, R"([{"op":"replace","path":"/turn","value":4}])", fb::FrameFormat::JsonPatch,
                     kNoBase));
  run_all();
  auto refused = take();
  ASSERT_EQ(refused.size(), 3u);
  EXPECT_EQ(error_code(*refused[0]), fb::ErrorCode::BadJson);
  EXPECT_EQ(error_code(*refused[1]), fb::ErrorCode::StaleBase);
  EXPECT_NE(text_of(*refused[1]).find("made against frame 2, but the session holds frame 1"), std::string::npos)
      << text_of(*refused[1]);
  EXPECT_NE(text_of(*refused[1]).find("send the whole frame"), std::string::npos);
  EXPECT_EQ(error_code(*refused[2]), fb::ErrorCode::StaleBase) << "a patch that names no base";
  // Made against the frame held, it applies: the backend saw two frames in all.
  send(frame_message(5, session, 5, R"([{"op":"test","path":"/turn","value":1}])", fb::FrameFormat::JsonPatch, 1));
  send(query_message(6, session));
  run_all();
  auto applied = take();
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[0]->body_type(), fb::Body::FrameAck);
  EXPECT_EQ(text_of(*applied[1]).rfind("frame 2 ", 0), 0u) << text_of(*applied[1]);
}

TEST_F(HandlerTest, SessionsTakeTurnsSoOneBusyGameDoesNotStarveAnother) {
  const uint64_t a = open_with_frame("game-a");
  const uint64_t b = open_with_frame("game-b");
  // A frame between a's queries keeps them out of one batch: a turn each.
  for (int i = 0; i < 3; ++i) {
    if (i > 0) send(frame_message(30 + i, a, 1 + i, R"({"turn":2})", fb::FrameFormat::MergePatch), "game-a");
    send(query_message(10 + i, a), "game-a");
  }
  send(query_message(20, b), "game-b");
  run_all();
  EXPECT_EQ(backend.answered, (std::vector<uint64_t>{a, b, a, a}));
  for (const Reply& reply : replies.all) {
    EXPECT_EQ(reply.route, reply.message()->request_id() == 20 ? "game-b" : "game-a");
  }
}

// Fair share by principal: each query takes 100 ms of (fake) engine time.
class FairShareTest : public HandlerTest {
 protected:
  void SetUp() override {
    start_with({});
    backend.before_answer = [this](uint64_t) { now += std::chrono::milliseconds(100); };
  }
  void start_with(std::unordered_map<std::string, double> weights) {
    HandlerParams params;
    params.quotas.weights = std::move(weights);
    start(std::move(params));
  }
  // `n` sessions of `route`, a first frame each.
  std::vector<uint64_t> sessions(const std::string& route, int n) {
    std::vector<uint64_t> out;
    for (int i = 0; i < n; ++i) out.push_back(open_with_frame(route));
    return out;
  }
  // `rounds` queries in each session, a frame between two (no batches).
  void ask(const std::vector<uint64_t>& of, const std::string& route, int rounds) {
    for (int r = 0; r < rounds; ++r) {
      for (uint64_t session : of) {
        if (r > 0) send(frame_message(next_id++, session, 1 + r, R"({"turn":2})", fb::FrameFormat::MergePatch), route);
        send(query_message(next_id++, session), route);
      }
    }
  }
  // Engine turns run one by one; how many queries of `of` are answered.
  size_t answered_of(const std::vector<uint64_t>& of) const {
    return static_cast<size_t>(std::count_if(backend.answered.begin(), backend.answered.end(), [&](uint64_t s) {
      return std::find(of.begin(), of.end(), s) != of.end();
    }));
  }
};

TEST_F(FairShareTest, ATenantsManySessionsDoNotTakeTheEngineFromOneWithOne) {
  const std::vector<uint64_t> heavy = sessions("heavy", 16), light = sessions("light", 1);
  ask(heavy, "heavy", 2);
  for (int turn = 0; turn < 5; ++turn) handler->run_next(replies);  // the heavy tenant is busy
  backend.answered.clear();
  ask(light, "light", 1);  // then the light one asks
  handler->run_next(replies);
  // Its query is the very next one answered: with round-robin by session it
  // waited for the sixteen heavy sessions' turns.
  ASSERT_FALSE(backend.answered.empty());
  EXPECT_EQ(backend.answered.front(), light.front());
  run_all();
}

TEST_F(FairShareTest, TwoTenantsWithEqualLoadsShareEqually) {
  const std::vector<uint64_t> a = sessions("game-a", 2), b = sessions("game-b", 6);
  ask(a, "game-a", 12);
  ask(b, "game-b", 4);  // 24 queries each, over 2 and 6 sessions
  backend.answered.clear();
  for (int turn = 0; turn < 40; ++turn) handler->run_next(replies);
  const size_t of_a = answered_of(a), of_b = answered_of(b);
  EXPECT_GE(of_a + of_b, 15u);  // the frames between took the other turns
  EXPECT_LE(std::max(of_a, of_b) - std::min(of_a, of_b), 2u) << of_a << " against " << of_b;
  run_all();
}

TEST_F(FairShareTest, WeightsAreHonoured) {
  start_with({{"conn:game-a", 2.0}});
  const std::vector<uint64_t> a = sessions("game-a", 3), b = sessions("game-b", 3);
  ask(a, "game-a", 8);
  ask(b, "game-b", 8);
  backend.answered.clear();
  for (int turn = 0; turn < 36; ++turn) handler->run_next(replies);
  const double of_a = static_cast<double>(answered_of(a)), of_b = static_cast<double>(answered_of(b));
  ASSERT_GT(of_b, 0);
  EXPECT_NEAR(of_a / of_b, 2.0, 0.35) << of_a << " against " << of_b;
  run_all();
}

// Turns between decoding steps: each query takes 100 ms, then 5 steps of 20.
class TurnsBetweenStepsTest : public FairShareTest {
 protected:
  void SetUp() override {
    FairShareTest::SetUp();
    backend.decoding_steps = 5;
    backend.during_step = [this](uint64_t session) {
      now += std::chrono::milliseconds(20);
      if (session == asking_in && !arrivals.empty()) {  // they arrive while it decodes
        for (const auto& [query_session, route] : arrivals) send(query_message(next_id++, query_session), route);
        arrivals.clear();
      }
    };
  }
  uint64_t asking_in = 0;  // the session whose first step the arrivals come in
  std::vector<std::pair<uint64_t, std::string>> arrivals;
  // The sessions' Results, in the order they went out.
  std::vector<uint64_t> results() {
    std::vector<uint64_t> out;
    for (const fb::Message* m : take()) {
      if (m->body_type() == fb::Body::Result) out.push_back(m->body_as_Result()->session_id());
    }
    return out;
  }
};

TEST_F(TurnsBetweenStepsTest, ALightQueryIsAnsweredBetweenTheStepsOfAHeavyOne) {
  const std::vector<uint64_t> heavy = sessions("heavy", 4), light = sessions("light", 1);
  ask(heavy, "heavy", 1);
  asking_in = heavy[0];
  arrivals = {{light[0], "light"}};
  ASSERT_TRUE(handler->run_next(replies));  // one turn: heavy[0]'s query
  // The light query ran to its end inside it, and its Result went out first;
  // the heavy tenant's other sessions waited for turns of their own.
  EXPECT_EQ(backend.answered, (std::vector<uint64_t>{light[0], heavy[0]}));
  EXPECT_EQ(results(), (std::vector<uint64_t>{light[0], heavy[0]}));
  run_all();
  EXPECT_EQ(backend.answered.size(), 5u);
}

TEST_F(TurnsBetweenStepsTest, ATurnTakenBetweenStepsIsNotChargedToTheQueryItInterrupted) {
  const std::vector<uint64_t> heavy = sessions("heavy", 1), light = sessions("light", 1);
  ask(heavy, "heavy", 1);
  asking_in = heavy[0];
  arrivals = {{light[0], "light"}};
  handler->run_next(replies);
  // Both took 100 + 5 x 20 ms of their own; the heavy one's 200 ms more of
  // wall time were the light one's.
  EXPECT_DOUBLE_EQ(handler->scheduler().expected_query_ms(fb::AttentionMode::Block), 200.0);
}

TEST_F(TurnsBetweenStepsTest, NoTurnIsTakenInsideATurn) {
  const std::vector<uint64_t> heavy = sessions("heavy", 1), one = sessions("light-1", 1),
                              two = sessions("light-2", 1);
  ask(heavy, "heavy", 1);
  asking_in = heavy[0];
  arrivals = {{one[0], "light-1"}, {two[0], "light-2"}};
  handler->run_next(replies);
  // light-1's query ran between two heavy steps and light-2's between the
  // next two, not inside light-1's (it would then have finished first).
  EXPECT_EQ(backend.answered, (std::vector<uint64_t>{one[0], two[0], heavy[0]}));
}

TEST_F(HandlerTest, FramesAndQueriesOutOfOrderAreRefusedAtOnce) {
  const uint64_t session = open();
  send(query_message(1, session));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::OutOfOrder) << "a query before any frame";
  send(frame_message(2, session, 1, R"({"turn":2})", fb::FrameFormat::MergePatch));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::OutOfOrder) << "a patch before any whole frame";
  send(frame_message(3, session, 5, kTinyState));
  send(frame_message(4, session, 5, kTinyState));
  send(frame_message(5, session, 4, kTinyState));
  auto refused = take();
  ASSERT_EQ(refused.size(), 2u) << "frame 5 queued, the rest refused before it ran";
  EXPECT_EQ(error_code(*refused[0]), fb::ErrorCode::OutOfOrder);
  EXPECT_EQ(refused[0]->body_as_Error()->session_id(), session);
  EXPECT_EQ(refused[1]->request_id(), 5u);
  QueryOptions about_old;
  about_old.frame_number = 4;
  send(query_message(6, session, about_old));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::OutOfOrder) << "a query about a frame never sent";
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::FrameAck);
}

TEST_F(HandlerTest, UnknownSessionsAreRefused) {
  send(frame_message(1, 0x1234, 1, kTinyState));
  send(query_message(2, 0));
  send(close_session_message(3, 99));
  for (const fb::Message* m : take()) EXPECT_EQ(error_code(*m), fb::ErrorCode::UnknownSession);
}

TEST_F(HandlerTest, RejectedFrameLeavesTheSessionOnItsPreviousFrame) {
  const uint64_t session = open_with_frame();
  send(frame_message(2, session, 2, "{\"turn\": not json"));
  QueryOptions about_rejected;
  about_rejected.frame_number = 2;
  send(query_message(3, session, about_rejected));
  send(query_message(4, session));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(error_code(*all[0]), fb::ErrorCode::BadJson);
  EXPECT_NE(all[0]->body_as_Error()->message()->str().find("malformed_json"), std::string::npos);
  EXPECT_EQ(error_code(*all[1]), fb::ErrorCode::OutOfOrder);
  ASSERT_EQ(all[2]->body_type(), fb::Body::Result);
  EXPECT_EQ(all[2]->body_as_Result()->frame_number(), 1u);
}

TEST_F(HandlerTest, FullQueuesAnswerBusy) {
  HandlerParams params;
  params.scheduler.max_session_queue = 2;
  params.scheduler.max_queue = 3;
  start(params);
  const uint64_t a = open_with_frame();
  const uint64_t b = open_with_frame();
  send(query_message(1, a));
  send(query_message(2, a));
  send(query_message(3, a));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::Busy) << "the session's own bound";
  send(query_message(4, b));
  send(query_message(5, b));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::Busy) << "the global bound";
  send(close_session_message(6, b));  // never refused: it frees room
  EXPECT_TRUE(take().empty());
  EXPECT_EQ(handler->stats().snapshot().counters.busy_rejected, 2u);
  EXPECT_EQ(handler->scheduler().queue_high_water(), 4u);
  run_all();
  EXPECT_EQ(take().size(), 4u);
}

TEST_F(HandlerTest, ASessionWhoseClientFellSilentExpiresWithItsQueuedWork) {
  HandlerParams params;
  params.session_idle = std::chrono::seconds(60);
  start(params);
  const uint64_t gone = open_with_frame("game-a");
  const uint64_t alive = open_with_frame("game-b");
  send(query_message(next_id++, gone), "game-a");  // queued, then its client vanishes
  now += std::chrono::seconds(30);
  send(frame_message(next_id++, alive, 2, kTinyState), "game-b");
  now += std::chrono::seconds(31);  // game-a silent for 61 s, game-b for 31 s
  run_all();
  auto replies_now = take();
  ASSERT_EQ(replies_now.size(), 1u) << "game-a's query was dropped, game-b's frame applied";
  EXPECT_EQ(replies_now[0]->body_type(), fb::Body::FrameAck);
  EXPECT_EQ(backend.open_sessions(), 1u) << "game-a's session (and its KV) closed";
  EXPECT_EQ(handler->stats().snapshot().counters.sessions_expired, 1u);
  send(query_message(next_id++, gone), "game-a");
  EXPECT_EQ(error_code(only()), fb::ErrorCode::UnknownSession) << "its client re-opens it when it comes back";
  send(query_message(next_id++, alive), "game-b");
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::Result);
}

class DeadlineTest : public HandlerTest {
 protected:
  // Every query takes 100 ms of (fake) engine time; one has run, so the
  // estimate is 100 ms.
  uint64_t session_with_estimate() {
    backend.before_answer = [this](uint64_t) { now += milliseconds(100); };
    const uint64_t session = open_with_frame();
    send(query_message(next_id++, session));
    run_all();
    EXPECT_EQ(only().body_type(), fb::Body::Result);
    return session;
  }
};

TEST_F(DeadlineTest, UnmeetableAtArrivalIsAnsweredAtOnce) {
  const uint64_t session = session_with_estimate();
  send(query_message(1, session));
  QueryOptions tight;
  tight.deadline_ms = 150;  // 100 queued ahead + 100 of its own
  send(query_message(2, session, tight));
  const fb::Message& refused = only();
  EXPECT_EQ(refused.request_id(), 2u);
  EXPECT_EQ(error_code(refused), fb::ErrorCode::Deadline);
  QueryOptions loose;
  loose.deadline_ms = 250;
  send(query_message(3, session, loose));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1]->body_type(), fb::Body::Result);
  EXPECT_EQ(handler->stats().snapshot().counters.deadline_missed, 1u);
}

TEST_F(DeadlineTest, AColdServerRefusesAnUnmeetableDeadlineBeforeEncoding) {
  backend.least_query_ms = 20;  // what the backend measured at startup: no query has run yet
  backend.frame_steps = 3;      // the frame takes three encoding steps
  HandlerParams params;
  params.warm_frames = false;
  params.step_tokens = 64;
  start(params);
  const uint64_t session = open_with_frame();
  QueryOptions tight;
  tight.deadline_ms = 1;
  send(query_message(next_id++, session, tight));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::Deadline) << "refused at arrival";
  run_all();
  EXPECT_TRUE(backend.warmed.empty()) << "nothing was encoded for it";
  QueryOptions loose;
  loose.deadline_ms = 500;
  send(query_message(next_id++, session, loose));
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::Result);
}

TEST_F(HandlerTest, TheStepsThatEncodeAQuerysFrameAreNotCountedAsQueueing) {
  backend.frame_steps = 3;
  backend.during_warm_step = [this](uint64_t) { now += milliseconds(10); };
  HandlerParams params;
  params.warm_frames = false;
  params.step_tokens = 64;
  start(params);
  const uint64_t a = open_with_frame("game-a");
  const uint64_t b = open_with_frame("game-b");
  send(query_message(next_id++, a), "game-a");  // deferred between its frame's steps: b's query runs between
  send(query_message(next_id++, b), "game-b");
  run_all();
  for (const fb::Message* m : take()) {
    ASSERT_EQ(m->body_type(), fb::Body::Result);
    const fb::Report* report = m->body_as_Result()->report();
    EXPECT_LE(report->queue_ms(), 30.0f + 1e-3f) << "at most the other session's three steps";
  }
}

TEST_F(DeadlineTest, MissedWhileQueuedIsNotRun) {
  const uint64_t session = session_with_estimate();
  send(query_message(1, session));
  send(frame_message(2, session, 2, R"({"turn":2})", fb::FrameFormat::MergePatch));  // no batch with query 1
  QueryOptions deadline;
  deadline.deadline_ms = 250;
  send(query_message(3, session, deadline));
  EXPECT_TRUE(take().empty()) << "meetable when it arrived";
  now += milliseconds(100);  // the game stalled; the query before it takes 100 more
  const std::size_t answered = backend.answered.size();
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->body_type(), fb::Body::Result);
  EXPECT_EQ(error_code(*all[2]), fb::ErrorCode::Deadline);
  EXPECT_EQ(backend.answered.size(), answered + 1) << "the late query never reached the engine";
}

TEST_F(DeadlineTest, AQueryMissingItsDeadlineInABatchFailsAlone) {
  const uint64_t session = session_with_estimate();
  send(query_message(1, session));
  QueryOptions deadline;
  deadline.deadline_ms = 250;  // 100 queued ahead + 100 of its own: meetable on arrival
  send(query_message(2, session, deadline));
  send(query_message(3, session));
  EXPECT_TRUE(take().empty());
  now += milliseconds(200);  // the game stalled before the engine took them
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 3u);  // in request order
  EXPECT_EQ(all[0]->body_type(), fb::Body::Result);
  EXPECT_EQ(error_code(*all[1]), fb::ErrorCode::Deadline);  // refused when taken; the others ran
  EXPECT_EQ(all[1]->request_id(), 2u);
  EXPECT_EQ(all[2]->body_type(), fb::Body::Result);
  EXPECT_EQ(all[2]->body_as_Result()->report()->batch_size(), 2u);
}

TEST_F(DeadlineTest, DeadlineFrameEndsAQuery) {
  const uint64_t session = open_with_frame();
  QueryOptions until_frame_3;
  until_frame_3.deadline_frame = 3;
  send(query_message(1, session, until_frame_3));
  send(frame_message(2, session, 3, kTinyState));  // arrives before the query ran
  send(query_message(3, session, until_frame_3));  // frame 3 already sent: moot at once
  EXPECT_EQ(error_code(only()), fb::ErrorCode::Deadline);
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(error_code(*all[0]), fb::ErrorCode::Deadline);
  EXPECT_EQ(all[0]->request_id(), 1u);
  EXPECT_EQ(all[1]->body_type(), fb::Body::FrameAck);
  EXPECT_TRUE(backend.answered.empty());
}

TEST_F(HandlerTest, ShutdownAnswersWhatIsQueued) {
  const uint64_t session = open_with_frame();
  send(query_message(1, session));
  send(frame_message(2, session, 2, kTinyState));
  handler->shut_down(replies);
  send(query_message(3, session));
  for (const fb::Message* m : take()) EXPECT_EQ(error_code(*m), fb::ErrorCode::ShuttingDown);
  EXPECT_FALSE(handler->run_next(replies));
}

}  // namespace
}  // namespace kvframe::server::test
