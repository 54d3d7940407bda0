// Writes the server fuzz target's seeds: scripts (server_fuzz_input.h) of
// valid conversations of every kind, and of truncated, bit-flipped, garbage,
// wrong-version and oversize messages. Session ids are the ones the fuzz
// target's handler gives out (fixed seed), learned here by opening sessions.
//   make_server_corpus DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "messages.h"
#include "server_fuzz_input.h"
#include "state_echo_backend.h"

namespace {

using namespace kvframe::server;
using namespace kvframe::server::test;

class Discard : public ReplySink {
 public:
  void send(const std::string&, flatbuffers::DetachedBuffer message) override {
    last.assign(reinterpret_cast<const char*>(message.data()), message.size());
  }
  std::string last;
};

// The ids the fuzz target's first two OpenSessions get.
std::vector<uint64_t> fuzz_session_ids() {
  StateEchoBackend backend;
  Log log(LogLevel::kError);
  RequestHandler handler(backend, fuzz_handler_params({}), log);
  Discard sink;
  std::vector<uint64_t> ids;
  for (int i = 0; i < 2; ++i) {
    handler.on_message(fuzz_peer(0), open_session_message(1), sink);
    handler.run_next(sink);
    ids.push_back(read_reply(sink.last)->body_as_SessionOpened()->session_id());
  }
  return ids;
}

constexpr char kState[] = R"({"turn":1,"pot":150,"players":[{"id":"p1","chips":950,"cards":["Ah","Kd"]},{"id":"p2","chips":900}],"log":["p1 bets 50"]})";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const std::vector<uint64_t> ids = fuzz_session_ids();
  const uint64_t a = ids[0], b = ids[1];
  std::vector<std::pair<std::string, std::string>> seeds;
  auto script = [&](const std::string& name, const std::vector<std::string>& messages, bool run_between = false) {
    std::string s;
    for (const std::string& m : messages) {
      append_message(s, 0, m);
      if (run_between) append_steps(s, 0);
    }
    seeds.emplace_back(name, s);
  };

  script("hello", {hello_message(1)});
  script("stats", {stats_request_message(1)});
  {  // keepalive: a Ping before and after a session, a malformed one, one from another client
    std::string s;
    append_message(s, 0, ping_message(1));
    append_message(s, 0, open_session_message(2));
    append_steps(s, 0);
    append_message(s, 0, ping_message(3));
    append_message(s, 0, ping_message(4, 7));
    const std::string ping = ping_message(5);
    append_message(s, 0, ping.substr(0, ping.size() - 1));
    append_message(s, 1, ping_message(6));
    append_message(s, 0, query_message(7, a));
    seeds.emplace_back("keepalive", s);
  }
  const std::vector<std::string> conversation = {
      open_session_message(1),
      frame_message(2, a, 1, kState),
      query_message(3, a),
      frame_message(4, a, 2, R"({"pot":200,"log":["p2 calls"]})", fb::FrameFormat::MergePatch),
      frame_message(5, a, 3, R"([{"op":"replace","path":"/turn","value":2}])", fb::FrameFormat::JsonPatch),
      query_message(6, a, {3, fb::TaskKind::Commentary, "Comment on the hand.", 8, true, 0, 0, "", {}}),
      close_session_message(7, a)};
  script("conversation", conversation, true);
  script("conversation_queued", conversation);
  QueryOptions npc{0, fb::TaskKind::NpcAction, "What does p2 do?", 8, false, 0, 0, "", {}};
  QueryOptions deadline{0, fb::TaskKind::Text, "Quick!", 4, false, 5, 4, "", {}};
  script("two_sessions_superseding",
         {open_session_message(1, fb::AttentionMode::Full), open_session_message(2, fb::AttentionMode::Prefix, 64),
          frame_message(3, a, 1, kState), frame_message(4, b, 1, kState), frame_message(5, a, 2, kState),
          frame_message(6, a, 3, kState), query_message(7, a, npc), query_message(8, b, deadline),
          frame_message(9, b, 4, kState), stats_request_message(10)});
  script("stale_bases",
         {open_session_message(1), frame_message(2, a, 1, kState), frame_message(3, a, 2, "{\"pot\": "),
          frame_message(4, a, 3, R"({"pot":300})", fb::FrameFormat::MergePatch),
          frame_message(5, a, 4, R"({"pot":400})", fb::FrameFormat::MergePatch, kNoBase),
          frame_message(6, a, 5, R"([{"op":"test","path":"/turn","value":1}])", fb::FrameFormat::JsonPatch, 1),
          frame_message(7, a, 6, R"({"pot":600})", fb::FrameFormat::MergePatch, 99), query_message(8, a)},
         true);
  script("refusals",
         {open_session_message(1, fb::AttentionMode::Block, 100000, R"({"max_depth":3,"pin":["players[*]"]})"),
          open_session_message(2, fb::AttentionMode::Block, 0, R"({"unknown":1})"), open_session_message(3),
          query_message(4, a), frame_message(5, a, 2, "{}", fb::FrameFormat::MergePatch),
          frame_message(6, a, 3, "{\"bad\": json"), frame_message(7, a, 3, kState), query_message(8, a, {2, fb::TaskKind::Text, "x", 4, false, 0, 0, "", {}}),
          query_message(9, 12345), query_message(10, a, {0, fb::TaskKind::NpcAction, "x", 4, false, 0, 0, "{}", {}}),
          hello_message(11, 7)});
  {
    std::string s;
    append_message(s, 1, open_session_message(1));
    append_steps(s, 1);
    append_message(s, 1, frame_message(2, a, 1, kState));
    append_message(s, 2, query_message(3, a));
    append_shut_down(s);
    append_message(s, 3, hello_message(4));
    seeds.emplace_back("shutdown_with_queue", s);
  }
  {  // another client on client 0's session: the unknown-session reply, and client 0 carries on
    std::string s;
    append_message(s, 0, open_session_message(1));
    append_steps(s, 0);
    append_message(s, 0, frame_message(2, a, 1, kState));
    append_message(s, 1, frame_message(3, a, 2, kState));
    append_message(s, 1, query_message(4, a));
    append_message(s, 1, close_session_message(5, a));
    append_message(s, 1, stats_request_message(6));
    append_message(s, 0, query_message(7, a));
    seeds.emplace_back("cross_tenant", s);
  }
  script("oversize", {open_session_message(1), frame_message(2, a, 1, "[\"" + std::string(9000, 'x') + "\"]")});

  const std::string valid = frame_message(2, a, 1, kState);
  for (std::size_t cut : {std::size_t{4}, std::size_t{12}, valid.size() / 2, valid.size() - 1}) {
    script("truncated_" + std::to_string(cut), {open_session_message(1), valid.substr(0, cut)});
  }
  for (std::size_t at : {std::size_t{0}, std::size_t{5}, std::size_t{9}, std::size_t{20}, valid.size() - 3}) {
    std::string flipped = valid;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x41);
    script("flipped_" + std::to_string(at), {open_session_message(1), flipped});
  }
  script("garbage", {std::string("\x00\x01garbage\xff", 11), std::string()});

  for (const auto& [name, bytes] : seeds) {
    std::ofstream out(dir / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::printf("wrote %zu seeds to %s\n", seeds.size(), dir.c_str());
  return 0;
}
