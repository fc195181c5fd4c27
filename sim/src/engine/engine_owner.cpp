#include "engine/engine_owner.hpp"

#include <stdexcept>
#include <utility>

#include <simgrid/s4u/Actor.hpp>

namespace spmdsim::detail {
namespace {

bool engine_taken = false;
// Whom SimGrid's actor-termination callback (connected once per process) tells: the current owner's.
std::function<void(aid_t)> on_actor_end;

}  // namespace

EngineOwner::EngineOwner(int* argc, char** argv, const std::vector<std::string>& settings,
                         std::function<void(aid_t)> actor_ended) {
  if (engine_taken)
    throw std::logic_error(
        "one Simulation per process: SimGrid's engine and clock are per process (run each simulation in its "
        "own process)");
  engine_taken = true;
  engine_ = std::make_unique<simgrid::s4u::Engine>(argc, argv);
  on_actor_end = std::move(actor_ended);
  static const bool termination_watched = [] {
    simgrid::s4u::Actor::on_termination_cb([](const simgrid::s4u::Actor& actor) {
      if (on_actor_end) on_actor_end(actor.get_pid());
    });
    return true;
  }();
  (void)termination_watched;
  for (const auto& setting : settings) simgrid::s4u::Engine::set_config(setting);
}

EngineOwner::~EngineOwner() {
  on_actor_end = nullptr;
  engine_taken = false;
}

}  // namespace spmdsim::detail
