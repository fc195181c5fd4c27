// What a device actor knows while it runs its share of a pmap call: who it is, the call it belongs to,
// its memory and its clock. The ops and collectives find it through current_device(). A device has two
// actors in a call that starts asynchronous collectives: its program and its communication stream
// (comm_stream.hpp), each with a context of its own on its own track; both report into the device's times.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/shared_reduction.hpp"
#include "engine/runtime.hpp"
#include "spmdsim/array.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/report.hpp"

namespace spmdsim::detail {

// One mapped axis of a call: a pmap's axis_name (none: collectives cannot name it) and size.
struct MappedAxis {
  std::optional<std::string> name;
  int size = 1;
};

// The call ranks of a group of devices, in group order. Built once per group and shared by its members: a
// psum over 131,072 devices holds one list of them, not one per device, and what is known of the list is
// worked out once with it.
struct GroupRanks {
  explicit GroupRanks(std::vector<int> call_ranks);
  std::vector<int> ranks;
  bool in_call_order = false;      // ranks are 0, 1, ..., the call's size - 1
  bool shared_by_members = false;  // one of CallState::axis_groups, held for the whole call
};

// The devices a collective runs among: the calling device's group and the caller's position there (its axis
// index).
struct AxisGroup {
  std::shared_ptr<const GroupRanks> members;
  int position = 0;
  int size() const { return static_cast<int>(members->ranks.size()); }
  const std::vector<int>& ranks() const { return members->ranks; }
};

// One channel ring of a channel-parallel algorithm over a group (Communicator::in_parallel): its call ranks
// in ring order, the ring position of each member of the group, and the node of each position (node blocks of
// node_size members).
struct ChannelRing {
  ChannelRing(const GroupRanks& group, const std::vector<int>& ring, int node_size);
  std::shared_ptr<const GroupRanks> members;
  std::vector<int> position_of;
  std::vector<int> nodes;
};

// The devices of one pmap call and what they report.
struct CallState {
  // The mapped axes, outermost first: one for a pmap, one more per nested pmap. A device's call rank is its
  // index over them, row-major (the outer axis major), as XLA numbers the replicas of nested pmaps.
  std::vector<MappedAxis> axes;
  std::vector<int> devices;                // global indices, position = call rank
  bool devices_in_platform_order = false;  // devices are 0, 1, ..., their count - 1
  // The groups along the call's axes, by the levels named and the group's first rank: built by the first
  // member that asks, shared by the others.
  std::map<std::pair<std::vector<std::size_t>, int>, std::shared_ptr<const GroupRanks>> axis_groups;
  // Ring c of `rings` over `group`, O(p) to build: over one of axis_groups built by the first member that
  // asks and shared by the others, over any other group built for the caller alone.
  std::shared_ptr<const ChannelRing> channel_ring(const AxisGroup& group,
                                                  const std::shared_ptr<const ChannelRings>& rings, int c,
                                                  int node_size);
  // Whether the nodes of `group` (blocks of node_size members) each have a reducing switch of their own
  // (Communicator::node_switches_reduce), O(p) to work out with `check`: once per group shared by its
  // members, as channel_ring, for every other group by the caller.
  bool node_switches_reduce(const AxisGroup& group, int node_size, const std::function<bool()>& check);
  CallReport report;
  SharedReductions shared_reductions;  // booked ring all-reduces on real data, switch reductions

 private:
  struct SharedChannelRing {
    std::shared_ptr<const ChannelRings> rings;  // held, so that its address in the key is not reused
    std::shared_ptr<const ChannelRing> ring;
  };
  std::map<std::tuple<const GroupRanks*, const ChannelRings*, int, int>, SharedChannelRing> channel_rings_;
  std::map<std::pair<const GroupRanks*, int>, bool> node_switches_reduce_;
};

class CommStream;
class ProgramRecorder;

class DeviceContext {
 public:
  DeviceContext(Runtime& runtime, CallState& call, int rank, Track track = Track::program);
  ~DeviceContext();                              // CommStream is incomplete here
  DeviceContext(const DeviceContext&) = delete;  // the stream's actor holds this address
  DeviceContext& operator=(const DeviceContext&) = delete;

