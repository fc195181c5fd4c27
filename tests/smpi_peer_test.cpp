// The SMPI peer check: one collective, one algorithm, one platform file, one message size, simulated twice
// -- by SMPI (smpirun running tests/smpi/collective_timing.c) and by spmdsim -- and the two times agree
// within 2%.
//
// Both read the XML that write_switch_cluster_xml writes for the free-compute test cluster (device links
// 100 GB/s and 1 us each way, so alpha = 2 us between devices). SMPI runs under the settings of
// kSmpiSettings below, each there to take out an overhead or model term that spmdsim does not have, so the
// two simulate the same thing: the textbook alpha-beta network with free local work. docs/platforms.md
// shows the command, the settings and the times measured.
//
// What remains is below a nanosecond per message: SMPI adds a 16-byte envelope to every message
// (src/smpi/mpi/smpi_request.cpp, "MPI enveloppe size"), 0.16 ns at 100 GB/s on each message of the
// critical path, and its ranks enter the call within half a nanosecond of the agreed start (SMPI sleeps
// to the nanosecond). Measured: SMPI - spmdsim = 0.5 to 2.7 ns, at most 1.4e-4 of the time; spmdsim itself
// equals the closed forms.
//
// Each test runs smpirun as a child process and one Simulation in this process (gtest_discover_tests gives
// every test its own process). An spmdsim algorithm that is not registered (yet) skips with a message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>

#include "scratch_dir.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/xml_platform.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

constexpr double kTolerance = 0.02;

// The SMPI settings that make its point-to-point transfers those of spmdsim's pinned alpha-beta model
// (SimGrid 3.32, docs/source/Configuring_SimGrid.rst and src/smpi at tag v3.32).
struct SmpiSetting {
  std::string_view setting;
  std::string_view why;
};
constexpr SmpiSetting kSmpiSettings[] = {
    // The network model, as alpha_beta_config() pins it for spmdsim.
    {"network/model:CM02", "smpirun's default is SMPI: LV08 with piecewise factors fitted to real MPI"},
    {"network/crosstraffic:0", "no 5% reverse flow on every transfer"},
    {"network/TCP-gamma:0", "no TCP window cap on a flow's rate"},
    {"network/optim:Full", "the full max-min solve: the lazy one mishandles a window cap of 0"},
    // The factors of network/model:SMPI: unused under CM02, pinned to 1 so that the comparison stays fair if
    // the model line above is changed.
    {"smpi/bw-factor:0:1", "SMPI model: bandwidth x 0.34..1.09 by message size"},
    {"smpi/lat-factor:0:1", "SMPI model: latency x 1.6..11.6 by message size"},
    // Per-message CPU time of the sender and the receiver (LogP's o): none in spmdsim. 0 by default; pinned.
    {"smpi/os:0:0:0", "MPI_Send overhead: startup and per byte"},
    {"smpi/ois:0:0:0", "MPI_Isend overhead"},
    {"smpi/or:0:0:0", "MPI_Recv overhead"},
    // When a transfer starts and when a send completes: spmdsim's transfer starts when the receive matches
    // and its send completes with the transfer (a rendezvous), whatever the size.
    {"smpi/async-small-thresh:0",
     "smaller messages would go to a waiting mailbox and start before the receive is posted (0: default)"},
    {"smpi/send-is-detached-thresh:0",
     "smaller sends (64 KiB by default) would return at once, before the transfer ends; 0: all rendezvous"},
    // Local work: spmdsim's devices compute for free in this comparison.
    {"smpi/simulate-computation:0",
     "SMPI would inject the real CPU time the program spends between MPI calls as simulated time"},
    {"smpi/host-speed:1Gf", "scales that injected time; moot with it off, set to silence SMPI's warning"},
    {"smpi/wtime:0", "MPI_Wtime would advance the clock by 10 ns per call"},
    // Speed only.
    {"smpi/privatization:no", "the program has no globals: no copy of the binary per rank"},
    {"--log=xbt_cfg.thres:warning", "no echo of every setting"},
};

std::string argument(const SmpiSetting& s) {
  return s.setting.starts_with("--") ? std::string(s.setting) : "--cfg=" + std::string(s.setting);
}

