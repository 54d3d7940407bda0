// How sure the LLM bot was of its action: the probability of each action
// kind at the point of its answer that names the action, from the choices
// the server reports with a schema'd answer (kvf_event_choices_json).
//
// The schema (action_schema_json) offers fold, check or call, and raise:
// the first letter of the action's name tells them apart, so each allowed
// token at that point is one kind's, or (a space, a key) none's. Tokens of
// no kind are left out and the rest renormalized; `covered` says how much
// of the allowed tokens' probability the kinds hold. Only the likeliest
// tokens are reported (8), so a kind whose tokens are all below them reads 0.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "holdem/table.h"

namespace kvframe::examples::holdem {

struct ActionChoice {
  std::map<std::string, double> probability;  // action name ("fold", ...) -> probability, summing to 1
  double covered = 0;                          // the allowed tokens' probability those names hold
};

// nullopt when no reported choice names an action (no choices: an older
// server, or an answer without a schema).
std::optional<ActionChoice> action_choice(std::string_view choices_json, const LegalActions& legal);

}  // namespace kvframe::examples::holdem
