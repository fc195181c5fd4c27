#include "engine/failures.hpp"

#include <utility>

#include <xbt/log.h>
#include <simgrid/s4u/Actor.hpp>

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_engine);

namespace spmdsim::detail {

void Failures::fail(std::exception_ptr error) {
  XBT_VERB("an actor failed%s; stopping the others", first_ ? " again" : "");
  if (!first_) first_ = std::move(error);
  if (!host_copies_.busy()) {
    simgrid::s4u::Actor::kill_all();
    return;
  }
  const auto self = simgrid::s4u::this_actor::get_pid();
  for (const auto& actor : engine_.get_all_actors())
    if (actor->get_pid() != self && !host_copies_.is_copier(actor->get_pid())) actor->kill();
}

void Failures::rethrow_first() {
  if (first_) std::rethrow_exception(std::exchange(first_, nullptr));
}

}  // namespace spmdsim::detail
