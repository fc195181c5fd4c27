#include "engine/device_context.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>

#include "api/op_accounting.hpp"
#include "engine/comm_stream.hpp"
#include "engine/program_record.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/memory.hpp"

namespace spmdsim::detail {

DeviceContext::DeviceContext(Runtime& runtime, CallState& call, int rank, Track track)
    : runtime_(runtime), call_(call), rank_(rank), track_(track) {}

DeviceContext::~DeviceContext() = default;

simgrid::s4u::Mailbox* DeviceContext::channel(int from_device, int to_device, int lane) const {
  if (recorder_ != nullptr) throw NotReplayable("a channel between devices");
  const bool out = from_device == device();
  if (!out && to_device != device()) return runtime_.channels().channel(from_device, to_device, track_, lane);
  RecentChannel& recent = out ? last_out_ : last_in_;
  const int peer = out ? to_device : from_device;
  if (recent.peer != peer || recent.lane != lane)
    recent = {peer, lane, runtime_.channels().channel(from_device, to_device, track_, lane)};
  return recent.mailbox;
}

CommStream& DeviceContext::stream() {
  if (track_ != Track::program) throw std::logic_error("a communication stream has no stream of its own");
  if (recorder_ != nullptr) throw NotReplayable("the communication stream");
  if (!stream_) stream_ = std::make_unique<CommStream>(*this);
  return *stream_;
}

void DeviceContext::finish_stream() {
  if (stream_) stream_->finish();
}

const DeviceSpec& DeviceContext::spec() const {
  return runtime_.platform().devices[static_cast<std::size_t>(device())].spec;
}

int DeviceContext::index_along(std::size_t level) const {
  int stride = 1;
  for (std::size_t l = level + 1; l < call_.axes.size(); ++l) stride *= call_.axes[l].size;
  return (rank_ / stride) % call_.axes[level].size;
}

GroupRanks::GroupRanks(std::vector<int> call_ranks) : ranks(std::move(call_ranks)) {
  in_call_order = true;
  for (std::size_t i = 0; in_call_order && i < ranks.size(); ++i)
    in_call_order = ranks[i] == static_cast<int>(i);
}

ChannelRing::ChannelRing(const GroupRanks& group, const std::vector<int>& ring, int node_size)
    : position_of(ring.size()), nodes(ring.size()) {
  std::vector<int> call_ranks(ring.size());
  for (std::size_t k = 0; k < ring.size(); ++k) {
    const auto member = static_cast<std::size_t>(ring[k]);
    call_ranks[k] = group.ranks.at(member);
    position_of.at(member) = static_cast<int>(k);
    nodes[k] = ring[k] / node_size;
  }
  members = std::make_shared<const GroupRanks>(std::move(call_ranks));
}

std::shared_ptr<const ChannelRing> CallState::channel_ring(const AxisGroup& group,
                                                           const std::shared_ptr<const ChannelRings>& rings,
                                                           int c, int node_size) {
  const auto& ring = rings->at(static_cast<std::size_t>(c));
  if (!group.members->shared_by_members)
    return std::make_shared<const ChannelRing>(*group.members, ring, node_size);
  auto& shared = channel_rings_[{group.members.get(), rings.get(), c, node_size}];
  if (!shared.ring) shared = {rings, std::make_shared<const ChannelRing>(*group.members, ring, node_size)};
  return shared.ring;
}

bool CallState::node_switches_reduce(const AxisGroup& group, int node_size,
                                     const std::function<bool()>& check) {
  if (!group.members->shared_by_members) return check();
  const auto key = std::make_pair(group.members.get(), node_size);
  if (const auto known = node_switches_reduce_.find(key); known != node_switches_reduce_.end())
    return known->second;
  return node_switches_reduce_[key] = check();
}

std::vector<std::size_t> DeviceContext::axis_levels(const AxisName& name) const {
  std::vector<std::size_t> levels;
  for (const std::string& one : name.names()) {
    auto level = bound_levels_;
    while (level > 0 && call_.axes[level - 1].name != one) --level;
    if (level == 0) throw NameError(fmt::format("unbound axis name: {}", one));
    levels.push_back(level - 1);
  }
  return levels;
}

AxisGroup DeviceContext::axis_group(const AxisName& name) const {
  return axis_group(axis_levels(name));
}

AxisGroup DeviceContext::axis_group(const std::vector<std::size_t>& levels) const {
  // Every rank that agrees with this one off `levels`, enumerated with the first listed level major.
  const auto& axes = call_.axes;
  std::vector<int> strides(axes.size(), 1);
  for (std::size_t l = axes.size(); l-- > 1;) strides[l - 1] = strides[l] * axes[l].size;
  int base = rank_;
  int position = 0;
  for (std::size_t l : levels) {
    base -= index_along(l) * strides[l];
    position = position * axes[l].size + index_along(l);
  }
  auto& members = call_.axis_groups[{levels, base}];
  if (!members) {
    std::vector<int> ranks{base};
    for (std::size_t l : levels) {
      std::vector<int> wider;
      wider.reserve(ranks.size() * static_cast<std::size_t>(axes[l].size));
      for (int member : ranks)
        for (int k = 0; k < axes[l].size; ++k) wider.push_back(member + k * strides[l]);
      ranks = std::move(wider);
    }
    auto built = std::make_shared<GroupRanks>(std::move(ranks));
    built->shared_by_members = true;
    members = std::move(built);
  }
  return {members, position};
}

std::shared_ptr<DeviceAllocation> DeviceContext::allocate(Bytes bytes, MemoryTag tag,
                                                          MemoryLabel label) const {
  return std::make_shared<DeviceAllocation>(
      recorder_ != nullptr ? recorder_->ledger() : runtime_.ledger(device()), device(), bytes, tag, label);
}

Array DeviceContext::place(const Array& value, MemoryTag tag, MemoryLabel label) const {
  return value.on_device(allocate(static_cast<Bytes>(value.nbytes()), tag, label));
}

void DeviceContext::execute(Seconds duration) {
  if (recorder_ != nullptr) throw NotReplayable("an execution");
  if (duration <= 0) return;
  simgrid::s4u::this_actor::execute(duration * simgrid::s4u::this_actor::get_host()->get_speed());
}

void DeviceContext::compute(std::string_view name, Seconds duration) {
  if (duration <= 0) return;
  if (recorder_ != nullptr) return recorder_->compute(name, duration);
  if (stream_ && stream_->busy()) {
    // The stream's reductions share the host now: run the op at once and measure it, stretched as it may be.
    flush_compute();
    const Seconds start = simgrid::s4u::Engine::get_clock();
    execute(duration);
    const Seconds end = simgrid::s4u::Engine::get_clock();
    times().compute += end - start;
    record(SpanKind::compute, name, start, end);
    return;
  }
  const Seconds start = now();
  booked_compute_ += duration;
  times().compute += duration;
  record(SpanKind::compute, name, start, start + duration);
}

void DeviceContext::flush_compute() {
  execute(std::exchange(booked_compute_, 0.0));
}

Seconds DeviceContext::now() const {
  return simgrid::s4u::Engine::get_clock() + booked_compute_;
}

void DeviceContext::record(SpanKind kind, std::string_view name, Seconds start, Seconds end) {
  if (!runtime().timelines()) return;
  call_.report.spans[static_cast<std::size_t>(rank_)].push_back(
      {kind, std::string(name), start, end, track_});
}

void DeviceContext::record_communication(const std::string& name, Seconds start, Seconds end) {
  auto& by_collective = track_ == Track::program ? times().communication : times().stream;
  by_collective[name] += end - start;
  record(SpanKind::communication, name, start, end);
}

DeviceTimes& DeviceContext::times() {
  return call_.report.times[static_cast<std::size_t>(rank_)];
}

DeviceContext* current_device() {
  if (!simgrid::s4u::Engine::is_initialized()) return nullptr;
  auto* actor = simgrid::s4u::Actor::self();
  return actor == nullptr ? nullptr : actor->get_data<DeviceContext>();
}

void bind_current_device(DeviceContext* ctx) {
  simgrid::s4u::Actor::self()->set_data(ctx);
}

Seconds memory_event_time(int device) {
  const DeviceContext* ctx = current_device();
  return ctx != nullptr && ctx->device() == device ? ctx->now() : simgrid::s4u::Engine::get_clock();
}

Array account_op(std::string_view name, const OpCost& cost, Array result) {
  DeviceContext* ctx = current_device();
  if (ctx == nullptr) return result;
  if (ctx->fusing()) {
    ctx->add_fused_flops(cost.flops);
    return result;
  }
  Array placed = ctx->place(result, MemoryTag::temporaries, name);
  ctx->compute(name, ctx->spec().kernel_time(cost, result.dtype()));
  return placed;
}

}  // namespace spmdsim::detail
