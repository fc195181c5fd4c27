// Asynchronous all-reductions (psum_start / pmean_start and wait()): the values of psum and pmean, the
// stream's messages kept apart from the program's, errors on the stream reaching the host, the closed-form
// time on the stream and the report's exposed and hidden communication, the stream's track in the trace.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spmdsim/async_collectives.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/report_writers.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

// Row d of a [p, n] array holds scale * (d * 10 + j) at column j: every device a different vector.
Array rows_by_device(int p, std::int64_t n, double scale = 1, DType dtype = DType::f32) {
  std::vector<double> values;
  for (int d = 0; d < p; ++d)
    for (std::int64_t j = 0; j < n; ++j) values.push_back(scale * (d * 10.0 + static_cast<double>(j)));
  return Array::from_values({p, n}, values, dtype);
}

// What every device gets from psum over the rows of rows_by_device, stacked p times.
std::vector<double> stacked_sums(int p, std::int64_t n, double scale = 1) {
  std::vector<double> sums;
  for (int d = 0; d < p; ++d)
    for (std::int64_t j = 0; j < n; ++j)
      sums.push_back(scale * (p * static_cast<double>(j) + 10.0 * p * (p - 1) / 2));
  return sums;
}

TEST(AsyncCollectives, StartThenWaitGivesPsumsAndPmeansValues) {
  constexpr int p = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        const Array& x = a[0].array();
        const Array& labels = a[1].array();
        PendingCollective sum = psum_start(x, "i");
        PendingCollective mean = pmean_start(x, "i");
        PendingCollective int_mean = pmean_start(labels, "i");
        return Tree::tuple(
            {sum.wait(), psum(x, "i"), mean.wait(), pmean(x, "i"), int_mean.wait(), pmean(labels, "i")});
      },
      {.axis_name = "i"});
  const Tree out = sim.device_get(f(sim, {rows_by_device(p, 6), rows_by_device(p, 3, 1, DType::i32)}));
  EXPECT_EQ(out[0].leaf().to_doubles(), stacked_sums(p, 6));
  EXPECT_EQ(out[0].leaf().to_doubles(), out[1].leaf().to_doubles());
  EXPECT_EQ(out[2].leaf().to_doubles(), out[3].leaf().to_doubles());
  EXPECT_EQ(out[4].leaf().dtype(), DType::f32);  // as jax.lax.pmean of integers
  EXPECT_EQ(out[4].leaf().to_doubles(), out[5].leaf().to_doubles());
}

// all_gather_start and psum_scatter_start over a tree give what all_gather and psum_scatter give.
TEST(AsyncCollectives, TreeGathersAndScattersGiveTheSynchronousValues) {
  constexpr int p = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        const Tree tree = Tree::tuple({a[0].array(), a[0].array() * 3.0});
        PendingTree gathered = all_gather_start(tree, "i", 0, /*tiled=*/true);
        PendingTree scattered = psum_scatter_start(tree, "i", 0, /*tiled=*/true);
        return Tree::tuple({gathered.wait(), all_gather(tree, "i", 0, true), scattered.wait(),
                            psum_scatter(tree, "i", 0, true)});
      },
      {.axis_name = "i"});
  const Tree out = sim.device_get(f(sim, {rows_by_device(p, 8)}));
  for (std::size_t leaf = 0; leaf < 2; ++leaf) {
    EXPECT_EQ(out[0][leaf].leaf().to_doubles(), out[1][leaf].leaf().to_doubles()) << leaf;
    EXPECT_EQ(out[2][leaf].leaf().to_doubles(), out[3][leaf].leaf().to_doubles()) << leaf;
  }
  EXPECT_EQ(out[0][0].leaf().shape(), (Shape{p, p * 8}));
  EXPECT_EQ(out[2][1].leaf().shape(), (Shape{p, 2}));
}

// Two reductions on the stream and a psum of the program's own, each in the same order on every device
// within its own sequence, but interleaved differently: device 0 runs its psum before it starts the first
// reduction, the others start it and compute before their psum. On shared channels the first messages of one
// would be taken by the other. Each gets its own sum.
TEST(AsyncCollectives, StreamAndProgramMessagesNeverCrossMatch) {
  constexpr int p = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        const Array& x = a[0].array();
        const Array y = x * 10000.0;
        Array program;
        PendingCollective first;
        if (axis_index("i").item(0) == 0) {
          program = psum(y, "i");
          first = psum_start(x, "i");
        } else {
          first = psum_start(x, "i");
          program = psum(y + sum(matmul(Array::zeros({256, 256}), Array::zeros({256, 8})), 0), "i");
        }
        PendingCollective second = psum_start(x * 100.0, "i");
        return Tree::tuple({first.wait(), second.wait(), program});
      },
      {.axis_name = "i"});
  const Tree out = sim.device_get(f(sim, {rows_by_device(p, 8)}));
  EXPECT_EQ(out[0].leaf().to_doubles(), stacked_sums(p, 8));
  EXPECT_EQ(out[1].leaf().to_doubles(), stacked_sums(p, 8, 100));
  EXPECT_EQ(out[2].leaf().to_doubles(), stacked_sums(p, 8, 10000));
}

TEST(AsyncCollectives, AnErrorOnTheStreamStopsTheCallAndReachesTheHost) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(4)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        return psum_start(a[0].array(), "i", {}, {.algorithm = "butterfly"}).wait();
      },
      {.axis_name = "i"});
  try {
    f(sim, {Array::zeros({4, 2})});
    FAIL() << "the stream's error did not reach the host";
  } catch (const ValueError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("unknown all_reduce algorithm 'butterfly'; valid: ring"))
        << e.what();
  }
}

