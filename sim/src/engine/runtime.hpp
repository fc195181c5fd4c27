// The state behind a Simulation, composed of its parts: the SimGrid engine's owner, the platform and the
// devices' memory ledgers, the collective settings, the channels between devices, the host's copies, failure
// handling and the report. pmap, the collectives and device_get work on it.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective_settings.hpp"
#include "engine/copy_pause.hpp"
#include "engine/device_channels.hpp"
#include "engine/engine_owner.hpp"
#include "engine/failures.hpp"
#include "engine/host_copies.hpp"
#include "engine/host_transfer.hpp"
#include "engine/platform_hosts.hpp"
#include "engine/report_builder.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/report.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::detail {

class Runtime {
 public:
  Runtime(int* argc, char** argv, const PlatformBuilder& builder, SimulationOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;  // owns the engine
  Runtime& operator=(const Runtime&) = delete;

  const Platform& platform() const { return platform_; }
  // The platform's hosts in the engine.
  const PlatformHosts& hosts() const { return hosts_; }
  int num_devices() const { return static_cast<int>(platform_.devices.size()); }
  // ValueError, prefixed with `what`, for a device index outside the platform or one listed twice.
  void check_devices(const std::vector<int>& devices, std::string_view what) const;
  const std::shared_ptr<MemoryLedger>& ledger(int device) const { return ledgers_.at(device); }
  const CollectiveSettings& collectives() const { return collectives_; }
  // SimulationOptions::enable_x64.
  bool enable_x64() const { return enable_x64_; }
  bool fusion() const { return fusion_; }        // SimulationOptions::fusion
  bool timelines() const { return timelines_; }  // SimulationOptions::timelines
  DeviceChannels& channels() { return channels_; }
  HostCopyQueue& host_copies() { return host_copies_; }
  TransferMailboxes& transfer_mailboxes() { return transfer_mailboxes_; }

  // Runs the actors created since the last run to completion. If one failed, the first failure is
  // rethrown here (the failing actor kills the others so that none waits forever). Host copies still in
  // flight when the others are done stay in flight: the run ends without waiting for them (copy_pause.hpp).
  void run();
  // Called by a failing actor.
  void fail(std::exception_ptr error) { failures_.fail(std::move(error)); }

  void add_call(CallReport call) { reports_.add_call(std::move(call)); }
  SimulationReport report() const { return reports_.report(); }

 private:
  EngineOwner engine_;
  std::vector<std::string> config_;  // the SimGrid settings in force (EngineOwner::applied), for reports
  Platform platform_;
  PlatformHosts hosts_;
  std::vector<std::shared_ptr<MemoryLedger>> ledgers_;
  CollectiveSettings collectives_;
  bool enable_x64_ = true;
  bool fusion_ = true;
  bool timelines_ = true;
  DeviceChannels channels_{hosts_};
  TransferMailboxes transfer_mailboxes_;
  HostCopyQueue host_copies_{hosts_, transfer_mailboxes_};
  CopyPause copy_pause_{engine_.engine(), host_copies_};
  Failures failures_{engine_.engine(), host_copies_};
  ReportBuilder reports_{platform_, config_, collectives_, ledgers_};

  // Called when any actor ends.
  void actor_ended(aid_t actor);
};

}  // namespace spmdsim::detail
