// dp-overlap: DDP's bucket rule, hand-computed for the seeds' MLP; what overlaps and what does not (one
// bucket larger than every gradient together hides nothing; small buckets shorten the step and hide part of
// the communication, no more than the backward compute that ran beside it); only the last micro-batch
// overlaps; the bucket buffers' memory tag; the transformer. The values it trains to, against one device with
// the whole batch, are checked with the other strategies' in strategies_test.cpp (the dp_overlap cases).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/gradient_buckets.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/mlp.hpp"
#include "spmdsim/models/transformer.hpp"
#include "spmdsim/simulation.hpp"
#include "test_cluster.hpp"

namespace spmdsim::models {
namespace {

const Mlp kSeedsMlp({784, 256, 128, 10}, Activation::tanh, Loss::softmax_cross_entropy);

// The seeds' MLP's float32 gradients in flattening order (each layer's 'b' before its 'w'):
// b0 256, w0 784 x 256, b1 128, w1 256 x 128, b2 10, w2 128 x 10 elements, 4 bytes each.
const std::vector<Bytes> kSeedsGradientBytes = {1024, 802816, 512, 131072, 40, 5120};

std::vector<std::vector<std::size_t>> leaves_of(const std::vector<GradientBucket>& buckets) {
  std::vector<std::vector<std::size_t>> out;
  for (const auto& bucket : buckets) out.push_back(bucket.leaves);
  return out;
}

std::vector<Bytes> bytes_of(const std::vector<GradientBucket>& buckets) {
  std::vector<Bytes> out;
  for (const auto& bucket : buckets) out.push_back(bucket.bytes);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The bucket rule

// Last gradient first; a bucket closes once it holds the cap or more. 25 MiB holds all 940,584 bytes.
TEST(GradientBuckets, TheDefaultCapHoldsTheSeedsMlpInOneBucket) {
  const auto buckets = assign_buckets(kSeedsGradientBytes, kDefaultBucketBytes);
  EXPECT_EQ(kDefaultBucketBytes, 25 * 1048576.0);
  EXPECT_EQ(leaves_of(buckets), (std::vector<std::vector<std::size_t>>{{5, 4, 3, 2, 1, 0}}));
  EXPECT_EQ(bytes_of(buckets), std::vector<Bytes>{940584});
}

// Cap 100,000: w2 + b2 + w1 = 5120 + 40 + 131072 = 136,232 closes the first; b1 + w0 = 512 + 802,816 =
// 803,328 the second; b0 (1024) is the rest.
TEST(GradientBuckets, ASmallCapClosesABucketOnceItIsReached) {
  const auto buckets = assign_buckets(kSeedsGradientBytes, 100000);
  EXPECT_EQ(leaves_of(buckets), (std::vector<std::vector<std::size_t>>{{5, 4, 3}, {2, 1}, {0}}));
  EXPECT_EQ(bytes_of(buckets), (std::vector<Bytes>{136232, 803328, 1024}));
  // Exactly the cap closes too: w2 + b2 = 5160.
  EXPECT_EQ(bytes_of(assign_buckets(kSeedsGradientBytes, 5160)),
            (std::vector<Bytes>{5160, 131072, 803328, 1024}));
}

// The step sizes its buckets in the reduce dtype: bfloat16 halves every gradient.
TEST(GradientBuckets, TheStepBucketsTheGradientsInTheReduceDtype) {
  const TrainStep fp32(kSeedsMlp, Optimizer::sgd(0.1), 2,
                       {.strategy = Strategy::dp_overlap, .bucket_bytes = 100000});
  EXPECT_EQ(bytes_of(fp32.buckets()), (std::vector<Bytes>{136232, 803328, 1024}));
  const TrainStep bf16(kSeedsMlp, Optimizer::sgd(0.1), 2,
                       {.strategy = Strategy::dp_overlap,
                        .precision = Precision::mixed_bf16,
                        .reduce_dtype = DType::bf16,
                        .bucket_bytes = 100000});
  // 2560 + 20 + 65536 + 256 + 401408 = 469,780, then b0's 512.
  EXPECT_EQ(bytes_of(bf16.buckets()), (std::vector<Bytes>{469780, 512}));
  const TrainStep dp(kSeedsMlp, Optimizer::sgd(0.1), 2, {.strategy = Strategy::dp});
  EXPECT_TRUE(dp.buckets().empty());
}

TEST(GradientBuckets, TheCapMustBePositive) {
  try {
    TrainStep(kSeedsMlp, Optimizer::sgd(0.1), 2, {.strategy = Strategy::dp_overlap, .bucket_bytes = 0});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "the gradient bucket size must be positive, got 0 bytes");
  }
}

TEST(GradientBuckets, FlatteningAndUnflatteningGiveTheGradientsBack) {
  const Array a = Array::from_values({2, 3}, {1, 2, 3, 4, 5, 6});
  const Array b = Array::from_values({2}, {7, 8});
  const Array flat = flatten_bucket({a, b});
  EXPECT_EQ(flat.shape(), Shape{8});
  EXPECT_EQ(flat.to_doubles(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  const auto back = unflatten_bucket(flat, {a.shape(), b.shape()});
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(array_equal(back[0], a));
  EXPECT_TRUE(array_equal(back[1], b));
}

TEST(GradientBuckets, TheStrategyIsSpelledWithAHyphen) {
  EXPECT_EQ(strategy_name(Strategy::dp_overlap), "dp-overlap");
  EXPECT_EQ(parse_strategy("dp-overlap"), Strategy::dp_overlap);
  try {
    parse_strategy("ddp");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "unknown training strategy 'ddp' (valid: dp, dp-overlap, zero1, zero2, zero3)");
  }
}

// ---------------------------------------------------------------------------------------------------------
// What overlaps: one step of the seeds' MLP on 4 devices, abstract (the same times as with values)

constexpr int kDevices = 4;
constexpr std::int64_t kPerDeviceBatch = 512;

// Device 0's share of the last call, and how much of its program's compute ran while its stream was busy.
struct StepTimes {
  Seconds step = 0;
  DeviceTimes times;
  int stream_spans = 0;
  Seconds compute_beside_stream = 0;
};

Seconds overlap(const Span& a, const Span& b) {
  return std::max(0.0, std::min(a.end, b.end) - std::max(a.start, b.start));
}

StepTimes train_one_step(Simulation& sim, Strategy strategy, Bytes bucket_bytes, int micro_batches = 1) {
  const TrainStep step(kSeedsMlp, Optimizer::sgd(0.1), kDevices,
                       {.strategy = strategy, .micro_batches = micro_batches, .bucket_bytes = bucket_bytes});
  step(sim, step.init(kSeedsMlp.init_abstract()), Array::abstract({kDevices, kPerDeviceBatch, 784}),
       Array::abstract({kDevices, kPerDeviceBatch}, DType::i32));
  const auto report = sim.report();
  const CallReport& call = report.calls.back();
  StepTimes out{.step = call.end - call.start, .times = call.times[0]};
  for (const Span& s : call.spans[0]) {
    if (s.track != Track::stream) continue;
    ++out.stream_spans;
    for (const Span& c : call.spans[0])
      if (c.track == Track::program && c.kind == SpanKind::compute)
        out.compute_beside_stream += overlap(s, c);
  }
  return out;
}

// The bucket is started when the backward ends, and the step waits for it at once.
TEST(DpOverlap, OneBucketLargerThanAllTheGradientsHidesNothing) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const StepTimes t = train_one_step(sim, Strategy::dp_overlap, kDefaultBucketBytes);
  EXPECT_EQ(t.stream_spans, 1);
  EXPECT_GT(t.times.stream_total(), 0);
  EXPECT_EQ(t.times.stream_waits, t.times.stream_total());
  EXPECT_EQ(t.times.hidden_communication(), 0);
}

// Links of 1 GB/s (Ethernet-class) make the all-reduce of the gradients about as long as the backward, so
// that there is communication worth hiding.
PlatformBuilder slow_network_cluster() {
  auto spec = testing::round_numbers_cluster(kDevices);
  spec.device_link.bandwidth = 1e9;
  return topologies::switch_cluster(spec);
}

// Three buckets: the first two reduce while the backward of the layers before them runs. The step is shorter
// than dp's and than one bucket's at the end, the program waits for less than the stream's time, and what it
// did not wait for lies within the compute that ran beside the stream.
TEST(DpOverlap, SmallBucketsShortenTheStepAndHidePartOfTheCommunication) {
  // Each in a process of its own: dp, and dp-overlap with one bucket for all the gradients.
  const auto step_of = [](Strategy strategy) {
    return testing::in_child_process([strategy] {
             Simulation sim(slow_network_cluster());
             return std::vector<double>{train_one_step(sim, strategy, kDefaultBucketBytes).step};
           })
        .at(0);
  };
  const double dp_step = step_of(Strategy::dp);
  const double one_bucket_step = step_of(Strategy::dp_overlap);
  Simulation sim(slow_network_cluster());
  const StepTimes t = train_one_step(sim, Strategy::dp_overlap, 100000);
  EXPECT_EQ(t.stream_spans, 3);
  EXPECT_LT(t.step, dp_step);
  EXPECT_LT(t.step, one_bucket_step);
  EXPECT_LT(t.times.stream_waits, t.times.stream_total());
  EXPECT_GT(t.times.hidden_communication(), 0);
  EXPECT_LE(t.times.hidden_communication(), t.compute_beside_stream * (1 + 1e-12));
  RecordProperty("dp_step_us", std::to_string(dp_step * 1e6));
  RecordProperty("one_bucket_step_us", std::to_string(one_bucket_step * 1e6));
  RecordProperty("dp_overlap_step_us", std::to_string(t.step * 1e6));
  RecordProperty("hidden_us", std::to_string(t.times.hidden_communication() * 1e6));
}

// Under gradient accumulation only the last micro-batch's backward reduces: three buckets, not six.
TEST(DpOverlap, OnlyTheLastMicroBatchOverlaps) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const StepTimes t = train_one_step(sim, Strategy::dp_overlap, 100000, 2);
  EXPECT_EQ(t.stream_spans, 3);
}

// Each bucket is one buffer tagged communication_buckets, as large as its gradients: over the step the tag
// receives the buckets' bytes, 136,232 + 803,328 + 1,024, on every device.
TEST(DpOverlap, BucketBuffersAreTaggedCommunicationBuckets) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  train_one_step(sim, Strategy::dp_overlap, 100000);
  const auto report = sim.report();
  for (const auto& timeline : report.memory_timelines) {
    Bytes allocated = 0;
    for (const MemoryEvent& event : timeline)
      if (event.tag == tags::communication_buckets && event.delta > 0) allocated += event.delta;
    EXPECT_EQ(allocated, 136232 + 803328 + 1024);
  }
}

// The transformer's backward tells its units too (head, blocks, embedding): every bucket is reduced.
TEST(DpOverlap, TrainsTheTransformer) {
  const Transformer transformer({.layers = 2, .hidden = 64, .heads = 8, .seq_len = 32, .vocab = 128});
  constexpr int n = 2;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  const TrainStep step(transformer, Optimizer::adam(1e-3), n,
                       {.strategy = Strategy::dp_overlap, .bucket_bytes = 64 * 1024});
  ASSERT_GT(step.buckets().size(), 2u);
  const Array tokens = Array::abstract({n, 2, transformer.config().seq_len}, DType::i32);
  step(sim, step.init(transformer.init_abstract()), tokens, tokens);
  const auto report = sim.report();
  for (const auto& spans : report.calls.back().spans)
    EXPECT_EQ(
        std::count_if(spans.begin(), spans.end(), [](const Span& s) { return s.track == Track::stream; }),
        static_cast<std::ptrdiff_t>(step.buckets().size()));
}

}  // namespace
}  // namespace spmdsim::models
