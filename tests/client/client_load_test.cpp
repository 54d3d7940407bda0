// Load: many game clients (one thread and one session each) streaming frames
// into one kvframe-serve on a tiny model, with a short query every 10th frame.
// Every request must get exactly one final reply (a FrameAck, Result or
// Error), per session in the order sent; nothing may be lost. Throughput is
// printed, not asserted.
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "client_test_support.h"
#include "kvframe/client/kvframe_client.hpp"
#include "server_process.h"

namespace kvframe::test {
namespace {

constexpr int kClients = 16;
constexpr int kFrames = 500;
constexpr int kQueryEvery = 10;
constexpr int kWholeEvery = 100;  // frame 1 and every 100th are whole; the rest merge patches

// What one client saw: the request ids it sent and the final replies, in arrival order.
struct Ledger {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<uint64_t> sent;
  std::vector<SeenEvent> finals;
  std::map<kvf_status, int> errors;
  int chunks = 0;

  static void on_event(const kvf_event* event, void* user) {
    auto* self = static_cast<Ledger*>(user);
    std::lock_guard<std::mutex> lock(self->mutex);
    if (kvf_event_type_of(event) == KVF_EVENT_CHUNK) {
      ++self->chunks;
      return;
    }
    self->finals.push_back(copy_of(event));
    if (kvf_event_type_of(event) == KVF_EVENT_ERROR) ++self->errors[kvf_event_error_code(event)];
    self->changed.notify_all();
  }
  bool has_final(uint64_t request_id) {
    for (auto it = finals.rbegin(); it != finals.rend(); ++it) {
      if (it->request_id == request_id) return true;
    }
    return false;
  }
};

std::string whole_frame(int n) {
  return R"({"tick":)" + std::to_string(n) + R"(,"pot":)" + std::to_string(10 * n) +
         R"(,"players":{"p1":{"hp":100,"x":)" + std::to_string(n % 50) + R"(},"p2":{"hp":90,"x":3}},"log":["start"]})";
}
std::string merge_patch(int n) {
  return R"({"tick":)" + std::to_string(n) + R"(,"players":{"p1":{"x":)" + std::to_string(n % 50) + "}}}";
}

// One game: frames 1..kFrames, a query every kQueryEvery-th frame, waiting for
// each query's answer before going on (as a game waits for an NPC's decision).
void play(const std::string& endpoint, int game, Ledger& ledger) {
  kvf_client_params params = client_params(endpoint, 120000);
  kvf_client* raw = nullptr;
  ASSERT_EQ(kvf_client_connect(&params, &raw), KVF_OK) << kvf_client_last_error(nullptr);
  ClientPtr client(raw, &kvf_client_close);
  kvf_session_params session_params = client::defaults(kvf_session_params_init);
  const std::string game_id = "load-" + std::to_string(game);
  session_params.game_id = game_id.c_str();
  kvf_session session = 0;
  ASSERT_EQ(kvf_session_open(raw, &session_params, &session), KVF_OK) << kvf_client_last_error(nullptr);
  kvf_query_params query = client::defaults(kvf_query_params_init);
  query.instruction = "Next move?";
  for (int n = 1; n <= kFrames; ++n) {
    const bool whole = n == 1 || n % kWholeEvery == 0;
    const std::string json = whole ? whole_frame(n) : merge_patch(n);
    uint64_t id = 0;
    {
      std::lock_guard<std::mutex> lock(ledger.mutex);  // the id is recorded before its reply can arrive
      ASSERT_EQ(kvf_send_frame(raw, session, static_cast<uint64_t>(n), whole ? KVF_FRAME_WHOLE : KVF_FRAME_MERGE_PATCH,
                               json.data(), json.size(), &Ledger::on_event, &ledger, &id),
                KVF_OK);
      ledger.sent.push_back(id);
    }
    if (n % kQueryEvery != 0) continue;
    query.max_tokens = 1 + static_cast<uint32_t>(n / kQueryEvery % 2);
    query.frame_number = static_cast<uint64_t>(n);
    std::unique_lock<std::mutex> lock(ledger.mutex);
    ASSERT_EQ(kvf_query(raw, session, &query, &Ledger::on_event, &ledger, &id), KVF_OK);
    ledger.sent.push_back(id);
    ledger.changed.wait(lock, [&] { return ledger.has_final(id); });  // bounded by the request timeout
  }
  std::unique_lock<std::mutex> lock(ledger.mutex);
  ledger.changed.wait(lock, [&] { return ledger.finals.size() >= ledger.sent.size(); });
}

TEST(ClientLoad, SixteenGamesStreamingFramesAndQueriesLoseNothing) {
  if (kvframe_serve_path().empty()) {
    GTEST_SKIP() << "no kvframe-serve: set KVFRAME_SERVE=path or build with KVFRAME_TORCH=ON";
  }
  std::unique_ptr<ServerProcess> server = ServerProcess::start({});
  ASSERT_TRUE(server) << ServerProcess::last_start_error();

  std::vector<Ledger> ledgers(kClients);
  std::vector<std::thread> games;
  const auto start = std::chrono::steady_clock::now();
  for (int game = 0; game < kClients; ++game) {
    games.emplace_back([&, game] { play(server->endpoint(), game, ledgers[game]); });
  }
  for (std::thread& game : games) game.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::map<kvf_status, int> errors;
  double requests = 0;
  for (int game = 0; game < kClients; ++game) {
    Ledger& ledger = ledgers[game];
    requests += static_cast<double>(ledger.sent.size());
    ASSERT_EQ(ledger.sent.size(), static_cast<std::size_t>(kFrames + kFrames / kQueryEvery)) << "game " << game;
    ASSERT_EQ(ledger.finals.size(), ledger.sent.size()) << "game " << game << ": replies lost or doubled";
    for (std::size_t i = 0; i < ledger.sent.size(); ++i) {  // one final reply each, in the order sent
      ASSERT_EQ(ledger.finals[i].request_id, ledger.sent[i]) << "game " << game << ", reply " << i;
    }
    for (const auto& [code, count] : ledger.errors) errors[code] += count;
  }
  // Busy is the server's back-pressure, allowed under load; nothing else should fail.
  for (const auto& [code, count] : errors) {
    EXPECT_EQ(code, KVF_ERR_BUSY) << count << " x " << kvf_status_name(code);
  }
  std::printf("[ load     ] %d clients x %d frames (+%d queries each): %.0f requests in %.2f s = %.0f requests/s, "
              "%.0f frames/s, %.1f queries/s\n",
              kClients, kFrames, kFrames / kQueryEvery, requests, seconds, requests / seconds,
              kClients * kFrames / seconds, kClients * (kFrames / kQueryEvery) / seconds);
  for (const auto& [code, count] : errors) std::printf("[ load     ] %d x %s\n", count, kvf_status_name(code));
  auto observer = client::Client::connect({server->endpoint()});
  ASSERT_TRUE(observer) << observer.status().message();
  auto stats = observer->stats_json();
  ASSERT_TRUE(stats) << stats.status().message();
  std::printf("[ load     ] server stats: %s\n", stats->c_str());
}

}  // namespace
}  // namespace kvframe::test
