// One run of a pmapped function's program, replayed on every device (PmapOptions::trace_once).
//
// Every device of such a call runs the same program: the same ops on the same shapes, the same buffers
// allocated, retagged and released in the same order, the same collectives. The recording runs the function
// once, on a context of its own (DeviceContext::record_with) whose buffers go to a ledger of its own and
// whose compute and collectives are written down instead of simulated. Each device then replays the record
// against its own ledger, books the same compute and runs each collective itself, so that its times and
// memory are those of running the function, without making the function's arrays and pytrees once per device.
//
// A buffer is known by its id in the recording's ledger. A device holds one handle on its buffer for each
// recorded id bound to it and drops it where the recording's buffer was released: a device buffer is then
// released when the last of its ids is, as the program's handles on it would have released it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::detail {

class DeviceContext;

// Met while recording where the program does what differs from one device to another or needs the other
// devices (axis_index, a collective that cannot be recorded, the communication stream, a transfer): the call
// then runs the function on every device.
class NotReplayable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The leaves of a collective over a tree, operands and then results, each an array only while the call that
// takes or gives it runs. A device replaying a program holds the leaves still to come, and the results of
// the calls done, as their buffers, the shapes being the record's: at thousands of devices all waiting
// inside one call, an array handle per leaf and device was a third of the simulator's heap.
class CollectiveLeaves {
 public:
  // Leaves that are arrays already.
  explicit CollectiveLeaves(std::vector<Array> leaves);
  // Leaves of the record's `shapes` (which outlive this), leaf i in buffers[i] (null: in no device buffer).
  CollectiveLeaves(const std::vector<Array>& shapes, std::vector<std::shared_ptr<DeviceAllocation>> buffers);

  std::size_t size() const { return shapes_ == nullptr ? arrays_.size() : shapes_->size(); }
  // Leaf i's shape and dtype, until it is taken.
  const Array& like(std::size_t i) const { return shapes_ == nullptr ? arrays_[i] : (*shapes_)[i]; }
  // Leaf i as an array, once: its handle is the caller's.
  Array take(std::size_t i);
  // Keeps leaf i's result: a replayed leaf's abstract result of the leaf's shape and dtype as its buffer.
  void keep_result(std::size_t i, Array result);
  // The results kept, as arrays in leaf order, once every leaf has one.
  std::vector<Array> results() &&;

 private:
  std::vector<Array> arrays_;  // the leaves as arrays, operands and then results
  const std::vector<Array>* shapes_ = nullptr;
  std::vector<std::shared_ptr<DeviceAllocation>> buffers_;  // operands, then the results kept as buffers
};

// A collective as the program called it, to be called again on each device's operands (the leaves of what
// the program passed), giving the leaves of its result. It owns the operands' handles, and may drop each one
// it is done with.
using RecordedCollective = std::function<std::vector<Array>(CollectiveLeaves operands)>;
using DeviceEffect = std::function<void(int axis_index)>;

// What a program did, in order.
struct ProgramRecord {
  // Arrays handed to a collective or returned: each one's shape (an abstract array) and buffer id (none: an
  // array no device buffer holds).
  struct Arrays {
    std::vector<Array> shapes;
    std::vector<std::optional<std::uint64_t>> ids;
  };
  struct Allocate {
    std::uint64_t id;
    Bytes bytes;
    MemoryTag tag;
    MemoryLabel label;
  };
  // The buffer of leaf `leaf` of the last collective's result.
  struct BindResult {
    std::uint64_t id;
    std::size_t leaf;
  };
  struct Release {
    std::uint64_t id;
  };
  struct Retag {
    std::uint64_t id;
    MemoryTag tag;
  };
  struct Compute {
    std::string name;
    Seconds duration;
  };
  struct Collective {
    RecordedCollective run;
    Arrays operands;
  };
  struct Effect {
    DeviceEffect run;
  };
  using Event = std::variant<Allocate, BindResult, Release, Retag, Compute, Collective, Effect>;

  std::vector<std::uint64_t> inputs;  // the buffer id of each of the call's input leaves
  std::vector<Event> events;
  Tree output_tree;     // the outputs' structure (abstract leaves)
  Arrays outputs;       // its leaves
  std::size_t ids = 0;  // one past the largest buffer id
};

// Writes down what the recording context does. The context places its buffers in ledger(), which tells the
// recorder of each event.
class ProgramRecorder final : public MemoryObserver {
 public:
  ProgramRecorder();
  ~ProgramRecorder() override;
  ProgramRecorder(const ProgramRecorder&) = delete;
  ProgramRecorder& operator=(const ProgramRecorder&) = delete;

  const std::shared_ptr<MemoryLedger>& ledger() const { return ledger_; }
  // The call's next input leaf, shaped as `like`, in a buffer of ctx's that each device's own input takes.
  Array input(const DeviceContext& ctx, const Array& like);
  void compute(std::string_view name, Seconds duration);
  // Records `run` on `operands` and returns what each device's call will give in their place: arrays of the
  // operands' shapes (the recordable collectives keep them) in buffers the devices' results take.
  std::vector<Array> collective(const DeviceContext& ctx, const std::vector<Array>& operands,
                                RecordedCollective run);
  void effect(DeviceEffect run);
  // The record, once the function returned `outputs`; what the recording releases later is its own teardown.
  ProgramRecord finish(const Tree& outputs);

  void allocated(std::uint64_t id, Bytes bytes, MemoryTag tag, MemoryLabel label) override;
  void released(std::uint64_t id) override;
  void retagged(std::uint64_t id, MemoryTag tag) override;

 private:
  ProgramRecord::Arrays arrays(const std::vector<Array>& leaves) const;
  // A buffer of ctx's for `like` that a device's own buffer stands in for on replay (not allocated there).
  Array bound(const DeviceContext& ctx, const Array& like);

  ProgramRecord record_;
  std::shared_ptr<MemoryLedger> ledger_;
  bool binding_ = false;  // the allocation under way is bound()'s
  bool finished_ = false;
};

// The recorder of the calling device's context, null when it runs its own program.
ProgramRecorder* current_recorder();

// Replays `record` on ctx's device, given its handles on the call's inputs (by input leaf); returns the
// buffers of its outputs, record.outputs' leaves (null for a leaf no device buffer holds).
std::vector<std::shared_ptr<DeviceAllocation>> replay_program(DeviceContext& ctx, const ProgramRecord& record,
                                                              std::vector<Array> inputs);

}  // namespace spmdsim::detail
