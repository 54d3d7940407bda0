// kvframe-serve as a process (tests/support/server_process.h) on the tiny
// model, spoken to over raw ZeroMQ DEALER sockets: hostile and mistaken
// requests get their error and, in every case, a second well-behaved game on
// the same server keeps getting correct answers.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include <flatbuffers/flexbuffers.h>

#include "kvframe/server_core/curve_keys.h"
#include "kvframe/server_core/ping.h"
#include "raw_client.h"
#include "server_process.h"

namespace kvframe::server::test {
namespace {

using kvframe::test::ServerProcess;
using kvframe::test::ServerProcessOptions;

constexpr int kNoReplyMs = 1500;  // how long "no service" is watched for

class ServeTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra_args = {}) {
    ServerProcessOptions options;
    options.extra_args = std::move(extra_args);
    server = ServerProcess::start(options);
    ASSERT_TRUE(server) << ServerProcess::last_start_error();
  }
  void TearDown() override {
    if (server && server->running()) {
      EXPECT_EQ(server->stop(), 0) << server->log();
    }
  }
  uint64_t open_session(Client& client) {
    const std::string reply = client.request(open_session_message(1));
    EXPECT_EQ(body_type(reply), fb::Body::SessionOpened) << server->log();
    const fb::Message* m = read_reply(reply);
    return m && m->body_type() == fb::Body::SessionOpened ? m->body_as_SessionOpened()->session_id() : 0;
  }

  zmq::context_t context;
  std::unique_ptr<ServerProcess> server;
};

TEST_F(ServeTest, ServesAGameFromHelloToClose) {
  start();
  Client client(context, server->endpoint());
  const std::string hello = client.request(hello_message(1));
  ASSERT_EQ(body_type(hello), fb::Body::HelloReply) << server->log();
  EXPECT_EQ(read_reply(hello)->body_as_HelloReply()->modes()->size(), 3u);
  const uint64_t session = open_session(client);
  ASSERT_EQ(body_type(client.request(frame_message(2, session, 7, kState))), fb::Body::FrameAck);
  QueryOptions stream;
  stream.stream = true;
  stream.max_tokens = 6;
  const std::string result = client.request(query_message(3, session, stream));
  ASSERT_EQ(body_type(result), fb::Body::Result) << server->log();
  const fb::Result& r = *read_reply(result)->body_as_Result();
  EXPECT_EQ(r.frame_number(), 7u);
  EXPECT_EQ(r.text()->str(), client.chunks) << "the chunks are the text";
  EXPECT_GT(r.report()->blocks_total(), 0u);
  const std::string stats = client.request(stats_request_message(4));
  ASSERT_EQ(body_type(stats), fb::Body::Stats);
  EXPECT_EQ(read_reply(stats)->body_as_Stats()->queries(), 1u);
  EXPECT_EQ(body_type(client.request(close_session_message(5, session))), fb::Body::SessionClosed);
  EXPECT_NE(server->log().find("msg=\"session opened\""), std::string::npos);
}

