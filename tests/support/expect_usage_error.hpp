// A check the command-line tests share: a call refused with exactly the message a user reads.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/command_line.hpp"

namespace spmdsim::testing {

// `run` throws a UsageError whose message is `message`.
template <class Run>
void expect_usage_error(Run run, const std::string& message) {
  try {
    run();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const cli::UsageError& e) {
    EXPECT_EQ(e.what(), message);
  }
}

}  // namespace spmdsim::testing
