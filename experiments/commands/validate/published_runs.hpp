// The published end-to-end step times `spmdsim validate` puts beside spmdsim's: data-parallel training runs
// whose model shape, batch, sequence length, precision, strategy and GPU count are all stated, each with the
// `spmdsim train` arguments that run it as it was run (docs/training.md, "Validation"). No constant of
// spmdsim comes from them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spmdsim::cli::validate {

struct PublishedRun {
  std::string name;
  double published_ms = 0;  // per optimizer step
  bool derived = false;     // a published tokens/s converted at the published tokens per step
  std::string source;
  std::string args;  // `spmdsim train` arguments after kCommonTrainArgs
};

// What every row's `spmdsim train` command starts with.
inline constexpr std::string_view kCommonTrainArgs = "--precision mixed_bf16 --optimizer adam --steps 1";

// The validation table of docs/training.md: FlashAttention's, llm.c's, nanoGPT's and MosaicML's MPT runs.
const std::vector<PublishedRun>& validation_runs();
// Every 8-GPU A100 80GB row of llm-foundry's throughput table, 512 to 65,536 tokens.
const std::vector<PublishedRun>& llm_foundry_runs();

}  // namespace spmdsim::cli::validate