// Several NPCs asking at once, each with the table's action schema: every
// Result carries a valid action, as text and parsed.
TEST_F(ServeTest, NpcActionsSentTogetherAreValidAndParsed) {
  start();
  Client client(context, server->endpoint());
  const uint64_t session = open_session(client);
  client.send(frame_message(2, session, 1, kState));
  QueryOptions act;
  act.kind = fb::TaskKind::NpcAction;
  act.max_tokens = 48;
  act.output_schema =
      R"({"type":"object","properties":{"action":{"enum":["fold","call","raise"]},)"
      R"("amount":{"type":"integer","minimum":20,"maximum":950}},"required":["action","amount"]})";
  for (uint64_t id = 10; id < 16; ++id) client.send(query_message(id, session, act));
  ASSERT_EQ(body_type(client.receive(kReplyTimeoutMs).value_or("")), fb::Body::FrameAck) << server->log();
  std::string batch_sizes;
  for (uint64_t id = 10; id < 16; ++id) {
    const std::string reply = client.receive(kReplyTimeoutMs).value_or("");
    ASSERT_EQ(body_type(reply), fb::Body::Result) << server->log();
    const fb::Result& r = *read_reply(reply)->body_as_Result();
    EXPECT_EQ(read_reply(reply)->request_id(), id);
    EXPECT_EQ(r.stop(), fb::StopReason::Complete);
    const std::string json = r.action_json()->str();
    ASSERT_TRUE(r.action() && r.action()->size() > 0) << json;
    const flexbuffers::Map action = flexbuffers::GetRoot(r.action()->data(), r.action()->size()).AsMap();
    const std::string what = action["action"].AsString().str();
    EXPECT_TRUE(what == "fold" || what == "call" || what == "raise") << json;
    EXPECT_GE(action["amount"].AsInt64(), 20) << json;
    EXPECT_LE(action["amount"].AsInt64(), 950) << json;
    EXPECT_NE(json.find('"' + what + '"'), std::string::npos) << "action_json and action agree: " << json;
    batch_sizes += std::to_string(r.report()->batch_size()) + " ";
  }
  RecordProperty("batch_sizes", batch_sizes);  // timing decides how many were queued together

  QueryOptions untyped = act;
  untyped.output_schema = "{}";
  EXPECT_EQ(error_code(client.request(query_message(20, session, untyped))), fb::ErrorCode::BadRequest);
  QueryOptions too_long = act;
  too_long.max_tokens = 4;
  EXPECT_EQ(error_code(client.request(query_message(21, session, too_long))), fb::ErrorCode::Unsatisfiable);
  EXPECT_EQ(body_type(client.request(query_message(22, session, act))), fb::Body::Result) << "the session goes on";
}

