// Fuzz entry point over schema compilation and the constraint: the input is
// a schema's text, as is. compile_schema must return a schema or a typed
// error, never crash; a schema that compiles is walked once at random
// (seeded from the input) under a budget of at least min_tokens(), and the
// walk must keep the guarantees json_schema.h makes: a mask is never empty
// before the end, ids are ascending and agree with contains(), a masked
// token is always accepted, the output ends complete within the budget and
// parses as JSON. Violations print and trap.
#include <simdjson.h>

#include <random>
#include <string>

#include "fuzz_check.h"
#include "fuzz_entry.h"
#include "kvframe/runtime_output/json_schema.h"
#include "schema_test_vocab.h"

namespace {

using namespace kvframe::runtime;
using kvframe::ErrorCode;

// Walks longer than this are skipped: the fuzzer's time goes to compiling.
constexpr int32_t kMaxWalk = 400;

uint64_t seed_of(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

void check_error(const SchemaError& e) {
  const bool known = e.code == ErrorCode::kSchemaNotJson || e.code == ErrorCode::kSchemaInvalid ||
                     e.code == ErrorCode::kSchemaUnsupported || e.code == ErrorCode::kSchemaTooComplex;
  FUZZ_CHECK(known, "a code that is not a schema error");
  FUZZ_CHECK(!e.message.empty(), "an error without a message");
  FUZZ_CHECK(e.path.empty() || e.path[0] == '/', "an error path that is not a JSON pointer: " + e.path);
}

void walk(const std::shared_ptr<CompiledSchema>& schema, std::mt19937_64& rng) {
  int32_t budget = schema->min_tokens() + static_cast<int32_t>(rng() % 24);
  JsonConstraint c(schema);
  while (!c.finished() && budget > 0) {
    FUZZ_CHECK(c.tokens_to_complete() <= budget, "over budget after '" + c.text() + "'");
    const TokenMask& mask = c.allowed(budget);
    FUZZ_CHECK(!mask.empty(), "empty mask after '" + c.text() + "'");
    const auto& ids = mask.ids();
    for (size_t i = 0; i < ids.size(); ++i) {
      FUZZ_CHECK(mask.contains(ids[i]), "contains() disagrees with ids()");
      FUZZ_CHECK(i == 0 || ids[i - 1] < ids[i], "mask ids not ascending");
    }
    const int32_t token = ids[rng() % ids.size()];
    const auto accepted = c.accept(token);
    FUZZ_CHECK(accepted.ok(),
               "a masked token was refused: " + (accepted.ok() ? std::string() : accepted.error().to_string()));
    --budget;
  }
  FUZZ_CHECK(c.complete(), "stopped incomplete: '" + c.text() + "'");
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  FUZZ_CHECK(parser.parse(simdjson::padded_string(c.text())).get(root) == simdjson::SUCCESS,
             "the output is not JSON: '" + c.text() + "'");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto vocab = kvframe::runtime::schema_test::word_vocabulary();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto compiled = compile_schema(text, vocab);
  if (!compiled) {
    check_error(compiled.error());
    return 0;
  }
  FUZZ_CHECK((*compiled)->min_tokens() >= 1, "a schema whose shortest output is empty");
  if ((*compiled)->min_tokens() > kMaxWalk) return 0;
  std::mt19937_64 rng(seed_of(data, size));
  walk(*compiled, rng);
  return 0;
}
