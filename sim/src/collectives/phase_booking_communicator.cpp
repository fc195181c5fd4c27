#include "collectives/phase_booking_communicator.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include <xbt/log.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "api/kernels/kernels.hpp"
#include "collectives/simulated_waits.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_coll_comm);

namespace spmdsim::detail {
std::unique_ptr<DeviceCommunicator> PhaseBookingCommunicator::another(
    AxisGroup group, std::vector<int> dimensions, std::vector<std::string> dimension_algorithms,
    int channels) const {
  return std::make_unique<PhaseBookingCommunicator>(context(), std::move(group), collective(),
                                                    pipeline_chunks(), std::move(dimensions),
                                                    std::move(dimension_algorithms), channels, protocol());
}

std::unique_ptr<Communicator> PhaseBookingCommunicator::subgroup(std::vector<int> members) {
  auto sub = DeviceCommunicator::subgroup(std::move(members));
  static_cast<PhaseBookingCommunicator&>(*sub).phase_ = phase_;  // another() made it of this backend
  return sub;
}

void PhaseBookingCommunicator::book_in_parallel(const std::shared_ptr<const ChannelRings>& rings,
                                                const ChannelProtocol& protocol,
                                                const std::function<void(Communicator&, int)>& body) {
  settle();
  wait_for(protocol.start_latency);
  std::vector<LanePhase> phases;
  std::vector<Array> scratch;  // released once every channel's phase has been simulated
  for (int c = 0; c < static_cast<int>(rings->size()); ++c) {
    auto channel = channel_communicator(rings, c, protocol);
    auto& comm = static_cast<PhaseBookingCommunicator&>(*channel);  // another() made it of this backend
    comm.kept_scratch_ = &scratch;
    body(comm, c);
    if (comm.phase_->messages > 0) phases.push_back({c, *comm.phase_});
  }
  simulate_phases(phases, protocol);
}

Array PhaseBookingCommunicator::sendrecv_staged(int to, const Array& chunk, int from, const Array& expected) {
  if (!books(chunk) || !expected.is_abstract())
    return DeviceCommunicator::sendrecv_staged(to, chunk, from, expected);
  book_phase(to, from, static_cast<Bytes>(chunk.nbytes()), 1, 0);
  return expected;
}

Array PhaseBookingCommunicator::hold_scratch(const Array& like) {
  Array held = DeviceCommunicator::hold_scratch(like);
  if (kept_scratch_ != nullptr) kept_scratch_->push_back(held);
  return held;
}

void PhaseBookingCommunicator::book_phase(int to, int from, Bytes bytes_out, int messages, Seconds reducing) {
  const int to_device = device_of(to);
  const int from_device = device_of(from);
  if (phase_->to != to_device || phase_->from != from_device) settle();
  phase_->to = to_device;
  const Bytes message = messages > 0 ? bytes_out / messages : bytes_out;
  phase_->step_overhead = visible_overhead(step_overhead(to), message);
  std::tie(phase_->latency, phase_->overhead) = slowest_hop(to_device, from_device);
  phase_->overhead = visible_overhead(phase_->overhead, message);
  phase_->from = from_device;
  phase_->bytes_out += bytes_out;
  phase_->messages += messages;
  phase_->reducing += reducing;
  context().times().bytes_sent += bytes_out;
}

void PhaseBookingCommunicator::take_reduction_time(const kernels::KernelResult& result) {
  if (phase_->messages == 0) return DeviceCommunicator::take_reduction_time(result);
  const Seconds time = in_collective_time(result);
  XBT_VERB("%s: device %d reduces %lld element(s) in %g s (booked)", collective().c_str(), context().device(),
           static_cast<long long>(result.value.size()), time);
  phase_->reducing += time;
}

void PhaseBookingCommunicator::settle() {
  if (phase_->messages == 0) return;
  simulate_phases({{lane(), std::exchange(*phase_, Phase{})}}, channel_protocol());
}

void PhaseBookingCommunicator::simulate_phases(const std::vector<LanePhase>& phases,
                                               const ChannelProtocol& protocol) {
  namespace s4u = simgrid::s4u;
  // Where each phase's run stands: its transfers (receive, send), when its pace ends, when its reductions may
  // start (once both transfers have ended), and whether they have.
  struct Run {
    const Phase& phase;
    s4u::CommPtr receive, send;
    int* received = nullptr;  // the payload is never read: the pieces' shapes were booked on both sides
    Seconds paced_until = 0;
    Seconds transfers_end = 0;
    int transfers_left = 2;
    std::optional<Seconds> reductions_start;
    bool reducing = false;
  };
  std::vector<Run> runs;
  runs.reserve(phases.size());
  for (const LanePhase& lane_phase : phases) {
    const Phase& phase = lane_phase.phase;
    XBT_VERB("%s: device %d runs a booked phase of %d messages, %lld bytes to device %d, from device %d",
             collective().c_str(), context().device(), phase.messages,
             static_cast<long long>(phase.bytes_out), phase.to, phase.from);
    Run& run = runs.emplace_back(Run{.phase = phase});
    run.receive =
        context().channel(phase.from, context().device(), lane_phase.lane)->get_async<int>(&run.received);
  }
  // Each send leaves after its step overhead, the shortest first, and is paced from then on. Message by
  // message a step takes the longer of its pace and its transfer, so a run of equal steps takes the longer
  // of its whole pace and its transfers with every latency: the pace overlaps the latencies waited below.
  // Message by message a paced channel also leaves its links to the others between its messages; booked, its
  // one transfer is capped at the rate that ends it with that pace (tcp_window.hpp keeps such rates).
  const Seconds begin = s4u::Engine::get_clock();
  std::vector<std::size_t> by_overhead(runs.size());
  std::iota(by_overhead.begin(), by_overhead.end(), 0);
  std::stable_sort(by_overhead.begin(), by_overhead.end(), [&](std::size_t a, std::size_t b) {
    return waited(phases[a].phase.step_overhead) < waited(phases[b].phase.step_overhead);
  });
  for (std::size_t i : by_overhead) {
    Run& run = runs[i];
    const Phase& phase = run.phase;
    const Seconds leaves = begin + waited(phase.step_overhead);
    wait_for(leaves - s4u::Engine::get_clock());
    const Seconds pace = protocol.rate > 0 ? waited(phase.bytes_out / protocol.rate) : 0;
    run.paced_until = leaves + std::max(pace - (phase.messages - 1) * phase.latency, 0.0);
    const double wire_bytes = phase.bytes_out * protocol.wire_bytes_per_byte;
    run.send = context()
                   .channel(context().device(), phase.to, phases[i].lane)
                   ->put_init(&unread_payload, static_cast<std::uint64_t>(wire_bytes));
    if (const Seconds moving = pace - phase.messages * phase.latency; moving > 0)
      run.send->set_rate(wire_bytes / moving);
    run.send->start();
  }
  // A run's reductions start once its transfers and pace have ended and each further message has waited for
  // the slowest hop; they run as executions of their own, side by side with the other runs' transfers.
  std::vector<s4u::ExecPtr> reductions;
  const double speed = s4u::this_actor::get_host()->get_speed();
  std::vector<std::pair<s4u::CommPtr, Run*>> pending;
  for (Run& run : runs) {
    pending.emplace_back(run.receive, &run);
    pending.emplace_back(run.send, &run);
  }
  for (;;) {
    std::optional<Seconds> next;  // the earliest reductions not started whose start is known
    for (const Run& run : runs)
      if (!run.reducing && run.reductions_start && (!next || *run.reductions_start < *next))
        next = run.reductions_start;
    if (pending.empty() && !next) break;
    const Seconds now = s4u::Engine::get_clock();
    if (!pending.empty()) {
      std::vector<s4u::CommPtr> waiting;
      for (const auto& [transfer, run] : pending) waiting.push_back(transfer);
      const ssize_t done = s4u::Comm::wait_any_for(waiting, next ? std::max(*next - now, 0.0) : -1.0);
      if (done >= 0) {
        Run& run = *pending[static_cast<std::size_t>(done)].second;
        pending.erase(pending.begin() + done);
        run.transfers_end = std::max(run.transfers_end, s4u::Engine::get_clock());
        if (--run.transfers_left == 0)
          run.reductions_start = std::max(run.transfers_end, run.paced_until) +
                                 (run.phase.messages - 1) * (run.phase.latency + run.phase.overhead);
        continue;
      }
    } else {
      wait_for(*next - now);
    }
    for (Run& run : runs)
      if (!run.reducing && run.reductions_start && *run.reductions_start <= *next) {
        run.reducing = true;
        if (run.phase.reducing > 0)
          reductions.push_back(s4u::this_actor::exec_async(run.phase.reducing * speed));
      }
  }
  for (auto& reduction : reductions) reduction->wait();
}

}  // namespace spmdsim::detail
