#include "commands/merge/merging.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"

namespace spmdsim::cli::merge {
namespace {

// A file's tag with its name.
struct Tagged {
  const ShardTag& tag;
  const std::string& source;
};

template <class Shards>
std::vector<Tagged> tagged(const Shards& shards) {
  std::vector<Tagged> all;
  for (const auto& s : shards) all.push_back({s.tag, s.source});
  return all;
}

// Every file against the first: the same command, cut into as many shards, of as many rows.
void check_same_cut(const std::vector<Tagged>& files) {
  const Tagged& first = files.front();
  for (const Tagged& file : files) {
    if (file.tag.command != first.tag.command)
      throw UsageError(
          fmt::format("'{}' is a shard of spmdsim {}, '{}' of spmdsim {}: merge joins the shards "
                      "of one sweep",
                      file.source, file.tag.command, first.source, first.tag.command));
    if (file.tag.shard.count != first.tag.shard.count)
      throw UsageError(fmt::format("'{}' is shard {}, '{}' shard {}: the shards of one sweep share N",
                                   file.source, shard_text(file.tag.shard), first.source,
                                   shard_text(first.tag.shard)));
    if (file.tag.sweep_rows != first.tag.sweep_rows)
      throw UsageError(
          fmt::format("'{}' is a shard of a sweep of {} rows, '{}' of one of {}: shards of "
                      "different sweeps",
                      file.source, file.tag.sweep_rows, first.source, first.tag.sweep_rows));
  }
}

void check_same_sweep(const std::vector<Tagged>& files) {
  const Tagged& first = files.front();
  for (const Tagged& file : files)
    if (file.tag.sweep != first.tag.sweep)
      throw UsageError(
          fmt::format("'{}' and '{}' are shards of different sweeps: their settings or rows' "
                      "configurations differ (sweep {} and {})",
                      file.source, first.source, file.tag.sweep, first.tag.sweep));
}

// Shard K once for every K from 0 to N-1, each with the rows shard_rows gives it. Returns the files by K.
std::vector<std::size_t> check_each_once_and_whole(const std::vector<Tagged>& files) {
  const int count = files.front().tag.shard.count;
  std::map<int, std::size_t> by_index;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const auto [at, added] = by_index.emplace(files[f].tag.shard.index, f);
    if (!added)
      throw UsageError(fmt::format("shard {} is given twice: '{}' and '{}'", shard_text(files[f].tag.shard),
                                   files[at->second].source, files[f].source));
  }
  std::vector<std::string> missing;
  for (int k = 0; k < count; ++k)
    if (!by_index.contains(k)) missing.push_back(shard_text({k, count}));
  if (!missing.empty())
    throw UsageError(fmt::format("shard{} {} {} missing: merge needs all {} shards, 0/{} to {}/{}",
                                 missing.size() == 1 ? "" : "s", fmt::join(missing, ", "),
                                 missing.size() == 1 ? "is" : "are", count, count, count - 1, count));
  std::vector<std::size_t> ordered;
  for (const auto& [k, f] : by_index) {
    const Tagged& file = files[f];
    const auto expected = shard_rows(file.tag.shard, file.tag.sweep_rows);
    const auto [want, have] =
        std::mismatch(expected.begin(), expected.end(), file.tag.rows.begin(), file.tag.rows.end());
    if (want != expected.end() && (have == file.tag.rows.end() || *want < *have))
      throw UsageError(
          fmt::format("'{}' lacks row {} of the sweep: shard {} of a sweep of {} rows holds {} "
                      "rows, the file {}",
                      file.source, *want, shard_text(file.tag.shard), file.tag.sweep_rows, expected.size(),
                      file.tag.rows.size()));
    if (have != file.tag.rows.end())
      throw UsageError(fmt::format("'{}' holds row {} of the sweep, which is shard {}'s, not {}'s",
                                   file.source, *have, shard_text({shard_of(*have, count), count}),
                                   shard_text(file.tag.shard)));
    ordered.push_back(f);
  }
  return ordered;
}

// For each row of the sweep, in order: its shard's place among the files and its place among the shard's
// rows.
template <class Visit>
void in_sweep_order(const std::vector<Tagged>& files, const std::vector<std::size_t>& by_index, Visit visit) {
  const int count = files.front().tag.shard.count;
  std::vector<std::size_t> next(by_index.size(), 0);
  for (std::size_t row = 0; row < files.front().tag.sweep_rows; ++row) {
    const auto k = static_cast<std::size_t>(shard_of(row, count));
    visit(by_index[k], next[k]++);
  }
}

// A JSON value in a message: its text, cut short.
std::string shown(const nlohmann::ordered_json& value) {
  const std::string text = value.dump();
  return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

bool summed(const std::string& key) {
  return std::find(kSummedFields.begin(), kSummedFields.end(), key) != kSummedFields.end();
}

// Every field but the rows and the summed ones, in the same order and with the same values as the first
// file's.
void check_same_fields(const std::vector<JsonShard>& shards) {
  const JsonShard& first = shards.front();
  const auto keys = [](const nlohmann::ordered_json& document) {
    std::vector<std::string> names;
    for (const auto& [key, value] : document.items())
      if (key != "rows") names.push_back(key);
    return names;
  };
  for (const JsonShard& shard : shards) {
    if (keys(shard.document) != keys(first.document))
      throw UsageError(fmt::format("'{}' has the fields {}, '{}' {}: shards of different sweeps",
                                   shard.source, fmt::join(keys(shard.document), ", "), first.source,
                                   fmt::join(keys(first.document), ", ")));
    for (const auto& key : keys(first.document)) {
      if (summed(key) && !shard.document[key].is_number())
        throw UsageError(
            fmt::format("'{}': \"{}\" is {}, not a number", shard.source, key, shown(shard.document[key])));
      if (!summed(key) && shard.document[key] != first.document[key])
        throw UsageError(fmt::format("'{}' and '{}' differ in \"{}\" ({} and {}): shards of different sweeps",
                                     shard.source, first.source, key, shown(shard.document[key]),
                                     shown(first.document[key])));
    }
  }
}

}  // namespace

std::string merged_csv(const std::vector<CsvShard>& shards) {
  if (shards.empty()) throw UsageError("no shard files to merge");
  const auto files = tagged(shards);
  check_same_cut(files);
  for (const CsvShard& shard : shards)
    if (shard.header != shards.front().header)
      throw UsageError(fmt::format("'{}' has the columns {}, '{}' {}: shards of different sweeps",
                                   shard.source, shard.header, shards.front().source, shards.front().header));
  check_same_sweep(files);
  const auto by_index = check_each_once_and_whole(files);
  std::string csv = shards.front().header + "\n";
  in_sweep_order(files, by_index, [&](std::size_t f, std::size_t i) { csv += shards[f].lines[i] + "\n"; });
  return csv;
}

nlohmann::ordered_json merged_json(const std::vector<JsonShard>& shards) {
  if (shards.empty()) throw UsageError("no shard files to merge");
  const auto files = tagged(shards);
  check_same_cut(files);
  check_same_fields(shards);
  check_same_sweep(files);
  const auto by_index = check_each_once_and_whole(files);
  nlohmann::ordered_json document = shards[by_index.front()].document;
  for (const auto field : kSummedFields) {
    const std::string key(field);
    if (!document.contains(key)) continue;
    double sum = 0;
    for (const auto f : by_index) sum += shards[f].document[key].get<double>();
    document[key] = sum;
  }
  auto& rows = document["rows"] = nlohmann::ordered_json::array();
  in_sweep_order(files, by_index,
                 [&](std::size_t f, std::size_t i) { rows.push_back(shards[f].document["rows"][i]); });
  return document;
}

}  // namespace spmdsim::cli::merge