TEST_F(ServeTest, HostileAndMistakenRequestsDoNotDisturbAnotherGame) {
  start();
  WellBehavedGame game(context, server->endpoint());
  ASSERT_TRUE(game.open());
  ASSERT_EQ(game.round(), "");
  Client bad(context, server->endpoint());
  const uint64_t session = open_session(bad);
  const std::string valid = frame_message(9, session, 1, kState);
  std::string flipped = valid;
  flipped[valid.size() / 3] = static_cast<char>(flipped[valid.size() / 3] ^ 0xff);

  struct Case {
    const char* what;
    std::string bytes;
    std::vector<fb::ErrorCode> codes;  // any of these
  };
  const std::vector<Case> cases = {
      {"garbage", "\x01\x02 not a message at all", {fb::ErrorCode::Malformed}},
      {"truncated", valid.substr(0, valid.size() - 7), {fb::ErrorCode::Malformed}},
      {"bit flip", flipped, {fb::ErrorCode::Malformed, fb::ErrorCode::BadJson, fb::ErrorCode::BadRequest,
                             fb::ErrorCode::UnknownSession, fb::ErrorCode::None}},
      {"wrong version", hello_message(10, 99), {fb::ErrorCode::WrongVersion}},
      {"unknown session", query_message(11, session ^ 0x5555), {fb::ErrorCode::UnknownSession}},
      {"query before frame", query_message(12, session), {fb::ErrorCode::OutOfOrder}},
      {"bad json", frame_message(13, session, 2, "{\"turn\": 1,,}"), {fb::ErrorCode::BadJson}},
      {"frame out of order", frame_message(14, session, 1, kState), {fb::ErrorCode::OutOfOrder}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string reply = bad.request(c.bytes);
    ASSERT_FALSE(reply.empty()) << "no reply";
    const fb::ErrorCode code = error_code(reply);
    EXPECT_NE(std::find(c.codes.begin(), c.codes.end(), code), c.codes.end())
        << "got " << protocol::error_code_name(code);
    EXPECT_EQ(game.round(), "") << server->log();
  }
}

TEST_F(ServeTest, OversizeMessagesAreRefusedOrDroppedAndTheServerGoesOn) {
  start({"--max-message-mb", "0.05"});  // soft limit 52,428 bytes; hard limit twice that + 64 KiB
  WellBehavedGame game(context, server->endpoint());
  ASSERT_TRUE(game.open());
  Client big(context, server->endpoint());
  const uint64_t session = open_session(big);
  const std::string over_soft = frame_message(21, session, 1, "[\"" + std::string(60 << 10, 'x') + "\"]");
  const std::string reply = big.request(over_soft);
  EXPECT_EQ(error_code(reply), fb::ErrorCode::TooLarge);
  ASSERT_FALSE(reply.empty());
  EXPECT_EQ(read_reply(reply)->request_id(), 21u) << "the refusal names the request";
  EXPECT_EQ(game.round(), "");

  Client huge(context, server->endpoint());
  EXPECT_EQ(huge.request(frame_message(22, session, 2, "[\"" + std::string(400 << 10, 'x') + "\"]"), kNoReplyMs),
            "")
      << "above the hard limit ZeroMQ drops the connection unread";
  EXPECT_EQ(game.round(), "") << server->log();
}

TEST_F(ServeTest, ModesTheServerWasNotStartedWithAreUnsupported) {
  start({"--mode", "block"});
  Client client(context, server->endpoint());
  const std::string hello = client.request(hello_message(1));
  ASSERT_EQ(body_type(hello), fb::Body::HelloReply);
  const auto* modes = read_reply(hello)->body_as_HelloReply()->modes();
  ASSERT_EQ(modes->size(), 1u);
  EXPECT_EQ(modes->Get(0), fb::AttentionMode::Block);
  EXPECT_EQ(error_code(client.request(open_session_message(2, fb::AttentionMode::Full))), fb::ErrorCode::Unsupported);
  WellBehavedGame game(context, server->endpoint());
  ASSERT_TRUE(game.open());
  EXPECT_EQ(game.round(), "");
}

TEST_F(ServeTest, CurveServesAllowedKeysOnly) {
  if (!curve_available()) GTEST_SKIP() << "libzmq without CURVE";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kvframe-curve-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto server_keys = write_key_pair((dir / "server").string());
  auto allowed = write_key_pair((dir / "allowed").string());
  auto stranger = generate_key_pair();
  ASSERT_TRUE(server_keys && allowed && stranger);
  start({"--curve-secret", (dir / "server.key").string(), "--curve-allow", (dir / "allowed.pub").string()});

  const CurveClientKeys good_keys{server_keys->public_key, allowed->public_key, allowed->secret_key};
  WellBehavedGame game(context, server->endpoint(), &good_keys);
  ASSERT_TRUE(game.open()) << server->log();
  EXPECT_EQ(game.round(), "");

  const CurveClientKeys stranger_keys{server_keys->public_key, stranger->public_key, stranger->secret_key};
  Client refused(context, server->endpoint(), &stranger_keys);
  EXPECT_EQ(refused.request(hello_message(1), kNoReplyMs), "") << "a key not on the list gets no service";
  Client plain(context, server->endpoint());
  EXPECT_EQ(plain.request(hello_message(2), kNoReplyMs), "") << "nor does a client without CURVE";
  EXPECT_EQ(game.round(), "");
  EXPECT_NE(server->log().find("client key refused"), std::string::npos) << server->log();

  // The health probe speaks CURVE too: with an allowed pair it is answered,
  // with a pair of its own the allow-list turns it away.
  PingParams probe{server->endpoint(), std::chrono::milliseconds(kNoReplyMs), server_keys->public_key,
                   allowed->public_key, allowed->secret_key};
  EXPECT_TRUE(ping(probe)) << server->log();
  probe.client_public_key = probe.client_secret_key = "";
  EXPECT_FALSE(ping(probe));
  std::filesystem::remove_all(dir);
}

TEST_F(ServeTest, RepliesToVanishedClientsAreCountedNotWaitedFor) {
  start();
  Client busy(context, server->endpoint());
  const uint64_t busy_session = open_session(busy);
  ASSERT_EQ(body_type(busy.request(frame_message(2, busy_session, 1, kState))), fb::Body::FrameAck);
  QueryOptions long_answer;
  long_answer.max_tokens = 400;
  // A frame between the busy game's queries keeps them out of one batch, so
  // they take four turns and the leaving game's requests run between them.
  for (uint64_t id = 10; id < 14; ++id) {
    busy.send(query_message(id, busy_session, long_answer));
    busy.send(frame_message(id + 10, busy_session, id - 8, R"({"turn":2})", fb::FrameFormat::MergePatch));
  }
  {
    // Its query waits behind the busy game's; it leaves before the answer.
    Client leaving(context, server->endpoint());
    const uint64_t session = open_session(leaving);
    ASSERT_EQ(body_type(leaving.request(frame_message(3, session, 1, kState))), fb::Body::FrameAck);
    leaving.send(query_message(4, session));
  }
  WellBehavedGame game(context, server->endpoint());
  ASSERT_TRUE(game.open());
  EXPECT_EQ(game.round(), "") << server->log();
  Client observer(context, server->endpoint());
  uint64_t undeliverable = 0;
  for (int i = 0; i < 100 && undeliverable == 0; ++i) {
    const std::string stats = observer.request(stats_request_message(5));
    ASSERT_EQ(body_type(stats), fb::Body::Stats);
    undeliverable = read_reply(stats)->body_as_Stats()->undeliverable();
    if (undeliverable == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_GE(undeliverable, 1u) << server->log();
}

TEST_F(ServeTest, PublicBindWithoutCurveIsRefused) {
  ServerProcessOptions options;
  options.bind = "tcp://0.0.0.0:0";
  options.start_timeout_ms = 20000;
  EXPECT_EQ(ServerProcess::start(options), nullptr);
  EXPECT_NE(ServerProcess::last_start_error().find("--insecure-public"), std::string::npos)
      << ServerProcess::last_start_error();
}

// The health probe (kvframe-serve --ping) gets the server's own HelloReply:
// exit 0 and the model's name; 4 where nothing answers.
TEST_F(ServeTest, PingIsAnsweredByTheServerItself) {
  start();
  auto answer = ping({server->endpoint(), std::chrono::milliseconds(kReplyTimeoutMs), "", "", ""});
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_FALSE(answer->model.empty());
  EXPECT_NE(answer->instance_id, 0u);
  const std::string probe = kvframe::test::kvframe_serve_path() + " --ping " + server->endpoint();
  EXPECT_EQ(WEXITSTATUS(std::system((probe + " >/dev/null").c_str())), 0);
  EXPECT_EQ(server->stop(), 0) << server->log();
  EXPECT_EQ(WEXITSTATUS(std::system((probe + " --ping-timeout-ms 300 >/dev/null").c_str())), 4);
}

// A launcher that binds port 0 learns the port from --ready-file, which exists
// only while the server listens.
TEST_F(ServeTest, ReadyFileNamesTheBoundEndpointWhileServing) {
  const std::filesystem::path ready =
      std::filesystem::temp_directory_path() / ("kvframe-ready-" + std::to_string(getpid()));
  start({"--ready-file", ready.string()});
  std::ifstream in(ready);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << server->log();
  EXPECT_EQ(line, server->endpoint());
  EXPECT_NE(body_type(Client(context, line).request(hello_message(1))), fb::Body::NONE);
  EXPECT_EQ(server->stop(), 0) << server->log();
  EXPECT_FALSE(std::filesystem::exists(ready));
}

TEST_F(ServeTest, SigtermAnswersQueuedRequestsAndExitsZero) {
  start();
  Client client(context, server->endpoint());
  const uint64_t session = open_session(client);
  ASSERT_EQ(body_type(client.request(frame_message(2, session, 1, kState))), fb::Body::FrameAck);
  QueryOptions slow;
  slow.max_tokens = 200;
  for (uint64_t id = 10; id < 20; ++id) client.send(query_message(id, session, slow));
  EXPECT_EQ(server->stop(SIGTERM, kReplyTimeoutMs), 0) << server->log();
  int answered = 0;
  while (auto reply = client.receive(200)) {
    const fb::Message* m = read_reply(*reply);
    ASSERT_NE(m, nullptr);
    if (m->body_type() == fb::Body::Result || error_code(*reply) == fb::ErrorCode::ShuttingDown) ++answered;
  }
  EXPECT_EQ(answered, 10) << "each queued query got its Result or ShuttingDown\n" << server->log();
}

}  // namespace
}  // namespace kvframe::server::test
