// Which platform a command runs on, from its options: --topology (a builder of topologies/, sized for the
// device count), --preset (a device to put on that topology, or a whole node or TPU slice), --nodes (a
// cluster of a node preset) or --platform (a SimGrid XML file, its devices listed by --hostfile or marked in
// it, its host CPU named by --host-cpu or marked). The figures come from the preset tables and
// the validation from the builders themselves; docs/collectives.md describes the options.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <nlohmann/json.hpp>

#include "common/device_list.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/platform.hpp"

namespace spmdsim::cli {

// The options as given; empty when not given.
struct PlatformRequest {
  std::string topology;
  std::string preset;
  std::string platform_file;
  std::string nodes;
  std::string hostfile;
  std::string host_cpu;
};

// Adds --topology, --preset, --nodes, --platform, --hostfile and --host-cpu to `options`, read into
// `request`.
void add_platform_options(boost::program_options::options_description& options, PlatformRequest& request);

// A platform ready for a Simulation, and how it was chosen, for reports.
struct ChosenPlatform {
  PlatformBuilder builder;
  int num_devices = 0;  // 0 for --platform: known once SimGrid has loaded the file
  std::string
      topology;  // as built, parameters included ("torus:4x2"); empty for a preset's or a file's platform
  std::string preset;
  int nodes = 0;  // a cluster of a node preset; 0 otherwise
  std::string platform_file;
  std::string hostfile;  // with platform_file: the SMPI hostfile listing its devices, if given
  std::string summary;   // "--topology torus:4x2, --preset h100 with dgx_h100's links"
  // The preset's network model (NetworkModel::simgrid_config; none for --platform) and whose it is.
  std::vector<std::string> simgrid_config;
  std::string network_model_source;  // "dgx_h100's network model", or empty
};

// Whether a --platform file needs a host CPU (marked spmdsim.role=host or named by --host-cpu): a command
// whose figures count the host's transfers does; one whose figures leave them out (collectives) runs the host
// program on device 0's host where the file has none, so that an SMPI platform and hostfile load as they are.
enum class HostCpuNeed { required, first_device_if_none };

// Checks `request` and returns the platform for `devices` devices (the largest count the command runs;
// smaller counts run on the first devices of the same platform). Builds nothing yet. Throws UsageError
// naming the option for an unknown topology or preset (listing the valid ones), a topology parameter the
// builder refuses (with the builder's message), options that exclude each other, and a platform of fewer
// than `devices` devices.
ChosenPlatform choose_platform(const PlatformRequest& request, int devices,
                               HostCpuNeed host_cpu = HostCpuNeed::required);

// What runs the platform's collectives when no algorithm is named (collective_library of the platform it
// builds): NCCL on a node preset of NVIDIA GPUs (or a cluster of them) carrying NCCL's figures, RCCL on one
// carrying RCCL's (mi300x_8gpu), channel rings on other full-mesh nodes (--topology full_mesh), rings both
// ways along every dimension of a torus (TPU slices, --topology torus or mesh), else the textbook
// algorithms.
CollectiveLibrary collective_library(const ChosenPlatform& platform);
// The channels a collective of `algorithm` (empty: the platform's default) runs on at most there: NCCL's ring
// channels for nccl and nccl_ring where the platform carries NCCL's figures; for nccl_ring over full-mesh
// nodes mesh_ring_channels, elsewhere one per device of a node across nodes; 6 parts for torus; else 1.
int collective_channels(const ChosenPlatform& platform, const std::string& algorithm);

// The network settings in force in SimGrid (model, cross-traffic, TCP-gamma, optim), read back once a
// Simulation has applied the preset's settings and the command line's --cfg.
std::vector<std::pair<std::string, std::string>> simgrid_settings();

// Where those settings come from: "dgx_h100's network model; --cfg for network/model", "SimGrid's defaults".
std::string simgrid_source(const ChosenPlatform& chosen, const std::vector<std::string>& simgrid_args);

// The platform's fields of a command's JSON: platform (its description), topology, platform_file, hostfile,
// preset, nodes, simgrid_config (`settings`), simgrid_source and simgrid_args.
void add_platform_json(nlohmann::ordered_json& j, const ChosenPlatform& chosen,
                       const std::string& description,
                       const std::vector<std::pair<std::string, std::string>>& settings,
                       const std::vector<std::string>& simgrid_args);

}  // namespace spmdsim::cli
