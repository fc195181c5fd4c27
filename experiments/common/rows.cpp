#include "common/rows.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace spmdsim::cli {
namespace {

bool in_table(const Column& column) {
  return !column.header.empty();
}

std::string aligned(const Column& column, const std::string& text, std::size_t width) {
  return column.left ? fmt::format("{:<{}}", text, width) : fmt::format("{:>{}}", text, width);
}

// The texts of the table's columns, the first one `first_width` wide.
void write_line(std::ostream& out, const std::vector<Column>& columns, const std::vector<std::string>& texts,
                std::size_t first_width) {
  std::string line;
  bool first = true;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (!in_table(columns[c])) continue;
    if (!first) line += "  ";
    line += aligned(columns[c], texts[c], first ? first_width : columns[c].width);
    first = false;
  }
  out << line << "\n";
}

std::string csv_field(const CellValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
          return "";
        else
          return fmt::format("{}", v);
      },
      value);
}

nlohmann::ordered_json json_value(const CellValue& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::ordered_json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
          return nullptr;
        else
          return v;
      },
      value);
}

}  // namespace

Cell text_cell(std::string text) {
  return {text, text};
}
Cell whole_cell(std::int64_t value) {
  return {value, fmt::format("{}", value)};
}
Cell whole_cell(std::uint64_t value) {
  return {value, fmt::format("{}", value)};
}
Cell whole_cell(int value) {
  return whole_cell(static_cast<std::int64_t>(value));
}
Cell real_cell(double value, int decimals) {
  return {value, fmt::format("{:.{}f}", value, decimals)};
}
Cell real_cell(double value, std::string text) {
  return {value, std::move(text)};
}
Cell empty_cell(std::string text) {
  return {std::monostate{}, std::move(text)};
}

void write_table_header(std::ostream& out, const std::vector<Column>& columns) {
  std::vector<std::string> headers;
  for (const auto& column : columns) headers.push_back(column.header);
  const auto first = std::find_if(columns.begin(), columns.end(), in_table);
  out << "#";
  write_line(out, columns, headers, first == columns.end() || first->width == 0 ? 0 : first->width - 1);
}

void write_table_row(std::ostream& out, const std::vector<Column>& columns, const std::vector<Cell>& row) {
  std::vector<std::string> texts;
  for (const auto& cell : row) texts.push_back(cell.text);
  const auto first = std::find_if(columns.begin(), columns.end(), in_table);
  write_line(out, columns, texts, first == columns.end() ? 0 : first->width);
}

void write_table(std::ostream& out, const Rows& rows) {
  write_table_header(out, rows.columns);
  for (const auto& row : rows.cells) write_table_row(out, rows.columns, row);
}

void write_csv(std::ostream& out, const Rows& rows) {
  std::vector<std::string> keys;
  for (const auto& column : rows.columns)
    if (!column.key.empty()) keys.push_back(column.key);
  out << fmt::format("{}\n", fmt::join(keys, ","));
  for (const auto& row : rows.cells) {
    std::vector<std::string> fields;
    for (std::size_t c = 0; c < rows.columns.size(); ++c)
      if (!rows.columns[c].key.empty()) fields.push_back(csv_field(row[c].value));
    out << fmt::format("{}\n", fmt::join(fields, ","));
  }
}

nlohmann::ordered_json rows_json(const Rows& rows) {
  auto array = nlohmann::ordered_json::array();
  for (const auto& row : rows.cells) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < rows.columns.size(); ++c)
      if (!rows.columns[c].key.empty()) object[rows.columns[c].key] = json_value(row[c].value);
    array.push_back(std::move(object));
  }
  return array;
}

void fit_widths(Rows& rows) {
  const auto first = std::find_if(rows.columns.begin(), rows.columns.end(), in_table);
  for (std::size_t c = 0; c < rows.columns.size(); ++c) {
    auto& column = rows.columns[c];
    // The header line gives the first column's first character to "#".
    const bool is_first = first != rows.columns.end() && &column == &*first;
    column.width = std::max(column.width, column.header.size() + (is_first ? 1 : 0));
    for (const auto& row : rows.cells) column.width = std::max(column.width, row[c].text.size());
  }
}

}  // namespace spmdsim::cli
