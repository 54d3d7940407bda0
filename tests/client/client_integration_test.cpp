// The client against a real kvframe-serve on a tiny random-weight model
// (tests/support): answers with the engine's report, streaming, a client
// leaving mid-stream, a server restart under a connected client. Skipped
// when this build has no kvframe-serve and $KVFRAME_SERVE is not set.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>
#include <zmq.h>

#include "client_test_support.h"
#include "kvframe/client/kvframe_client.hpp"
#include "server_process.h"

namespace kvframe::test {
namespace {

#define KVFRAME_REQUIRE_SERVE()                                                                  \
  if (kvframe_serve_path().empty()) {                                                            \
    GTEST_SKIP() << "no kvframe-serve: set KVFRAME_SERVE=path or build with KVFRAME_TORCH=ON"; \
  }

const char* const kGamecore = R"({"game":"holdem","pot":30,"players":{"p1":{"chips":970,"bet":10},"p2":{"chips":980,"bet":20}},"turn":"p1"})";

std::unique_ptr<ServerProcess> start_server(ServerProcessOptions options = {}) {
  std::unique_ptr<ServerProcess> server = ServerProcess::start(options);
  EXPECT_TRUE(server) << ServerProcess::last_start_error();
  return server;
}

client::Client connect(const std::string& endpoint) {
  client::Client::Params params;
  params.endpoint = endpoint;
  params.client_name = "client_integration_test";
  params.connect_timeout_ms = 10000;
  params.request_timeout_ms = 60000;
  auto client = client::Client::connect(params);
  EXPECT_TRUE(client) << client.status().message();
  return std::move(client.value());
}

client::QueryParams short_query(uint32_t max_tokens = 2) {
  client::QueryParams q;
  q.instruction = "What does p1 do?";
  q.max_tokens = max_tokens;
  return q;
}

TEST(ClientWithServer, AQueryAboutAFrameGetsAResultWithTheEnginesReport) {
  KVFRAME_REQUIRE_SERVE();
  auto server = start_server();
  ASSERT_TRUE(server);
  client::Client client = connect(server->endpoint());
  auto info = client.server_info();
  ASSERT_TRUE(info);
  EXPECT_GT(info->max_message_bytes, 0u);
  EXPECT_NE(info->instance_id, 0u);

  auto session = client.open_session({"holdem"});
  ASSERT_TRUE(session) << session.status().message();
  std::promise<client::Status> acked;
  std::optional<kvf_frame_ack> counts;
  ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, kGamecore, [&](const client::Event& e) {
    counts = e.frame_ack();
    acked.set_value(e.type() == KVF_EVENT_FRAME_ACK ? client::Status() : client::Status(e.error_code(), std::string(e.text())));
  }));
  client::Status ack = acked.get_future().get();
  EXPECT_TRUE(ack) << ack.message();
  ASSERT_TRUE(counts);
  EXPECT_GT(counts->blocks_total, 0u);
  EXPECT_EQ(counts->blocks_changed, counts->blocks_total) << "a first frame: every block is new";
  EXPECT_EQ(counts->blocks_removed, 0u);
  EXPECT_EQ(counts->superseded, 0);

  client::Answer answer = session->ask(short_query(4)).get();
  ASSERT_TRUE(answer.status) << kvf_status_name(answer.status.code()) << ": " << answer.status.message();
  ASSERT_TRUE(answer.report);
  const kvf_report& report = *answer.report;
  EXPECT_EQ(report.mode, KVF_MODE_BLOCK);
  EXPECT_GT(report.blocks_total, 0);
  EXPECT_GT(report.context_tokens, 0);
  EXPECT_GT(report.query_tokens, 0);
  EXPECT_GE(report.generated_tokens, 1);
  EXPECT_LE(report.generated_tokens, 4);
  EXPECT_EQ(report.batch_size, 1) << "one query, run alone";
  EXPECT_EQ(report.tokens_encoded_superseded, 0) << "one frame, asked: none superseded";

