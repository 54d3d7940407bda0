// The parsed action of a Result (kvf_event_action, kvf_value_*, the C++
// Value): every type, paths, iteration, typed errors, and corrupt bytes
// from the server, which must fail the request and never crash.
#include <cstring>
#include <random>
#include <set>

#include "client_test_support.h"
#include "kvframe/client/kvframe_client.hpp"

namespace kvframe::test {
namespace {

const std::string kAction = R"({"verb":"raise","amount":40,"odds":0.25,"all_in":true,"note":null,"big":3.0,
  "target":{"id":"p3","seat":2},"cards":["Ah",{"suit":"s"},[1,-2]],"dot.key":7,"say":"Zoë \u00e9"})";

std::vector<uint8_t> flex(const std::string& json) {
  auto built = protocol::action_flexbuffer(json);
  EXPECT_TRUE(built.ok()) << built.error();
  return built.ok() ? *built : std::vector<uint8_t>{};
}

struct Connected {
  ScriptedServer server;
  ClientPtr client = connect_scripted(server, client_params(server.endpoint()));
  kvf_session session = open_scripted(server, client.get(), 9);

  // Sends a polled npc_action query; the server's Incoming for it.
  Incoming ask() {
    kvf_query_params q = client::defaults(kvf_query_params_init);
    q.kind = KVF_TASK_NPC_ACTION;
    q.instruction = "Act.";
    EXPECT_EQ(kvf_query(client.get(), session, &q, nullptr, nullptr, nullptr), KVF_OK);
    return server.expect(fb::Body::Query);
  }
  EventPtr answered(const std::string& json, const std::vector<uint8_t>& action) {
    server.action_result(ask(), json, action);
    return poll_event(client.get(), 3000);  // well below the 5 s request timeout
  }
};

kvf_value get(const kvf_value& from, const char* path, kvf_status expected = KVF_OK) {
  kvf_value out{};
  EXPECT_EQ(kvf_value_get(&from, path, &out), expected) << path << ": " << kvf_client_last_error(nullptr);
  return out;
}

std::string string_of(const kvf_value& v) {
  const char* text = nullptr;
  size_t length = 0;
  EXPECT_EQ(kvf_value_as_string(&v, &text, &length), KVF_OK) << kvf_client_last_error(nullptr);
  return text ? std::string(text, length) : std::string();
}

int64_t int_of(const kvf_value& v) {
  int64_t out = 0;
  EXPECT_EQ(kvf_value_as_int(&v, &out), KVF_OK) << kvf_client_last_error(nullptr);
  return out;
}

std::string last_error() { return kvf_client_last_error(nullptr); }

// The C calls on a value held by reference, so get()'s result chains into them.
kvf_value_type type_of(const kvf_value& v) { return kvf_value_type_of(&v); }
size_t size_of(const kvf_value& v) { return kvf_value_size(&v); }
kvf_status as_bool(const kvf_value& v, int32_t* out) { return kvf_value_as_bool(&v, out); }
kvf_status as_int(const kvf_value& v, int64_t* out) { return kvf_value_as_int(&v, out); }
kvf_status as_double(const kvf_value& v, double* out) { return kvf_value_as_double(&v, out); }
kvf_status as_string(const kvf_value& v, const char** out) { return kvf_value_as_string(&v, out, nullptr); }

