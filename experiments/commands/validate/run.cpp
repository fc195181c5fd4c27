#include "commands/validate/run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands/train/options.hpp"
#include "commands/train/training_run.hpp"
#include "commands/validate/published_runs.hpp"
#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "common/forked_run.hpp"
#include "common/host_budget.hpp"
#include "common/platform_options.hpp"
#include "common/progress_bar.hpp"
#include "common/training_options.hpp"

namespace spmdsim::cli::validate {
namespace {

namespace po = boost::program_options;

constexpr double kTarget = 0.15;  // the validation's target: every run's step time within 15%

struct Request {
  std::string set = "validation";
  std::string only;
  bool list = false;
  int jobs = 0;
};

const std::vector<PublishedRun>& runs_of(const std::string& set) {
  if (set == "validation") return validation_runs();
  if (set == "llm-foundry") return llm_foundry_runs();
  throw UsageError(fmt::format("unknown --set '{}'; valid: validation, llm-foundry", set));
}

std::string train_command(const PublishedRun& run) {
  return fmt::format("spmdsim train {} {}", kCommonTrainArgs, run.args);
}

// The run's `spmdsim train` options, as that command parses them.
train::TrainCommandOptions train_options(const PublishedRun& run) {
  std::istringstream words(fmt::format("{} {}", kCommonTrainArgs, run.args));
  return *train::parse({std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()});
}

void print_list(const std::vector<PublishedRun>& runs) {
  for (const PublishedRun& run : runs)
    std::cout << fmt::format("{}\n  published {:.1f} ms{} ({})\n  {}\n", run.name, run.published_ms,
                             run.derived ? " (derived)" : "", run.source, train_command(run));
}

int run_set(const std::vector<PublishedRun>& runs, const Request& request, std::vector<std::string> simgrid) {
  std::vector<train::TrainCommandOptions> options;
  for (const PublishedRun& run : runs) options.push_back(train_options(run));
  const HostLimits limits = read_host_limits();
  std::vector<HostDemand> demands;
  std::int64_t actors = 0;
  for (const auto& o : options) {
    const int p = o.devices.front();
    const int channels = collective_channels(o.platform, o.setup.algorithm);
    actors = std::max(actors, training_actors(p, channels));
    demands.push_back(training_host_demand(o.setup, p, train::global_batch(o, p), channels));
  }
  const ActorContexts contexts = fit_actor_contexts(simgrid, actors, limits);
  // Side by side as many as the most demanding run allows.
  const HostDemand largest =
      *std::max_element(demands.begin(), demands.end(), [&](const auto& a, const auto& b) {
        return estimate_host_use(a, contexts).resident_bytes < estimate_host_use(b, contexts).resident_bytes;
      });

  std::vector<ChildRun> children;
  for (std::size_t i = 0; i < runs.size(); ++i)
    children.push_back({runs[i].name, [&, i] {
                          const auto& o = options[i];
                          const int p = o.devices.front();
                          // A run that fails (out of memory) is a row of the table, not the end of the
                          // others.
                          try {
                            return nlohmann::json(run_training(o.setup, o.platform, simgrid, p,
                                                               train::global_batch(o, p), ""))
                                .dump();
                          } catch (const std::exception& e) {
                            return nlohmann::json{{"error", e.what()}}.dump();
                          }
                        }});
  const auto start = std::chrono::steady_clock::now();
  ProgressBar progress(children.size(), isatty(STDERR_FILENO) && children.size() > 1, "simulations");
  progress.show(0);
  const std::vector<std::string> texts =
      run_in_children(children, parallel_runs(request.jobs, largest, contexts, limits),
                      [&](std::size_t done) { progress.show(done); });
  progress.clear();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << fmt::format(
      "# spmdsim validate: end-to-end step times of published data-parallel training runs (--set {}) "
      "against spmdsim train's\n"
      "# each row runs `spmdsim train {} <its arguments>` (--list prints them); no constant of spmdsim was "
      "set from these runs (docs/training.md, \"Validation\")\n"
      "#{:<74} {:>14} {:>14} {:>8}\n",
      request.set, kCommonTrainArgs, "run", "published(ms)", "simulated(ms)", "error");
  int within = 0, ran = 0;
  double sum_abs = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto reply = nlohmann::json::parse(texts[i]);
    if (reply.contains("error")) {
      const std::string error = reply.at("error");
      std::cout << fmt::format(" {:<74} {:>14.1f} {:>14} {:>8}  {}\n", runs[i].name, runs[i].published_ms,
                               "failed", "-", error.substr(0, error.find('\n')));
      continue;
    }
    const double simulated_ms = reply.get<TrainingResult>().step_time * 1e3;
    const double error = simulated_ms / runs[i].published_ms - 1;
    within += std::abs(error) <= kTarget ? 1 : 0;
    sum_abs += std::abs(error);
    ++ran;
    std::cout << fmt::format(" {:<74} {:>14.1f} {:>14.1f} {:>+7.1f}%\n", runs[i].name, runs[i].published_ms,
                             simulated_ms, 100 * error);
  }
  const int failed = static_cast<int>(runs.size()) - ran;
  std::cout << fmt::format("# {} of {} runs within {:.0f}%, mean |error| {:.1f}%{}\n", within, runs.size(),
                           100 * kTarget, ran == 0 ? 0.0 : 100 * sum_abs / ran,
                           failed == 0 ? "" : fmt::format(" of the {} that ran ({} failed)", ran, failed))
            << fmt::format("\n# {} simulations, one per run, in {:.2f} s wall time\n", runs.size(), wall);
  return 0;
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  Request request;
  std::string jobs;
  po::options_description described("spmdsim validate options");
  described.add_options()("help,h", "show this help")(
      "set", po::value(&request.set)->default_value(request.set),
      "the runs: validation (docs/training.md's validation table: FlashAttention's, llm.c's, nanoGPT's and "
      "MosaicML's MPT runs) or llm-foundry (every 8-GPU A100 80GB row of llm-foundry's throughput table, "
      "512 to 65,536 tokens)")("only", po::value(&request.only),
                               "only the runs whose name contains this text")(
      "list", po::bool_switch(&request.list),
      "print each run's published figure, source and `spmdsim train` command, and run none")(
      "jobs", po::value(&jobs), kJobsHelp);
  const OptionValues values(split.ours, described);
  if (values.map().count("help")) {
    std::cout << "usage: spmdsim validate [options] [--cfg=simgrid/setting:value ...]\n\n"
              << "Simulates published data-parallel training runs, each as the `spmdsim train` command that\n"
              << "runs it as it was run, and prints each step time beside the published one, the error and\n"
              << "how many are within 15%. The validation set takes several minutes.\n\n"
              << described << "\n";
    return 0;
  }
  request.jobs = values.attributed({"jobs"}, [&] { return parse_jobs(jobs); });
  std::vector<PublishedRun> runs = values.attributed({"set"}, [&] { return runs_of(request.set); });
  values.attributed({"only", "set"}, [&] {
    std::erase_if(runs,
                  [&](const PublishedRun& run) { return run.name.find(request.only) == std::string::npos; });
    if (runs.empty())
      throw UsageError(fmt::format("--only '{}' names no run of --set {}", request.only, request.set));
  });
  if (request.list) {
    print_list(runs);
    return 0;
  }
  return run_set(runs, request, split.simgrid);
}

}  // namespace spmdsim::cli::validate
