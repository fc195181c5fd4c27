#include "engine/program_record.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "engine/device_context.hpp"

namespace spmdsim::detail {

CollectiveLeaves::CollectiveLeaves(std::vector<Array> leaves) : arrays_(std::move(leaves)) {}

CollectiveLeaves::CollectiveLeaves(const std::vector<Array>& shapes,
                                   std::vector<std::shared_ptr<DeviceAllocation>> buffers)
    : shapes_(&shapes), buffers_(std::move(buffers)) {}

Array CollectiveLeaves::take(std::size_t i) {
  if (shapes_ == nullptr) return std::move(arrays_[i]);
  const Array& shape = (*shapes_)[i];
  return buffers_[i] ? shape.on_device(std::move(buffers_[i])) : shape;
}

void CollectiveLeaves::keep_result(std::size_t i, Array result) {
  if (shapes_ != nullptr) {
    const Array& shape = (*shapes_)[i];
    if (result.is_abstract() && result.allocation() && result.shape() == shape.shape() &&
        result.dtype() == shape.dtype()) {
      buffers_[i] = result.allocation();
      return;
    }
    if (arrays_.empty()) arrays_.resize(size());  // a result the record cannot stand for: kept whole
  }
  arrays_[i] = std::move(result);
}

std::vector<Array> CollectiveLeaves::results() && {
  if (shapes_ == nullptr) return std::move(arrays_);
  std::vector<Array> out;
  out.reserve(size());
  for (std::size_t i = 0; i < size(); ++i)
    out.push_back(buffers_[i] ? (*shapes_)[i].on_device(std::move(buffers_[i])) : std::move(arrays_.at(i)));
  return out;
}

ProgramRecorder::ProgramRecorder()
    : ledger_(std::make_shared<MemoryLedger>("recording", std::numeric_limits<Bytes>::max(),
                                             /*keep_timeline=*/false)) {
  ledger_->observe(this);
}

ProgramRecorder::~ProgramRecorder() {
  ledger_->observe(nullptr);  // arrays of the recording may outlive it and release into its ledger
}

Array ProgramRecorder::bound(const DeviceContext& ctx, const Array& like) {
  binding_ = true;
  Array placed = ctx.place(Array::abstract(like.shape(), like.dtype()), MemoryTag::temporaries, "bound");
  binding_ = false;
  return placed;
}

Array ProgramRecorder::input(const DeviceContext& ctx, const Array& like) {
  Array placed = bound(ctx, like);
  record_.inputs.push_back(placed.allocation()->id());
  return placed;
}

void ProgramRecorder::compute(std::string_view name, Seconds duration) {
  record_.events.emplace_back(ProgramRecord::Compute{std::string(name), duration});
}

ProgramRecord::Arrays ProgramRecorder::arrays(const std::vector<Array>& leaves) const {
  ProgramRecord::Arrays out;
  for (const Array& leaf : leaves) {
    if (!leaf.is_abstract()) throw NotReplayable("an array with values");
    const auto& allocation = leaf.allocation();
    if (allocation && !allocation->belongs_to(*ledger_)) throw NotReplayable("a device buffer from outside");
    out.ids.push_back(allocation ? std::optional(allocation->id()) : std::nullopt);
    out.shapes.push_back(Array::abstract(leaf.shape(), leaf.dtype()));
  }
  return out;
}

std::vector<Array> ProgramRecorder::collective(const DeviceContext& ctx, const std::vector<Array>& operands,
                                               RecordedCollective run) {
  record_.events.emplace_back(ProgramRecord::Collective{std::move(run), arrays(operands)});
  std::vector<Array> results;
  results.reserve(operands.size());
  for (const Array& like : operands) {
    results.push_back(bound(ctx, like));
    record_.events.emplace_back(
        ProgramRecord::BindResult{results.back().allocation()->id(), results.size() - 1});
  }
  return results;
}

void ProgramRecorder::effect(DeviceEffect run) {
  record_.events.emplace_back(ProgramRecord::Effect{std::move(run)});
}

ProgramRecord ProgramRecorder::finish(const Tree& outputs) {
  record_.outputs = arrays(outputs.leaves());
  record_.output_tree = outputs.rebuild(record_.outputs.shapes);
  finished_ = true;
  return std::move(record_);
}

void ProgramRecorder::allocated(std::uint64_t id, Bytes bytes, MemoryTag tag, MemoryLabel label) {
  record_.ids = std::max(record_.ids, static_cast<std::size_t>(id) + 1);
  if (!binding_) record_.events.emplace_back(ProgramRecord::Allocate{id, bytes, tag, label});
}

void ProgramRecorder::released(std::uint64_t id) {
  if (!finished_) record_.events.emplace_back(ProgramRecord::Release{id});
}

void ProgramRecorder::retagged(std::uint64_t id, MemoryTag tag) {
  if (!finished_) record_.events.emplace_back(ProgramRecord::Retag{id, tag});
}

ProgramRecorder* current_recorder() {
  DeviceContext* ctx = current_device();
  return ctx == nullptr ? nullptr : ctx->recorder();
}

namespace {

// A device's buffers by recorded id, and the buffers its last collective gave.
struct Replay {
  DeviceContext& ctx;
  std::vector<std::shared_ptr<DeviceAllocation>> buffers;
  std::vector<std::shared_ptr<DeviceAllocation>> results;

