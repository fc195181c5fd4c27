// libFuzzer target: the parsers of the commands' sizes (--minbytes, --maxbytes: "64K", "8G") and device
// counts (--devices "2,8,64" or "8"), on any text. Each either returns a value in its documented range or
// throws UsageError; any other way out, or a sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include <fuzzer/FuzzedDataProvider.h>

#include "common/command_line.hpp"
#include "common/device_list.hpp"
#include "common/sizes.hpp"

namespace {

constexpr spmdsim::cli::ByteCount kLargestSize = spmdsim::cli::ByteCount{1} << 50;  // 1 PiB

void check_size(const std::string& text) {
  try {
    if (spmdsim::cli::parse_size(text, "--maxbytes") > kLargestSize) __builtin_trap();
  } catch (const spmdsim::cli::UsageError&) {
  }
}

void check_devices(const std::string& text, int least) {
  try {
    for (const int count : spmdsim::cli::parse_device_list(text, least))
      if (count < least || count > spmdsim::cli::kMaxDevices) __builtin_trap();
  } catch (const spmdsim::cli::UsageError&) {
  }
  try {
    const int count = spmdsim::cli::parse_device_count(text, least);
    if (count < least || count > spmdsim::cli::kMaxDevices) __builtin_trap();
  } catch (const spmdsim::cli::UsageError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider input(data, size);
  check_size(input.ConsumeRandomLengthString(32));
  check_size(input.ConsumeRandomLengthString(32));
  check_devices(input.ConsumeRemainingBytesAsString(), 1);
  return 0;
}
