#include "common/shard_files.hpp"

#include <cstdint>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"

namespace spmdsim::cli {
namespace {

constexpr std::string_view kCsvTagStart = "# spmdsim shard: ";
constexpr std::string_view kRowField = "sweep_row";
constexpr const char* kJsonTag = "shard";

// FNV-1a, 64 bits, as 16 hexadecimal digits: tells sweeps apart, no secret to keep.
std::string fnv1a_hex(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

UsageError malformed(const std::string& source, std::string_view what) {
  return UsageError(fmt::format("'{}' is no shard's file of spmdsim --shard: {}", source, what));
}

// A whole number of the tag, or a UsageError naming the file and the field.
std::size_t tag_count(const std::string& text, std::string_view field, const std::string& source) {
  try {
    return static_cast<std::size_t>(parse_count(text, field, 0));
  } catch (const UsageError& e) {
    throw malformed(source, e.what());
  }
}

// Checks what every tag must hold, whichever file it came from.
void check_tag(const ShardTag& tag, const std::string& source) {
  if (tag.command.empty() || tag.command.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos)
    throw malformed(source, fmt::format("command '{}' is no spmdsim command", tag.command));
  if (tag.sweep.size() != 16 || tag.sweep.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw malformed(source, fmt::format("sweep '{}' is not 16 hexadecimal digits", tag.sweep));
  for (std::size_t i = 0; i < tag.rows.size(); ++i)
    if (tag.rows[i] >= tag.sweep_rows || (i > 0 && tag.rows[i] <= tag.rows[i - 1]))
      throw malformed(source, fmt::format("row {} is out of order or past the sweep's {} rows", tag.rows[i],
                                          tag.sweep_rows));
}

Shard tag_shard(const std::string& text, const std::string& source) {
  try {
    return parse_shard(text);
  } catch (const UsageError& e) {
    throw malformed(source, e.what());
  }
}

nlohmann::ordered_json tag_json(const ShardTag& tag) {
  return {{"command", tag.command},
          {"shard", shard_text(tag.shard)},
          {"sweep_rows", tag.sweep_rows},
          {"sweep", tag.sweep},
          {"rows", tag.rows}};
}

}  // namespace

ShardTag shard_tag(std::string_view command, Shard shard, const std::vector<std::string>& labels,
                   const std::function<void(std::ostream&)>& write_json) {
  std::ostringstream json;
  write_json(json);
  auto settings = nlohmann::ordered_json::parse(json.str());
  settings.erase("rows");
  for (const auto field : kSummedFields) settings.erase(std::string(field));
  std::string identity = fmt::format("{}\n{}\n{}", command, fmt::join(labels, "\n"), settings.dump());
  return {.command = std::string(command),
          .shard = shard,
          .sweep_rows = labels.size(),
          .sweep = fnv1a_hex(identity),
          .rows = shard_rows(shard, labels.size())};
}

void write_shard_csv(std::ostream& out, const ShardTag& tag, const Rows& rows) {
  std::ostringstream csv;
  write_csv(csv, rows);
  const auto lines = lines_of(csv.str());
  out << fmt::format("{}command={} shard={} sweep_rows={} sweep={}\n", kCsvTagStart, tag.command,
                     shard_text(tag.shard), tag.sweep_rows, tag.sweep);
  out << kRowField << "," << lines.front() << "\n";
  for (std::size_t i = 1; i < lines.size(); ++i) out << tag.rows.at(i - 1) << "," << lines[i] << "\n";
}

void write_shard_json(std::ostream& out, const ShardTag& tag,
                      const std::function<void(std::ostream&)>& write_json) {
  std::ostringstream json;
  write_json(json);
  const auto unsharded = nlohmann::ordered_json::parse(json.str());
  nlohmann::ordered_json document;
  document[kJsonTag] = tag_json(tag);
  for (const auto& [key, value] : unsharded.items()) document[key] = value;
  out << document.dump(2) << "\n";
}

std::function<void(std::ostream&)> csv_writer(const std::optional<ShardTag>& tag, const Rows& rows) {
  if (tag) return [&tag, &rows](std::ostream& out) { write_shard_csv(out, *tag, rows); };
  return [&rows](std::ostream& out) { write_csv(out, rows); };
}

std::function<void(std::ostream&)> json_writer(const std::optional<ShardTag>& tag,
                                               std::function<void(std::ostream&)> write_json) {
  if (tag) return [&tag, write_json](std::ostream& out) { write_shard_json(out, *tag, write_json); };
  return write_json;
}

CsvShard read_shard_csv(const std::string& text, const std::string& source) {
  if (!text.empty() && text.back() != '\n') throw malformed(source, "its last line is cut short");
  const auto lines = lines_of(text);
  if (lines.empty() || !lines[0].starts_with(kCsvTagStart))
    throw malformed(source, fmt::format("its first line does not start with '{}'", kCsvTagStart));
  std::map<std::string, std::string> fields;
  std::istringstream words(lines[0].substr(kCsvTagStart.size()));
  for (std::string word; words >> word;) {
    const auto equals = word.find('=');
    if (equals == std::string::npos ||
        !fields.emplace(word.substr(0, equals), word.substr(equals + 1)).second)
      throw malformed(source, fmt::format("'{}' in its first line is no new key=value", word));
  }
  for (const char* key : {"command", "shard", "sweep_rows", "sweep"})
    if (!fields.contains(key)) throw malformed(source, fmt::format("its first line has no {}=", key));
  if (fields.size() != 4)
    throw malformed(source, "its first line has keys besides command, shard, sweep_rows, sweep");
  const std::string header_start = fmt::format("{},", kRowField);
  if (lines.size() < 2 || !lines[1].starts_with(header_start))
    throw malformed(source, fmt::format("its second line does not start with '{}'", header_start));

  CsvShard shard{.source = source,
                 .tag = {.command = fields["command"],
                         .shard = tag_shard(fields["shard"], source),
                         .sweep_rows = tag_count(fields["sweep_rows"], "sweep_rows", source),
                         .sweep = fields["sweep"]},
                 .header = lines[1].substr(header_start.size())};
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const auto comma = lines[i].find(',');
    if (comma == std::string::npos)
      throw malformed(source, fmt::format("line {} has no {}", i + 1, kRowField));
    shard.tag.rows.push_back(
        tag_count(lines[i].substr(0, comma), fmt::format("line {}'s {}", i + 1, kRowField), source));
    shard.lines.push_back(lines[i].substr(comma + 1));
  }
  check_tag(shard.tag, source);
  return shard;
}

JsonShard read_shard_json(const std::string& text, const std::string& source) {
  JsonShard shard{.source = source};
  try {
    shard.document = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw malformed(source, fmt::format("not JSON ({})", e.what()));
  }
  const auto& document = shard.document;
  if (!document.is_object() || !document.contains(kJsonTag) || !document[kJsonTag].is_object())
    throw malformed(source, fmt::format("no \"{}\" object", kJsonTag));
  if (!document.contains("rows") || !document["rows"].is_array())
    throw malformed(source, "no \"rows\" array");
  const auto& tag = document[kJsonTag];
  const auto text_of = [&](const char* key) {
    if (!tag.contains(key) || !tag[key].is_string())
      throw malformed(source, fmt::format("its \"{}\" has no \"{}\" text", kJsonTag, key));
    return tag[key].get<std::string>();
  };
  const auto count_of = [&](const nlohmann::ordered_json& value, std::string_view what) {
    if (!value.is_number_unsigned()) throw malformed(source, fmt::format("{} is no whole number", what));
    return value.get<std::size_t>();
  };
  shard.tag.command = text_of("command");
  shard.tag.shard = tag_shard(text_of("shard"), source);
  shard.tag.sweep = text_of("sweep");
  if (!tag.contains("sweep_rows") || !tag.contains("rows") || !tag["rows"].is_array())
    throw malformed(source, fmt::format("its \"{}\" has no \"sweep_rows\" or no \"rows\" array", kJsonTag));
  shard.tag.sweep_rows = count_of(tag["sweep_rows"], "sweep_rows");
  for (const auto& row : tag["rows"]) shard.tag.rows.push_back(count_of(row, "a row's index"));
  if (shard.tag.rows.size() != document["rows"].size())
    throw malformed(source, fmt::format("it lists {} rows' indices for {} rows", shard.tag.rows.size(),
                                        document["rows"].size()));
  check_tag(shard.tag, source);
  shard.document.erase(std::string(kJsonTag));
  return shard;
}

}  // namespace spmdsim::cli
