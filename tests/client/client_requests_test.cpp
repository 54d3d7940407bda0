// The client against a scripted server: connecting, where replies go
// (callback or poll queue), timeouts, closing with requests pending, the size
// limit, stats.
#include <nlohmann/json.hpp>

#include "client_test_support.h"

namespace kvframe::test {
namespace {

TEST(ClientConnect, ReadsTheHelloReply) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()), 77, 4096);
  ASSERT_TRUE(client);
  kvf_server_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(kvf_client_server_info(client.get(), &info), KVF_OK);
  EXPECT_STREQ(info.server_version, "scripted-0.1");
  EXPECT_STREQ(info.model, "tiny");
  EXPECT_EQ(info.instance_id, 77u);
  EXPECT_EQ(info.max_message_bytes, 4096u);
  EXPECT_EQ(info.max_context, 4096u);
}

TEST(ClientConnect, TimesOutWithoutAServerAndSaysWhere) {
  ScriptedServer server;  // binds a port, never answers
  kvf_client_params params = client_params(server.endpoint());
  params.connect_timeout_ms = 200;
  kvf_client* client = reinterpret_cast<kvf_client*>(0x1);
  EXPECT_EQ(kvf_client_connect(&params, &client), KVF_ERR_TIMEOUT);
  EXPECT_EQ(client, nullptr);
  EXPECT_NE(std::string(kvf_client_last_error(nullptr)).find(server.endpoint()), std::string::npos);
}

TEST(ClientConnect, RefusesBadEndpointsAndKeys) {
  kvf_client* client = nullptr;
  const std::string nonsense = "nonsense://here";
  kvf_client_params params = client_params(nonsense);
  EXPECT_EQ(kvf_client_connect(&params, &client), KVF_ERR_CONNECT);
  EXPECT_EQ(client, nullptr);
  const std::string nowhere = "tcp://127.0.0.1:1";
  params = client_params(nowhere);
  params.server_public_key = "too short";
  EXPECT_EQ(kvf_client_connect(&params, &client), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kvf_client_last_error(nullptr)).find("40 characters"), std::string::npos)
      << kvf_client_last_error(nullptr);
  EXPECT_EQ(kvf_client_connect(nullptr, &client), KVF_ERR_INVALID_ARGUMENT);
}

TEST(ClientConnect, LazyConnectHoldsRequestsUntilTheServerAnswers) {
  ScriptedServer server;
  kvf_client_params params = client_params(server.endpoint());
  params.connect_timeout_ms = 0;
  kvf_client* raw = nullptr;
  ASSERT_EQ(kvf_client_connect(&params, &raw), KVF_OK);
  ClientPtr client(raw, &kvf_client_close);
  kvf_session_params session_params = game_params();
  kvf_session session = 0;
  auto opening = std::async(std::launch::async, [&] { return kvf_session_open(raw, &session_params, &session); });
  server.answer_hello(1);  // Hello comes first; the OpenSession waited for its answer
  Incoming open = server.expect(fb::Body::OpenSession);
  EXPECT_EQ(open.message().body_as_OpenSession()->game_id()->str(), "holdem");
  server.session_opened(open, 5);
  EXPECT_EQ(opening.get(), KVF_OK);
  EXPECT_NE(session, 0u);
}

TEST(ClientRequests, RoutesRepliesToTheCallbackOrThePollQueue) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  const kvf_session session = open_scripted(server, client.get(), 42);

  const std::string json = R"({"pot":10})";
  ASSERT_EQ(kvf_send_frame(client.get(), session, 1, KVF_FRAME_WHOLE, json.data(), json.size(), nullptr, nullptr,
                           nullptr),
            KVF_OK);
  Incoming frame = server.expect(fb::Body::Frame);
  EXPECT_EQ(frame.message().body_as_Frame()->session_id(), 42u);
  EXPECT_EQ(frame.message().body_as_Frame()->json()->str(), json);
  server.frame_ack(frame);  // NULL callback: the ack is discarded

  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Raise?";
  Collector collector;
  uint64_t with_callback = 0;
  uint64_t polled = 0;
  ASSERT_EQ(kvf_query(client.get(), session, &q, &Collector::callback, &collector, &with_callback), KVF_OK);
  ASSERT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, &polled), KVF_OK);
  Incoming first = server.expect(fb::Body::Query);
  Incoming second = server.expect(fb::Body::Query);
  EXPECT_EQ(first.request_id(), with_callback);
  EXPECT_EQ(second.request_id(), polled);
  EXPECT_EQ(first.message().body_as_Query()->instruction()->str(), "Raise?");
  server.result(second, "fold");
  server.result(first, "raise");

  EventPtr event = poll_event(client.get());
  ASSERT_TRUE(event);
  EXPECT_EQ(kvf_event_type_of(event.get()), KVF_EVENT_RESULT);  // not the discarded ack
  EXPECT_EQ(kvf_event_request_id(event.get()), polled);
  EXPECT_EQ(kvf_event_session(event.get()), session);
  EXPECT_STREQ(kvf_event_text(event.get(), nullptr), "fold");
  kvf_report report{};
  report.struct_size = sizeof report;
  ASSERT_EQ(kvf_event_report(event.get(), &report), KVF_OK);
  EXPECT_EQ(report.blocks_total, 3);
  EXPECT_EQ(report.blocks_reused, 2);
  EXPECT_GE(report.round_trip_ms, 0.0);

  std::vector<SeenEvent> seen = collector.wait_for(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].request_id, with_callback);
  EXPECT_EQ(seen[0].text, "raise");
  EXPECT_FALSE(poll_event(client.get(), 50));  // nothing else queued
}

