// A SimGrid netzone whose routes come from a function of (source, destination) endpoint indices. It stores
// O(hosts) state, where a full zone stores a dense route table, and it keeps links apart that a star zone
// would merge (a device's PCIe link and its fabric link).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/forward.h>

namespace spmdsim::topologies {

class PathZone {
 public:
  // Appends the links a message from endpoint `from` to endpoint `to` crosses, in order.
  using RouteFunction = std::function<void(int from, int to, std::vector<simgrid::s4u::Link*>& route)>;

  // A zone under the root zone of the current engine (which must exist and be configured).
  PathZone(const std::string& name, RouteFunction route);

  // Creates a host as endpoint `endpoint` of the route function.
  simgrid::s4u::Host* add_host(const std::string& name, double speed, int endpoint);
  simgrid::s4u::Link* add_link(const std::string& name, double bandwidth, double latency);
  void seal();

  simgrid::s4u::NetZone* zone() const { return zone_; }

 private:
  simgrid::s4u::NetZone* zone_;
  std::shared_ptr<std::unordered_map<unsigned long, int>> endpoint_of_;  // netpoint id -> endpoint
};

}  // namespace spmdsim::topologies