TEST(ClientAction, ReadsEveryTypeByPath) {
  Connected c;
  EventPtr e = c.answered(kAction, flex(kAction));
  ASSERT_TRUE(e);
  ASSERT_EQ(kvf_event_type_of(e.get()), KVF_EVENT_RESULT) << kvf_event_text(e.get(), nullptr);
  EXPECT_EQ(std::string(kvf_event_action_json(e.get(), nullptr)), kAction);
  kvf_report report{};
  report.struct_size = sizeof report;
  ASSERT_EQ(kvf_event_report(e.get(), &report), KVF_OK);
  EXPECT_EQ(report.stop_reason, 4);  // Complete

  kvf_value root{};
  ASSERT_EQ(kvf_event_action(e.get(), &root), KVF_OK);
  EXPECT_EQ(kvf_value_type_of(&root), KVF_VALUE_OBJECT);
  EXPECT_EQ(kvf_value_size(&root), 10u);
  EXPECT_EQ(type_of(get(root, "")), KVF_VALUE_OBJECT);  // "" is the value itself

  EXPECT_EQ(type_of(get(root, "verb")), KVF_VALUE_STRING);
  EXPECT_EQ(string_of(get(root, "verb")), "raise");
  EXPECT_EQ(string_of(get(root, "say")), "Zoë é");
  EXPECT_EQ(type_of(get(root, "amount")), KVF_VALUE_INT);
  EXPECT_EQ(int_of(get(root, "amount")), 40);
  double d = 0;
  ASSERT_EQ(as_double(get(root, "amount"), &d), KVF_OK);  // integers are numbers too
  EXPECT_EQ(d, 40.0);
  EXPECT_EQ(type_of(get(root, "odds")), KVF_VALUE_DOUBLE);
  ASSERT_EQ(as_double(get(root, "odds"), &d), KVF_OK);
  EXPECT_EQ(d, 0.25);
  EXPECT_EQ(type_of(get(root, "big")), KVF_VALUE_DOUBLE);
  EXPECT_EQ(int_of(get(root, "big")), 3);  // 3.0 is an integer
  int32_t b = 0;
  ASSERT_EQ(as_bool(get(root, "all_in"), &b), KVF_OK);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(type_of(get(root, "note")), KVF_VALUE_NULL);

  EXPECT_EQ(string_of(get(root, "target.id")), "p3");
  EXPECT_EQ(int_of(get(root, "target.seat")), 2);
  EXPECT_EQ(type_of(get(root, "cards")), KVF_VALUE_ARRAY);
  EXPECT_EQ(size_of(get(root, "cards")), 3u);
  EXPECT_EQ(string_of(get(root, "cards[0]")), "Ah");
  EXPECT_EQ(string_of(get(root, "cards[1].suit")), "s");
  EXPECT_EQ(int_of(get(root, "cards[2][1]")), -2);
  EXPECT_EQ(int_of(get(get(root, "cards"), "[2][0]")), 1);  // paths are relative
}

TEST(ClientAction, MissingPathsMismatchesAndBadPathsAreTypedErrors) {
  Connected c;
  EventPtr e = c.answered(kAction, flex(kAction));
  kvf_value root{};
  ASSERT_EQ(kvf_event_action(e.get(), &root), KVF_OK);

  get(root, "missing", KVF_ERR_NOT_FOUND);
  get(root, "target.name", KVF_ERR_NOT_FOUND);
  EXPECT_NE(last_error().find("target.name"), std::string::npos) << last_error();
  get(root, "cards[3]", KVF_ERR_NOT_FOUND);
  EXPECT_NE(last_error().find("3 elements"), std::string::npos) << last_error();
  get(root, "dot.key", KVF_ERR_NOT_FOUND);  // a path: "dot", then "key"
  get(root, "verb.x", KVF_ERR_TYPE_MISMATCH);
  EXPECT_NE(last_error().find("\"verb\" is a string, not an object"), std::string::npos) << last_error();
  get(root, "target[0]", KVF_ERR_TYPE_MISMATCH);
  for (const char* bad : {"cards[", "cards[x]", "cards[]", "cards[-1]", ".verb", "target..id", "cards[1]suit", "target.",
                          "missing..x"}) {  // refused whatever the value holds
    get(root, bad, KVF_ERR_INVALID_ARGUMENT);
  }

  int64_t i = 0;
  double d = 0;
  int32_t b = 0;
  const char* text = nullptr;
  EXPECT_EQ(as_bool(get(root, "amount"), &b), KVF_ERR_TYPE_MISMATCH);
  EXPECT_NE(last_error().find("an integer, not a bool"), std::string::npos) << last_error();
  EXPECT_EQ(as_int(get(root, "odds"), &i), KVF_ERR_TYPE_MISMATCH);
  EXPECT_EQ(as_int(get(root, "verb"), &i), KVF_ERR_TYPE_MISMATCH);
  EXPECT_EQ(as_double(get(root, "verb"), &d), KVF_ERR_TYPE_MISMATCH);
  EXPECT_EQ(as_string(get(root, "note"), &text), KVF_ERR_TYPE_MISMATCH);
  EXPECT_EQ(kvf_value_as_string(&root, &text, nullptr), KVF_ERR_TYPE_MISMATCH);

  kvf_value none{};  // zeroed: no value
  EXPECT_EQ(kvf_value_type_of(&none), KVF_VALUE_NONE);
  EXPECT_EQ(kvf_value_type_of(nullptr), KVF_VALUE_NONE);
  EXPECT_EQ(kvf_value_size(&none), 0u);
  get(none, "a", KVF_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kvf_value_as_int(&none, &i), KVF_ERR_INVALID_ARGUMENT);
  kvf_value out{};
  EXPECT_EQ(kvf_value_get(&root, nullptr, &out), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kvf_value_get(nullptr, "a", &out), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kvf_value_as_int(&root, nullptr), KVF_ERR_INVALID_ARGUMENT);
}

