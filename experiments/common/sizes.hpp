// Message sizes as nccl-tests reads and prints them: "64K" in, "64 KiB" out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spmdsim::cli {

using ByteCount = std::uint64_t;

// "64", "64K", "8M", "8G" (powers of 1024, either case), as nccl-tests reads -b and -e. Throws UsageError
// naming `option` for any other text and for a size above 1 PiB.
ByteCount parse_size(const std::string& text, std::string_view option);

// 1024 -> "1 KiB", 1536 -> "1536 B": exact, as sizes are given.
std::string size_text(ByteCount bytes);

}  // namespace spmdsim::cli