TEST(AsyncCollectives, AnErrorOnAStreamNobodyWaitsForStillSurfaces) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(2)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        psum_start(a[0].array(), "i", {}, {.algorithm = "butterfly"});
        return a[0].array();
      },
      {.axis_name = "i"});
  EXPECT_THROW(f(sim, {Array::zeros({2, 2})}), ValueError);
}

TEST(AsyncCollectives, TheProgramsErrorsAreJaxsAtTheCall) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(2)));
  auto f =
      pmap([](const Args& a) -> Tree { return psum_start(a[0].array(), "j").wait(); }, {.axis_name = "i"});
  try {
    f(sim, {Array::zeros({2, 2})});
    FAIL();
  } catch (const NameError& e) {
    EXPECT_STREQ(e.what(), "unbound axis name: j");
  }
}

TEST(AsyncCollectives, WaitingTwiceIsAnError) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(2)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        PendingCollective sum = psum_start(a[0].array(), "i");
        EXPECT_TRUE(sum.valid());
        sum.wait();
        EXPECT_FALSE(sum.valid());
        return sum.wait();
      },
      {.axis_name = "i"});
  EXPECT_THROW(f(sim, {Array::zeros({2, 2})}), std::logic_error);
}

// Under the alpha-beta model on the free-compute cluster, the stream's ring all-reduce takes its closed form,
// 2(p-1) alpha + 2 (p-1)/p n beta, as psum would; a program that waits at once is blocked for all of it, so
// its exposed communication equals the stream's time and nothing is hidden.
TEST(AsyncCollectives, TheStreamTakesThePsumsClosedFormAndAnImmediateWaitHidesNothing) {
  constexpr int p = 4;
  constexpr std::int64_t n = 1 << 16;  // floats per device
  constexpr double alpha = 2e-6, beta = 1.0 / 100e9;
  Simulation sim(topologies::switch_cluster(testing::free_compute_cluster(p)), {alpha_beta_config(), {}});
  auto f =
      pmap([](const Args& a) -> Tree { return psum_start(a[0].array(), "i").wait(); }, {.axis_name = "i"});
  f(sim, {Array::zeros({p, n})});
  const double closed_form = 2 * (p - 1) * alpha + 2.0 * (p - 1) / p * (4.0 * n) * beta;
  const auto report = sim.report();
  for (const DeviceTimes& times : report.calls.back().times) {
    EXPECT_NEAR(times.stream.at("psum"), closed_form, 1e-12 * closed_form);
    EXPECT_EQ(times.communication.at("psum"), times.stream.at("psum"));
    EXPECT_EQ(times.stream_waits, times.stream_total());
    EXPECT_EQ(times.hidden_communication(), 0);
    EXPECT_EQ(times.all_communication(), times.communication_total());
  }
}

// The stream's spans are on the stream track; the Chrome trace puts them on a second thread of the device.
TEST(AsyncCollectives, TheStreamIsASecondTrackOfTheDevice) {
  constexpr int p = 2;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f =
      pmap([](const Args& a) -> Tree { return psum_start(a[0].array(), "i").wait(); }, {.axis_name = "i"});
  f(sim, {Array::zeros({p, 1024})});
  const auto report = sim.report();
  for (const auto& spans : report.calls.back().spans) {
    int on_stream = 0;
    for (const Span& span : spans)
      if (span.track == Track::stream) {
        ++on_stream;
        EXPECT_EQ(span.name, "psum");
        EXPECT_EQ(span.kind, SpanKind::communication);
      }
    EXPECT_EQ(on_stream, 1);
  }
  std::ostringstream trace;
  write_chrome_trace(trace, report);
  const auto events = nlohmann::json::parse(trace.str())["traceEvents"];
  int stream_events = 0, stream_names = 0, program_names = 0;
  for (const auto& event : events) {
    if (event["ph"] == "X" && event["tid"] == 1) ++stream_events;
    if (event["ph"] != "M" || event["name"] != "thread_name") continue;
    if (event["tid"] == 1 && event["args"]["name"] == "communication stream") ++stream_names;
    if (event["tid"] == 0 && event["args"]["name"] == "program") ++program_names;
  }
  EXPECT_EQ(stream_events, p);
  EXPECT_EQ(stream_names, p);
  EXPECT_EQ(program_names, p);
}

// The JSON report carries the stream's times and each span's track; the table adds the hidden column.
TEST(AsyncCollectives, TheReportsWritersShowTheStream) {
  constexpr int p = 2;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f =
      pmap([](const Args& a) -> Tree { return psum_start(a[0].array(), "i").wait(); }, {.axis_name = "i"});
  f(sim, {Array::zeros({p, 1024})});
  const auto report = sim.report();
  const auto json = report_to_json(report);
  EXPECT_EQ(json["schema_version"], kReportSchemaVersion);  // 2 added the stream
  const DeviceTimes& times = report.calls.back().times[0];
  const auto& written = json["calls"][0]["devices"][0];
  EXPECT_EQ(written["times"]["stream"]["psum"].get<double>(), times.stream.at("psum"));
  EXPECT_EQ(written["times"]["stream_total"].get<double>(), times.stream_total());
  EXPECT_EQ(written["times"]["stream_waits"].get<double>(), times.stream_waits);
  EXPECT_EQ(written["times"]["hidden_communication"].get<double>(), times.hidden_communication());
  int stream_spans = 0;
  for (const auto& span : written["spans"]) stream_spans += span["track"] == "stream";
  EXPECT_EQ(stream_spans, 1);
  std::ostringstream table;
  write_report_table(table, report);
  EXPECT_NE(table.str().find("hidden communication"), std::string::npos);
}

}  // namespace
}  // namespace spmdsim