TEST(ClientAction, IteratesMembersInKeyOrderAndElementsInOrder) {
  Connected c;
  EventPtr e = c.answered(kAction, flex(kAction));
  kvf_value root{};
  ASSERT_EQ(kvf_event_action(e.get(), &root), KVF_OK);
  std::vector<std::string> keys;
  for (size_t i = 0; i < kvf_value_size(&root); ++i) {
    const char* key = nullptr;
    size_t length = 0;
    ASSERT_EQ(kvf_value_key_at(&root, i, &key, &length), KVF_OK);
    keys.emplace_back(key, length);
    EXPECT_EQ(std::strlen(key), length);
  }
  const std::vector<std::string> sorted = {"all_in", "amount", "big", "cards",  "dot.key",
                                           "note",   "odds",   "say", "target", "verb"};
  EXPECT_EQ(keys, sorted);
  kvf_value member{};
  ASSERT_EQ(kvf_value_at(&root, 4, &member), KVF_OK);  // "dot.key", unreachable by path
  EXPECT_EQ(int_of(member), 7);
  EXPECT_EQ(kvf_value_at(&root, 10, &member), KVF_ERR_NOT_FOUND);

  const kvf_value cards = get(root, "cards");
  kvf_value first{};
  ASSERT_EQ(kvf_value_at(&cards, 0, &first), KVF_OK);
  EXPECT_EQ(string_of(first), "Ah");
  EXPECT_EQ(kvf_value_at(&cards, 3, &member), KVF_ERR_NOT_FOUND);
  const char* key = nullptr;
  EXPECT_EQ(kvf_value_key_at(&cards, 0, &key, nullptr), KVF_ERR_TYPE_MISMATCH);
  EXPECT_EQ(kvf_value_size(&first), 0u);
  EXPECT_EQ(kvf_value_at(&first, 0, &member), KVF_ERR_TYPE_MISMATCH);
}

TEST(ClientAction, OnlyAnActionResultCarriesOne) {
  Connected c;
  c.server.result(c.ask(), "just text");
  EventPtr e = poll_event(c.client.get());
  ASSERT_TRUE(e);
  kvf_value root{};
  EXPECT_EQ(kvf_event_action(e.get(), &root), KVF_ERR_NOT_FOUND);
  EXPECT_NE(last_error().find("no action"), std::string::npos);
  EXPECT_EQ(kvf_event_action(nullptr, &root), KVF_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kvf_event_action(e.get(), nullptr), KVF_ERR_INVALID_ARGUMENT);
}

