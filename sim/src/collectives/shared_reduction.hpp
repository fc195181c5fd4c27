// A reduction whose values are computed once for the whole group instead of once per device: the booked ring
// all-reduce on real data (booked_ring.hpp) and the switch's reduction (NVLS). Each member hands in its
// input as it arrives, the last to arrive reduces them all with the algorithm's values function (the order
// of its floating-point operations), and every member's result shares that one buffer; each device still
// accounts for its own copy, since placing an array binds its shared storage to a buffer of that device. On
// abstract inputs nothing is computed and the result is shaped like them. Waiting for the result is waiting
// for the last member to arrive.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include "spmdsim/array.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/report.hpp"

namespace spmdsim::detail {

// The reduced values of every rank's 1-d input (flats[r], one shape and dtype for all).
using ReductionValues = Array (*)(const std::vector<Array>& flats, ReduceOp op);

class SharedReduction {
 public:
  SharedReduction(int members, ReductionValues values);

  // Hands in rank's flat input (its values only: no device buffer is held on its behalf); the last member
  // to hand in computes the result.
  void contribute(int rank, const Array& flat, ReduceOp op);
  // The reduced values, unplaced; blocks the calling actor until every member has contributed.
  Array result();

 private:
  int members_;
  std::vector<Array> inputs_;  // by rank, once a member hands in values
  int missing_;
  ReductionValues values_;
  std::optional<Array> result_;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr computed_;
};

// The shared reductions of one pmap call, matched across devices by program order: a device's k-th shared
// reduction on a track (its program or its communication stream) meets the k-th of the other members of its
// group, as SPMD programs call their collectives in the same order everywhere.
class SharedReductions {
 public:
  // group: the members' call ranks (axis indices), in group order; rank must be among them.
  std::shared_ptr<SharedReduction> join(int rank, Track track, const std::vector<int>& group,
                                        ReductionValues values);

 private:
  struct Open {
    std::shared_ptr<SharedReduction> reduction;
    std::size_t joined = 0;
  };
  std::map<std::pair<int, Track>, int> calls_so_far_;  // by call rank and track
  // By track, call and the group's first member (the groups of one collective are disjoint); forgotten once
  // every member has joined.
  std::map<std::tuple<Track, int, int>, Open> open_;
};

}  // namespace spmdsim::detail
