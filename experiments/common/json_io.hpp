// What nlohmann::json 3.11.2 cannot write or read by itself: std::optional (null when empty), spmdsim's
// SharedVector (an array), and the types with no default constructor that those results hold (a MemoryTag is
// its index in the tag registry, which parent and child build alike). The results a forked child sends its
// parent (forked_run.hpp) define their to_json / from_json with NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE, which
// needs these for their fields.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "spmdsim/memory.hpp"
#include "spmdsim/shared_vector.hpp"

namespace nlohmann {

template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value)
      j = *value;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null())
      value.reset();
    else
      value = j.get<T>();
  }
};

template <class T>
struct adl_serializer<spmdsim::SharedVector<T>> {
  static void to_json(json& j, const spmdsim::SharedVector<T>& items) {
    j = static_cast<const std::vector<T>&>(items);
  }
  static void from_json(const json& j, spmdsim::SharedVector<T>& items) {
    items = {};
    for (const auto& item : j) items.push_back(item.get<T>());
  }
};

template <>
struct adl_serializer<spmdsim::MemoryTag> {
  static void to_json(json& j, spmdsim::MemoryTag tag) { j = tag.index(); }
  static spmdsim::MemoryTag from_json(const json& j) { return spmdsim::MemoryTag(j.get<std::uint8_t>()); }
};

template <>
struct adl_serializer<spmdsim::MemoryEvent> {
  static void to_json(json& j, const spmdsim::MemoryEvent& event) {
    j = {{"time", event.time}, {"in_use", event.in_use}, {"tag", event.tag}, {"delta", event.delta}};
  }
  static spmdsim::MemoryEvent from_json(const json& j) {
    return {.time = j.at("time").get<spmdsim::Seconds>(),
            .in_use = j.at("in_use").get<spmdsim::Bytes>(),
            .tag = j.at("tag").get<spmdsim::MemoryTag>(),
            .delta = j.at("delta").get<spmdsim::Bytes>()};
  }
};

}  // namespace nlohmann