TEST(ClientAction, ACloneOutlivesTheEvent) {
  Connected c;
  EventPtr e = c.answered(kAction, flex(kAction));
  kvf_event* raw = nullptr;
  ASSERT_EQ(kvf_event_clone(e.get(), &raw), KVF_OK);
  EventPtr clone(raw, &kvf_event_free);
  e.reset();
  kvf_value root{};
  ASSERT_EQ(kvf_event_action(clone.get(), &root), KVF_OK);
  EXPECT_EQ(string_of(get(root, "target.id")), "p3");
  EXPECT_EQ(std::string(kvf_event_text(clone.get(), nullptr)), kAction);
  EXPECT_EQ(kvf_event_clone(nullptr, &raw), KVF_ERR_INVALID_ARGUMENT);
}

TEST(ClientAction, GarbageActionFailsTheRequestAtOnce) {
  Connected c;
  const Incoming query = c.ask();
  c.server.action_result(query, "{}", {0xde, 0xad, 0xbe, 0xef, 0x07, 0xff, 0x08});
  EventPtr e = poll_event(c.client.get(), 3000);  // not the 5 s timeout
  ASSERT_TRUE(e);
  EXPECT_EQ(kvf_event_type_of(e.get()), KVF_EVENT_ERROR);
  EXPECT_EQ(kvf_event_error_code(e.get()), KVF_ERR_MALFORMED) << kvf_event_text(e.get(), nullptr);
  EXPECT_EQ(kvf_event_request_id(e.get()), query.request_id());
  EXPECT_EQ(kvf_event_session(e.get()), c.session);
}

// Reads everything below `v` through every accessor (what a game iterating
// an action does); returns how many values it saw.
size_t walk(const kvf_value& v) {
  size_t seen = 1;
  int64_t i = 0;
  double d = 0;
  int32_t b = 0;
  const char* text = nullptr;
  size_t length = 0;
  kvf_value_as_int(&v, &i);
  kvf_value_as_double(&v, &d);
  kvf_value_as_bool(&v, &b);
  if (kvf_value_as_string(&v, &text, &length) == KVF_OK) {
    EXPECT_EQ(text[length], '\0');
  }
  const size_t size = kvf_value_size(&v);
  for (size_t k = 0; k < size; ++k) {
    kvf_value child{};
    EXPECT_EQ(kvf_value_at(&v, k, &child), KVF_OK);
    seen += walk(child);
    if (kvf_value_key_at(&v, k, &text, &length) == KVF_OK) {
      kvf_value by_key{};
      kvf_value_get(&v, text, &by_key);
    }
  }
  return seen;
}

TEST(ClientAction, CorruptedActionsAreRefusedOrReadableNeverACrash) {
  Connected c;
  const std::vector<uint8_t> valid = flex(kAction);
  std::mt19937 rng(7);
  size_t refused = 0, read = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<uint8_t> bytes = valid;
    if (round % 10 == 0) {
      bytes.resize(std::uniform_int_distribution<size_t>(1, bytes.size() - 1)(rng));
    } else {
      for (int flips = 1 + round % 3; flips > 0; --flips) {
        bytes[std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng)] =
            static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
      }
    }
    EventPtr e = c.answered("{}", bytes);
    ASSERT_TRUE(e) << "round " << round;
    if (kvf_event_type_of(e.get()) == KVF_EVENT_ERROR) {
      EXPECT_EQ(kvf_event_error_code(e.get()), KVF_ERR_MALFORMED);
      ++refused;
      continue;
    }
    kvf_value root{};
    ASSERT_EQ(kvf_event_action(e.get(), &root), KVF_OK);
    walk(root);
    ++read;
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(read, 0u);
}