// The SMPI algorithm that sends the same messages in the same order as the spmdsim one (for power-of-two
// p; tests/smpi/collective_timing.c documents the MPI side).
struct AlgorithmPair {
  CollectiveKind kind;
  std::string_view spmdsim;
  std::string_view smpi;
};
constexpr AlgorithmPair kAlgorithmPairs[] = {
    // Ring reduce-scatter then ring all-gather, neighbour to neighbour.
    {CollectiveKind::all_reduce, "ring", "lr"},
    // lg p exchanges of the whole vector with rank xor 2^k.
    {CollectiveKind::all_reduce, "recursive_doubling", "rdb"},
    // Recursive-halving reduce-scatter then recursive-doubling all-gather.
    {CollectiveKind::all_reduce, "rabenseifner", "rab_rdb"},
    // SMPI's allgather "ring" sends to rank+i at step i; its neighbour ring is NTSLR.
    {CollectiveKind::all_gather, "ring", "NTSLR"},
    {CollectiveKind::all_gather, "recursive_doubling", "rdb"},
    // Step k: pieces to rank - 2^k, from rank + 2^k; the final rotation is a local copy in both.
    {CollectiveKind::all_gather, "bruck", "bruck"},
    // SMPI's neighbour ring for reduce-scatter is Open MPI's.
    {CollectiveKind::reduce_scatter, "ring", "ompi_ring"},
    // Highest bit first; the lower rank keeps the lower half.
    {CollectiveKind::reduce_scatter, "recursive_halving", "ompi_basic_recursivehalving"},
    // Step s: block r+s to rank r+s, block r from rank r-s.
    {CollectiveKind::reduce_scatter, "pairwise", "mpich_pair"},
};

// The SMPI collective option and the program's name for a kind.
std::string_view smpi_collective(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      return "allreduce";
    case CollectiveKind::all_gather:
      return "allgather";
    case CollectiveKind::reduce_scatter:
      return "reduce_scatter";
    default:
      throw std::logic_error("no SMPI peer check for this collective");
  }
}

struct PeerCase {
  AlgorithmPair algorithms;
  int p;
  std::int64_t bytes;  // n of the cost model: the all-reduce vector, the gathered total, the scattered input
};

// How gtest shows a case (instead of its bytes).
void PrintTo(const PeerCase& c, std::ostream* os) {
  *os << collective_kind_name(c.algorithms.kind) << " " << c.algorithms.spmdsim << " vs SMPI "
      << c.algorithms.smpi << ", p = " << c.p << ", " << c.bytes << " B";
}

std::vector<PeerCase> all_cases() {
  std::vector<PeerCase> cases;
  for (const auto& pair : kAlgorithmPairs)
    for (int p : {4, 8})
      for (std::int64_t bytes : {std::int64_t{64} << 10, std::int64_t{16} << 20})
        cases.push_back({pair, p, bytes});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<PeerCase>& info) {
  const auto& c = info.param;
  const std::string size =
      c.bytes >= (1 << 20) ? fmt::format("{}MiB", c.bytes >> 20) : fmt::format("{}KiB", c.bytes >> 10);
  return fmt::format("{}_{}_p{}_{}", collective_kind_name(c.algorithms.kind), c.algorithms.spmdsim, c.p,
                     size);
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The longest time any rank spent in the collective, as collective_timing prints it.
double smpi_time(const PeerCase& c, const std::filesystem::path& platform,
                 const std::filesystem::path& hostfile, const testing::ScratchDir& dir) {
#ifndef SPMDSIM_SMPIRUN
  (void)c, (void)platform, (void)hostfile, (void)dir;
  return 0;
#else
  std::vector<std::string> command{SPMDSIM_SMPIRUN,   "-platform", platform.string(),  "-hostfile",
                                   hostfile.string(), "-np",       std::to_string(c.p)};
  for (const auto& s : kSmpiSettings) command.push_back(argument(s));
  command.push_back(fmt::format("--cfg=smpi/{}:{}", smpi_collective(c.algorithms.kind), c.algorithms.smpi));
  command.push_back(SPMDSIM_SMPI_PROGRAM);
  command.push_back(std::string(smpi_collective(c.algorithms.kind)));
  command.push_back(std::to_string(c.bytes));
  std::string line;
  for (const auto& word : command) line += shell_quote(word) + " ";
  const auto out = dir.path() / "smpi.out";
  const auto err = dir.path() / "smpi.err";
  line += "> " + shell_quote(out.string()) + " 2> " + shell_quote(err.string());

  const int status = std::system(line.c_str());
  const std::string output = read_file(out);
  std::smatch match;
  static const std::regex seconds(R"(seconds (\S+))");
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      !std::regex_search(output, match, seconds)) {
    ADD_FAILURE() << "smpirun failed (status " << status << "):\n"
                  << line << "\nstdout:\n"
                  << output << "\nstderr:\n"
                  << read_file(err);
    return 0;
  }
  return std::stod(match[1]);
#endif
}