  auto stats = client.stats_json();
  ASSERT_TRUE(stats) << stats.status().message();
  const nlohmann::json json = nlohmann::json::parse(*stats);
  EXPECT_GE(json["queries"].get<uint64_t>(), 1u);
  EXPECT_GE(json["frames"].get<uint64_t>(), 1u);
}

TEST(ClientWithServer, APatchAfterARefusedFrameIsRefusedAndChangesNothing) {
  KVFRAME_REQUIRE_SERVE();
  auto server = start_server();
  ASSERT_TRUE(server);
  client::Client client = connect(server->endpoint());
  auto session = client.open_session({"holdem"});
  ASSERT_TRUE(session) << session.status().message();
  auto send = [&](uint64_t number, kvf_frame_format format, const std::string& json) {
    std::promise<kvf_status> done;
    EXPECT_TRUE(session->send_frame(number, format, json, [&](const client::Event& e) {
      done.set_value(e.type() == KVF_EVENT_FRAME_ACK ? KVF_OK : e.error_code());
    }));
    return done.get_future().get();
  };
  EXPECT_EQ(send(1, KVF_FRAME_WHOLE, kGamecore), KVF_OK);
  EXPECT_EQ(send(2, KVF_FRAME_WHOLE, R"({"pot":)"), KVF_ERR_BAD_JSON);
  EXPECT_EQ(send(3, KVF_FRAME_MERGE_PATCH, R"({"pot":40})"), KVF_ERR_STALE_BASE) << "made against frame 2";
  // The session still holds frame 1: a whole frame, then patches against it, apply.
  EXPECT_EQ(send(4, KVF_FRAME_WHOLE, kGamecore), KVF_OK);
  EXPECT_EQ(send(5, KVF_FRAME_JSON_PATCH, R"([{"op":"test","path":"/pot","value":30}])"), KVF_OK);
  EXPECT_EQ(send(6, KVF_FRAME_MERGE_PATCH, R"({"pot":40})"), KVF_OK);
  EXPECT_STREQ(kvf_status_name(KVF_ERR_STALE_BASE), "KVF_ERR_STALE_BASE");
}

TEST(ClientWithServer, StreamedChunksComeInOrderThenTheResult) {
  KVFRAME_REQUIRE_SERVE();
  auto server = start_server();
  ASSERT_TRUE(server);
  client::Client client = connect(server->endpoint());
  auto session = client.open_session({"holdem"});
  ASSERT_TRUE(session) << session.status().message();
  ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, kGamecore));
  client::QueryParams q = short_query(12);
  q.kind = KVF_TASK_COMMENTARY;
  q.stream = true;
  Collector collector;
  auto request = session->query(q, [&](const client::Event& e) { Collector::callback(e.handle(), &collector); });
  ASSERT_TRUE(request) << request.status().message();
  const std::vector<SeenEvent> events = collector.wait_for_final();
  ASSERT_FALSE(events.empty());
  ASSERT_EQ(events.back().type, KVF_EVENT_RESULT) << events.back().text;
  std::string streamed;
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i].type, KVF_EVENT_CHUNK);
    EXPECT_EQ(events[i].seq, i);
    EXPECT_EQ(events[i].request_id, *request);
    streamed += events[i].text;
  }
  EXPECT_EQ(streamed, events.back().text);
}

