// The action kinds' probabilities read from a schema'd answer's choices
// (holdem/action_choice.h), on hand-written choices as the server reports them.
#include <gtest/gtest.h>

#include "holdem/action_choice.h"

namespace kvframe::examples::holdem {
namespace {

LegalActions facing_a_bet() { return {false, 20, true, 40, 1000}; }

TEST(HoldemActionChoice, SumsEachKindsTokensAtTheActionsChoice) {
  // "c" and "call" are both the call; a space decides nothing and is left out.
  const char* choices = R"([{"prefix":"{\"action\":\"","options":[
      {"text":"r","p":0.5},{"text":"call","p":0.2},{"text":"c","p":0.1},{"text":"f","p":0.1},{"text":" ","p":0.1}]},
      {"prefix":"{\"action\":\"raise\",\"amount\":","options":[{"text":"4","p":0.6},{"text":"8","p":0.4}]}])";
  const auto choice = action_choice(choices, facing_a_bet());
  ASSERT_TRUE(choice);
  EXPECT_NEAR(choice->covered, 0.9, 1e-9);
  EXPECT_NEAR(choice->probability.at("raise"), 0.5 / 0.9, 1e-9);
  EXPECT_NEAR(choice->probability.at("call"), 0.3 / 0.9, 1e-9);
  EXPECT_NEAR(choice->probability.at("fold"), 0.1 / 0.9, 1e-9);
  EXPECT_EQ(choice->probability.count("check"), 0u);  // not legal here
}

TEST(HoldemActionChoice, SkipsChoicesBeforeTheActionsAndNamesEveryLegalKind) {
  // The first choice is a space before the value; the action's comes next,
  // its opening quote in the token. Raise is legal but not among the options.
  const char* choices = R"([{"prefix":"{\"action\":","options":[{"text":" ","p":0.3},{"text":"\"","p":0.7}]},
      {"prefix":"{\"action\": ","options":[{"text":"\"check","p":0.75},{"text":"\"f","p":0.25}]}])";
  LegalActions legal{true, 0, true, 20, 1000};
  const auto choice = action_choice(choices, legal);
  ASSERT_TRUE(choice);
  EXPECT_NEAR(choice->covered, 1.0, 1e-9);
  EXPECT_NEAR(choice->probability.at("check"), 0.75, 1e-9);
  EXPECT_NEAR(choice->probability.at("fold"), 0.25, 1e-9);
  EXPECT_EQ(choice->probability.at("raise"), 0.0);
}

TEST(HoldemActionChoice, NoneWithoutChoicesOrWithoutTheAction) {
  EXPECT_FALSE(action_choice("", facing_a_bet()));
  EXPECT_FALSE(action_choice("not json", facing_a_bet()));
  EXPECT_FALSE(action_choice(R"([{"prefix":"","options":[{"text":" ","p":1}]}])", facing_a_bet()));
  // Only the amount was a choice: the action was named before any.
  EXPECT_FALSE(action_choice(R"([{"prefix":"{\"action\":\"raise\",\"amount\":","options":[{"text":"4","p":1}]}])",
                             facing_a_bet()));
}

}  // namespace
}  // namespace kvframe::examples::holdem
