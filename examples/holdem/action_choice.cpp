#include "holdem/action_choice.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

namespace kvframe::examples::holdem {
namespace {

// The letters of the action's name written so far in `text` (an answer's
// beginning), or "" when it has not started: {"action": "ra -> "ra".
std::string action_letters(const std::string& text) {
  const std::string key = "\"action\"";
  std::size_t at = text.find(key);
  if (at == std::string::npos) return {};
  at += key.size();
  while (at < text.size() && (text[at] == ' ' || text[at] == ':')) ++at;
  if (at >= text.size() || text[at] != '"') return {};
  std::string letters;
  for (++at; at < text.size() && std::isalpha(static_cast<unsigned char>(text[at])); ++at) letters += text[at];
  return letters;
}

// The legal action whose name starts with `letters` ("" when none or several do).
std::string kind_of(const std::string& letters, const std::vector<std::string>& names) {
  if (letters.empty()) return {};
  std::string found;
  for (const std::string& name : names) {
    if (name.compare(0, letters.size(), letters) != 0) continue;
    if (!found.empty()) return {};
    found = name;
  }
  return found;
}

}  // namespace

std::optional<ActionChoice> action_choice(std::string_view choices_json, const LegalActions& legal) {
  const auto choices = nlohmann::json::parse(choices_json.begin(), choices_json.end(), nullptr, false);
  if (!choices.is_array()) return std::nullopt;
  std::vector<std::string> names = {"fold", legal.can_check ? "check" : "call"};
  if (legal.can_raise) names.push_back("raise");
  for (const auto& point : choices) {
    const std::string prefix = point.value("prefix", "");
    if (!kind_of(action_letters(prefix), names).empty()) return std::nullopt;  // named before any choice
    ActionChoice choice;
    for (const auto& option : point.value("options", nlohmann::json::array())) {
      const std::string kind = kind_of(action_letters(prefix + option.value("text", "")), names);
      if (kind.empty()) continue;
      const double p = option.value("p", 0.0);
      choice.probability[kind] += p;
      choice.covered += p;
    }
    if (choice.covered <= 0) continue;  // a choice before the action's (a space)
    for (auto& [name, p] : choice.probability) p /= choice.covered;
    for (const std::string& name : names) choice.probability.emplace(name, 0.0);
    return choice;
  }
  return std::nullopt;
}

}  // namespace kvframe::examples::holdem