  CollectiveLeaves operands(const ProgramRecord::Arrays& recorded) const {
    std::vector<std::shared_ptr<DeviceAllocation>> leaf_buffers;
    leaf_buffers.reserve(recorded.ids.size());
    for (const auto& id : recorded.ids) leaf_buffers.push_back(id ? buffers[*id] : nullptr);
    return CollectiveLeaves(recorded.shapes, std::move(leaf_buffers));
  }

  void operator()(const ProgramRecord::Allocate& e) { buffers[e.id] = ctx.allocate(e.bytes, e.tag, e.label); }
  // The program's handles on a result are its ids'.
  void operator()(const ProgramRecord::BindResult& e) { buffers[e.id] = std::move(results[e.leaf]); }
  void operator()(const ProgramRecord::Release& e) { buffers[e.id].reset(); }
  void operator()(const ProgramRecord::Retag& e) {
    if (buffers[e.id]) buffers[e.id]->retag(e.tag);
  }
  void operator()(const ProgramRecord::Compute& e) { ctx.compute(e.name, e.duration); }
  // Only the results' buffers are kept: the arrays' handles go at once.
  void operator()(const ProgramRecord::Collective& e) {
    results.clear();
    for (const Array& result : e.run(operands(e.operands))) results.push_back(result.allocation());
  }
  void operator()(const ProgramRecord::Effect& e) { e.run(ctx.index_along(0)); }
};

}  // namespace

std::vector<std::shared_ptr<DeviceAllocation>> replay_program(DeviceContext& ctx, const ProgramRecord& record,
                                                              std::vector<Array> inputs) {
  Replay replay{ctx, std::vector<std::shared_ptr<DeviceAllocation>>(record.ids), {}};
  for (std::size_t i = 0; i < inputs.size(); ++i) replay.buffers[record.inputs[i]] = inputs[i].allocation();
  // The device's handles on its inputs are the ids' now. The vector goes too (`inputs = {}` would keep its
  // storage, an array handle per input leaf on every device for the whole program).
  std::vector<Array>().swap(inputs);
  for (const auto& event : record.events) std::visit(replay, event);
  std::vector<std::shared_ptr<DeviceAllocation>> outputs;
  outputs.reserve(record.outputs.ids.size());
  for (const auto& id : record.outputs.ids) outputs.push_back(id ? replay.buffers[*id] : nullptr);
  return outputs;
}

}  // namespace spmdsim::detail
