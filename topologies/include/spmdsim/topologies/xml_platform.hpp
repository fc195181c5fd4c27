// SimGrid XML platforms: any platform file a user gives (`--platform file.xml`), its devices picked out by a
// host property or listed in an SMPI hostfile (`--hostfile`); and the switch cluster written as such a file,
// so that smpirun and spmdsim can run on the very same platform (tests/smpi_peer_test.cpp does).
//
// What spmdsim reads from the file (docs/platforms.md has an example):
//
//   where       property                   value
//   any host    spmdsim.role               "device" or "host" (names are options); other hosts are ignored
//   device      spmdsim.index              0..N-1: the device order. All devices have one or none does;
//                                          then they go by host name, digits as numbers (dev2 < dev10)
//
// A hostfile replaces the first two: its lines are the devices, in order; the host CPU is then the host of
// role "host" or the one XmlPlatformOptions::host_cpu names. The properties below apply either way:
//   device      spmdsim.memory_bytes       overrides the DeviceSpec's memory_capacity (bytes)
//   device      spmdsim.peak_flops_f32     overrides its f32 peak (FLOP/s)
//   device      spmdsim.memory_bandwidth   overrides its memory_bandwidth (bytes/s)
//   root zone   spmdsim.dimensions         "8,4": Platform::dimensions (mixed radix, dimension 0 fastest)
//
// Numbers are read as C++ doubles: "80e9", "inf" (free compute, as timing tests use) are fine; units are not.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"

namespace spmdsim::topologies {

struct XmlPlatformOptions {
  std::string role_property = "spmdsim.role";
  std::string device_role = "device";  // the hosts that are devices
  std::string host_role = "host";      // the one host that runs the host program
  // Every device's spec before its own properties override memory and f32 peak.
  DeviceSpec device = a100_like_device();
  // The devices a run uses (the first ones in device order), whose routes are checked; 0: every device.
  int devices_used = 0;
  // An SMPI hostfile (smpirun -hostfile): device i is the host on its i-th line; blank lines are skipped and
  // "name:1" is "name", as smpirun reads them. Empty: the devices are the hosts of role `device_role`.
  std::filesystem::path hostfile;
  // The host that runs the host program. Empty: the one host of role `host_role`.
  std::string host_cpu;
  // Where neither names a host CPU: false refuses the file; true runs the host program on device 0's host,
  // as an MPI program's rank 0 does its I/O, so that an SMPI platform and hostfile load as they are. For
  // runs whose figures leave out the host's transfers (the collectives command).
  bool host_on_first_device = false;
};

// Loads `file` with simgrid::s4u::Engine::load_platform when the Simulation builds its platform. Throws
// ValueError naming the file and what is wrong. Now: a missing file, a link id declared twice or a route
// given twice in a zone (with the line; SimGrid would abort), a hostfile that is missing, empty, lists a
// host twice or puts several devices on one host (with the line). When the Simulation builds the platform:
// a file SimGrid cannot parse; a missing route between the host CPU and a device used or between two
// devices used; no device host (naming the property and value looked for); no or several host CPUs; a
// hostfile or host_cpu naming a host the file lacks, or a hostfile listing the host CPU; a device index
// that is duplicated, missing, out of range or not an integer; a property value that is not a number;
// dimensions that do not multiply to the device count; a link of zero, negative, NaN or infinite bandwidth
// or of negative latency; a host of no speed. The platform carries no network settings: the file runs
// under SimGrid's defaults (LV08) and its own <config>, as under smpirun.
PlatformBuilder xml_platform(std::filesystem::path file, XmlPlatformOptions options = {});

// The switch cluster of `spec` as a SimGrid XML platform (version 4.1): the hosts, links and routes that
// switch_cluster() builds, in one Full zone with an explicit route per ordered pair of hosts, so O(p^2)
// lines (fine for the small p an SMPI comparison runs on); roles, indices and the device's memory, f32 peak
// and memory bandwidth as properties. Loaded by xml_platform() or given to smpirun. Throws ValueError for a
// spec switch_cluster() refuses.
void write_switch_cluster_xml(std::ostream& out, const SwitchClusterSpec& spec);

}  // namespace spmdsim::topologies