// The longest time any device spent in the collective under spmdsim, on the same platform and hostfile.
double spmdsim_time(const PeerCase& c, const std::filesystem::path& platform,
                    const std::filesystem::path& hostfile, const DeviceSpec& device) {
  SimulationOptions options{alpha_beta_config(), {{c.algorithms.kind, std::string(c.algorithms.spmdsim)}}};
  // A platform written for smpirun marks no host CPU: the host program runs on device 0's host.
  Simulation sim(topologies::xml_platform(
                     platform, {.device = device, .hostfile = hostfile, .host_on_first_device = true}),
                 options);
  const std::int64_t floats = c.bytes / 4;
  const std::int64_t p = c.p;
  // Abstract arrays: the messages have their real sizes, no values are computed.
  Array x;
  const char* name = nullptr;
  DeviceFunction fn;
  switch (c.algorithms.kind) {
    case CollectiveKind::all_reduce:
      x = Array::abstract({p, floats});
      name = "psum";
      fn = [](const Args& a) -> Tree { return psum(a[0].array(), "i"); };
      break;
    case CollectiveKind::all_gather:
      x = Array::abstract({p, floats / p});
      name = "all_gather";
      fn = [](const Args& a) -> Tree { return all_gather(a[0].array(), "i"); };
      break;
    case CollectiveKind::reduce_scatter:
      x = Array::abstract({p, floats});
      name = "psum_scatter";
      fn = [](const Args& a) -> Tree { return psum_scatter(a[0].array(), "i", 0, /*tiled=*/true); };
      break;
    default:
      throw std::logic_error("no SMPI peer check for this collective");
  }
  pmap(fn, {.axis_name = "i"})(sim, {x});
  double longest = 0;
  const auto report = sim.report();  // named: a range-for would not keep a temporary alive
  for (const auto& times : report.calls.back().times)
    longest = std::max(longest, times.communication.at(name));
  return longest;
}

class SmpiPeer : public ::testing::TestWithParam<PeerCase> {};

TEST_P(SmpiPeer, SimulatedTimesAgreeWithinTwoPercent) {
#ifndef SPMDSIM_SMPIRUN
  GTEST_SKIP()
      << "smpicc or smpirun was not found when CMake ran: install libsimgrid-dev (SMPI) and reconfigure "
         "to run the SMPI peer check";
#endif
  const auto& c = GetParam();
  const auto names = algorithm_names(c.algorithms.kind);
  if (std::find(names.begin(), names.end(), c.algorithms.spmdsim) == names.end())
    GTEST_SKIP() << "spmdsim has no " << collective_kind_name(c.algorithms.kind) << " algorithm '"
                 << c.algorithms.spmdsim << "' (registered: " << fmt::format("{}", fmt::join(names, ", "))
                 << "), so there is nothing to compare with SMPI's " << c.algorithms.smpi;

  testing::ScratchDir dir;
  const auto spec = testing::free_compute_cluster(c.p);
  std::ostringstream xml;
  topologies::write_switch_cluster_xml(xml, spec);
  const auto platform = dir.write("platform.xml", xml.str());
  std::string hosts;
  for (int i = 0; i < c.p; ++i) hosts += fmt::format("dev{}\n", i);  // rank i on device i
  const auto hostfile = dir.write("hostfile", hosts);

  const double smpi = smpi_time(c, platform, hostfile, dir);
  const double ours = spmdsim_time(c, platform, hostfile, spec.device);
  const double difference = (ours - smpi) / smpi;
  RecordProperty("spmdsim_seconds", fmt::format("{:.9g}", ours));
  RecordProperty("smpi_seconds", fmt::format("{:.9g}", smpi));
  std::cout << fmt::format(
      "{} {} (SMPI {}) p={} {} B: spmdsim {:.10g} s, SMPI {:.10g} s, SMPI - spmdsim {:.3g} ns "
      "({:+.2e})\n",
      collective_kind_name(c.algorithms.kind), c.algorithms.spmdsim, c.algorithms.smpi, c.p, c.bytes, ours,
      smpi, (smpi - ours) * 1e9, difference);
  EXPECT_GT(smpi, 0.0);
  EXPECT_NEAR(ours, smpi, kTolerance * smpi);
}

INSTANTIATE_TEST_SUITE_P(Collectives, SmpiPeer, ::testing::ValuesIn(all_cases()), case_name);

// An SMPI platform and hostfile as smpirun takes them, no spmdsim property in either: a cluster (private
// links to a backbone) with the ranks placed out of name order.
TEST(SmpiPeerAsIs, AClusterAndAHostfileWithoutSpmdsimProperties) {
#ifndef SPMDSIM_SMPIRUN
  GTEST_SKIP()
      << "smpicc or smpirun was not found when CMake ran: install libsimgrid-dev (SMPI) and reconfigure";
#endif
  const PeerCase c{kAlgorithmPairs[0], 4, std::int64_t{16} << 20};
  testing::ScratchDir dir;
  const auto platform = dir.write("cluster.xml", testing::smpi_cluster_xml());
  const auto hostfile = dir.write("hostfile", "node-2\nnode-0\nnode-3\nnode-1\n");
  const double smpi = smpi_time(c, platform, hostfile, dir);
  const double ours = spmdsim_time(c, platform, hostfile, testing::free_compute_cluster(c.p).device);
  std::cout << fmt::format(
      "ring all_reduce p=4 16 MiB on an SMPI cluster: spmdsim {:.10g} s, SMPI {:.10g} s\n", ours, smpi);
  EXPECT_GT(smpi, 0.0);
  EXPECT_NEAR(ours, smpi, kTolerance * smpi);
}

}  // namespace
}  // namespace spmdsim
