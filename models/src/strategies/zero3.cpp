// zero3, ZeRO stage 3 (P_os+g+p), FSDP's FULL_SHARD: params sharded too. Each wrap unit's params are
// all-gathered (its leaves as one collective, FSDP's flat parameter) just before its forward and again before
// its backward, on the communication stream with the next units' gathers prefetched behind it
// (unit_gatherer.hpp), and freed once the pass is done with them; the gradients are reduce-scattered bucket
// by bucket during the backward (sharded_gradients.hpp); each device updates its own shard and nothing is
// gathered after the update.
#include <memory>
#include <utility>
#include <vector>

#include "sharded_gradients.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/sharding.hpp"

namespace spmdsim::models {
namespace {

class Zero3 final : public ShardedGradients {
 public:
  bool shards_params() const override { return true; }
  PendingTree start_gather(const DeviceStep& step, const std::vector<int>& units,
                           const Tree& params) const override {
    std::vector<Tree> shards;
    for (int unit : units) shards.push_back(params[static_cast<std::size_t>(unit)]);
    return all_gather_start(Tree::list(std::move(shards)), step.axis_name, 0, /*tiled=*/true);
  }
  Tree gathered_unit(const DeviceStep& step, std::size_t unit, Tree gathered) const override {
    return tag_as(unpadded_tree(gathered, step.abstract_params[unit]), tags::parameters);
  }
  double model_state_bytes(double psi, double num_devices, double p, double g, double k) const override {
    return (p + g + k) * psi / num_devices;
  }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_zero3() {
  return std::make_unique<Zero3>();
}

}  // namespace spmdsim::models
