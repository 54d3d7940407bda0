// Recovery after a server restart, against a scripted server that closes its
// socket and binds the same port again: in-flight requests fail with
// KVF_ERR_DISCONNECTED, the session is re-opened with its parameters, its last
// whole frame and the patches after it are re-sent under the new server id
// (never a frame the server refused), and only then the requests that came
// meanwhile.
#include "client_test_support.h"

namespace kvframe::test {
namespace {

const fb::Frame& frame_of(const Incoming& in) { return *in.message().body_as_Frame(); }

class ClientRecovery : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = connect_scripted(server_, client_params(server_.endpoint()), /*instance_id=*/1);
    session_ = open_scripted(server_, client_.get(), /*server_session=*/42);
  }

  uint64_t send(uint64_t number, kvf_frame_format format, const std::string& json) {
    uint64_t id = 0;
    EXPECT_EQ(kvf_send_frame(client_.get(), session_, number, format, json.data(), json.size(), nullptr, nullptr,
                             &id),
              KVF_OK);
    return id;
  }
  uint64_t query(const char* instruction) {
    kvf_query_params q = client::defaults(kvf_query_params_init);
    q.instruction = instruction;
    uint64_t id = 0;
    EXPECT_EQ(kvf_query(client_.get(), session_, &q, nullptr, nullptr, &id), KVF_OK);
    return id;
  }
  // Sends frames 1 (whole), 2 and 3 (patches), each acked.
  void send_acked_frames() {
    send(1, KVF_FRAME_WHOLE, R"({"pot":10,"turn":"p1"})");
    send(2, KVF_FRAME_MERGE_PATCH, R"({"pot":20})");
    send(3, KVF_FRAME_MERGE_PATCH, R"({"turn":"p2"})");
    for (int i = 0; i < 3; ++i) server_.frame_ack(server_.expect(fb::Body::Frame));
    // The acks are read in order before this answer: none is still in flight after it.
    const uint64_t sync = query("Synced?");
    server_.result(server_.expect(fb::Body::Query), "yes");
    EventPtr answer = poll_event(client_.get());
    ASSERT_TRUE(answer);
    EXPECT_EQ(kvf_event_request_id(answer.get()), sync);
  }
  // The re-sent frames 1..3 under `server_session`, in order.
  void expect_replayed_frames(uint64_t server_session) {
    const char* expected[] = {R"({"pot":10,"turn":"p1"})", R"({"pot":20})", R"({"turn":"p2"})"};
    for (uint64_t number = 1; number <= 3; ++number) {
      Incoming frame = server_.expect(fb::Body::Frame);
      EXPECT_EQ(frame_of(frame).session_id(), server_session);
      EXPECT_EQ(frame_of(frame).frame_number(), number);
      EXPECT_EQ(frame_of(frame).format(), number == 1 ? fb::FrameFormat::Whole : fb::FrameFormat::MergePatch);
      EXPECT_EQ(frame_of(frame).json()->str(), expected[number - 1]);
      server_.frame_ack(frame);
    }
  }

  // The server restarts as `instance_id` and re-opens the session as
  // `server_session`: the frames re-sent must be `numbers`, each acked, and
  // nothing after them.
  void expect_resent_after_restart(uint64_t instance_id, uint64_t server_session,
                                   const std::vector<uint64_t>& numbers) {
    server_.restart();
    server_.answer_hello(instance_id);
    server_.session_opened(server_.expect(fb::Body::OpenSession), server_session);
    for (uint64_t number : numbers) {
      Incoming frame = server_.expect(fb::Body::Frame);
      EXPECT_EQ(frame_of(frame).frame_number(), number);
      EXPECT_EQ(frame_of(frame).session_id(), server_session);
      server_.frame_ack(frame);
    }
    EXPECT_TRUE(server_.quiet(100));
  }

  ScriptedServer server_;
  ClientPtr client_{nullptr, &kvf_client_close};
  kvf_session session_ = 0;
};

TEST_F(ClientRecovery, ReopensTheSessionResendsItsFramesThenWhatWaited) {
  send_acked_frames();
  const uint64_t in_flight = query("Before the restart?");
  server_.expect(fb::Body::Query);

  server_.restart();
  EventPtr failed = poll_event(client_.get());  // the connection dropped under it
  ASSERT_TRUE(failed);
  EXPECT_EQ(kvf_event_request_id(failed.get()), in_flight);
  EXPECT_EQ(kvf_event_error_code(failed.get()), KVF_ERR_DISCONNECTED);

  const uint64_t waiting = query("After the restart?");  // held until the session is back
  server_.answer_hello(/*instance_id=*/2);
  Incoming reopen = server_.expect(fb::Body::OpenSession);
  const fb::OpenSession& params = *reopen.message().body_as_OpenSession();
  EXPECT_EQ(params.game_id()->str(), "holdem");
  EXPECT_EQ(params.system_prompt()->str(), "You play poker.");
  server_.session_opened(reopen, 99);
  expect_replayed_frames(99);

  Incoming next = server_.expect(fb::Body::Query);
  EXPECT_EQ(next.request_id(), waiting);
  EXPECT_EQ(next.message().body_as_Query()->session_id(), 99u);
  server_.result(next, "yes");
  EventPtr result = poll_event(client_.get());
  ASSERT_TRUE(result);
  EXPECT_EQ(kvf_event_request_id(result.get()), waiting);
  EXPECT_EQ(kvf_event_session(result.get()), session_);  // the same handle throughout
  EXPECT_FALSE(poll_event(client_.get(), 50));  // the re-sent frames' acks are the client's own
}

