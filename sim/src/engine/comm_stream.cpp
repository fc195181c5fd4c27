#include "engine/comm_stream.hpp"

#include <exception>
#include <stdexcept>
#include <utility>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Engine.hpp>

namespace spmdsim::detail {

CommStream::CommStream(DeviceContext& program)
    : program_(program),
      context_(program.runtime(), program.call(), program.rank(), Track::stream),
      work_(simgrid::s4u::Semaphore::create(0)) {}

std::shared_ptr<StreamJob> CommStream::start(std::string name, std::function<Tree()> run) {
  program_.flush_compute();  // the stream starts at the program's time
  if (!actor_)
    actor_ = simgrid::s4u::Actor::create(simgrid::s4u::this_actor::get_name() + ":stream",
                                         simgrid::s4u::this_actor::get_host(), [this] { serve(); });
  auto job = std::make_shared<StreamJob>();
  job->name = std::move(name);
  job->run = std::move(run);
  job->bound_levels = program_.bound_levels();
  queue_.push_back(job);
  started_.push_back(job);
  ++unfinished_;
  work_->release();
  return job;
}

Tree CommStream::wait(StreamJob& job) {
  if (job.collected)
    throw std::logic_error("wait() on a collective that was already waited for (through a copy)");
  program_.flush_compute();
  const Seconds start = simgrid::s4u::Engine::get_clock();
  job.done->acquire();
  const Seconds end = simgrid::s4u::Engine::get_clock();
  job.collected = true;
  program_.times().communication[job.name] += end - start;
  program_.times().stream_waits += end - start;
  if (end > start) program_.record(SpanKind::communication, job.name + " wait", start, end);
  return *std::exchange(job.result, std::nullopt);
}

void CommStream::finish() {
  if (!actor_) return;
  for (const auto& job : started_)
    if (!job->collected) wait(*job);  // the result is dropped
  closing_ = true;
  work_->release();
  actor_->join();
}

void CommStream::serve() {
  bind_current_device(&context_);
  while (true) {
    work_->acquire();
    if (queue_.empty() && closing_) return;
    const std::shared_ptr<StreamJob> job = queue_.front();
    queue_.pop_front();
    context_.bind_levels(job->bound_levels);
    try {
      job->result = job->run();
      job->run = nullptr;  // releases the input's buffer
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // being killed after another actor failed: let SimGrid unwind this one
    } catch (...) {
      program_.runtime().fail(std::current_exception());  // kills the program too, which may be waiting
      return;
    }
    --unfinished_;
    job->done->release();
  }
}

}  // namespace spmdsim::detail
