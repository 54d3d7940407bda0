// Hands in PHH, the Poker Hand History format (Kim, "Recording and Describing
// Poker Hands", arXiv:2312.11753; spec: github.com/uoftcprg/phh-std), which
// poker tools and PokerKit read.
//
//   HandHistoryWriter phh(path);         // throws std::runtime_error if it cannot be opened
//   phh.write(hand, number, players, deck_order, seed);   // once the hand is over
//
// A .phhs file holds one TOML table per hand, "[1]", "[2]", ... Each records
// the variant ("NT": No-Limit Texas Hold'em), antes (all 0: kvframe's table
// has none), blinds, min_bet, the starting and finishing stacks, and the
// actions in PHH notation: hole cards ("d dh p1 AhKs"), board ("d db
// 7c8d9h"), fold "f", check or call "cc", bet or raise to "cbr 120", and
// the cards shown at showdown ("p2 sm AhKs"). Players are listed from the
// seat left of the button, the button last (heads-up: the big blind, then
// the button), as PHH orders them; "seats" maps each back to kvframe's seat
// (1-based). User-defined fields keep what a replay needs: "_deck" (every
// card in dealing order; kvframe burns none), "_seed" and "_button_seat".
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "holdem/cards.h"
#include "holdem/gamecore.h"
#include "holdem/table.h"

namespace kvframe::examples::holdem {

// One finished hand as a PHH TOML table headed "[number]".
// std::logic_error if the hand is not over.
std::string phh_hand(const Hand& hand, std::uint64_t number, const std::vector<PlayerInfo>& players,
                     const std::vector<Card>& deck_order, std::uint64_t seed);

class HandHistoryWriter {
 public:
  explicit HandHistoryWriter(const std::string& path);  // truncates; std::runtime_error on failure
  void write(const Hand& hand, std::uint64_t number, const std::vector<PlayerInfo>& players,
             const std::vector<Card>& deck_order, std::uint64_t seed);  // flushed: a crash keeps whole hands
  std::uint64_t hands() const { return hands_; }

 private:
  std::string path_;
  std::ofstream out_;
  std::uint64_t hands_ = 0;
};

}  // namespace kvframe::examples::holdem
