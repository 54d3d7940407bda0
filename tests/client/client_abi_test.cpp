// The C ABI's versioning: kvf_version, struct_size on every params and out
// struct, so a program built against an older or newer header keeps working
// with this library, and codes a newer server sends.
#include <cstddef>
#include <cstdlib>

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

TEST(ClientAbi, ParamsInitFillsTheDefaultsAndTheCallersSize) {
  kvf_client_params client{};
  ASSERT_EQ(kvf_client_params_init(&client, sizeof client), KVF_OK);
  EXPECT_EQ(client.struct_size, sizeof client);
  EXPECT_STREQ(client.endpoint, "tcp://127.0.0.1:5555");
  kvf_session_params session{};
  ASSERT_EQ(kvf_session_params_init(&session, sizeof session), KVF_OK);
  EXPECT_EQ(session.struct_size, sizeof session);
  EXPECT_EQ(session.block_heads, -1);
  kvf_query_params query{};
  ASSERT_EQ(kvf_query_params_init(&query, sizeof query), KVF_OK);
  EXPECT_EQ(query.struct_size, sizeof query);
  EXPECT_EQ(query.max_tokens, 64u);

  EXPECT_EQ(kvf_query_params_init(nullptr, sizeof query), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kvf_query_params_init(&query, 4), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kvf_client_last_error(nullptr)).find("sizeof(kvf_query_params)"), std::string::npos)
      << kvf_client_last_error(nullptr);
}

// The header's promise to a newer caller of an older library: every field
// added from 0.5 on defaults to zero bytes. Past each struct's 0.5 size, the
// defaults must be zeros (a new field with another default breaks it).
template <class T>
void expect_zero_defaults_past(std::size_t size_0_5, kvf_status (*init)(T*, size_t)) {
  T params{};
  ASSERT_EQ(init(&params, sizeof params), KVF_OK);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&params);
  for (std::size_t at = size_0_5; at < sizeof params; ++at) EXPECT_EQ(bytes[at], 0) << "byte " << at;
}

TEST(ClientAbi, FieldsAddedSince05DefaultToZeros) {
  expect_zero_defaults_past(64, kvf_client_params_init);
  expect_zero_defaults_past(64, kvf_session_params_init);
  expect_zero_defaults_past(104, kvf_query_params_init);
}

// A caller built against 0.3's header has no `adapter`: init writes none.
TEST(ClientAbi, ParamsInitWritesNoMoreThanAnOlderCallersStruct) {
  kvf_session_params params{};
  params.adapter = "past the caller's struct";
  ASSERT_EQ(kvf_session_params_init(&params, offsetof(kvf_session_params, adapter)), KVF_OK);
  EXPECT_EQ(params.struct_size, offsetof(kvf_session_params, adapter));
  EXPECT_EQ(params.block_heads, -1);
  EXPECT_STREQ(params.adapter, "past the caller's struct");
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
// this library knows are read and written; out fields it lacks are left
// alone, params it lacks, at their zero defaults, change nothing.
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
  params.added_later = 7;
  ASSERT_EQ(kvf_session_params_init(&params.known, sizeof params), KVF_OK);
  EXPECT_EQ(params.known.struct_size, sizeof params);
  EXPECT_EQ(params.added_later, 0u) << "a field this library lacks: its default, zero";
  params.known.game_id = "holdem";
  kvf_session session = 0;
  auto opening = std::async(std::launch::async, [&] { return kvf_session_open(client.get(), &params.known, &session); });
  Incoming open = server.expect(fb::Body::OpenSession);
  EXPECT_EQ(open.message().body_as_OpenSession()->game_id()->str(), "holdem");
  server.session_opened(open, 3);
  EXPECT_EQ(opening.get(), KVF_OK) << kvf_client_last_error(nullptr);
}

