// Simulation::device_put_sharded / device_put_replicated: the host's asynchronous copies to the devices. The
// shards are bound to device buffers at once (the memory is taken when the copy is enqueued, as an allocator
// reserves it) and their transfers queued on the devices' host copy queues (host_copies.hpp); nothing runs
// until the next call.
#include <utility>

#include <fmt/format.h>

#include "api/device_dtype.hpp"
#include "api/kernels/kernels.hpp"
#include "engine/runtime.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/residency.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim {
namespace {

void check_devices(const detail::Runtime& runtime, const std::vector<int>& devices, std::string_view what) {
  if (devices.empty()) throw ValueError(fmt::format("{}: no devices given", what));
  runtime.check_devices(devices, what);
}

// Binds each device's part of every leaf to a buffer of that device, queues each device's copy and returns
// the leaves as resident arrays. `split`: each device gets entry i of the leading axis; otherwise all of the
// leaf.
Tree put(detail::Runtime& runtime, const Tree& given, const std::vector<int>& devices, bool split) {
  const Tree tree =
      given.map([&](const Array& leaf) { return detail::device_dtype(leaf, runtime.enable_x64()); });
  const auto leaves = tree.leaves();
  const MemoryTag tag = split ? MemoryTag::input_shards : MemoryTag::replicated_args;
  std::vector<std::vector<Array>> shards(leaves.size());       // [leaf][rank]
  std::vector<std::vector<Bytes>> leaf_bytes(devices.size());  // [rank][leaf]
  for (std::size_t i = 0; i < leaves.size(); ++i)
    for (std::size_t rank = 0; rank < devices.size(); ++rank) {
      const int device = devices[rank];
      const Array part =
          split ? kernels::take(leaves[i], 0, static_cast<std::int64_t>(rank)).value : leaves[i];
      const auto bytes = static_cast<Bytes>(part.nbytes());
      shards[i].push_back(part.on_device(
          std::make_shared<DeviceAllocation>(runtime.ledger(device), device, bytes, tag, "device_put")));
      leaf_bytes[rank].push_back(bytes);
    }
  std::vector<std::shared_ptr<const detail::HostCopy>> arrivals;
  for (std::size_t rank = 0; rank < devices.size(); ++rank)
    arrivals.push_back(runtime.host_copies().enqueue(devices[rank], std::move(leaf_bytes[rank])));
  std::vector<Array> resident;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    auto residency = std::make_shared<Residency>();
    residency->devices = devices;
    residency->axis = split ? Axis(0) : Axis();
    residency->shards = DeviceShards(std::move(shards[i]));
    residency->arrivals = arrivals;
    resident.push_back(leaves[i].with_residency(std::move(residency)));
  }
  return tree.rebuild(resident);
}

}  // namespace

Tree Simulation::device_put_sharded(const Tree& tree, std::optional<std::vector<int>> devices) {
  constexpr std::string_view what = "device_put_sharded";
  const auto leaves = tree.leaves();
  if (leaves.empty())
    throw ValueError(fmt::format("{}: the tree {} has no array to put", what, tree.treedef()));
  std::int64_t size = -1;
  for (const Array& leaf : leaves) {
    if (leaf.ndim() < 1)
      throw ValueError(fmt::format("{}: an array of shape {} has no leading axis to split over the devices",
                                   what, shape_str(leaf.shape())));
    if (size >= 0 && leaf.shape()[0] != size)
      throw ValueError(
          fmt::format("{}: leading axes of different sizes ({} and {}); every leaf needs one entry per "
                      "device",
                      what, size, leaf.shape()[0]));
    size = leaf.shape()[0];
  }
  auto& runtime = *runtime_;
  if (!devices) {
    if (size > runtime.num_devices())
      throw ValueError(fmt::format("{}: a leading axis of {} needs {} devices, the platform has {}", what,
                                   size, size, runtime.num_devices()));
    devices.emplace();
    for (int d = 0; d < size; ++d) devices->push_back(d);
  }
  check_devices(runtime, *devices, what);
  if (static_cast<std::int64_t>(devices->size()) != size)
    throw ValueError(fmt::format("{}: a leading axis of {} entries for {} devices; they must be equal", what,
                                 size, devices->size()));
  return put(runtime, tree, *devices, /*split=*/true);
}

Tree Simulation::device_put_replicated(const Tree& tree, const std::vector<int>& devices) {
  constexpr std::string_view what = "device_put_replicated";
  if (tree.leaves().empty())
    throw ValueError(fmt::format("{}: the tree {} has no array to put", what, tree.treedef()));
  check_devices(*runtime_, devices, what);
  return put(*runtime_, tree, devices, /*split=*/false);
}

}  // namespace spmdsim