TEST_F(ClientRecovery, AFrameInFlightIsResentUnderItsOwnRequest) {
  send(1, KVF_FRAME_WHOLE, R"({"pot":10})");
  Collector collector;
  const std::string patch = R"({"pot":30})";
  uint64_t patch_request = 0;
  ASSERT_EQ(kvf_send_frame(client_.get(), session_, 2, KVF_FRAME_MERGE_PATCH, patch.data(), patch.size(),
                           &Collector::callback, &collector, &patch_request),
            KVF_OK);
  server_.frame_ack(server_.expect(fb::Body::Frame));
  server_.expect(fb::Body::Frame);  // frame 2 never acked: the server "dies"

  server_.restart();
  server_.answer_hello(2);
  server_.session_opened(server_.expect(fb::Body::OpenSession), 7);
  server_.frame_ack(server_.expect(fb::Body::Frame));
  Incoming resent = server_.expect(fb::Body::Frame);
  EXPECT_EQ(resent.request_id(), patch_request);
  EXPECT_EQ(frame_of(resent).session_id(), 7u);
  server_.frame_ack(resent);
  std::vector<SeenEvent> seen = collector.wait_for(1);
  ASSERT_EQ(seen.size(), 1u);  // one ack, no error
  EXPECT_EQ(seen[0].type, KVF_EVENT_FRAME_ACK) << kvf_status_name(seen[0].code) << ": " << seen[0].text;
  EXPECT_EQ(seen[0].frame_number, 2u);
}

TEST_F(ClientRecovery, AStaleCopyRefusedByTheNewServerDoesNotAnswerTheResentFrame) {
  Collector collector;
  const std::string json = R"({"pot":10})";
  uint64_t frame = 0;
  ASSERT_EQ(kvf_send_frame(client_.get(), session_, 1, KVF_FRAME_WHOLE, json.data(), json.size(),
                           &Collector::callback, &collector, &frame),
            KVF_OK);
  server_.expect(fb::Body::Frame);
  server_.restart();
  // As if a copy sent just before the drop had reached the new server, which
  // does not know session 42: its refusal comes before the HelloReply.
  Incoming hello = server_.expect(fb::Body::Hello);
  server_.reply(hello, protocol::error_message(frame, fb::ErrorCode::UnknownSession, "no session 42", 42));
  server_.hello_reply(hello, 2);
  server_.session_opened(server_.expect(fb::Body::OpenSession), 7);
  Incoming resent = server_.expect(fb::Body::Frame);
  EXPECT_EQ(resent.request_id(), frame);
  server_.frame_ack(resent);
  std::vector<SeenEvent> seen = collector.wait_for(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, KVF_EVENT_FRAME_ACK) << kvf_status_name(seen[0].code) << ": " << seen[0].text;
}

TEST_F(ClientRecovery, TheSameServerAfterADropKeepsItsSessions) {
  send_acked_frames();
  server_.restart();
  server_.answer_hello(/*instance_id=*/1);  // the same process: a network drop, not a restart
  const uint64_t after = query("Still there?");
  Incoming next = server_.expect(fb::Body::Query);  // no OpenSession, no frames before it
  EXPECT_EQ(next.request_id(), after);
  EXPECT_EQ(next.message().body_as_Query()->session_id(), 42u);
}

TEST_F(ClientRecovery, AnUnknownSessionErrorAlsoTriggersTheReopen) {
  send_acked_frames();
  const uint64_t refused = query("Do you know me?");
  server_.error(server_.expect(fb::Body::Query), fb::ErrorCode::UnknownSession, "no session 42");
  EventPtr error = poll_event(client_.get());  // the request still gets its one answer
  ASSERT_TRUE(error);
  EXPECT_EQ(kvf_event_request_id(error.get()), refused);
  EXPECT_EQ(kvf_event_error_code(error.get()), KVF_ERR_UNKNOWN_SESSION);

  server_.session_opened(server_.expect(fb::Body::OpenSession), 55);
  expect_replayed_frames(55);
  const uint64_t again = query("And now?");
  Incoming next = server_.expect(fb::Body::Query);
  EXPECT_EQ(next.request_id(), again);
  EXPECT_EQ(next.message().body_as_Query()->session_id(), 55u);
}

TEST_F(ClientRecovery, AWholeFrameDropsTheKeptPatches) {
  send_acked_frames();
  send(4, KVF_FRAME_WHOLE, R"({"pot":0})");
  send(5, KVF_FRAME_MERGE_PATCH, R"({"pot":5})");
  server_.frame_ack(server_.expect(fb::Body::Frame));
  server_.frame_ack(server_.expect(fb::Body::Frame));
  expect_resent_after_restart(2, 8, {4, 5});
}

