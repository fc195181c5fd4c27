#include "engine/engine_owner.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

namespace spmdsim::detail {
namespace {

bool engine_taken = false;
// Whom SimGrid's actor-termination callback (connected once per process) tells: the current owner's.
std::function<void(aid_t)> on_actor_end;

#ifdef SPMDSIM_SANITIZED
// Under AddressSanitizer (-DSPMDSIM_SANITIZE), actors run on threads: ASan does not see the stack switches of
// SimGrid's default raw contexts (Debian's libsimgrid has no sanitizer annotations) and reports false stack
// errors on them, while a thread's stack is one it knows. The engine picks its contexts when it is made, so
// the setting goes in argv, first: a --cfg=contexts/factory on the command line still wins.
std::unique_ptr<simgrid::s4u::Engine> make_engine(int* argc, char** argv) {
  static char thread_contexts[] = "--cfg=contexts/factory:thread";
  std::vector<char*> args(argv, argv + *argc);
  args.insert(args.begin() + 1, thread_contexts);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  auto engine = std::make_unique<simgrid::s4u::Engine>(&count, args.data());
  // The caller's arguments that SimGrid left (it takes out the --cfg of a process's first engine only).
  args.resize(static_cast<std::size_t>(count));
  std::erase(args, thread_contexts);
  std::copy(args.begin(), args.end(), argv);
  argv[args.size()] = nullptr;
  *argc = static_cast<int>(args.size());
  return engine;
}
#else
std::unique_ptr<simgrid::s4u::Engine> make_engine(int* argc, char** argv) {
  return std::make_unique<simgrid::s4u::Engine>(argc, argv);
}
#endif

}  // namespace

EngineOwner::EngineOwner(int* argc, char** argv, const std::vector<std::string>& settings,
                         std::function<void(aid_t)> actor_ended) {
  if (engine_taken)
    throw std::logic_error(
        "one Simulation per process: SimGrid's engine and clock are per process (run each simulation in its "
        "own process)");
  engine_taken = true;
  engine_ = make_engine(argc, argv);
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