TEST(ClientRequests, AFrameErrorWithoutCallbackGoesToThePollQueue) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  const kvf_session session = open_scripted(server, client.get(), 42);
  uint64_t request = 0;
  ASSERT_EQ(kvf_send_frame(client.get(), session, 9, KVF_FRAME_MERGE_PATCH, "{}", 2, nullptr, nullptr, &request),
            KVF_OK);
  server.error(server.expect(fb::Body::Frame), fb::ErrorCode::OutOfOrder, "a patch before any whole frame");
  EventPtr event = poll_event(client.get());
  ASSERT_TRUE(event);
  EXPECT_EQ(kvf_event_type_of(event.get()), KVF_EVENT_ERROR);
  EXPECT_EQ(kvf_event_error_code(event.get()), KVF_ERR_OUT_OF_ORDER);
  EXPECT_EQ(kvf_event_request_id(event.get()), request);
  EXPECT_EQ(kvf_event_frame_number(event.get()), 9u);
  EXPECT_STREQ(kvf_event_text(event.get(), nullptr), "a patch before any whole frame");
}

TEST(ClientRequests, StreamedChunksArriveInOrderThenTheResult) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  const kvf_session session = open_scripted(server, client.get(), 42);
  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Commentate.";
  q.kind = KVF_TASK_COMMENTARY;
  q.stream = 1;
  ASSERT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, nullptr), KVF_OK);
  Incoming query = server.expect(fb::Body::Query);
  EXPECT_TRUE(query.message().body_as_Query()->stream());
  server.chunk(query, 0, "What ");
  server.chunk(query, 1, "a play!");
  server.result(query, "What a play!");
  for (uint32_t seq = 0; seq < 2; ++seq) {
    EventPtr chunk = poll_event(client.get());
    ASSERT_TRUE(chunk);
    EXPECT_EQ(kvf_event_type_of(chunk.get()), KVF_EVENT_CHUNK);
    EXPECT_EQ(kvf_event_chunk_seq(chunk.get()), seq);
  }
  EventPtr result = poll_event(client.get());
  ASSERT_TRUE(result);
  EXPECT_EQ(kvf_event_type_of(result.get()), KVF_EVENT_RESULT);
}

TEST(ClientRequests, UnansweredRequestsTimeOut) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint(), 200));
  const kvf_session session = open_scripted(server, client.get(), 42);
  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Anyone?";
  uint64_t request = 0;
  ASSERT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, &request), KVF_OK);
  server.expect(fb::Body::Query);  // and never answered
  EventPtr event = poll_event(client.get());
  ASSERT_TRUE(event);
  EXPECT_EQ(kvf_event_error_code(event.get()), KVF_ERR_TIMEOUT);
  EXPECT_EQ(kvf_event_request_id(event.get()), request);

  char* json = nullptr;  // a blocking call times out the same way
  EXPECT_EQ(kvf_server_stats_json(client.get(), &json), KVF_ERR_TIMEOUT);
  EXPECT_EQ(json, nullptr);
}

TEST(ClientRequests, ClosingTheClientCompletesPendingRequestsWithClosed) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  const kvf_session session = open_scripted(server, client.get(), 42);
  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Slow one.";
  Collector collector;
  ASSERT_EQ(kvf_query(client.get(), session, &q, &Collector::callback, &collector, nullptr), KVF_OK);
  server.expect(fb::Body::Query);
  client.reset();  // the server answers nothing, not even the CloseSession
  std::vector<SeenEvent> seen = collector.wait_for(1, 0);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].code, KVF_ERR_CLOSED);
  Incoming close = server.expect(fb::Body::CloseSession);  // best effort, before going
  EXPECT_EQ(close.message().body_as_CloseSession()->session_id(), 42u);
}

