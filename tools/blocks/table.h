// A plain-text table whose columns line up, for terminal output.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kvframe::tools {

class Table {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align;
  };

  explicit Table(std::vector<Column> columns);

  // One cell per column, already formatted.
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  // Header and rows, columns two spaces apart, no trailing blanks.
  void print(std::ostream& out) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// "12.3%" for 0.123: one decimal, as every kvframe-blocks report prints shares.
std::string percent(double fraction);

}  // namespace kvframe::tools
