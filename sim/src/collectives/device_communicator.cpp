#include "collectives/device_communicator.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <xbt/log.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "api/kernels/kernels.hpp"
#include "collectives/chunks.hpp"
#include "collectives/reduction_values.hpp"
#include "collectives/simulated_waits.hpp"
#include "engine/device_channels.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_coll_comm);

namespace spmdsim::detail {
namespace {

// A group of these call ranks (a part of a communicator's group), with the calling device among them.
AxisGroup group_with(const DeviceContext& ctx, std::vector<int> call_ranks) {
  const auto mine = std::find(call_ranks.begin(), call_ranks.end(), ctx.rank());
  if (mine == call_ranks.end()) throw std::logic_error("a communicator without this device");
  const auto position = static_cast<int>(mine - call_ranks.begin());
  return {std::make_shared<const GroupRanks>(std::move(call_ranks)), position};
}

}  // namespace

DeviceCommunicator::DeviceCommunicator(DeviceContext& ctx, AxisGroup group, std::string collective,
                                       int pipeline_chunks, std::vector<int> dimensions,
                                       std::vector<std::string> dimension_algorithms, int channels,
                                       std::string protocol)
    : ctx_(ctx),
      group_(std::move(group)),
      pending_sends_(std::make_shared<std::vector<PendingSend>>()),
      collective_(std::move(collective)),
      pipeline_chunks_(pipeline_chunks),
      channels_(channels),
      protocol_name_(std::move(protocol)),
      dimensions_(std::move(dimensions)),
      dimension_algorithms_(std::move(dimension_algorithms)) {
  if (group_.ranks().at(static_cast<std::size_t>(group_.position)) != ctx_.rank())
    throw std::logic_error("a communicator without this device");
}

std::unique_ptr<DeviceCommunicator> DeviceCommunicator::another(AxisGroup group, std::vector<int> dimensions,
                                                                std::vector<std::string> dimension_algorithms,
                                                                int channels) const {
  return std::make_unique<DeviceCommunicator>(ctx_, std::move(group), collective_, pipeline_chunks_,
                                              std::move(dimensions), std::move(dimension_algorithms),
                                              channels, protocol_name_);
}

std::unique_ptr<Communicator> DeviceCommunicator::subgroup(std::vector<int> members) {
  std::vector<int> call_ranks;
  for (int m : members) call_ranks.push_back(group_.ranks().at(static_cast<std::size_t>(m)));
  auto sub =
      another(group_with(ctx_, std::move(call_ranks)), {static_cast<int>(members.size())}, {}, channels_);
  sub->lane_ = lane_;
  sub->pending_sends_ = pending_sends_;  // waited for by the call's own communicator
  return sub;
}

std::unique_ptr<DeviceCommunicator> DeviceCommunicator::channel_communicator(
    const std::shared_ptr<const ChannelRings>& rings, int c, const ChannelProtocol& protocol) const {
  const int node_size = dimensions_.size() >= 2 ? dimensions_.front() : size();
  auto ring = ctx_.call().channel_ring(group_, rings, c, node_size);
  const int position = ring->position_of.at(static_cast<std::size_t>(group_.position));
  auto comm = another(AxisGroup{ring->members, position}, dimensions_, dimension_algorithms_, 1);
  comm->lane_ = c;
  comm->protocol_ = protocol;
  comm->channel_ring_ = std::move(ring);
  return comm;
}

void DeviceCommunicator::in_parallel(const std::shared_ptr<const ChannelRings>& rings,
                                     const ChannelProtocol& protocol,
                                     const std::function<void(Communicator&, int)>& body) {
  settle();
  wait_for(protocol.start_latency);
  std::vector<simgrid::s4u::ActorPtr> others;
  for (int c = 1; c < static_cast<int>(rings->size()); ++c)
    others.push_back(simgrid::s4u::Actor::create(
        fmt::format("{}:channel{}", simgrid::s4u::this_actor::get_name(), c),
        simgrid::s4u::this_actor::get_host(), [this, c, &rings, &protocol, &body] {
          bind_current_device(&ctx_);
          try {
            auto comm = channel_communicator(rings, c, protocol);
            body(*comm, c);
            comm->finish();
          } catch (const simgrid::ForcefulKillException&) {
            throw;  // killed after another actor failed: let SimGrid unwind this one
          } catch (...) {
            ctx_.runtime().fail(std::current_exception());
          }
        }));
  if (!rings->empty()) {
    auto comm = channel_communicator(rings, 0, protocol);
    body(*comm, 0);
    comm->finish();
  }
  for (auto& actor : others) actor->join();
}

std::vector<std::string> DeviceCommunicator::dimension_algorithms() const {
  if (!dimension_algorithms_.empty()) return dimension_algorithms_;
  return std::vector<std::string>(dimensions_.size(), "ring");
}

bool DeviceCommunicator::dimensions_are_mesh_lines() const {
  const Platform& platform = ctx_.runtime().platform();
  return platform.torus && (!platform.torus_wraparound || dimensions_ != platform.dimensions);
}

const NcclNode* DeviceCommunicator::nccl_node() const {
  const auto& nccl = ctx_.runtime().platform().nccl;
  return nccl ? &*nccl : nullptr;
}

const RcclNode* DeviceCommunicator::rccl_node() const {
  const auto& rccl = ctx_.runtime().platform().rccl;
  return rccl ? &*rccl : nullptr;
}

bool DeviceCommunicator::switch_reduces() const {
  const auto& hosts = ctx_.runtime().hosts();
  auto* mine = hosts.reducing_switch(ctx_.device());
  if (mine == nullptr) return false;
  for (int r = 0; r < size(); ++r)
    if (hosts.reducing_switch(device_of(r)) != mine) return false;
  return true;
}

bool DeviceCommunicator::node_switches_reduce() const {
  if (dimensions_.size() != 2 || dimensions_.front() * dimensions_.back() != size() || dimensions_.back() < 2)
    return false;
  const int local = dimensions_.front();
  return ctx_.call().node_switches_reduce(group_, local, [&] {
    const auto& hosts = ctx_.runtime().hosts();
    for (int r = 0; r < size(); ++r) {
      auto* node_switch = hosts.reducing_switch(device_of(r));
      if (node_switch == nullptr || node_switch != hosts.reducing_switch(device_of(r - r % local)))
        return false;
      if (r % local == 0 && r > 0 && node_switch == hosts.reducing_switch(device_of(r - local))) return false;
    }
    return true;
  });
}

Array DeviceCommunicator::pipelined_all_reduce(const Array& flat, ReduceOp op,
                                               const ChannelProtocol& protocol,
                                               const PipelinedTraffic& traffic) {
  settle();
  auto shared = ctx_.call().shared_reductions.join(ctx_.rank(), ctx_.track(), group(),
                                                   &collectives::rank_order_all_reduce_values);
  shared->contribute(rank(), flat, op);
  Array reduced = shared->result();  // the pipeline starts once every rank has arrived
  wait_for(protocol.start_latency);
  int* from_switch = nullptr;
  std::vector<simgrid::s4u::CommPtr> transfers;
  if (traffic.switch_each_way > 0) {
    auto* node_switch = ctx_.runtime().hosts().reducing_switch(ctx_.device());
    if (node_switch == nullptr) throw std::logic_error("traffic through the switch of a node without one");
    const auto each_way = static_cast<Bytes>(traffic.switch_each_way * protocol.wire_bytes_per_byte);
    XBT_VERB("%s: device %d moves %lld bytes each way through its node's switch", collective_.c_str(),
             ctx_.device(), static_cast<long long>(each_way));
    ctx_.times().bytes_sent += each_way;
    // Messages to and from an actor on the switch, not host-to-host transfers, which SimGrid 3.32 keeps in
    // one list and finds each finished one in by linear search: quadratic in the devices (docs/scale.md).
    // The first rank on each switch starts its actor (the ranks of a switch are consecutive).
    const int per_switch = node_switches_reduce() ? dimensions_.front() : size();
    if (rank() % per_switch == 0) start_switch_ports(node_switch, rank(), per_switch, each_way);
    transfers.push_back(ctx_.channel(ctx_.device(), DeviceChannels::kNodeSwitch, lane_)
                            ->put_async(&unread_payload, static_cast<std::uint64_t>(each_way)));
    transfers.push_back(
        ctx_.channel(DeviceChannels::kNodeSwitch, ctx_.device(), lane_)->get_async<int>(&from_switch));
  }
  std::vector<int*> received(traffic.exchanges.size());
  for (std::size_t i = 0; i < traffic.exchanges.size(); ++i) {
    const Exchange& exchange = traffic.exchanges[i];
    const int peer = device_of(exchange.peer);
    if (exchange.receives > 0)
      transfers.push_back(ctx_.channel(peer, ctx_.device(), lane_)->get_async<int>(&received[i]));
    if (exchange.sends > 0) {
      const auto wire = static_cast<Bytes>(exchange.sends * protocol.wire_bytes_per_byte);
      XBT_VERB("%s: device %d sends %lld bytes to device %d", collective_.c_str(), ctx_.device(),
               static_cast<long long>(wire), peer);
      ctx_.times().bytes_sent += wire;
      transfers.push_back(ctx_.channel(ctx_.device(), peer, lane_)
                              ->put_async(&unread_payload, static_cast<std::uint64_t>(wire)));
    }
  }
  if (protocol.rate > 0) wait_for(static_cast<Bytes>(flat.nbytes()) / protocol.rate);
  for (auto& transfer : transfers) transfer->wait();
  return reduced;
}

void DeviceCommunicator::start_switch_ports(simgrid::s4u::Host* node_switch, int first, int count,
                                            Bytes each_way) const {
  std::vector<simgrid::s4u::Mailbox*> up;
  std::vector<simgrid::s4u::Mailbox*> down;
  for (int r = first; r < first + count; ++r) {
    up.push_back(ctx_.channel(device_of(r), DeviceChannels::kNodeSwitch, lane_));
    down.push_back(ctx_.channel(DeviceChannels::kNodeSwitch, device_of(r), lane_));
  }
  simgrid::s4u::Actor::create("switch", node_switch, [up = std::move(up), down = std::move(down), each_way] {
    std::vector<int*> received(up.size());
    std::vector<simgrid::s4u::CommPtr> ports;
    for (std::size_t i = 0; i < up.size(); ++i) {
      ports.push_back(up[i]->get_async<int>(&received[i]));
      ports.push_back(down[i]->put_async(&unread_payload, static_cast<std::uint64_t>(each_way)));
    }
    simgrid::s4u::Comm::wait_all(ports);
  });
}

int DeviceCommunicator::device_of(int peer) const {
  return ctx_.device_at(group_.ranks().at(static_cast<std::size_t>(peer)));
}

void DeviceCommunicator::note_send(int peer, Bytes bytes) {
  XBT_VERB("%s: device %d sends %lld bytes to device %d", collective_.c_str(), ctx_.device(),
           static_cast<long long>(bytes), device_of(peer));
  ctx_.times().bytes_sent += bytes;
}

simgrid::s4u::CommPtr DeviceCommunicator::post_send(int peer, const Array& chunk) {
  note_send(peer, static_cast<Bytes>(chunk.nbytes()));
  // The receiver takes ownership of the heap copy of the handle: the storage is shared, the sender's device
  // buffer is not, so this device's memory depends on its own references alone.
  return put(device_of(peer), new Array(chunk.on_device(nullptr)), static_cast<Bytes>(chunk.nbytes()),
             step_overhead(peer));
}

void DeviceCommunicator::exchange_sizes(int to, Bytes bytes, int from) {
  settle();
  int* received = nullptr;
  auto incoming = ctx_.channel(device_of(from), ctx_.device(), lane_)->get_async<int>(&received);
  note_send(to, bytes);
  auto outgoing = put(device_of(to), &unread_payload, bytes, step_overhead(to));
  pace(bytes);
  incoming->wait();
  outgoing->wait();
}

Seconds DeviceCommunicator::step_overhead(int peer) const {
  if (!channel_ring_) return protocol_.step_overhead;
  const auto& nodes = channel_ring_->nodes;
  const bool across = nodes.at(static_cast<std::size_t>(peer)) != nodes.at(static_cast<std::size_t>(rank()));
  return across ? protocol_.step_overhead_across : protocol_.step_overhead;
}

// A message in k slices, each forwarded as it arrives, at the channel's pace r: a step takes a slice's time
// plus the longer of the other slices' and the step's latency, so (k-1)/k of the message's pace hides that
// much of the overhead (NCCL's Simple, prims_simple.h). The route's own latency is still paid.
Seconds DeviceCommunicator::visible_overhead(Seconds overhead, Bytes bytes) const {
  return std::max(overhead - protocol_.hidden_by_slices(static_cast<double>(bytes)), 0.0);
}

simgrid::s4u::CommPtr DeviceCommunicator::put(int to_device, void* payload, Bytes bytes, Seconds overhead) {
  wait_for(visible_overhead(overhead, bytes));
  return ctx_.channel(ctx_.device(), to_device, lane_)
      ->put_async(payload, static_cast<std::uint64_t>(bytes * protocol_.wire_bytes_per_byte));
}

// A channel is one CUDA block: it moves at most protocol_.rate, whatever the links leave it, and other
// channels' blocks do not slow it (SimGrid 3.32 drops a transfer's own rate under TCP-gamma 0, so the cap
// is a wait beside the transfer, not a bound on it).
void DeviceCommunicator::pace(Bytes bytes) {
  if (protocol_.rate > 0) wait_for(bytes / protocol_.rate);
}

simgrid::s4u::CommPtr DeviceCommunicator::post_recv(int peer, Array** slot) {
  return ctx_.channel(device_of(peer), ctx_.device(), lane_)->get_async<Array>(slot);
}

Array DeviceCommunicator::arrived(int peer, Array* received) {
  std::unique_ptr<Array> owned(received);
  XBT_VERB("%s: device %d received %lld bytes from device %d", collective_.c_str(), ctx_.device(),
           static_cast<long long>(owned->nbytes()), device_of(peer));
  return std::move(*owned);
}

Array DeviceCommunicator::scratch(const Array& piece) const {
  return ctx_.place(piece, MemoryTag::collective_scratch, collective_);
}

void DeviceCommunicator::send(int peer, const Array& chunk) {
  settle();
  pending_sends_->push_back({post_send(peer, chunk), chunk});
  pace(static_cast<Bytes>(chunk.nbytes()));
}

void DeviceCommunicator::send_and_wait(int peer, const Array& chunk) {
  settle();
  auto transfer = post_send(peer, chunk);
  pace(static_cast<Bytes>(chunk.nbytes()));
  transfer->wait();
}

Array DeviceCommunicator::recv(int peer) {
  settle();
  Array* received = nullptr;
  post_recv(peer, &received)->wait();
  return scratch(arrived(peer, received));
}

Array DeviceCommunicator::exchange(int to, const Array& chunk, int from) {
  settle();
  Array* received = nullptr;
  auto incoming = post_recv(from, &received);
  auto outgoing = post_send(to, chunk);
  pace(static_cast<Bytes>(chunk.nbytes()));
  incoming->wait();
  outgoing->wait();
  return arrived(from, received);
}

Array DeviceCommunicator::sendrecv(int to, const Array& chunk, int from) {
  return scratch(exchange(to, chunk, from));
}

Array DeviceCommunicator::sendrecv_shaped(int to, const Array& chunk, int from, const Array& expected) {
  return scratch(sendrecv_staged(to, chunk, from, expected));  // a buffer of its own, shaped alike
}

Array DeviceCommunicator::sendrecv_staged(int to, const Array& chunk, int from, const Array& expected) {
  if (!chunk.is_abstract() || !expected.is_abstract()) return exchange(to, chunk, from);
  exchange_sizes(to, static_cast<Bytes>(chunk.nbytes()), from);
  return expected;
}

Array DeviceCommunicator::hold_scratch(const Array& like) {
  return ctx_.place(Array::abstract(like.shape(), like.dtype()), MemoryTag::collective_scratch, collective_);
}

void DeviceCommunicator::book_phase(int, int, Bytes, int, Seconds) {
  throw std::logic_error("a phase booked on the per-message backend (Communicator::books_phases is false)");
}

void DeviceCommunicator::book_in_parallel(const std::shared_ptr<const ChannelRings>&, const ChannelProtocol&,
                                          const std::function<void(Communicator&, int)>&) {
  throw std::logic_error("channels booked on the per-message backend (Communicator::books_phases is false)");
}

Array DeviceCommunicator::booked_values(const Array& flat, ReduceOp op, ReductionValues values,
                                        const std::function<void()>& book) {
  if (flat.is_abstract()) {
    book();
    return Array::abstract(flat.shape(), flat.dtype());
  }
  auto shared = ctx_.call().shared_reductions.join(ctx_.rank(), ctx_.track(), group(), values);
  shared->contribute(rank(), flat, op);
  book();
  finish();  // the booked run first: then waiting for the values takes no simulated time if all arrived
  return shared->result();
}

std::pair<Seconds, Seconds> DeviceCommunicator::slowest_hop(int to_device, int from_device) const {
  auto& channels = ctx_.runtime().channels();
  Seconds latency = std::max(channels.message_latency(ctx_.device(), to_device),
                             channels.message_latency(from_device, ctx_.device()));
  Seconds overhead = std::max(step_overhead(collectives::wrap(rank() + 1, size())),
                              step_overhead(collectives::wrap(rank() - 1, size())));
  const int node_size = dimensions_.size() >= 2 ? dimensions_.front() : size();
  if (channel_ring_ && node_size < size()) {
    const int exit = (rank() / node_size + 1) * node_size - 1;
    latency = std::max(
        latency, channels.message_latency(device_of(exit), device_of(collectives::wrap(exit + 1, size()))));
    overhead = std::max(overhead, protocol_.step_overhead_across);
  }
  return {latency, overhead};
}

namespace {

kernels::KernelResult reduce_kernel(const Array& a, const Array& b, ReduceOp op) {
  return op == ReduceOp::sum   ? kernels::add(a, b)
         : op == ReduceOp::max ? kernels::maximum(a, b)
                               : kernels::minimum(a, b);
}

// Inside one collective kernel: the roofline without a launch of its own.
Seconds in_kernel_time(const DeviceSpec& spec, const kernels::KernelResult& result) {
  return std::max(
      spec.op_time(result.cost.flops, result.cost.bytes, result.value.dtype()) - spec.launch_overhead, 0.0);
}

}  // namespace

Seconds DeviceCommunicator::reduction_time(const Array& piece, ReduceOp op) const {
  return in_collective_time(reduce_kernel(piece, piece, op));
}

Seconds DeviceCommunicator::in_collective_time(const kernels::KernelResult& result) const {
  return protocol_.reduces_in_flight ? 0 : in_kernel_time(ctx_.spec(), result);
}

Array DeviceCommunicator::combine(const Array& a, const Array& b, ReduceOp op) {
  kernels::KernelResult result = reduce_kernel(a, b, op);
  Array placed = scratch(result.value);  // allocated before the reduction writes it
  take_reduction_time(result);
  return placed;
}

Array DeviceCommunicator::combine_staged(const Array& a, const Array& b, ReduceOp op) {
  kernels::KernelResult result = reduce_kernel(a, b, op);
  take_reduction_time(result);
  return std::move(result.value);
}

void DeviceCommunicator::take_reduction_time(const kernels::KernelResult& result) {
  const Seconds time = in_collective_time(result);
  XBT_VERB("%s: device %d reduces %lld element(s) in %g s", collective_.c_str(), ctx_.device(),
           static_cast<long long>(result.value.size()), time);
  ctx_.execute(time);
}

void DeviceCommunicator::finish() {
  settle();
  for (auto& send : *pending_sends_) send.transfer->wait();
  pending_sends_->clear();
}

}  // namespace spmdsim::detail
