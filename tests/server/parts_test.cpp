// The server's small parts on their own: logfmt, stage percentiles, keys, a request's absent fields.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "kvframe/server_core/curve_keys.h"
#include "kvframe/server_core/log.h"
#include "kvframe/server_core/memory_use.h"
#include "kvframe/server_core/request.h"
#include "kvframe/server_core/server.h"
#include "kvframe/server_core/stats.h"

namespace kvframe::server {
namespace {

TEST(LogTest, WritesOneLogfmtLineQuotingWhatNeedsIt) {
  std::ostringstream out;
  Log log(LogLevel::kInfo, &out);
  log.info("listening", {{"endpoint", "tcp://127.0.0.1:5555"}, {"reason", "a \"quoted\" word"}});
  log.debug("hidden");
  const std::string line = out.str();
  EXPECT_EQ(line.rfind("ts=", 0), 0u);
  EXPECT_NE(line.find(" level=info msg=\"listening\" endpoint=tcp://127.0.0.1:5555 reason=\"a \\\"quoted\\\" word\"\n"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("hidden"), std::string::npos);
}

TEST(LogTest, AFloodOfOneWarningIsCutToAFewLinesAndACount) {
  std::ostringstream out;
  Log log(LogLevel::kInfo, &out);
  for (int i = 0; i < 5000; ++i) log.warn("request refused", {{"code", "Malformed"}});
  log.info("listening");
  log.flush_suppressed(/*all=*/true);
  std::istringstream lines(out.str());
  int refused = 0, other = 0;
  std::string line, count;
  while (std::getline(lines, line)) {
    if (line.find("msg=\"request refused\"") != std::string::npos) {
      ++refused;
    } else if (line.find("msg=\"log lines suppressed\"") != std::string::npos) {
      EXPECT_NE(line.find("of=\"request refused\""), std::string::npos) << line;
      count = line.substr(line.find("count=") + 6);
      count = count.substr(0, count.find(' '));
    } else {
      ++other;
    }
  }
  EXPECT_EQ(refused, Log::kLinesPerWindow);
  EXPECT_EQ(other, 1) << "another message has its own allowance";
  EXPECT_EQ(count, std::to_string(5000 - Log::kLinesPerWindow));
}

TEST(StageWindowTest, PercentilesOfTheMostRecentValues) {
  StageWindow window;
  for (int i = 1; i <= 100; ++i) window.add(i);
  EXPECT_EQ(window.quantile(0.5), 50);
  EXPECT_EQ(window.quantile(0.99), 99);
  for (std::size_t i = 0; i < StageWindow::kCapacity; ++i) window.add(1000);
  EXPECT_EQ(window.quantile(0.5), 1000) << "old values have left the window";
  EXPECT_EQ(window.count(), 100 + StageWindow::kCapacity);
}

TEST(EndpointTest, LoopbackIsTellable) {
  EXPECT_TRUE(is_loopback_endpoint("tcp://127.0.0.1:5555"));
  EXPECT_TRUE(is_loopback_endpoint("tcp://localhost:0"));
  EXPECT_TRUE(is_loopback_endpoint("tcp://[::1]:5555"));
  EXPECT_TRUE(is_loopback_endpoint("ipc:///tmp/kvframe.sock"));
  EXPECT_FALSE(is_loopback_endpoint("tcp://0.0.0.0:5555"));
  EXPECT_FALSE(is_loopback_endpoint("tcp://*:5555"));
  EXPECT_FALSE(is_loopback_endpoint("tcp://10.0.0.7:5555"));
}

TEST(CurveKeysTest, WrittenKeysReadBackAndTheSecretIsPrivate) {
  if (!curve_available()) GTEST_SKIP() << "libzmq without CURVE";
  const std::string prefix = (std::filesystem::temp_directory_path() / "kvframe-server-keys-test").string();
  auto pair = write_key_pair(prefix);
  ASSERT_TRUE(pair) << pair.error().message;
  auto secret = read_secret_key(prefix + ".key");
  ASSERT_TRUE(secret) << secret.error().message;
  EXPECT_EQ(*secret, pair->secret_key);
  EXPECT_EQ(*public_key_of(*secret), pair->public_key);
  auto allowed = read_allowed_keys(prefix + ".pub");
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_EQ(allowed->front(), pair->public_key);
  struct stat info {};
  ASSERT_EQ(stat((prefix + ".key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  std::remove((prefix + ".key").c_str());
  std::remove((prefix + ".pub").c_str());
}

TEST(CurveKeysTest, HashInsideAKeyIsAZ85DigitNotAComment) {
  const std::string path = (std::filesystem::temp_directory_path() / "kvframe-server-hash-key").string();
  const std::string key = "0000#0000#0000#0000#0000#0000#0000#0000#";
  FILE* file = std::fopen(path.c_str(), "w");
  std::fputs(("# the allowed clients\n" + key + "\n#no-space-comment\n").c_str(), file);
  std::fclose(file);
  auto keys = read_allowed_keys(path);
  ASSERT_TRUE(keys) << keys.error().message;
  EXPECT_EQ(*keys, std::vector<std::string>{key});
  std::remove(path.c_str());
}

TEST(CurveKeysTest, BadKeyFilesSayWhichLine) {
  const std::string path = (std::filesystem::temp_directory_path() / "kvframe-server-bad-keys").string();
  FILE* file = std::fopen(path.c_str(), "w");
  std::fputs("# clients\nnot-a-key\n", file);
  std::fclose(file);
  auto keys = read_allowed_keys(path);
  ASSERT_FALSE(keys);
  EXPECT_NE(keys.error().message.find(path + ":2"), std::string::npos) << keys.error().message;
  std::remove(path.c_str());
}

// The clients leave an empty string off the wire (native wire.cpp, Python wire.py): the server
// reads it, and every other field left off, as protocol/options.json's default.
TEST(RequestTest, AQueryWithOnlyItsInstructionHasEveryOtherOptionAtItsDefault) {
  flatbuffers::FlatBufferBuilder b;
  const auto instruction = b.CreateString("Act.");
  fb::QueryBuilder query(b);
  query.add_session_id(7);
  query.add_instruction(instruction);
  protocol::finish_message(b, 3, query.Finish());
  const auto parsed =
      parse_request(std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()), {});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const QueryRequest& q = std::get<QueryRequest>(parsed->body);
  EXPECT_EQ(q.session_id, 7u);
  QuerySpec expected;  // the table's defaults
  expected.instruction = "Act.";
#define KVF_EXPECT_DEFAULT(KIND, name, c_type, cpp_type, value, c_value) \
  EXPECT_TRUE(q.spec.name == expected.name) << #name;
  KVF_QUERY_OPTIONS(KVF_EXPECT_DEFAULT)
  KVF_QUERY_SAMPLING_OPTIONS(KVF_EXPECT_DEFAULT)
#undef KVF_EXPECT_DEFAULT
}

TEST(RequestTest, AnEmptyOpenSessionHasEveryOptionAtItsDefault) {
  flatbuffers::FlatBufferBuilder b;
  fb::OpenSessionBuilder open(b);
  protocol::finish_message(b, 2, open.Finish());
  const auto parsed =
      parse_request(std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()), {});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const OpenSessionRequest& o = std::get<OpenSessionRequest>(parsed->body);
  const protocol::OpenSpec expected;  // the table's defaults
  EXPECT_EQ(o.game_id, expected.game_id);
  EXPECT_TRUE(o.config.mode == expected.mode);
  EXPECT_EQ(o.config.system_prompt, "");
  EXPECT_EQ(o.config.context_tokens, expected.context_tokens);
#define KVF_EXPECT_KNOB_DEFAULT(name) EXPECT_EQ(o.config.fidelity.name, expected.name) << #name;
  KVF_FIDELITY_KNOBS(KVF_EXPECT_KNOB_DEFAULT)
#undef KVF_EXPECT_KNOB_DEFAULT
  EXPECT_EQ(o.config.adapter, expected.adapter);
}

}  // namespace
}  // namespace kvframe::server

namespace kvframe::server {
namespace {

TEST(MemoryUse, ReadsResidentAndAnonymousMemoryFromProcStatus) {
  const ResidentMemory m = parse_resident_memory(
      "Name:\tkvframe-serve\nVmHWM:\t  900 kB\nVmRSS:\t  800 kB\nRssAnon:\t  300 kB\nRssFile:\t  500 kB\n");
  EXPECT_EQ(m.total_bytes, 800u << 10);
  EXPECT_EQ(m.anonymous_bytes, 300u << 10);
  EXPECT_EQ(parse_resident_memory("Name:\tx\n").total_bytes, 0u);
  EXPECT_GT(resident_memory().total_bytes, 0u) << "this process's own /proc/self/status";
}

TEST(MemoryUse, ScratchIsTheAnonymousMemoryNotCountedElsewhere) {
  const ResidentMemory m{1000, 600};
  EXPECT_EQ(scratch_bytes(m, 100, 200, 50), 250u);
  // Sessions' KV counted at its most, not yet written: never below zero.
  EXPECT_EQ(scratch_bytes(m, 100, 900, 50), 0u);
}

}  // namespace
}  // namespace kvframe::server
