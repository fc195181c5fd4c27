// libFuzzer target: the parsers of `spmdsim collectives`' sizes (--minbytes, --maxbytes: "64K", "8G") and
// device list (--devices "2,8,64"), on any text. The command is given an unknown --dtype, the option it reads
// right after those: whatever the sizes and devices are, it stops there with a UsageError and runs no
// simulation. Any other way out, or a sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>
#include <boost/program_options/errors.hpp>

#include "collectives_sweep.hpp"
#include "command_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider input(data, size);
  const std::string min_bytes = input.ConsumeRandomLengthString(32);
  const std::string max_bytes = input.ConsumeRandomLengthString(32);
  const std::string devices = input.ConsumeRemainingBytesAsString();
  try {
    spmdsim::cli::run_collectives_sweep("spmdsim", {"--minbytes=" + min_bytes, "--maxbytes=" + max_bytes,
                                                    "--devices=" + devices, "--dtype=none"});
  } catch (const spmdsim::cli::UsageError&) {
    return 0;
  } catch (const boost::program_options::error&) {
    return 0;
  }
  __builtin_trap();  // it returned: it went on past --dtype
}
