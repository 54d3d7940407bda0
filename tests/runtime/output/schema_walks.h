// Random walks through a compiled schema's masks and the masks checked
// against brute force: shared by the json_schema property tests (random
// schemas, patterns).
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kvframe/runtime_output/json_schema.h"

namespace kvframe::runtime::schema_test {

struct Walk {
  std::string text;
  std::string failure;  // empty when every property held
};

// Tokens picked uniformly among the mask until the output is finished or
// the budget spent: every step must offer a token, every masked token must
// be accepted, and the walk must end complete.
inline Walk random_walk(const std::shared_ptr<CompiledSchema>& schema, int32_t budget, std::mt19937_64& rng) {
  JsonConstraint c(schema);
  Walk walk;
  // The decoder stops at finished() or when the budget is spent, complete either way.
  while (!c.finished() && budget > 0) {
    if (c.tokens_to_complete() > budget) {
      walk.failure = "out of budget after '" + c.text() + "'";
      return walk;
    }
    const TokenMask& mask = c.allowed(budget);
    if (mask.empty()) {
      walk.failure = "empty mask after '" + c.text() + "'";
      return walk;
    }
    const int32_t token = mask.ids()[std::uniform_int_distribution<size_t>(0, mask.ids().size() - 1)(rng)];
    if (auto accepted = c.accept(token); !accepted.ok()) {
      walk.failure = "a masked token was refused: " + accepted.error().to_string();
      return walk;
    }
    --budget;
  }
  if (!c.complete()) walk.failure = "stopped incomplete: '" + c.text() + "'";
  walk.text = c.text();
  return walk;
}

// One random walk on which, at every step, each token of the vocabulary is
// tried on a fresh constraint replaying the walk so far: it must be in
// allowed(budget) exactly when it is accepted and still leaves the output
// completable within budget - 1 tokens (end tokens: when the output is
// complete). `context` names the case in failures.
inline void expect_masks_equal_brute_force(const std::shared_ptr<CompiledSchema>& schema,
                                           const std::shared_ptr<const TokenVocabulary>& vocab, int32_t budget,
                                           std::mt19937_64& rng, const std::string& context) {
  std::vector<int32_t> walked;
  JsonConstraint c(schema);
  while (!c.finished() && budget > 0) {
    const TokenMask& mask = c.allowed(budget);
    for (int32_t t = 0; t < vocab->size(); ++t) {
      JsonConstraint probe(schema);
      for (int32_t w : walked) ASSERT_TRUE(probe.accept(w).ok());
      const bool accepted = probe.accept(t).ok();
      const bool fits = accepted && (probe.finished() || probe.tokens_to_complete() <= budget - 1);
      ASSERT_EQ(mask.contains(t), fits) << context << ": token " << t << " ('" << vocab->bytes(t) << "') after '"
                                        << c.text() << "', budget " << budget;
    }
    const int32_t token = mask.ids()[std::uniform_int_distribution<size_t>(0, mask.ids().size() - 1)(rng)];
    ASSERT_TRUE(c.accept(token).ok());
    walked.push_back(token);
    --budget;
  }
}

}  // namespace kvframe::runtime::schema_test
