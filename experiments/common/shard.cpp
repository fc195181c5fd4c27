#include "common/shard.hpp"

#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "common/command_line.hpp"

namespace spmdsim::cli {
namespace {

// The whole number `text` from `least` to `most`, or nothing.
std::optional<std::int64_t> whole_number(const std::string& text, std::int64_t least, std::int64_t most) {
  try {
    return parse_count(text, "", least, most);
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto k = whole_number(text.substr(0, slash), 0, kMaxCount);
  const auto n = whole_number(slash == std::string::npos ? "" : text.substr(slash + 1), 0, kMaxCount);
  if (!k || !n)
    throw UsageError(
        fmt::format("--shard takes K/N, slice K of N counting from 0 (K from 0 to N-1, as "
                    "SLURM_ARRAY_TASK_ID under sbatch --array=0-(N-1)); got '{}'",
                    text));
  if (*n < 1)
    throw UsageError(fmt::format("--shard {}: N must be a whole number from 1 to {}", text, kMaxCount));
  if (*k >= *n)
    throw UsageError(
        fmt::format("--shard {}: K must be from 0 to {} (0-based, as SLURM_ARRAY_TASK_ID under "
                    "sbatch --array=0-{})",
                    text, *n - 1, *n - 1));
  return {static_cast<int>(*k), static_cast<int>(*n)};
}

std::optional<Shard> parse_shard_option(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional(parse_shard(text));
}

void refuse_with_shard(const std::optional<Shard>& shard, std::string_view option, bool given,
                       std::string_view why) {
  if (shard && given) throw UsageError(fmt::format("{} is not for --shard: {}", option, why));
}

std::string shard_text(Shard shard) {
  return fmt::format("{}/{}", shard.index, shard.count);
}

int shard_of(std::size_t row, int count) {
  const auto n = static_cast<std::size_t>(count);
  const std::size_t round = row / n, place = row % n;
  return static_cast<int>(round % 2 == 0 ? place : n - 1 - place);
}

std::vector<std::size_t> shard_rows(Shard shard, std::size_t total) {
  std::vector<std::size_t> rows;
  for (std::size_t row = 0; row < total; ++row)
    if (shard_of(row, shard.count) == shard.index) rows.push_back(row);
  return rows;
}

void check_shard_has_rows(Shard shard, std::size_t total) {
  if (static_cast<std::size_t>(shard.count) > total)
    throw UsageError(
        fmt::format("--shard {}: the sweep has {} row{}, so N must be from 1 to {} (every shard "
                    "runs at least one row)",
                    shard_text(shard), total, total == 1 ? "" : "s", total));
}

}  // namespace spmdsim::cli