TEST_F(ClientRecovery, PatchesBeyondTheBoundAreNotKeptAndNothingStaleIsResent) {
  send(1, KVF_FRAME_WHOLE, R"({"tick":0})");
  constexpr uint64_t kPatches = 4096;  // one frame more than a session keeps
  for (uint64_t n = 2; n <= kPatches + 1; ++n) send(n, KVF_FRAME_MERGE_PATCH, R"({"tick":1})");
  for (uint64_t n = 1; n <= kPatches + 1; ++n) {  // all reached the server (unanswered)
    ASSERT_TRUE(server_.receive()) << "frame " << n;
  }
  server_.restart();
  server_.answer_hello(2);
  server_.session_opened(server_.expect(fb::Body::OpenSession), 9);
  const uint64_t next = query("Anything?");
  Incoming after = server_.expect(fb::Body::Query);  // no frames before it: a partial history would be wrong
  EXPECT_EQ(after.request_id(), next);
}

TEST_F(ClientRecovery, RefusedFramesAndThePatchesAfterThemAreNotResent) {
  send_acked_frames();
  send(4, KVF_FRAME_MERGE_PATCH, R"({"pot":)");
  send(5, KVF_FRAME_MERGE_PATCH, R"({"pot":40})");
  server_.error(server_.expect(fb::Body::Frame), fb::ErrorCode::BadJson, "unterminated object");
  server_.error(server_.expect(fb::Body::Frame), fb::ErrorCode::StaleBase, "the session holds frame 3");
  for (kvf_status code : {KVF_ERR_BAD_JSON, KVF_ERR_STALE_BASE}) {
    EventPtr refused = poll_event(client_.get());
    ASSERT_TRUE(refused);
    EXPECT_EQ(kvf_event_error_code(refused.get()), code);
  }
  expect_resent_after_restart(2, 11, {1, 2, 3});  // the state the old server held
}

TEST_F(ClientRecovery, ARefusedWholeFrameLeavesNothingToResend) {
  send_acked_frames();
  send(4, KVF_FRAME_WHOLE, R"({"pot":[)");
  server_.error(server_.expect(fb::Body::Frame), fb::ErrorCode::BadJson, "unterminated array");
  ASSERT_TRUE(poll_event(client_.get()));
  expect_resent_after_restart(2, 12, {});  // frames 1 to 3 went when the whole frame was sent
}

TEST_F(ClientRecovery, AResentFrameTheNewServerRefusesIsNotResentAgain) {
  send_acked_frames();
  server_.restart();
  server_.answer_hello(2);
  server_.session_opened(server_.expect(fb::Body::OpenSession), 13);
  server_.frame_ack(server_.expect(fb::Body::Frame));
  server_.frame_ack(server_.expect(fb::Body::Frame));
  server_.error(server_.expect(fb::Body::Frame), fb::ErrorCode::Busy, "queues full");
  const uint64_t sync = query("Synced?");  // answered after the refusal was read
  server_.result(server_.expect(fb::Body::Query), "yes");
  EventPtr answer = poll_event(client_.get());
  ASSERT_TRUE(answer);
  EXPECT_EQ(kvf_event_request_id(answer.get()), sync);

  expect_resent_after_restart(3, 14, {1, 2});
}

TEST_F(ClientRecovery, AFailedReopenFailsTheWaitingRequestsAndLaterOnes) {
  send_acked_frames();
  server_.restart();
  server_.answer_hello(2);  // (the client noticed the drop: a query now cannot slip onto the old connection)
  const uint64_t waiting = query("Held?");
  server_.error(server_.expect(fb::Body::OpenSession), fb::ErrorCode::Unsupported, "no block mode here");
  EventPtr failed = poll_event(client_.get());
  ASSERT_TRUE(failed);
  EXPECT_EQ(kvf_event_request_id(failed.get()), waiting);
  EXPECT_EQ(kvf_event_error_code(failed.get()), KVF_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(kvf_event_text(failed.get(), nullptr)).find("no block mode here"), std::string::npos);
  const uint64_t later_id = query("Later?");
  EventPtr later = poll_event(client_.get());
  ASSERT_TRUE(later);
  EXPECT_EQ(kvf_event_request_id(later.get()), later_id);
  EXPECT_EQ(kvf_event_error_code(later.get()), KVF_ERR_UNKNOWN_SESSION) << kvf_event_text(later.get(), nullptr);
  EXPECT_EQ(kvf_session_close(client_.get(), session_), KVF_OK);  // closing a lost session needs no server
}

TEST_F(ClientRecovery, ClosingASessionWhileTheServerIsAwayNeedsNoServer) {
  query("In flight");
  server_.expect(fb::Body::Query);
  server_.restart();  // and no Hello is answered
  EventPtr dropped = poll_event(client_.get());
  ASSERT_TRUE(dropped);
  EXPECT_EQ(kvf_event_error_code(dropped.get()), KVF_ERR_DISCONNECTED);
  EXPECT_EQ(kvf_session_close(client_.get(), session_), KVF_OK);
}

}  // namespace
}  // namespace kvframe::test
