// What can be swept: the collectives as nccl-tests measures them, and the dtypes. Adding one is a row in its
// table (catalog.cpp); platform_options.cpp has the platforms.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/dtype.hpp"

namespace spmdsim::cli::collectives {

// A collective as nccl-tests measures it. S (the "size" column) is nccl-tests' S: the all-reduce vector,
// the gathered or scattered total, what one rank sends in all for all-to-all.
struct Collective {
  CollectiveKind kind;
  std::string_view name;            // nccl-tests' and the registry's name
  std::string_view jax_name;        // the jax.lax primitive, also its key in the call report
  std::string_view redop;           // as nccl-tests prints it
  std::string_view factor_formula;  // busbw = algbw x factor, REFERENCES.md §2.1 (nccl-tests PERFORMANCE.md)
  double (*bus_factor)(int n);
};

// The collective of that nccl-tests or JAX name. Throws UsageError listing the valid ones.
const Collective& find_collective(std::string_view name);

// The dtype of that name. Throws UsageError listing the valid ones.
DType find_dtype(std::string_view name);

// The algorithms to run for one collective: the registered names among `words`, every registered one
// plus auto for "all" (but nvls), the kind's default on the platform for "default".
// `library`: what runs the platform's collectives, whose default_algorithm "default" names.
std::vector<std::string> algorithms_for(const Collective& c, const std::vector<std::string>& words,
                                        CollectiveLibrary library);

// "all_reduce: ring, ..., auto; ... (or all, default)", for the messages that list them.
std::string valid_algorithms_text(const std::vector<const Collective*>& collectives);

}  // namespace spmdsim::cli::collectives
