#include "holdem/simulator/dataset.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "holdem/gamecore.h"
#include "holdem/simulator/llm_player.h"
#include "holdem/simulator/match.h"

namespace kvframe::examples::holdem {
namespace {

using Json = nlohmann::ordered_json;

std::string record_id(std::uint64_t seed, std::uint64_t hand, const std::string& what) {
  return "holdem-s" + std::to_string(seed) + "-" + hand_id(hand) + "-" + what;
}

}  // namespace

std::unique_ptr<DatasetWriter> DatasetWriter::open(const std::string& path, std::uint64_t seed, std::string* error) {
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  std::error_code made;
  std::filesystem::create_directories(folder, made);
  std::ofstream rules(folder / "rules.json", std::ios::trunc);
  rules << holdem_rules_json();
  std::ofstream out(path, std::ios::app);
  if (made || !rules || !out) {
    *error = "cannot write " + path + " and rules.json beside it: check the folder";
    return nullptr;
  }
  return std::unique_ptr<DatasetWriter>(new DatasetWriter(std::move(out), seed));
}

void DatasetWriter::decision(const DecisionView& view, const std::vector<PlayerInfo>& players) {
  const LegalActions legal = view.hand.legal();
  const std::vector<RaiseOption> raises = raise_menu(view.hand);
  const PlayerInfo& me = players[static_cast<std::size_t>(view.seat)];
  const Decision target = teacher_.decide(view);
  const Json record = {
      {"id", record_id(seed_, view.hand_number, me.id + "-" + std::to_string(view.hand.log().size()))},
      {"system", kPlayerSystemPrompt},
      {"frame", Json::parse(gamecore_json(view.hand, view.seat, view.memory, view.hand_number))},
      {"instruction", player_instruction(me, legal, *shown_read(view.hand, view.seat, view.hand_number), raises)},
      {"target", action_json(target.action)},
      {"schema", Json::parse(action_schema_json(legal, raise_amounts(raises)))}};
  out_ << record.dump() << '\n' << std::flush;
  ++records_;
}

void DatasetWriter::commentary(const Hand& hand, std::uint64_t hand_number, const MatchMemory& memory, int viewer) {
  const Json record = {{"id", record_id(seed_, hand_number, "commentary")},
                       {"system", kCommentatorSystemPrompt},
                       {"frame", Json::parse(gamecore_json(hand, viewer, memory, hand_number))},
                       {"instruction", commentary_question(hand, hand_number, memory.players())},
                       {"target", hand_summary(hand, memory.players())}};
  out_ << record.dump() << '\n' << std::flush;
  ++records_;
}

}  // namespace kvframe::examples::holdem
