#include "engine/engine_owner.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <xbt/config.hpp>

#include "engine/tcp_window.hpp"
#include "spmdsim/simgrid_arguments.hpp"

namespace spmdsim::detail {
namespace {

bool engine_taken = false;
// Whom SimGrid's actor-creation and termination callbacks (connected once per process) tell: the current
// owner's.
std::function<void(const simgrid::s4u::Actor&)> on_actor_start;
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

std::string key_of(const std::string& setting) {
  return setting.substr(0, setting.find(':'));
}

// The platform's settings that argv (already consumed: SimGrid marks what it set) and `explicit_settings`
// leave alone, then the explicit ones.
std::vector<std::string> settings_to_apply(const std::vector<std::string>& platform,
                                           const std::vector<std::string>& explicit_settings) {
  std::vector<std::string> applied;
  for (const auto& setting : platform) {
    const auto key = key_of(setting);
    const bool set_explicitly = std::any_of(explicit_settings.begin(), explicit_settings.end(),
                                            [&](const std::string& s) { return key_of(s) == key; });
    if (!set_explicitly && simgrid::config::is_default(key.c_str())) applied.push_back(setting);
  }
  applied.insert(applied.end(), explicit_settings.begin(), explicit_settings.end());
  return applied;
}

}  // namespace

EngineOwner::EngineOwner(int* argc, char** argv, const std::vector<std::string>& platform,
                         const std::vector<std::string>& settings,
                         std::function<void(const simgrid::s4u::Actor&)> actor_started,
                         std::function<void(aid_t)> actor_ended) {
  if (engine_taken)
    throw std::logic_error(
        "one Simulation per process: SimGrid's engine and clock are per process (run each simulation in its "
        "own process)");
  // SimGrid aborts on many a bad setting: refuse them first (ValueError), and before the engine is taken.
  for (int i = 1; i < *argc; ++i) check_simgrid_argument(argv[i]);
  for (const auto& setting : settings) check_simgrid_setting(setting);
  engine_taken = true;
  for (int i = 1; i < *argc; ++i)
    if (const std::string_view arg = argv[i]; arg.starts_with("--cfg=")) applied_.emplace_back(arg.substr(6));
  engine_ = make_engine(argc, argv);
  on_actor_start = std::move(actor_started);
  on_actor_end = std::move(actor_ended);
  static const bool actors_watched = [] {
    simgrid::s4u::Actor::on_creation_cb([](const simgrid::s4u::Actor& actor) {
      if (on_actor_start) on_actor_start(actor);
    });
    simgrid::s4u::Actor::on_termination_cb([](const simgrid::s4u::Actor& actor) {
      if (on_actor_end) on_actor_end(actor.get_pid());
    });
    return true;
  }();
  (void)actors_watched;
  const auto after_argv = settings_to_apply(platform, settings);
  for (const auto& setting : after_argv) simgrid::s4u::Engine::set_config(setting);
  applied_.insert(applied_.end(), after_argv.begin(), after_argv.end());
  if (simgrid::config::get_value<double>("network/TCP-gamma") == 0)
    simgrid::s4u::Engine::set_config("network/TCP-gamma", kUnreachableTcpWindow);
}

EngineOwner::~EngineOwner() {
  on_actor_start = nullptr;
  on_actor_end = nullptr;
  engine_taken = false;
}

}  // namespace spmdsim::detail