TEST(ClientWithServer, AClientLeavingMidStreamDoesNotStopTheOthers) {
  KVFRAME_REQUIRE_SERVE();
  auto server = start_server();
  ASSERT_TRUE(server);
  client::Client staying = connect(server->endpoint());
  auto kept = staying.open_session({"holdem"});
  ASSERT_TRUE(kept) << kept.status().message();
  ASSERT_TRUE(kept->send_frame(1, KVF_FRAME_WHOLE, kGamecore));
  // The leaving client streams a long answer and closes at its first chunk.
  kvf_client_params params = client_params(server->endpoint(), 60000);
  kvf_client* leaving = nullptr;
  ASSERT_EQ(kvf_client_connect(&params, &leaving), KVF_OK) << kvf_client_last_error(nullptr);
  ClientPtr owner(leaving, &kvf_client_close);
  kvf_session_params session_params = game_params();
  kvf_session session = 0;
  ASSERT_EQ(kvf_session_open(leaving, &session_params, &session), KVF_OK) << kvf_client_last_error(nullptr);
  ASSERT_EQ(kvf_send_frame(leaving, session, 1, KVF_FRAME_WHOLE, kGamecore, std::strlen(kGamecore), nullptr, nullptr,
                           nullptr),
            KVF_OK);
  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Commentate the hand.";
  q.kind = KVF_TASK_COMMENTARY;
  q.stream = 1;
  q.max_tokens = 200;
  Collector collector;
  ASSERT_EQ(kvf_query(leaving, session, &q, &Collector::callback, &collector, nullptr), KVF_OK);
  collector.wait_for(1);
  owner.reset();  // kvf_client_close mid-stream
  const std::vector<SeenEvent> seen = collector.wait_for(0);
  ASSERT_FALSE(seen.empty());
  EXPECT_NE(seen.back().type, KVF_EVENT_CHUNK) << "every query ends with a Result or an Error, also when closed";

  client::Answer answer = kept->ask(short_query()).get();
  EXPECT_TRUE(answer.status) << kvf_status_name(answer.status.code()) << ": " << answer.status.message();
  EXPECT_TRUE(server->running());
}

TEST(ClientWithServer, ASessionRecoversByItselfAfterTheServerRestarts) {
  KVFRAME_REQUIRE_SERVE();
  auto server = start_server();
  ASSERT_TRUE(server);
  const std::string endpoint = server->endpoint();
  client::Client client = connect(endpoint);
  auto session = client.open_session({"holdem"});
  ASSERT_TRUE(session) << session.status().message();
  ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, kGamecore));
  ASSERT_TRUE(session->send_frame(2, KVF_FRAME_MERGE_PATCH, R"({"pot":50,"turn":"p2"})"));
  client::QueryParams about_frame_2 = short_query();
  about_frame_2.frame_number = 2;
  ASSERT_TRUE(session->ask(about_frame_2).get().status);
  const uint64_t first_instance = client.server_info()->instance_id;

  // Stopped politely, then killed: both times the same session answers.
  for (int signal : {15 /* SIGTERM */, 9 /* SIGKILL */}) {
    server->stop(signal);
    ServerProcessOptions again;
    again.bind = endpoint;
    server = start_server(again);
    ASSERT_TRUE(server);
    client::Answer answer = session->ask(about_frame_2).get();
    EXPECT_TRUE(answer.status) << "after signal " << signal << ": " << kvf_status_name(answer.status.code()) << ": "
                               << answer.status.message() << "\nserver log:\n" << server->log();
  }
  EXPECT_NE(client.server_info()->instance_id, first_instance);
}

// A game in a process of its own (session_holder.c) that opens a session and
// goes quiet; killed with SIGKILL when the test says, at the latest when the
// test ends.
class HolderProcess {
 public:
  explicit HolderProcess(const std::string& endpoint) {
    int out[2];
    if (::pipe(out) != 0) return;
    std::string binary = KVFRAME_SESSION_HOLDER;
    char* argv[] = {binary.data(), const_cast<char*>(endpoint.c_str()), nullptr};
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until the exec
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::execv(argv[0], argv);
      ::_exit(127);
    }
    ::close(out[1]);
    stdout_ = out[0];
  }
  ~HolderProcess() {
    kill();
    if (stdout_ >= 0) ::close(stdout_);
  }
  // It said "ready" (its session is open) within timeout_ms.
  bool ready(int timeout_ms) {
    std::string line;
    pollfd readable{stdout_, POLLIN, 0};
    char c = 0;
    while (c != '\n') {
      if (stdout_ < 0 || ::poll(&readable, 1, timeout_ms) != 1 || ::read(stdout_, &c, 1) != 1) return false;
      line += c;
    }
    return line == "ready\n";
  }
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int stdout_ = -1;
};

