// kvframe-serve on the default model (label model; skipped without it): a
// real chat model answers end to end, and SIGTERM while a query runs ends
// the process with status 0 without waiting for it (--shutdown-grace-ms 0),
// queued requests answered ShuttingDown.
#include <gtest/gtest.h>

#include <signal.h>

#include "default_model.h"
#include "raw_client.h"
#include "server_process.h"

namespace kvframe::server::test {
namespace {

using kvframe::test::ServerProcess;
using kvframe::test::ServerProcessOptions;

TEST(ServeDefaultModelTest, AnswersAndStopsCleanlyWhileAQueryRuns) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  ServerProcessOptions options;
  options.model_path = model;
  options.extra_args = {"--shutdown-grace-ms", "0"};  // leave the long query behind
  auto server = ServerProcess::start(options);
  ASSERT_TRUE(server) << ServerProcess::last_start_error();
  zmq::context_t context;
  Client client(context, server->endpoint());
  const std::string opened = client.request(open_session_message(1));
  ASSERT_EQ(body_type(opened), fb::Body::SessionOpened) << server->log();
  const uint64_t session = read_reply(opened)->body_as_SessionOpened()->session_id();
  ASSERT_EQ(body_type(client.request(frame_message(2, session, 1, kState))), fb::Body::FrameAck);
  QueryOptions short_answer;
  short_answer.max_tokens = 8;
  const std::string result = client.request(query_message(3, session, short_answer));
  ASSERT_EQ(body_type(result), fb::Body::Result) << server->log();
  EXPECT_FALSE(read_reply(result)->body_as_Result()->text()->str().empty());

  QueryOptions long_answer;
  long_answer.instruction = "Count from 1 to 1000, one number per line.";
  long_answer.max_tokens = 1000;
  client.send(query_message(10, session, long_answer));
  // A frame between them, so 11 waits behind 10 instead of joining its batch
  // (a batch runs, and is abandoned at the grace's end, as one).
  client.send(frame_message(12, session, 2, kState));
  client.send(query_message(11, session, short_answer));
  Client observer(context, server->endpoint());
  for (int i = 0; i < 100; ++i) {  // until the long query is running
    const std::string stats = observer.request(stats_request_message(20));
    if (body_type(stats) == fb::Body::Stats && read_reply(stats)->body_as_Stats()->queue_depth() <= 2) break;  // the frame and 11 wait
  }
  EXPECT_EQ(server->stop(SIGTERM, kReplyTimeoutMs), 0) << server->log();
  bool answered_11 = false;
  while (auto reply = client.receive(200)) {
    const fb::Message* m = read_reply(*reply);
    ASSERT_NE(m, nullptr);
    if (m->request_id() != 11) continue;  // 10: its Result, or nothing if it was abandoned; 12: its ack
    answered_11 = true;
    EXPECT_TRUE(m->body_type() == fb::Body::Result || error_code(*reply) == fb::ErrorCode::ShuttingDown);
  }
  EXPECT_TRUE(answered_11) << "a queued request is answered, not dropped\n" << server->log();
}

}  // namespace
}  // namespace kvframe::server::test
