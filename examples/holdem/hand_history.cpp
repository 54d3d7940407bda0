#include "holdem/hand_history.h"

#include <sstream>
#include <stdexcept>

namespace kvframe::examples::holdem {
namespace {

// Board cards on the table once `street` is dealt.
std::size_t board_cards_by(Street street) {
  switch (street) {
    case Street::kPreflop: return 0;
    case Street::kFlop: return 3;
    case Street::kTurn: return 4;
    case Street::kRiver: return 5;
  }
  return 5;
}

std::string joined_cards(const std::vector<Card>& cards, std::size_t from, std::size_t to) {
  std::string text;
  for (std::size_t i = from; i < to && i < cards.size(); ++i) text += card_name(cards[i]);
  return text;
}

// TOML basic string: quotes and backslashes escaped (player names are ours,
// but a file another tool reads must stay well formed whatever they hold).
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

template <class T, class Format>
std::string toml_array(const std::vector<T>& items, Format format) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + format(items[i]);
  return out + "]";
}

// PHH lists players from the seat left of the button round to the button:
// small blind first when three or more play. Heads-up the button posts the
// small blind and is still listed last (PHH readers swap the two blinds).
std::vector<int> phh_order(const Hand& hand) {
  std::vector<int> order;
  const int seats = static_cast<int>(hand.seats().size());
  for (int step = 1; step <= seats; ++step) {
    const int seat = (hand.button() + step) % seats;
    if (hand.seats()[static_cast<std::size_t>(seat)].in_hand) order.push_back(seat);
  }
  return order;
}

class ActionWriter {
 public:
  ActionWriter(const Hand& hand, const std::vector<int>& order) : hand_(hand), label_(hand.seats().size()) {
    for (std::size_t p = 0; p < order.size(); ++p) {
      label_[static_cast<std::size_t>(order[p])] = "p" + std::to_string(p + 1);
    }
  }

  std::vector<std::string> actions(const std::vector<int>& order) {
    for (const int seat : order) {
      add("d dh " + label(seat) + " " + joined_cards(hand_.seats()[static_cast<std::size_t>(seat)].hole, 0, 2));
    }
    for (const ActionRecord& record : hand_.log()) {
      if (record.kind == ActionKind::kSmallBlind || record.kind == ActionKind::kBigBlind) continue;  // posted by the reader
      deal_board_to(record.street);
      add(label(record.seat) + " " + notation(record));
    }
    // With two or more hands left the hand ends in a showdown: at the river,
    // or, when at most one of them could still bet, before the rest of the
    // board is run out (PHH readers expect the cards shown first then).
    if (hand_.result().showdown) {
      for (const int seat : order) {
        const SeatState& s = hand_.seats()[static_cast<std::size_t>(seat)];
        if (!s.folded) add(label(seat) + " sm " + joined_cards(s.hole, 0, 2));
      }
      deal_board_to(Street::kRiver);
    }
    return std::move(actions_);
  }

 private:
  static std::string notation(const ActionRecord& record) {
    switch (record.kind) {
      case ActionKind::kFold: return "f";
      case ActionKind::kCheck:
      case ActionKind::kCall: return "cc";
      case ActionKind::kRaise: return "cbr " + std::to_string(record.bet_to);
      default: return "";
    }
  }
  const std::string& label(int seat) const { return label_[static_cast<std::size_t>(seat)]; }
  void add(std::string action) { actions_.push_back(std::move(action)); }
  void deal_board_to(Street street) {
    const std::vector<Card>& board = hand_.board();
    while (dealt_ < board_cards_by(street) && dealt_ < board.size()) {
      const std::size_t next = dealt_ == 0 ? 3 : dealt_ + 1;  // the flop, then one card a street
      add("d db " + joined_cards(board, dealt_, next));
      dealt_ = next;
    }
  }

  const Hand& hand_;
  std::vector<std::string> label_;
  std::vector<std::string> actions_;
  std::size_t dealt_ = 0;
};

}  // namespace

std::string phh_hand(const Hand& hand, std::uint64_t number, const std::vector<PlayerInfo>& players,
                     const std::vector<Card>& deck_order, std::uint64_t seed) {
  if (!hand.over()) throw std::logic_error("holdem: a hand history is written once the hand is over");
  const std::vector<int> order = phh_order(hand);
  std::vector<std::int64_t> blinds(order.size(), 0), starting, finishing, seat_numbers;
  std::vector<std::string> names;
  for (std::size_t p = 0; p < order.size(); ++p) {
    const auto seat = static_cast<std::size_t>(order[p]);
    const SeatState& s = hand.seats()[seat];
    starting.push_back(s.stack - hand.result().net[seat]);
    finishing.push_back(s.stack);
    seat_numbers.push_back(order[p] + 1);
    names.push_back(seat < players.size() ? players[seat].name : "seat " + std::to_string(seat + 1));
  }
  // Blinds by PHH position: small then big blind (heads-up too: readers swap them).
  blinds[0] = hand.config().small_blind;
  blinds[1] = hand.config().big_blind;

  const auto number_text = [](std::int64_t v) { return std::to_string(v); };
  std::ostringstream out;
  out << "[" << number << "]\n"
      << "variant = \"NT\"\n"
      << "antes = " << toml_array(std::vector<std::int64_t>(order.size(), 0), number_text) << "\n"
      << "blinds_or_straddles = " << toml_array(blinds, number_text) << "\n"
      << "min_bet = " << hand.config().big_blind << "\n"
      << "starting_stacks = " << toml_array(starting, number_text) << "\n"
      << "actions = " << toml_array(ActionWriter(hand, order).actions(order), quoted) << "\n"
      << "hand = " << number << "\n"
      << "seat_count = " << hand.seats().size() << "\n"
      << "seats = " << toml_array(seat_numbers, number_text) << "\n"
      << "players = " << toml_array(names, quoted) << "\n"
      << "finishing_stacks = " << toml_array(finishing, number_text) << "\n"
      << "_button_seat = " << hand.button() + 1 << "\n"
      << "_seed = \"" << seed << "\"\n"  // a string: TOML integers stop at 2^63
      << "_deck = " << quoted(joined_cards(deck_order, 0, deck_order.size())) << "\n";
  return out.str();
}

HandHistoryWriter::HandHistoryWriter(const std::string& path) : path_(path), out_(path, std::ios::trunc) {
  if (!out_) throw std::runtime_error("cannot write the hand history " + path + ": check that its folder exists");
}

void HandHistoryWriter::write(const Hand& hand, std::uint64_t number, const std::vector<PlayerInfo>& players,
                              const std::vector<Card>& deck_order, std::uint64_t seed) {
  out_ << (hands_ ? "\n" : "") << phh_hand(hand, number, players, deck_order, seed) << std::flush;
  if (!out_) throw std::runtime_error("cannot write the hand history " + path_ + " (disk full?)");
  ++hands_;
}

}  // namespace kvframe::examples::holdem