// Idle expiry closes the sessions of a client that is gone, never of a quiet
// one still connected (issue 59): the client's background thread pings.
TEST(ClientWithServer, AQuietClientKeepsItsSessionAndAKilledOneLosesIt) {
  KVFRAME_REQUIRE_SERVE();
  constexpr int kIdleS = 2;
  ServerProcessOptions options;
  options.extra_args = {"--session-idle-s", std::to_string(kIdleS)};
  auto server = start_server(options);
  ASSERT_TRUE(server);
  HolderProcess holder(server->endpoint());
  ASSERT_TRUE(holder.ready(30000)) << "session_holder did not open its session";
  client::Client quiet = connect(server->endpoint());
  auto session = quiet.open_session({"holdem"});
  ASSERT_TRUE(session) << session.status().message();
  ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, kGamecore));
  auto stats = [&] {
    auto json = quiet.stats_json();
    EXPECT_TRUE(json) << json.status().message();
    return json ? nlohmann::json::parse(*json) : nlohmann::json::object();
  };
  EXPECT_EQ(stats()["sessions"], 2) << "a loopback server without CURVE shows every client's";

  holder.kill();
  // No request from this client for 2.5 times the limit (the server checks
  // once a second); the first one after it is the Stats below.
  std::this_thread::sleep_for(std::chrono::milliseconds(kIdleS * 2500));
  const nlohmann::json after = stats();
  EXPECT_EQ(after["sessions_expired"], 1) << "the killed client's\n" << server->log();
  EXPECT_EQ(after["sessions"], 1) << "the quiet client's, never expired (and re-opened)";
  client::Answer answer = session->ask(short_query()).get();
  EXPECT_TRUE(answer.status) << kvf_status_name(answer.status.code()) << ": " << answer.status.message();
}

// A Z85 key pair (text of 40 characters each).
std::pair<std::string, std::string> curve_key_pair() {
  char public_key[41];
  char secret_key[41];
  EXPECT_EQ(zmq_curve_keypair(public_key, secret_key), 0);
  return {public_key, secret_key};
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(ClientWithServer, CurveKeysEncryptAndAdmitOnlyListedClients) {
  KVFRAME_REQUIRE_SERVE();
  if (!zmq_has("curve")) GTEST_SKIP() << "this libzmq has no CURVE";
  const auto [server_public, server_secret] = curve_key_pair();
  const auto [client_public, client_secret] = curve_key_pair();
  const auto [stranger_public, stranger_secret] = curve_key_pair();
  const std::filesystem::path dir = std::filesystem::path(tiny_model_file()).parent_path();
  write_text(dir / "server.key", server_secret);
  write_text(dir / "allowed.pub", client_public);
  ServerProcessOptions options;
  options.extra_args = {"--curve-secret", (dir / "server.key").string(), "--curve-allow", (dir / "allowed.pub").string()};
  auto server = start_server(options);
  ASSERT_TRUE(server);

  client::Client::Params params(server->endpoint());
  params.server_public_key = server_public;
  params.client_public_key = client_public;
  params.client_secret_key = client_secret;
  auto client = client::Client::connect(params);
  ASSERT_TRUE(client) << client.status().message();
  auto session = client->open_session({"holdem"});
  ASSERT_TRUE(session) << session.status().message();
  ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, kGamecore));
  EXPECT_TRUE(session->ask(short_query()).get().status);

  params.client_public_key = stranger_public;
  params.client_secret_key = stranger_secret;
  params.connect_timeout_ms = 2000;
  auto stranger = client::Client::connect(params);
  ASSERT_FALSE(stranger);
  EXPECT_TRUE(stranger.status().code() == KVF_ERR_CONNECT || stranger.status().code() == KVF_ERR_TIMEOUT)
      << kvf_status_name(stranger.status().code()) << ": " << stranger.status().message();
}

}  // namespace
}  // namespace kvframe::test
