// kvframe-serve with several LoRA adapters (--adapter NAME=FILE) on the tiny
// model, as a process over raw ZeroMQ: each session runs the adapter it
// names and answers as a server that loaded only that one; sessions whose
// adapters change only the query share the frame's blocks; an unknown name
// is a typed error and the server serves the others.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>

#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "raw_client.h"
#include "server_process.h"

namespace kvframe::server::test {
namespace {

using kvframe::test::ServerProcess;
using kvframe::test::ServerProcessOptions;

// Two query-scope adapters for the tiny model, written once beside it.
struct AdapterFiles {
  std::string holdem, moba;
};

const AdapterFiles& adapter_files() {
  static const AdapterFiles files = [] {
    namespace rt = kvframe::runtime;
    const std::filesystem::path dir = std::filesystem::path(kvframe::test::tiny_model_file()).parent_path();
    auto model = rt::Model::load(kvframe::test::tiny_model_file()).value();
    AdapterFiles written{(dir / "holdem-lora.gguf").string(), (dir / "moba-lora.gguf").string()};
    uint64_t seed = 1;
    for (const std::string* path : {&written.holdem, &written.moba}) {
      rt::LoraParams params;
      params.rank = 4;
      params.alpha = 8;
      auto adapter = rt::LoraAdapter::create(model->config(), params, at::kCPU, seed).value();
      at::NoGradGuard no_grad;
      at::manual_seed(seed++);
      for (size_t i = 1; i < adapter->parameters().size(); i += 2) adapter->parameters()[i].normal_(0, 0.5);
      EXPECT_TRUE(adapter->save(*path, rt::GgmlType::kF32).ok());
    }
    return written;
  }();
  return files;
}

std::unique_ptr<ServerProcess> start(std::vector<std::string> args) {
  ServerProcessOptions options;
  options.extra_args = std::move(args);
  auto server = ServerProcess::start(options);
  EXPECT_TRUE(server) << ServerProcess::last_start_error();
  return server;
}

// The session's id, or 0 (the reply's error is then in `refused`).
uint64_t open_with(Client& client, std::string_view adapter, std::string* refused = nullptr) {
  const std::string reply = client.request(open_session_message(1, fb::AttentionMode::Block, 0, {}, -1, -1, -1, adapter));
  const fb::Message* m = read_reply(reply);
  if (m && m->body_type() == fb::Body::SessionOpened) return m->body_as_SessionOpened()->session_id();
  if (refused) *refused = reply;
  return 0;
}

struct Answered {
  std::string text;
  uint32_t blocks_total = 0, cache_hits = 0;
};

Answered answer(Client& client, uint64_t session, uint64_t frame) {
  EXPECT_EQ(body_type(client.request(frame_message(2, session, frame, kState))), fb::Body::FrameAck);
  QueryOptions options;
  options.max_tokens = 12;
  const std::string reply = client.request(query_message(3, session, options));
  const fb::Message* m = read_reply(reply);
  if (!m || m->body_type() != fb::Body::Result) {
    ADD_FAILURE() << "no Result";
    return {};
  }
  const fb::Result& r = *m->body_as_Result();
  return {r.text()->str(), r.report()->blocks_total(), r.report()->cache_hits()};
}

TEST(ServeAdapters, EachSessionAnswersAsAServerThatLoadedOnlyItsAdapter) {
  const AdapterFiles& files = adapter_files();
  auto both = start({"--adapter", "holdem=" + files.holdem, "--adapter", "moba=" + files.moba, "--lora", "none"});
  auto only_holdem = start({"--lora", files.holdem});
  auto only_moba = start({"--lora", files.moba});
  ASSERT_TRUE(both && only_holdem && only_moba);
  zmq::context_t context;
  Client client(context, both->endpoint());
  const std::string hello = client.request(hello_message(1));
  ASSERT_EQ(body_type(hello), fb::Body::HelloReply);
  const fb::HelloReply& info = *read_reply(hello)->body_as_HelloReply();
  ASSERT_TRUE(info.adapters());
  ASSERT_EQ(info.adapters()->size(), 2u);
  EXPECT_EQ(info.adapters()->Get(0)->str(), "holdem");
  EXPECT_EQ(info.adapters()->Get(1)->str(), "moba");
  EXPECT_EQ(info.default_adapter()->str(), "none");

  // Both games' sessions at once, their frames and queries interleaved.
  const uint64_t holdem = open_with(client, "holdem"), moba = open_with(client, "moba"), base = open_with(client, "");
  ASSERT_TRUE(holdem && moba && base) << both->log();
  Client holdem_only(context, only_holdem->endpoint()), moba_only(context, only_moba->endpoint());
  const uint64_t holdem_ref = open_with(holdem_only, ""), moba_ref = open_with(moba_only, "");
  for (uint64_t frame = 1; frame <= 3; ++frame) {
    const Answered got_holdem = answer(client, holdem, frame), got_moba = answer(client, moba, frame);
    const Answered got_base = answer(client, base, frame);
    EXPECT_EQ(got_holdem.text, answer(holdem_only, holdem_ref, frame).text) << "frame " << frame;
    EXPECT_EQ(got_moba.text, answer(moba_only, moba_ref, frame).text) << "frame " << frame;
    EXPECT_NE(got_holdem.text, got_moba.text) << "the adapters must answer differently";
    EXPECT_NE(got_holdem.text, got_base.text);
  }
}

TEST(ServeAdapters, SessionsWithQueryScopeAdaptersShareTheFramesBlocks) {
  const AdapterFiles& files = adapter_files();
  auto server = start({"--adapter", "holdem=" + files.holdem, "--adapter", "moba=" + files.moba});
  ASSERT_TRUE(server);
  zmq::context_t context;
  Client client(context, server->endpoint());
  const uint64_t first = open_with(client, "holdem"), second = open_with(client, "moba");
  ASSERT_TRUE(first && second) << server->log();
  const Answered encoded = answer(client, first, 1);
  EXPECT_EQ(encoded.cache_hits, 0u);
  const Answered shared = answer(client, second, 1);
  EXPECT_GT(shared.blocks_total, 0u);
  EXPECT_EQ(shared.cache_hits, shared.blocks_total) << "the second session encodes nothing";
}

TEST(ServeAdapters, AnUnknownAdapterIsATypedErrorAndTheOthersAreServed) {
  const AdapterFiles& files = adapter_files();
  auto server = start({"--adapter", "holdem=" + files.holdem});
  ASSERT_TRUE(server);
  zmq::context_t context;
  Client game(context, server->endpoint()), stranger(context, server->endpoint());
  const uint64_t session = open_with(game, "holdem");
  ASSERT_TRUE(session);
  std::string refused;
  EXPECT_EQ(open_with(stranger, "chess", &refused), 0u);
  EXPECT_EQ(error_code(refused), fb::ErrorCode::UnknownAdapter);
  const fb::Message* m = read_reply(refused);
  ASSERT_TRUE(m && m->body_type() == fb::Body::Error);
  EXPECT_NE(m->body_as_Error()->message()->str().find("holdem"), std::string::npos) << "it lists those loaded";
  for (uint64_t frame = 1; frame <= 2; ++frame) EXPECT_FALSE(answer(game, session, frame).text.empty());
  EXPECT_NE(open_with(stranger, "none"), 0u) << "the base model is always there";
}

TEST(ServeAdapters, ABadAdapterOptionStopsTheServerWithItsReason) {
  ServerProcessOptions options;
  options.extra_args = {"--adapter", "none=x.gguf"};
  EXPECT_FALSE(ServerProcess::start(options));
  EXPECT_NE(ServerProcess::last_start_error().find("NAME=FILE"), std::string::npos)
      << ServerProcess::last_start_error();
}

}  // namespace
}  // namespace kvframe::server::test
