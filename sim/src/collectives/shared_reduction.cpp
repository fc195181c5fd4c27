#include "collectives/shared_reduction.hpp"

#include <mutex>

namespace spmdsim::detail {

SharedReduction::SharedReduction(int members, ReductionValues values)
    : members_(members),
      missing_(members),
      values_(values),
      mutex_(simgrid::s4u::Mutex::create()),
      computed_(simgrid::s4u::ConditionVariable::create()) {}

void SharedReduction::contribute(int rank, const Array& flat, ReduceOp op) {
  const std::unique_lock lock(*mutex_);
  // Abstract inputs have no values to keep: a group of thousands then allocates nothing per member.
  if (!flat.is_abstract()) {
    if (inputs_.empty()) inputs_.assign(static_cast<std::size_t>(members_), Array::abstract({}));
    inputs_[static_cast<std::size_t>(rank)] = flat.on_device(nullptr);
  }
  if (--missing_ > 0) return;
  result_ = flat.is_abstract() ? Array::abstract(flat.shape(), flat.dtype()) : values_(inputs_, op);
  inputs_.clear();  // the inputs' values are no longer needed here
  computed_->notify_all();
}

Array SharedReduction::result() {
  std::unique_lock lock(*mutex_);
  while (!result_) computed_->wait(lock);
  return *result_;
}

std::shared_ptr<SharedReduction> SharedReductions::join(int rank, Track track, const std::vector<int>& group,
                                                        ReductionValues values) {
  const int call = calls_so_far_[{rank, track}]++;
  const auto key = std::make_tuple(track, call, group.front());
  auto slot = open_.find(key);
  if (slot == open_.end())
    slot = open_.emplace(key, Open{std::make_shared<SharedReduction>(static_cast<int>(group.size()), values)})
               .first;
  auto reduction = slot->second.reduction;
  if (++slot->second.joined == group.size()) open_.erase(slot);
  return reduction;
}

}  // namespace spmdsim::detail
