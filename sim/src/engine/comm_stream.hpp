// A device's communication stream within one pmap call: a second SimGrid actor on the device's host that runs
// the collectives its program starts (async_collectives.hpp), one at a time in the order they were started,
// while the program goes on. It has a DeviceContext of its own on the stream track, so the algorithms run
// unchanged on the stream's channels, and its reductions share the host with the program's compute.
// Actors switch only inside SimGrid calls, so the queue needs no lock: semaphores say when there is work and
// when a job is done.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "engine/device_context.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::detail {

// One collective queued on a stream. The input stays referenced (and its buffer allocated) until the stream
// is done with it. A collective over one array gives a leaf.
struct StreamJob {
  std::string name;
  std::function<Tree()> run;
  std::size_t bound_levels = 1;  // the program's bound axes when it queued the job (nested pmap)
  std::optional<Tree> result;
  simgrid::s4u::SemaphorePtr done = simgrid::s4u::Semaphore::create(0);  // released once, when done
  bool collected = false;                                                // waited for by the program
};

class CommStream {
 public:
  explicit CommStream(DeviceContext& program);
  CommStream(const CommStream&) = delete;  // its actor holds this address
  CommStream& operator=(const CommStream&) = delete;

  DeviceContext& program() const { return program_; }
  // Program side: queues `run` (a collective called on the stream's context) and returns at once.
  std::shared_ptr<StreamJob> start(std::string name, std::function<Tree()> run);
  // Program side: blocks until the job is done, counting the wait as exposed communication, and returns its
  // result.
  Tree wait(StreamJob& job);
  // Program side: waits for every job not waited for yet, then stops the stream's actor.
  void finish();
  // Whether a job is queued or running: the program's compute then shares the host with the stream's
  // reductions, so it runs op by op instead of being booked (DeviceContext::compute).
  bool busy() const { return unfinished_ > 0; }

 private:
  void serve();  // the stream actor's body

  DeviceContext& program_;
  DeviceContext context_;  // the stream's: same device and call, stream track
  std::deque<std::shared_ptr<StreamJob>> queue_;
  std::vector<std::shared_ptr<StreamJob>> started_;
  simgrid::s4u::SemaphorePtr work_;  // one release per job queued, and one to stop
  simgrid::s4u::ActorPtr actor_;
  bool closing_ = false;
  int unfinished_ = 0;
};

}  // namespace spmdsim::detail
