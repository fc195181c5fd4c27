// The results model the commands' reporters share: rows of cells under named columns, written as the
// aligned table of the console, as CSV and as JSON by the writers below. A command builds its rows once and
// chooses its writers, as Google Benchmark keeps its results apart from its console, CSV and JSON reporters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace spmdsim::cli {

// What a cell holds for CSV and JSON: nothing (an empty field, null), a whole number, a real or a text.
using CellValue = std::variant<std::monostate, std::int64_t, std::uint64_t, double, std::string>;

// A value and its text in the table, which may round it or say "n/a" where CSV is empty and JSON null.
struct Cell {
  CellValue value;
  std::string text;
};

Cell text_cell(std::string text);
Cell whole_cell(std::int64_t value);
Cell whole_cell(std::uint64_t value);
Cell whole_cell(int value);
// The table shows `decimals` digits after the point; CSV and JSON the whole double.
Cell real_cell(double value, int decimals);
// A value the table shows as `text`.
Cell real_cell(double value, std::string text);
// Nothing, which the table shows as `text`.
Cell empty_cell(std::string text);

struct Column {
  std::string key;        // CSV's header and JSON's key; empty: a column of the table only
  std::string header;     // the table's; empty: a column of CSV and JSON only
  std::size_t width = 0;  // the table's, at least the header's
  bool left = false;      // left-aligned in the table (numbers are right-aligned)
};

struct Rows {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> cells;  // one per row, parallel to columns
};

// The table's header line: "#" in place of the first column's first character, then the headers.
void write_table_header(std::ostream& out, const std::vector<Column>& columns);
// One row of the table (its cells' texts), as the header aligns them, two spaces apart.
void write_table_row(std::ostream& out, const std::vector<Column>& columns, const std::vector<Cell>& row);
// The header, then every row.
void write_table(std::ostream& out, const Rows& rows);

// A header line of the keys, then a line per row; an empty cell is an empty field.
void write_csv(std::ostream& out, const Rows& rows);

// An array of one object per row, keyed as the columns, in their order.
nlohmann::ordered_json rows_json(const Rows& rows);

// Widens each column of the table to its header and its cells' texts.
void fit_widths(Rows& rows);

}  // namespace spmdsim::cli
