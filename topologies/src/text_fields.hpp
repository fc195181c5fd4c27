// Fields of the text files the platform loader reads (property values, hostfile lines). Private to
// topologies/src.
#pragma once

#include <optional>
#include <string_view>

namespace spmdsim::topologies::detail {

// `text` without the white space around it.
std::string_view trimmed(std::string_view text);

// The whole of `text` (spaces around it allowed) as an int; nullopt for anything else.
std::optional<int> parse_int(std::string_view text);

}  // namespace spmdsim::topologies::detail
