// Several game threads sharing one client: every request gets exactly one
// answer, and each thread's answers come in the order it asked.
#include <map>
#include <thread>

#include "client_test_support.h"
#include "kvframe/client/kvframe_client.hpp"

namespace kvframe::test {
namespace {

TEST(ClientThreads, ManyThreadsQueryingOneClientEachGetEveryAnswerOnce) {
  ScriptedServer server;
  server.serve_in_background(1);
  auto client = client::Client::connect({server.endpoint()});
  ASSERT_TRUE(client) << client.status().message();
  constexpr int kThreads = 4;
  constexpr int kQueries = 100;
  std::vector<std::thread> threads;
  std::vector<std::vector<SeenEvent>> answers(kThreads);
  std::vector<std::vector<uint64_t>> asked(kThreads);
  std::vector<Collector> collectors(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto session = client->open_session({"thread " + std::to_string(t)});
      ASSERT_TRUE(session) << session.status().message();
      ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, R"({"t":1})"));
      kvf_query_params next = client::defaults(kvf_query_params_init);
      next.instruction = "Next?";
      for (int q = 0; q < kQueries; ++q) {
        uint64_t id = 0;
        ASSERT_EQ(kvf_query(client->handle(), session->id(), &next, &Collector::callback, &collectors[t], &id), KVF_OK);
        asked[t].push_back(id);
      }
      answers[t] = collectors[t].wait_for(kQueries);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(answers[t].size(), static_cast<size_t>(kQueries)) << "thread " << t;
    for (int q = 0; q < kQueries; ++q) {
      EXPECT_EQ(answers[t][q].type, KVF_EVENT_RESULT);
      EXPECT_EQ(answers[t][q].request_id, asked[t][q]);
      EXPECT_EQ(answers[t][q].text, "answer " + std::to_string(asked[t][q]));
    }
  }
}

TEST(ClientWrapper, AskReturnsTheAnswerAsAFuture) {
  ScriptedServer server;
  server.serve_in_background(1);
  auto client = client::Client::connect({server.endpoint()});
  ASSERT_TRUE(client) << client.status().message();
  auto info = client->server_info();
  ASSERT_TRUE(info);
  EXPECT_STREQ(info->model, "tiny");
  auto session = client->open_session({"wrapper"});
  ASSERT_TRUE(session) << session.status().message();
  ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, R"({"a":1})"));
  client::Answer answer = session->ask({"Say something."}).get();
  EXPECT_TRUE(answer.status) << answer.status.message();
  EXPECT_EQ(answer.text.rfind("answer ", 0), 0u);
  ASSERT_TRUE(answer.report);
  EXPECT_EQ(answer.report->blocks_total, 3);
  ASSERT_TRUE(session->query({"Polled?"}));
  std::optional<client::PolledEvent> polled = client->poll(5000);
  ASSERT_TRUE(polled);
  EXPECT_EQ(polled->type(), KVF_EVENT_RESULT);
  EXPECT_EQ(polled->session(), session->id());
  auto stats = client->stats_json();
  ASSERT_TRUE(stats) << stats.status().message();
  EXPECT_NE(stats->find("\"queries\":7"), std::string::npos);
  EXPECT_TRUE(session->close());
  client::Answer refused = session->ask({"Closed?"}).get();
  EXPECT_EQ(refused.status.code(), KVF_ERR_UNKNOWN_SESSION);
}

// SessionParams and QueryParams are made from protocol/options.json's lists: every option of the
// C struct (block mode's knobs included), each at kvf_*_params_init's default.
#define KVF_EXPECT_AT_C_DEFAULT(KIND, name, c_type, cpp_type, value, c_value) \
  KVF_EXPECT_AT_C_DEFAULT_##KIND(name, c_type)
#define KVF_EXPECT_AT_C_DEFAULT_STRING(name, c_type) EXPECT_EQ(params.name, raw.name ? raw.name : "") << #name;
#define KVF_EXPECT_AT_C_DEFAULT_STRINGS(name, c_type) \
  EXPECT_TRUE(params.name.empty() && raw.name == nullptr && raw.name##_count == 0) << #name;
#define KVF_EXPECT_AT_C_DEFAULT_ENUM(name, c_type) EXPECT_EQ(params.name, raw.name) << #name;
#define KVF_EXPECT_AT_C_DEFAULT_NUMBER(name, c_type) EXPECT_EQ(static_cast<c_type>(params.name), raw.name) << #name;

TEST(ClientWrapper, ParamsStartAtTheLibrarysDefaults) {
  {
    const client::SessionParams params;
    const kvf_session_params raw = client::defaults(kvf_session_params_init);
    KVF_SESSION_OPTIONS(KVF_EXPECT_AT_C_DEFAULT)
  }
  {
    const client::QueryParams params;
    const kvf_query_params raw = client::defaults(kvf_query_params_init);
    KVF_QUERY_OPTIONS(KVF_EXPECT_AT_C_DEFAULT)
    KVF_QUERY_SAMPLING_OPTIONS(KVF_EXPECT_AT_C_DEFAULT)
  }
}

}  // namespace
}  // namespace kvframe::test