// The other way round from the one above: this library is the old one, and
// the newer caller sets an option it lacks. Refused, and the last error says
// so, rather than the option silently doing nothing. (A real 0.3 library
// cannot be the old one: it has no kvf_*_params_init, so such a program does
// not start against it, the loader naming the missing function.)
TEST(ClientAbi, AnOptionNewerThanThisLibraryIsRefused) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  struct NewerQueryParams {
    kvf_query_params known;
    uint32_t added_later;
  } params{};
  ASSERT_EQ(kvf_query_params_init(&params.known, sizeof params), KVF_OK);
  params.known.instruction = "Act.";
  params.added_later = 1;
  kvf_session session = open_scripted(server, client.get(), 5);
  EXPECT_EQ(kvf_query(client.get(), session, &params.known, nullptr, nullptr, nullptr), KVF_ERR_UNSUPPORTED);
  const std::string error = kvf_client_last_error(nullptr);
  EXPECT_NE(error.find("kvf_query_params has a field set at byte " + std::to_string(sizeof(kvf_query_params))),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(std::to_string(KVF_VERSION_MAJOR) + "." + std::to_string(KVF_VERSION_MINOR)), std::string::npos)
      << error;
  EXPECT_TRUE(server.quiet(100)) << "nothing sent";
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

// A program built against the 0.3 header (abi_0.3/caller.c), following that
// header's example with its by-value kvf_*_default_params().
TEST(ClientAbi, AProgramBuiltAgainst03Runs) {
  ScriptedServer server;
  server.serve_in_background(1);
  const std::string command = std::string(KVFRAME_CALLER_0_3) + " " + server.endpoint();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

// Codes a newer server sends that this client does not know: never a value
// outside kvf_status, and the number is kept.
constexpr auto kNewerCode = static_cast<fb::ErrorCode>(250);

// The event of a query the scripted server refused with `code` and `message`.
EventPtr refused_query(fb::ErrorCode code, const std::string& message) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  kvf_session session = open_scripted(server, client.get(), 6);
  kvf_query_params q = client::defaults(kvf_query_params_init);
  q.instruction = "Act.";
  EXPECT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, nullptr), KVF_OK);
  server.error(server.expect(fb::Body::Query), code, message);
  EventPtr event = poll_event(client.get());
  EXPECT_TRUE(event && kvf_event_type_of(event.get()) == KVF_EVENT_ERROR);
  return event;
}

TEST(ClientAbi, AnUnknownErrorCodeArrivesAsUnknownWithItsNumber) {
  EventPtr event = refused_query(kNewerCode, "a newer refusal");
  ASSERT_TRUE(event);
  EXPECT_EQ(kvf_event_error_code(event.get()), KVF_ERR_UNKNOWN);
  EXPECT_EQ(kvf_event_raw_error_code(event.get()), 250);
  EXPECT_STREQ(kvf_status_name(kvf_event_error_code(event.get())), "KVF_ERR_UNKNOWN");
  const std::string text = kvf_event_text(event.get(), nullptr);
  EXPECT_EQ(text.rfind("a newer refusal (error code 250 from the server", 0), 0u) << text;
}

TEST(ClientAbi, AKnownErrorCodeKeepsItsStatus) {
  EventPtr event = refused_query(fb::ErrorCode::Busy, "full");
  ASSERT_TRUE(event);
  EXPECT_EQ(kvf_event_error_code(event.get()), KVF_ERR_BUSY);
  EXPECT_EQ(kvf_event_raw_error_code(event.get()), KVF_ERR_BUSY);
  EXPECT_STREQ(kvf_event_text(event.get(), nullptr), "full");
}

// A blocking call has no event: its status is KVF_ERR_UNKNOWN, the number in the last error.
TEST(ClientAbi, AnUnknownErrorCodeFailsABlockingCallAsUnknown) {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  kvf_session_params params = game_params();
  kvf_session session = 0;
  std::string error;  // the last error is the calling thread's
  auto opening = std::async(std::launch::async, [&] {
    const kvf_status code = kvf_session_open(client.get(), &params, &session);
    error = kvf_client_last_error(nullptr);
    return code;
  });
  server.error(server.expect(fb::Body::OpenSession), kNewerCode, "no");
  EXPECT_EQ(opening.get(), KVF_ERR_UNKNOWN);
  EXPECT_EQ(error.rfind("no (error code 250 from the server", 0), 0u) << error;
}

}  // namespace
}  // namespace kvframe::test
