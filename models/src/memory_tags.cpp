#include "spmdsim/models/memory_tags.hpp"

namespace spmdsim::models::tags {

const std::array<MemoryTag, 5>& registered_model_tags() {
  // A braced list is evaluated in order: the tags are registered in the order the reports show them.
  static const std::array<MemoryTag, 5> tags = {
      register_memory_tag("parameters"), register_memory_tag("optimizer_state"),
      register_memory_tag("gradients"), register_memory_tag("activations"),
      register_memory_tag("communication_buckets")};
  return tags;
}

}  // namespace spmdsim::models::tags
