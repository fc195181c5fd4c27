#include "collective_time.hpp"

#include <algorithm>

namespace spmdsim::testing {

double collective_time(const Simulation& sim, const std::string& name) {
  double longest = 0;
  const auto report = sim.report();  // named: a range-for would not keep a temporary alive
  for (const auto& times : report.calls.back().times)
    if (auto it = times.communication.find(name); it != times.communication.end())
      longest = std::max(longest, it->second);
  return longest;
}

}  // namespace spmdsim::testing