TEST(ClientRequests, ClosingASessionCompletesItsPendingRequestsWithClosed) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  const kvf_session session = open_scripted(server, client.get(), 42);
  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Slow one.";
  uint64_t request = 0;
  ASSERT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, &request), KVF_OK);
  server.expect(fb::Body::Query);
  auto closing = std::async(std::launch::async, [&] { return kvf_session_close(client.get(), session); });
  server.session_closed(server.expect(fb::Body::CloseSession));
  EXPECT_EQ(closing.get(), KVF_OK);
  EventPtr event = poll_event(client.get());
  ASSERT_TRUE(event);
  EXPECT_EQ(kvf_event_request_id(event.get()), request);
  EXPECT_EQ(kvf_event_error_code(event.get()), KVF_ERR_CLOSED);
  EXPECT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, nullptr), KVF_ERR_UNKNOWN_SESSION);
}

TEST(ClientRequests, RefusesWhatTheServerWouldRefuseAsTooLargeAndSendsNothing) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()), 1, 4096);
  const kvf_session session = open_scripted(server, client.get(), 42);
  const std::string big = "{\"text\":\"" + std::string(8000, 'x') + "\"}";
  EXPECT_EQ(kvf_send_frame(client.get(), session, 1, KVF_FRAME_WHOLE, big.data(), big.size(), nullptr, nullptr,
                           nullptr),
            KVF_ERR_TOO_LARGE);
  EXPECT_NE(std::string(kvf_client_last_error(nullptr)).find("4096"), std::string::npos);
  const std::string small = "{}";
  ASSERT_EQ(kvf_send_frame(client.get(), session, 1, KVF_FRAME_WHOLE, small.data(), small.size(), nullptr, nullptr,
                           nullptr),
            KVF_OK);
  Incoming frame = server.expect(fb::Body::Frame);  // the first thing the server sees
  EXPECT_EQ(frame.message().body_as_Frame()->json()->str(), small);
}

TEST(ClientRequests, ServerStatsAsJson) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  char* json = nullptr;
  auto asking = std::async(std::launch::async, [&] { return kvf_server_stats_json(client.get(), &json); });
  server.stats(server.expect(fb::Body::StatsRequest));
  ASSERT_EQ(asking.get(), KVF_OK) << kvf_client_last_error(nullptr);
  const nlohmann::json stats = nlohmann::json::parse(json);
  kvf_string_free(json);
  EXPECT_EQ(stats["sessions"], 2);
  EXPECT_EQ(stats["frames"], 40);
  EXPECT_EQ(stats["queries"], 7);
  EXPECT_DOUBLE_EQ(stats["uptime_s"].get<double>(), 12.5);
  ASSERT_EQ(stats["stages"].size(), 1u);
  EXPECT_EQ(stats["stages"][0]["name"], "engine");
  EXPECT_EQ(stats["stages"][0]["count"], 5);
}

TEST(ClientRequests, BlockingCallsFromACallbackAreRefusedNotDeadlocked) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  const kvf_session session = open_scripted(server, client.get(), 42);
  struct Inside {
    kvf_client* client;
    std::promise<kvf_status> stats, close;
  } inside{client.get(), {}, {}};
  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Hi";
  auto callback = [](const kvf_event*, void* user) {
    auto* in = static_cast<Inside*>(user);
    char* json = nullptr;
    in->stats.set_value(kvf_server_stats_json(in->client, &json));
    kvf_client_close(in->client);  // ignored: it would join its own thread
    in->close.set_value(KVF_OK);
  };
  ASSERT_EQ(kvf_query(client.get(), session, &q, callback, &inside, nullptr), KVF_OK);
  server.result(server.expect(fb::Body::Query), "hello");
  EXPECT_EQ(inside.stats.get_future().get(), KVF_ERR_INVALID_ARGUMENT);
  inside.close.get_future().wait();
  EXPECT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, nullptr), KVF_OK);  // still open
}

TEST(ClientRequests, ArgumentErrorsAreStatusesWithMessages) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  kvf_query_params q = client::defaults(kvf_query_params_init);
  EXPECT_EQ(kvf_query(client.get(), 1, &q, nullptr, nullptr, nullptr), KVF_ERR_INVALID_ARGUMENT);  // no instruction
  EXPECT_NE(std::string(kvf_client_last_error(nullptr)).find("instruction"), std::string::npos);
  q.instruction = "Hi";
  EXPECT_EQ(kvf_query(client.get(), 12345, &q, nullptr, nullptr, nullptr), KVF_ERR_UNKNOWN_SESSION);
  EXPECT_EQ(kvf_send_frame(nullptr, 1, 1, KVF_FRAME_WHOLE, "{}", 2, nullptr, nullptr, nullptr),
            KVF_ERR_INVALID_ARGUMENT);
  kvf_event* event = nullptr;
  EXPECT_EQ(kvf_poll(client.get(), 0, &event), KVF_ERR_EMPTY);
  EXPECT_STREQ(kvf_status_name(KVF_ERR_UNKNOWN_SESSION), "KVF_ERR_UNKNOWN_SESSION");
  kvf_client_close(nullptr);  // a no-op
}

}  // namespace
}  // namespace kvframe::test
