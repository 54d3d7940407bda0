// kvframe-holdem: the headless Hold'em match simulator.
//
// Seats a table of bots (rule bots and the LLM bot), plays N hands, prints a
// line per hand and the commentary as it streams, then the report: standings
// in bb/100 with 95% intervals, and the LLM bot's decisions per attention mode.
// The LLM bot and commentator talk to kvframe-serve over the bridge: --server
// ENDPOINT, or by default a server in this process over inproc://
// (local_server.h; kvframe-holdem-client, the same program without it,
// needs --server).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "holdem/hand_history.h"
#include "holdem/replay_html.h"
#include "holdem/simulator/dataset.h"
#include "holdem/simulator/llm_player.h"
#include "holdem/simulator/local_server.h"
#include "holdem/simulator/match.h"
#include "holdem/simulator/report.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_options/fidelity_options.h"

namespace {

namespace hd = kvframe::examples::holdem;
using Json = nlohmann::ordered_json;

const char* const kFooter =
    "Exit codes:\n"
    "  0  the match was played, every action legal\n"
    "  1  usage error\n"
    "  2  the model or --server cannot be used (the reason is printed)\n"
    "  4  the match was played, but a bot answered with an invalid action\n"
    "Example: kvframe-holdem --bots llm,tag,station,random --hands 30 --mode block,full --replay-html match.html\n"
    "Hand histories: kvframe-holdem --bots tag,station,random --seats 6 --stacks 200,1000,50,3000,700,1000 "
    "--hands 1500 --hand-history m.phhs";

// --model, --dtype, --threads and --lora (of the in-process server): kvframe::cli::ModelOptions
// (its context is the sessions' --context, below).
struct Options : kvframe::cli::ModelOptions {
  std::vector<std::string> bots = {"llm", "tag", "station", "random"};
  int seats = 0;
  int hands = 30;
  std::uint64_t seed = 1;
  std::string server;
  std::vector<std::string> modes = {"block"};
  int history = 30;  // up to ~5.5K tokens at a 4-seat table: the default model has 8K
  std::string commentary = "auto";
  bool json = false;
  std::string replay_html;
  std::uint32_t context = 8192;
  std::uint32_t max_tokens = 32;
  std::string dataset;
  std::vector<std::int64_t> stacks;
  std::string blinds = "5/10";
  std::string hand_history;
  int pace_ms = 0;
  kvframe::common::BlockFidelity fidelity;  // the in-process server's block sessions (bench/bench_bot.py sweeps it)
};

// "5/10" as small and big blind; false unless 0 < small <= big.
bool parse_blinds(const std::string& text, hd::TableConfig& table) {
  long long small = 0, big = 0;
  char slash = 0, extra = 0;
  std::istringstream in(text);
  if (!(in >> small >> slash >> big) || slash != '/' || (in >> extra)) return false;
  if (small <= 0 || big < small) return false;
  table.small_blind = small;
  table.big_blind = big;
  return true;
}

kvf_mode parse_mode(const std::string& name) {
  return name == "full" ? KVF_MODE_FULL : name == "prefix" ? KVF_MODE_PREFIX : KVF_MODE_BLOCK;
}

// The replay page's record: the match's, plus the modes, decisions and report.
Json replay_record(const hd::Match& match, const Options& o, const Json& report) {
  Json record = match.replay_record();
  bool llm = false;
  for (const auto& seat : match.seats()) llm = llm || seat.player->kind() == "llm";
  record["modes"] = llm ? Json(o.modes) : Json::array();
  for (const hd::DecisionRecord& d : match.decisions()) {
    Json samples = Json::object();
    bool agree = true;
    for (const hd::ModelSample& s : d.decision.samples) {
      samples[s.mode] = {{"ttft_ms", s.ttft_ms},         {"total_ms", s.total_ms},
                         {"tokens_encoded", s.tokens_encoded}, {"tokens_prompt", s.tokens_prompt},
                         {"tokens_encoded_superseded", s.tokens_encoded_superseded},
                         {"answer", s.answer},           {"valid", s.valid}};
      agree = agree && s.chose(d.decision.action);
    }
    record["decisions"].push_back({{"hand", d.hand},
                                   {"seat", d.seat},
                                   {"street", hd::street_name(d.street)},
                                   {"action", hd::action_name(d.decision.action.kind)},
                                   {"samples", samples},
                                   {"agree", agree}});
  }
  record["report"] = report;
  return record;
}

int run(const Options& o) {
  const int seats = o.seats > 0 ? o.seats : static_cast<int>(o.bots.size());
  std::vector<std::string> kinds;
  for (int s = 0; s < seats; ++s) kinds.push_back(o.bots[static_cast<std::size_t>(s) % o.bots.size()]);
  const bool llm_seated = std::find(kinds.begin(), kinds.end(), "llm") != kinds.end();
  const bool commentary = o.commentary == "auto" ? llm_seated : o.commentary != "off";
  std::ostream& human = o.json ? std::cerr : std::cout;

  // Destroyed in reverse: the players' sessions, the client, then the server.
  std::unique_ptr<hd::LocalServer> local;
  std::optional<kvframe::client::Client> client;
  if (llm_seated || commentary) {
    kvframe::client::Client::Params where(o.server);
    if (o.server.empty()) {
      std::string error;
      local = hd::start_local_server({o, o.context, o.fidelity}, human, &error);
      if (!local) {
        std::cerr << "kvframe-holdem: " << error << "\n";
        return kvframe::kExitBadInput;
      }
      where = local->client_params();
    }
    auto connected = kvframe::client::Client::connect(where);
    if (!connected) {
      std::cerr << "kvframe-holdem: cannot reach the server at " << where.endpoint << ": "
                << connected.status().message() << " (is kvframe-serve running? see kvframe-serve --help)\n";
      return kvframe::kExitBadInput;
    }
    client.emplace(std::move(connected.value()));
  }

  hd::LlmParams llm;
  llm.modes.clear();
  for (const std::string& mode : o.modes) llm.modes.push_back(parse_mode(mode));
  llm.rules_json = hd::holdem_rules_json();
  llm.context_tokens = o.context;
  llm.max_tokens = o.max_tokens;

  const std::vector<hd::PlayerInfo> infos = hd::default_players(seats);
  std::vector<hd::SeatedPlayer> seated;
  int llm_seat = -1;
  for (int s = 0; s < seats; ++s) {
    const hd::PlayerInfo& info = infos[static_cast<std::size_t>(s)];
    if (kinds[static_cast<std::size_t>(s)] == "llm") {
      auto player = hd::LlmPlayer::open(*client, info, llm);
      if (!player) {
        std::cerr << "kvframe-holdem: the server refused the LLM bot's session: " << player.status().message() << "\n";
        return kvframe::kExitBadInput;
      }
      if (llm_seat < 0) llm_seat = s;
      seated.push_back({info, std::move(player.value())});
    } else {
      seated.push_back({info, hd::make_rule_player(kinds[static_cast<std::size_t>(s)], o.seed * 1000 + s)});
    }
  }
  std::unique_ptr<hd::Commentator> commentator;
  if (commentary) {
    auto opened = hd::Commentator::open(*client, llm);
    if (!opened) {
      std::cerr << "kvframe-holdem: the server refused the commentator's session: " << opened.status().message() << "\n";
      return kvframe::kExitBadInput;
    }
    commentator = std::move(opened.value());
  }

  hd::MatchParams params;
  params.table.seats = seats;
  parse_blinds(o.blinds, params.table);  // checked when parsed
  if (!o.stacks.empty() && static_cast<int>(o.stacks.size()) != seats) {
    std::cerr << "kvframe-holdem: --stacks gives " << o.stacks.size() << " stacks for " << seats
              << " seats: give one per seat\n";
    return kvframe::kExitUsage;
  }
  params.stack = 100 * params.table.big_blind;
  params.stacks = o.stacks;
  params.hands = o.hands;
  params.seed = o.seed;
  params.history_hands = o.history;
  params.pace_ms = o.pace_ms;
  hd::Match match(params, std::move(seated));
  std::unique_ptr<hd::HandHistoryWriter> hand_history;
  if (!o.hand_history.empty()) hand_history = std::make_unique<hd::HandHistoryWriter>(o.hand_history);
  std::unique_ptr<hd::DatasetWriter> dataset;
  if (!o.dataset.empty()) {
    std::string error;
    dataset = hd::DatasetWriter::open(o.dataset, o.seed, &error);
    if (!dataset) {
      std::cerr << "kvframe-holdem: " << error << "\n";
      return kvframe::kExitUsage;
    }
  }
  hd::MatchObserver observer;
  if (dataset) observer.on_turn = [&](const hd::DecisionView& view) { dataset->decision(view, infos); };
  if (hand_history) {
    observer.on_hand_over = [&](const hd::Hand& hand, std::uint64_t n, const std::vector<hd::Card>& deck) {
      hand_history->write(hand, n, infos, deck, o.seed);
    };
  }
  observer.on_hand_line = [&](std::uint64_t, const std::string& line) { human << line << "\n" << std::flush; };
  observer.on_decision = [&](const hd::Hand&, int seat, const hd::Decision& d) {
    if (d.samples.empty()) return;
    const hd::ModelSample& s = d.samples.front();
    std::ostringstream line;
    line << "  " << infos[static_cast<std::size_t>(seat)].id << " (llm) " << (s.answer.empty() ? "<no answer>" : s.answer)
         << "  " << static_cast<int>(s.ttft_ms) << " ms to first token, " << static_cast<int>(s.total_ms) << " ms, "
         << s.tokens_encoded << "/" << s.tokens_prompt << " tokens encoded" << (d.invalid ? "  INVALID" : "");
    for (std::size_t i = 1; i < d.samples.size(); ++i) {
      line << " | " << d.samples[i].mode << " " << static_cast<int>(d.samples[i].total_ms) << " ms"
           << (d.samples[i].chose(d.action) ? "" : " (differs: " + d.samples[i].answer + ")");
    }
    human << line.str() << "\n" << std::flush;
  };
  if (commentator || dataset) {
    observer.on_hand_end = [&](const hd::Hand& hand, std::uint64_t n, const hd::MatchMemory& memory) -> std::string {
      if (!hd::Commentator::notable(hand)) return {};
      if (dataset) dataset->commentary(hand, n, memory, std::max(llm_seat, 0));
      if (!commentator) return {};
      human << "  commentary: " << std::flush;
      std::string text = commentator->comment(hand, n, memory, std::max(llm_seat, 0), [&](std::string_view chunk) {
        human << chunk << std::flush;
      });
      human << "\n";
      return text;
    };
  }
  match.play(observer);

  const Json report = hd::match_report(match);
  if (o.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    std::cout << hd::report_text(report);
  }
  if (!o.replay_html.empty()) {
    hd::write_replay_html(o.replay_html, replay_record(match, o, report).dump());
    human << "replay: " << o.replay_html << "\n";
  }
  if (hand_history) human << "hand history: " << hand_history->hands() << " hands in PHH written to " << o.hand_history << "\n";
  if (dataset) human << "dataset: " << dataset->records() << " records appended to " << o.dataset << "\n";
  std::int64_t invalid = 0;
  for (const Json& bot : report["llm"]) invalid += bot["invalid"].get<std::int64_t>();
  return invalid == 0 ? kvframe::kExitOk : kvframe::kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kvframe-holdem: a headless No-Limit Hold'em match of rule bots and the LLM bot, "
               "which asks kvframe for each decision; prints hands, commentary and a report"};
  app.footer(kFooter);
  Options o;
  app.add_option("--bots", o.bots, "players in seat order: llm, tag, station, random")
      ->delimiter(',')
      ->check(CLI::IsMember({"llm", "tag", "station", "random"}))
      ->capture_default_str();
  app.add_option("--seats", o.seats, "table size 2..9 (default: one per --bots entry, which then repeat)")
      ->check(CLI::Range(2, 9));
  app.add_option("--hands", o.hands, "hands to play")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--seed", o.seed, "the same seed replays the same match")->capture_default_str();
  app.add_option("--server", o.server, "a running kvframe-serve (e.g. tcp://127.0.0.1:5555); default: one in this process");
  kvframe::cli::ModelOptionsSpec model_options;
  model_options.device = false;   // the in-process server runs on the CPU
  model_options.context = false;  // it loads the model for --context (local_server.cpp)
  model_options.model_note = "the in-process server's, as are --dtype, --threads and --lora (unused with --server)";
  kvframe::cli::add_model_options(app, o, model_options);
  app.add_option("--mode", o.modes, "attention modes: the first plays, the others answer the same decisions to compare")
      ->delimiter(',')
      ->check(CLI::IsMember({"block", "prefix", "full"}))
      ->capture_default_str();
  kvframe::cli::add_fidelity_options(app, o.fidelity, "for the in-process server's block sessions (unused with --server)");
  app.add_option("--history", o.history, "finished hands kept in the gamecore")->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_option("--commentary", o.commentary, "auto (on with an LLM bot), notable, off")
      ->check(CLI::IsMember({"auto", "notable", "off"}))
      ->capture_default_str();
  app.add_flag("--json", o.json, "print the report as JSON on stdout (hand lines go to stderr)");
  app.add_option("--replay-html", o.replay_html, "write a self-contained HTML replay of the match");
  app.add_option("--context", o.context, "context tokens of the LLM sessions")->capture_default_str();
  app.add_option("--max-tokens", o.max_tokens, "most tokens of one LLM action")->check(CLI::Range(8, 256))->capture_default_str();
  app.add_option("--stacks", o.stacks, "starting stack of each seat, in seat order, every hand (default: 100 big blinds each)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--blinds", o.blinds, "small and big blind, SB/BB")
      ->check([](const std::string& text) {
        hd::TableConfig table;
        return parse_blinds(text, table) ? std::string() : "expected SB/BB with 0 < SB <= BB, e.g. 5/10";
      })
      ->capture_default_str();
  app.add_option("--pace-ms", o.pace_ms,
                 "wait this long after every deal, action and result, as a real table's animations do; the LLM bot "
                 "streams each new state to kvframe as a frame meanwhile, so its decisions find the frame encoded "
                 "(0: no pause, a frame only at the bot's own decisions)")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--hand-history", o.hand_history,
                 "write every hand to this file in PHH, the Poker Hand History format (.phhs), with its deck");
  app.add_option("--dataset", o.dataset,
                 "append every decision (target: the tight-aggressive bot's action) and notable hand's commentary "
                 "to this JSONL file as kvframe-finetune training data; rules.json goes beside it");
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  const bool in_process = o.server.empty() &&
                          (std::find(o.bots.begin(), o.bots.end(), "llm") != o.bots.end() || o.commentary == "notable");
  if (in_process) hd::tune_for_local_server(argv, o.threads);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "kvframe-holdem: " << e.what() << "\n";
    return kvframe::kExitUsage;
  }
}
