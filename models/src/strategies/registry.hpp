// The strategy behind each Strategy value (registry.cpp lists them).
#pragma once

#include "spmdsim/models/data_parallel.hpp"
#include "training_strategy.hpp"

namespace spmdsim::models {

const TrainingStrategy& training_strategy(Strategy strategy);

}  // namespace spmdsim::models
