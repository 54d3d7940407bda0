// The C ABI's versioning: kvf_version, and struct_size on every params and
// out struct, so a program built against an older or newer header keeps
// working with this library.
#include <cstddef>

#include "client_test_support.h"

namespace kvframe::test {
namespace {

TEST(ClientAbi, TheLoadedLibraryIsTheHeadersVersion) {
  int32_t major = -1, minor = -1, patch = -1;
  EXPECT_EQ(kvf_version(&major, &minor, &patch), KVF_VERSION);
  EXPECT_EQ(major, KVF_VERSION_MAJOR);
  EXPECT_EQ(minor, KVF_VERSION_MINOR);
  EXPECT_EQ(patch, KVF_VERSION_PATCH);
  EXPECT_EQ(kvf_version(nullptr, nullptr, nullptr), KVF_MAKE_VERSION(major, minor, patch));
}

TEST(ClientAbi, DefaultParamsCarryTheirSize) {
  EXPECT_EQ(kvf_client_default_params().struct_size, sizeof(kvf_client_params));
  EXPECT_EQ(kvf_session_default_params().struct_size, sizeof(kvf_session_params));
  EXPECT_EQ(kvf_query_default_params().struct_size, sizeof(kvf_query_params));
}

TEST(ClientAbi, AStructWithoutItsSizeIsRefusedAndTheErrorSaysWhatToSet) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  kvf_session_params params = game_params();
  params.struct_size = 0;
  kvf_session session = 0;
  EXPECT_EQ(kvf_session_open(client.get(), &params, &session), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kvf_client_last_error(nullptr)).find("sizeof(kvf_session_params)"), std::string::npos)
      << kvf_client_last_error(nullptr);
  params.struct_size = 1u << 30;  // garbage, not a newer header
  EXPECT_EQ(kvf_session_open(client.get(), &params, &session), KVF_ERR_INVALID_ARGUMENT);

  kvf_server_info info{};  // struct_size left 0
  EXPECT_EQ(kvf_client_server_info(client.get(), &info), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kvf_client_last_error(nullptr)).find("sizeof(kvf_server_info)"), std::string::npos);
  EXPECT_EQ(info.server_version[0], '\0');  // nothing written

  kvf_client_params connect = client_params(server.endpoint());
  connect.struct_size = 4;
  kvf_client* other = nullptr;
  EXPECT_EQ(kvf_client_connect(&connect, &other), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(other, nullptr);
}

// A caller built against a newer header passes larger structs: the fields
// this library knows are read and written, the rest left alone.
TEST(ClientAbi, ANewerCallersLargerStructsWork) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  struct NewerServerInfo {
    kvf_server_info known;
    uint64_t added_later;
  } info{};
  info.known.struct_size = sizeof info;
  info.added_later = 0x5eed;
  ASSERT_EQ(kvf_client_server_info(client.get(), &info.known), KVF_OK);
  EXPECT_STREQ(info.known.model, "tiny");
  EXPECT_EQ(info.known.struct_size, sizeof info);  // the caller's, kept
  EXPECT_EQ(info.added_later, 0x5eedu);

  struct NewerSessionParams {
    kvf_session_params known;
    uint64_t added_later;
  } params{};
  params.known = game_params();
  params.known.struct_size = sizeof params;
  params.added_later = 7;
  kvf_session session = 0;
  auto opening = std::async(std::launch::async, [&] { return kvf_session_open(client.get(), &params.known, &session); });
  Incoming open = server.expect(fb::Body::OpenSession);
  EXPECT_EQ(open.message().body_as_OpenSession()->game_id()->str(), "holdem");
  server.session_opened(open, 3);
  EXPECT_EQ(opening.get(), KVF_OK) << kvf_client_last_error(nullptr);
}

// A caller built against 0.3's header: its kvf_session_params ends before
// `adapter` and its kvf_server_info before `adapters`. What it lacks takes
// the default (the server's adapter) and is not written.
TEST(ClientAbi, AnOlderCallersShorterStructsWork) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  kvf_server_info info{};
  info.struct_size = offsetof(kvf_server_info, adapters);
  info.adapters[0] = 'x';
  ASSERT_EQ(kvf_client_server_info(client.get(), &info), KVF_OK) << kvf_client_last_error(nullptr);
  EXPECT_STREQ(info.model, "tiny");
  EXPECT_EQ(info.adapters[0], 'x') << "past the caller's struct: not written";

  kvf_session_params params = game_params();
  params.adapter = "past the caller's struct: never read";
  params.struct_size = offsetof(kvf_session_params, adapter);
  kvf_session session = 0;
  auto opening = std::async(std::launch::async, [&] { return kvf_session_open(client.get(), &params, &session); });
  Incoming open = server.expect(fb::Body::OpenSession);
  const fb::OpenSession& sent = *open.message().body_as_OpenSession();
  EXPECT_EQ(sent.game_id()->str(), "holdem");
  EXPECT_TRUE(!sent.adapter() || sent.adapter()->str().empty()) << "the server's default adapter";
  server.session_opened(open, 4);
  EXPECT_EQ(opening.get(), KVF_OK) << kvf_client_last_error(nullptr);
}

}  // namespace
}  // namespace kvframe::test