  Runtime& runtime() const { return runtime_; }
  CallState& call() const { return call_; }
  // Position in the call: the device's index over all the call's axes (row-major).
  int rank() const { return rank_; }
  int device() const { return call_.devices[static_cast<std::size_t>(rank_)]; }
  // The device's index along the call's axis `level` (0: the outermost).
  int index_along(std::size_t level) const;
  // The global index of the device at a call rank.
  int device_at(int rank) const { return call_.devices[static_cast<std::size_t>(rank)]; }
  const DeviceSpec& spec() const;
  Track track() const { return track_; }
  // The channel between two devices in this actor's namespace and lane (DeviceChannels::channel).
  simgrid::s4u::Mailbox* channel(int from_device, int to_device, int lane = 0) const;
  // How many of the call's axes are bound now, outermost first: 1 while the outer function runs, one more
  // inside each nested pmap. Collectives see the bound axes only, as JAX binds a name inside its pmap.
  std::size_t bound_levels() const { return bound_levels_; }
  // Binds the call's first `count` axes: one more as a nested pmap starts, one fewer as it ends; the stream
  // binds those of the program when it queued the collective it runs.
  void bind_levels(std::size_t count) { bound_levels_ = count; }
  // The group of the named axes (the innermost binding of each name); NameError ("unbound axis name: j")
  // for a name no pmap bound so far.
  AxisGroup axis_group(const AxisName& name) const;
  // The group along the call's axes at these levels, the first major.
  AxisGroup axis_group(const std::vector<std::size_t>& levels) const;
  // The bound levels of the named axes (the innermost binding of each name); NameError as axis_group.
  std::vector<std::size_t> axis_levels(const AxisName& name) const;

  // A new buffer of this device, tagged; throws OutOfMemoryError if it does not fit.
  std::shared_ptr<DeviceAllocation> allocate(Bytes bytes, MemoryTag tag, MemoryLabel label) const;
  // The same values in a new buffer of this device (allocate).
  Array place(const Array& value, MemoryTag tag, MemoryLabel label) const;
  // Recording (program_record.hpp): this context's buffers go to the recorder's ledger, its compute to the
  // record, and what would simulate anything (an execution, a channel, the stream) throws NotReplayable.
  void record_with(ProgramRecorder* recorder) { recorder_ = recorder; }
  ProgramRecorder* recorder() const { return recorder_; }
  // Books `duration` of this device's compute and records it as compute. Booked ops run as one SimGrid
  // execution on the device's host when the device next deals with another actor (flush_compute): the same
  // simulated time as one execution per op, since nothing else computes on a device's host, for a fraction
  // of the simulator's cost per op (a 7B-parameter training step is thousands of ops per device).
  void compute(std::string_view name, Seconds duration);
  // Runs the compute booked so far; every collective and the end of the device function call it first.
  void flush_compute();
  // This device's time: the clock plus the compute booked and not yet run.
  Seconds now() const;
  // A fused kernel (ops.hpp, fused) in progress: its ops add their FLOPs here instead of being charged.
  bool fusing() const { return fused_flops_.has_value(); }
  void begin_fusion() { fused_flops_ = 0.0; }
  void add_fused_flops(double flops) { *fused_flops_ += flops; }
  double end_fusion() { return *std::exchange(fused_flops_, std::nullopt); }
  // A SimGrid execution of `duration` now, unrecorded: the caller's span (a collective) accounts for it.
  void execute(Seconds duration);
  // Adds a span to this device's timeline (SimulationOptions::timelines; without them it only returns).
  void record(SpanKind kind, std::string_view name, Seconds start, Seconds end);
  // A collective's span on this actor's track: exposed communication on the program, stream time on the
  // stream.
  void record_communication(const std::string& name, Seconds start, Seconds end);
  DeviceTimes& times();

  // Program only: the device's communication stream in this call, started on first use.
  CommStream& stream();
  // Program only: waits for what the stream still runs and stops it (pmap, when the function returns).
  void finish_stream();

 private:
  Runtime& runtime_;
  CallState& call_;
  int rank_;
  Track track_;
  std::unique_ptr<CommStream> stream_;
  std::size_t bound_levels_ = 1;
  Seconds booked_compute_ = 0;
  std::optional<double> fused_flops_;
  ProgramRecorder* recorder_ = nullptr;
  // The last channel out of and into this device: a ring step sends to and receives from the same two
  // peers every time, and the shared table (Runtime::channels) is far from this actor's cache at scale.
  struct RecentChannel {
    int peer = DeviceChannels::kNodeSwitch - 1;  // no device
    int lane = 0;
    simgrid::s4u::Mailbox* mailbox = nullptr;
  };
  mutable RecentChannel last_out_, last_in_;
};

// The context of the calling device actor, or null on the host.
DeviceContext* current_device();
// Binds ctx to the calling actor for the rest of its life.
void bind_current_device(DeviceContext* ctx);
// The time of an event on `device`'s memory: that device's own time when its actor is the caller, the clock
// otherwise.
Seconds memory_event_time(int device);

}  // namespace spmdsim::detail
