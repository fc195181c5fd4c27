// The process's one SimGrid engine: created with the SimGrid settings in force, and told of every actor's
// start and end. SimGrid has one engine per process; a second Simulation would share its clock, so a second
// owner is refused.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

namespace spmdsim::detail {

class EngineOwner {
 public:
  // Lets SimGrid consume its --cfg=... and --log=... arguments from argv, then applies the `platform`'s
  // settings ("network/model:CM02", ...) whose key neither argv nor `settings` sets, then `settings`.
  // `actor_started` is called inside the creation of every actor of this engine, `actor_ended` whenever one
  // ends. Throws ValueError for a setting SimGrid would abort on (check_simgrid_argument), before making the
  // engine.
  EngineOwner(int* argc, char** argv, const std::vector<std::string>& platform,
              const std::vector<std::string>& settings,
              std::function<void(const simgrid::s4u::Actor&)> actor_started,
              std::function<void(aid_t)> actor_ended);
  ~EngineOwner();
  EngineOwner(const EngineOwner&) = delete;  // one engine per process
  EngineOwner& operator=(const EngineOwner&) = delete;

  simgrid::s4u::Engine& engine() { return *engine_; }
  // The settings in force, in the order applied: argv's --cfg, the platform's kept, the explicit ones.
  const std::vector<std::string>& applied() const { return applied_; }

 private:
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::vector<std::string> applied_;
};

}  // namespace spmdsim::detail
