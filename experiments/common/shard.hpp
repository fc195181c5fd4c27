// `--shard K/N`: the K-th of N slices of a sweep, so that N processes (the tasks of a Slurm job array) run
// one sweep between them and `spmdsim merge` joins what they wrote (docs/sweeps_on_slurm.md). K counts from
// 0, as SLURM_ARRAY_TASK_ID does under `sbatch --array=0-(N-1)`.
//
// The rows of the sweep (its configurations, in the order the unsharded run lists them) are dealt to the
// shards like cards, back and forth, so that every shard gets as many rows as another, give or take one, and
// the small and the large sizes or device counts of a sweep alike:
//
//   row    0 1 2 3 | 4 5 6 7 | 8 9
//   shard  0 1 2 3 | 3 2 1 0 | 0 1      (N = 4)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spmdsim::cli {

struct Shard {
  int index = 0;  // K, from 0 to count - 1
  int count = 1;  // N
};

// --shard's help, the same for every sweep.
inline constexpr const char* kShardHelp =
    "run only slice K of N of the sweep, K from 0 to N-1 (as SLURM_ARRAY_TASK_ID under sbatch "
    "--array=0-(N-1)); "
    "its --csv and --json say which rows they hold, and `spmdsim merge` joins the N slices' files into the "
    "unsharded run's (docs/sweeps_on_slurm.md)";

// "K/N". Throws UsageError naming --shard and what it takes.
Shard parse_shard(const std::string& text);

// --shard's value: nothing when not given ("").
std::optional<Shard> parse_shard_option(const std::string& text);

// Throws UsageError "OPTION is not for --shard: WHY" when --shard is given with `option` (`given`), which a
// shard cannot write from its slice alone.
void refuse_with_shard(const std::optional<Shard>& shard, std::string_view option, bool given,
                       std::string_view why);

// "K/N", as parse_shard reads it.
std::string shard_text(Shard shard);

// The shard that runs row `row` of a sweep cut into `count` shards.
int shard_of(std::size_t row, int count);

// The rows of a `total`-row sweep that `shard` runs, ascending.
std::vector<std::size_t> shard_rows(Shard shard, std::size_t total);

// Throws UsageError when a `total`-row sweep leaves `shard`'s slice empty: every shard runs at least one row,
// so that each has the rows its settings and header come from.
void check_shard_has_rows(Shard shard, std::size_t total);

}  // namespace spmdsim::cli
