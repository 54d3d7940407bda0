#include "table.h"

#include <algorithm>
#include <cassert>
#include <cstdio>

namespace kvframe::tools {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
  assert(cells.size() == columns_.size());
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const Column& column : columns_) widths.push_back(column.header.size());
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_line = [&](auto cell_at) {
    std::string line;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cell_at(c);
      const std::string pad(widths[c] - cell.size(), ' ');
      if (c > 0) line += "  ";
      line += columns_[c].align == Align::kRight ? pad + cell : cell + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  print_line([&](std::size_t c) -> const std::string& { return columns_[c].header; });
  for (const auto& row : rows_) {
    print_line([&](std::size_t c) -> const std::string& { return row[c]; });
  }
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
  return text;
}

}  // namespace kvframe::tools