TEST(ClientWrapperAction, AnswerAndEventReadTheAction) {
  Connected c;
  client::Session session(c.client.get(), c.session);
  client::QueryParams q("Act.");
  q.kind = KVF_TASK_NPC_ACTION;
  std::future<client::Answer> future = session.ask(q);
  c.server.action_result(c.server.expect(fb::Body::Query), kAction, flex(kAction));
  client::Answer answer = future.get();
  ASSERT_TRUE(answer.status) << answer.status.message();
  EXPECT_EQ(answer.report->stop_reason, 4);
  auto action = answer.action();
  ASSERT_TRUE(action) << action.status().message();
  EXPECT_EQ(action->type(), KVF_VALUE_OBJECT);
  EXPECT_EQ(*action->get("target.id")->as_string(), "p3");
  EXPECT_EQ(*action->get("cards[2][1]")->as_int(), -2);
  EXPECT_EQ(*action->get("odds")->as_double(), 0.25);
  EXPECT_TRUE(*action->get("all_in")->as_bool());
  EXPECT_EQ(action->get("nope").status().code(), KVF_ERR_NOT_FOUND);
  EXPECT_EQ(action->get("amount")->as_bool().status().code(), KVF_ERR_TYPE_MISMATCH);
  EXPECT_EQ(action->get("amount")->as_string().status().code(), KVF_ERR_TYPE_MISMATCH);
  std::set<std::string> keys;
  for (std::size_t i = 0; i < action->size(); ++i) keys.emplace(*action->key_at(i));
  EXPECT_EQ(keys.size(), 10u);
  EXPECT_EQ(*action->at(4)->as_int(), 7);  // "dot.key"
  EXPECT_EQ(client::Value().type(), KVF_VALUE_NONE);

  ASSERT_TRUE(session.query(q));
  c.server.action_result(c.server.expect(fb::Body::Query), R"({"n":1})", flex(R"({"n":1})"));
  kvf_event* raw = nullptr;
  ASSERT_EQ(kvf_poll(c.client.get(), 3000, &raw), KVF_OK);
  const client::PolledEvent polled(raw);
  EXPECT_EQ(*polled.action()->get("n")->as_int(), 1);

  std::future<client::Answer> text_future = session.ask({"Talk."});
  c.server.result(c.server.expect(fb::Body::Query), "hi");
  EXPECT_EQ(text_future.get().action().status().code(), KVF_ERR_NOT_FOUND);

  auto closing = std::async(std::launch::async, [&] { return session.close(); });
  c.server.session_closed(c.server.expect(fb::Body::CloseSession));
  EXPECT_TRUE(closing.get());
}

// The model's choices (Result.choices_json) reach the C event and the C++
// answer as the server wrote them; a result without them reads "".
TEST(ClientWrapperAction, AnswerAndEventCarryTheChoices) {
  Connected c;
  const std::string choices = R"([{"prefix":"{\"action\":\"","options":[{"text":"r","p":0.75},{"text":"f","p":0.25}]}])";
  EventPtr event = [&] {
    c.server.action_result(c.ask(), R"({"action":"raise"})", flex(R"({"action":"raise"})"), choices);
    return poll_event(c.client.get(), 3000);
  }();
  ASSERT_TRUE(event);
  size_t length = 0;
  EXPECT_EQ(std::string(kvf_event_choices_json(event.get(), &length)), choices);
  EXPECT_EQ(length, choices.size());
  EXPECT_STREQ(kvf_event_choices_json(nullptr, nullptr), "");

  client::Session session(c.client.get(), c.session);
  client::QueryParams q("Act.");
  q.kind = KVF_TASK_NPC_ACTION;
  std::future<client::Answer> with = session.ask(q);
  c.server.action_result(c.server.expect(fb::Body::Query), R"({"n":1})", flex(R"({"n":1})"), choices);
  EXPECT_EQ(with.get().choices_json, choices);
  std::future<client::Answer> without = session.ask(q);
  c.server.action_result(c.server.expect(fb::Body::Query), R"({"n":1})", flex(R"({"n":1})"));
  EXPECT_EQ(without.get().choices_json, "");
  auto closing = std::async(std::launch::async, [&] { return session.close(); });
  c.server.session_closed(c.server.expect(fb::Body::CloseSession));
  EXPECT_TRUE(closing.get());
}

}  // namespace
}  // namespace kvframe::test
