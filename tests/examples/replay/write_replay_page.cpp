// write_replay_page RECORD.json PAGE.html — the replay page for a record file,
// through kvframe::examples::holdem::write_replay_html (for replay_page_test.py).
// Exit status: 0 written, 1 cannot read or write (the message names the path),
// 2 usage.
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "holdem/replay_html.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: write_replay_page RECORD.json PAGE.html\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "write_replay_page: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::ostringstream record;
  record << in.rdbuf();
  try {
    kvframe::examples::holdem::write_replay_html(argv[2], record.str());
  } catch (const std::exception& e) {
    std::cerr << "write_replay_page: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
