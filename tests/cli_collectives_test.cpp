// `spmdsim collectives` as a user runs it: the built program (SPMDSIM_CLI) on small sweeps. Its table
// against a golden file, its CSV and JSON against its table, each bad input's exit status and message, and
// the plots when a python3 with matplotlib is there.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/topologies/presets.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

namespace fs = std::filesystem;

using testing::expect_matches_golden;
using testing::expect_plot_files;
using testing::fields_of;
using testing::lines_of;
using testing::normalised;
using testing::plotting_unavailable;
using testing::read_file;
using testing::scratch_dir;
using testing::table_rows;

// `spmdsim collectives <args>`.
testing::CliRun run_collectives(const std::string& args, const fs::path& dir) {
  return testing::run_cli(SPMDSIM_CLI, "collectives", args, dir);
}

// The small sweep of the golden file: two collectives, one algorithm, four devices under the textbook
// alpha-beta model; the largest size runs abstract.
constexpr const char* kGoldenSweep =
    "-b 1K -e 64K -f 4 --devices 4 --collectives all_reduce,all_gather --algorithms ring --abstract-above "
    "16K "
    "--check --cfg=network/model:CM02 --cfg=network/crosstraffic:0";

void expect_sweep_matches_golden(const std::string& args, const std::string& golden) {
  const auto run = run_collectives(args, scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  expect_matches_golden(normalised(run.out), golden);
}

TEST(CollectivesSweep, TableMatchesGoldenFile) {
  expect_sweep_matches_golden(kGoldenSweep, "collectives_ring_4_devices.txt");
}

// A node preset is a whole platform, run under its own network model; --devices 4 runs on its first 4 GPUs.
TEST(CollectivesSweep, NodePresetMatchesGoldenFile) {
  expect_sweep_matches_golden(
      "--preset dgx_h100 --devices 4,8 -b 1K -e 64K -f 4 --collectives all_reduce --abstract-above 16K "
      "--check",
      "collectives_dgx_h100.txt");
}

// NCCL's choices per size on a node preset: nccl_ring's protocol and the channels each size earns, and nccl's
// algorithm (Ring, or NVLS for an all-reduce from a few MiB up).
TEST(CollectivesSweep, NcclChoicesOnANodePresetMatchGoldenFile) {
  expect_sweep_matches_golden(
      "--preset dgx_h100 --algorithms nccl_ring,nccl --collectives all_reduce,all_gather --devices 8 -b 8 -e "
      "4G "
      "-f 8 "
      "--abstract-above 0",
      "collectives_nccl_dgx_h100.txt");
}

// NCCL's choices per size across 2 nodes: an all-reduce runs as Tree (LL, then LL128) and from a few MiB as
// NVLSTree, an all-gather as Ring with its protocols.
TEST(CollectivesSweep, NcclChoicesAcrossNodesMatchGoldenFile) {
  expect_sweep_matches_golden(
      "--preset dgx_h100 --nodes 2 --devices 16 --algorithms nccl --collectives all_reduce,all_gather -b 8 "
      "-e 4G "
      "-f 8 --abstract-above 0 --aggregate",
      "collectives_nccl_dgx_h100_2_nodes.txt");
}

// RCCL's choices per size on 8 MI300X: an all-reduce runs Ring LL below MSCCL's smallest count, MSCCL's
// all-pairs programs (LL on 4 and 8 channels, Simple) up to 16 MiB, then Ring Simple on the mesh's 7 cycles;
// an all-gather runs Ring.
TEST(CollectivesSweep, RcclChoicesOnMi300xMatchGoldenFile) {
  expect_sweep_matches_golden(
      "--preset mi300x_8gpu --devices 8 --algorithms nccl --collectives all_reduce,all_gather -b 256 -e 1G "
      "-f 4 --abstract-above 0",
      "collectives_nccl_mi300x.txt");
}

TEST(CollectivesSweep, AForcedProtocolIsNamedInTheHeaderAndEveryNcclRow) {
  const auto run = run_collectives(
      "--preset dgx_a100 --algorithms nccl_ring,ring --collectives all_reduce --devices 8 -b 1M -e 1M "
      "--protocol Simple",
      scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("# options:  nccl_ring runs NCCL's Simple protocol (--protocol)"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("nccl_ring      Ring  Simple   24"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("     ring         -       -    -"), std::string::npos) << run.out;
}

// The rows of a sweep written with --json.
nlohmann::json sweep_json(const std::string& args) {
  return testing::run_cli_json(SPMDSIM_CLI, "collectives", args);
}

// The time of the row of `p` devices, in seconds.
double time_at(const nlohmann::json& sweep, int p) {
  for (const auto& row : sweep.at("rows"))
    if (row.at("devices") == p) return row.at("time_us").get<double>() * 1e-6;
  ADD_FAILURE() << "no row for p = " << p;
  return 0;
}

// H100s on a topology, with dgx_h100's NVLink port as every cable: a ring all-gather of S bytes takes the
// H100's kernel launch, then p-1 steps of one route's latency plus S/p bytes over one link, no two messages
// of a step sharing a link.
constexpr double kAllGatherBytes = 8192;
constexpr const char* kAllGatherSweep =
    "--preset h100 -b 8K -e 8K --collectives all_gather --algorithms ring";

double ring_all_gather_time(int p, int hops) {
  const auto link = topologies::node_preset("dgx_h100").effective_device_link();
  return topologies::device_preset("h100").launch_overhead.value +
         (p - 1) * (hops * link.latency + kAllGatherBytes / p / link.bandwidth);
}

// The shape for 8 devices is 4x2. At p = 8 the ring's steps 3 -> 4 and 7 -> 0 take two hops (x wraparound,
// then y); p = 4 runs on the first row, a ring of 4 through the x wraparound: one hop.
TEST(CollectivesSweep, TorusRingAllGatherMatchesClosedForm) {
  const auto sweep = sweep_json(fmt::format("{} --topology torus --devices 4,8", kAllGatherSweep));
  ASSERT_FALSE(sweep.empty());
  EXPECT_EQ(sweep.at("topology"), "torus:4x2");
  EXPECT_EQ(sweep.at("simgrid_config").at("network/model"), "CM02");  // dgx_h100's network model
  EXPECT_NEAR(time_at(sweep, 8), ring_all_gather_time(8, 2), 1e-12);
  EXPECT_NEAR(time_at(sweep, 4), ring_all_gather_time(4, 1), 1e-12);
}

// The fat tree for 8 devices has k = 3: leaves of devices 0-2, 3-5, 6-7. The steps 2 -> 3, 5 -> 6 and 7 -> 0
// climb to a spine and back down: four hops, each to a different spine port.
TEST(CollectivesSweep, FatTreeRingAllGatherMatchesClosedForm) {
  const auto sweep = sweep_json(fmt::format("{} --topology fat_tree --devices 8", kAllGatherSweep));
  ASSERT_FALSE(sweep.empty());
  EXPECT_EQ(sweep.at("topology"), "fat_tree:3");
  EXPECT_NEAR(time_at(sweep, 8), ring_all_gather_time(8, 4), 1e-12);
}

// Two dgx_h100 nodes: 16 devices, p = 16 crossing the InfiniBand rails takes longer than one node's p = 8.
TEST(CollectivesSweep, NodesJoinNodePresets) {
  const auto sweep = sweep_json(
      "--preset dgx_h100 --nodes 2 --devices 8,16 -b 1M -e 1M --collectives all_reduce "
      "--abstract-above 1K");
  ASSERT_FALSE(sweep.empty());
  EXPECT_EQ(sweep.at("preset"), "dgx_h100");
  EXPECT_EQ(sweep.at("nodes"), 2);
  EXPECT_TRUE(sweep.at("topology").is_null());
  EXPECT_GT(time_at(sweep, 16), time_at(sweep, 8));
}

// The first 16 devices of a 4-node platform are 2 whole nodes: NCCL's channel rings and the hierarchical
// all-reduce see them as {8, 2}, as on a 2-node platform, not as one flat group of 16.
TEST(CollectivesSweep, AFewWholeNodesOfALargerPlatformRunAsThoseNodes) {
  const std::string args =
      " --devices 16 -b 256M -e 256M --collectives all_reduce --algorithms nccl_ring,hierarchical "
      "--abstract-above 1K";
  const auto two = sweep_json("--preset dgx_h100 --nodes 2" + args);
  const auto four = sweep_json("--preset dgx_h100 --nodes 4" + args);
  ASSERT_FALSE(two.empty());
  ASSERT_FALSE(four.empty());
  const auto& rows = two.at("rows");
  const auto& same = four.at("rows");
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(same.size(), 2u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(same.at(i).at("algorithm"), rows.at(i).at("algorithm"));
    EXPECT_DOUBLE_EQ(same.at(i).at("time_us").get<double>(), rows.at(i).at("time_us").get<double>())
        << rows.at(i).at("algorithm");
  }
}

// An SMPI hostfile picks a platform file's devices, in its order: two hosts of a file without device marks,
// over the link between them. --host-cpu names the host CPU the file does not mark.
TEST(CollectivesSweep, AHostfileListsThePlatformFilesDevices) {
  const auto dir = scratch_dir();
  const auto host = [](const std::string& name) { return "<host id=\"" + name + "\" speed=\"1e12f\"/>\n"; };
  const auto route = [](const std::string& src, const std::string& dst, const std::string& link) {
    return "<route src=\"" + src + "\" dst=\"" + dst + "\"><link_ctn id=\"" + link + "\"/></route>\n";
  };
  std::ofstream(dir / "p.xml") << "<?xml version='1.0'?>\n"
                                  "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                                  "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
                               << host("head") << host("a") << host("b") << host("c")
                               << "<link id=\"pcie\" bandwidth=\"10GBps\" latency=\"1us\"/>\n"
                                  "<link id=\"fast\" bandwidth=\"10GBps\" latency=\"1us\"/>\n"
                                  "<link id=\"slow\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
                               << route("head", "a", "pcie") << route("head", "b", "pcie")
                               << route("head", "c", "pcie") << route("a", "b", "fast")
                               << route("a", "c", "slow") << "</zone>\n</platform>\n";
  std::ofstream(dir / "near") << "a\nb\n";
  std::ofstream(dir / "far") << "c\n\na:1\n";
  const auto sweep = [&](const std::string& hostfile) {
    return sweep_json(
        fmt::format("--platform {} --hostfile {} --host-cpu head --devices 2 -b 8K -e 8K "
                    "--collectives all_gather --algorithms ring --cfg=network/model:CM02 "
                    "--cfg=network/crosstraffic:0",
                    (dir / "p.xml").string(), (dir / hostfile).string()));
  };
  const auto near = sweep("near");
  const auto far = sweep("far");
  ASSERT_FALSE(near.empty());
  ASSERT_FALSE(far.empty());
  EXPECT_EQ(near.at("platform"), "xml: p.xml (hostfile near), 2 x NVIDIA A100 SXM4 80GB");
  EXPECT_EQ(near.at("hostfile"), (dir / "near").string());
  // The A100's kernel launch, then one step of the ring: each device sends half of the 8 KiB over the link
  // between them, the two ways sharing it (a link of a symmetrical route is one shared link).
  const double launch = topologies::device_preset("a100").launch_overhead.value;
  EXPECT_NEAR(time_at(near, 2), launch + 1e-6 + 2 * 4096 / 10e9, 1e-12);
  EXPECT_NEAR(time_at(far, 2), launch + 1e-6 + 2 * 4096 / 1e9, 1e-12);
}

// An SMPI cluster and hostfile as smpirun takes them, without a spmdsim property: the sweep runs the host
// program on device 0's host (its times leave out the host's transfers); train, whose step counts them,
// asks for a host CPU.
TEST(CollectivesSweep, AnSmpiPlatformAndHostfileLoadAsTheyAre) {
  const auto dir = scratch_dir();
  std::ofstream(dir / "cluster.xml") << testing::smpi_cluster_xml();
  std::ofstream(dir / "hosts") << "node-2\nnode-0\nnode-3\nnode-1\n";
  const std::string files =
      fmt::format("--platform {} --hostfile {}", (dir / "cluster.xml").string(), (dir / "hosts").string());
  const auto sweep =
      sweep_json(files + " --devices 4 -b 1K -e 1K --collectives all_reduce --algorithms ring");
  ASSERT_FALSE(sweep.empty());
  EXPECT_EQ(
      sweep.at("platform"),
      "xml: cluster.xml (hostfile hosts; host program on device 0's host node-2), 4 x NVIDIA A100 SXM4 80GB");
  const auto train = testing::run_cli(SPMDSIM_CLI, "train", files + " --devices 4 --batch 4 --steps 1", dir);
  EXPECT_EQ(train.status, 2);
  EXPECT_NE(
      train.err.find("has no host CPU: no host has the property spmdsim.role=host; mark one, or name it "
                     "(--host-cpu)"),
      std::string::npos)
      << train.err;
}

// A --cfg wins over the preset's own setting of the same key; the others stay the preset's.
TEST(CollectivesSweep, CfgOverridesPresetNetworkModel) {
  const auto sweep = sweep_json(
      "--preset dgx_h100 --devices 8 -b 1K -e 1K --collectives all_reduce "
      "--cfg=network/model:LV08");
  ASSERT_FALSE(sweep.empty());
  EXPECT_EQ(sweep.at("simgrid_config").at("network/model"), "LV08");
  EXPECT_EQ(sweep.at("simgrid_config").at("network/crosstraffic"), "false");
  EXPECT_EQ(sweep.at("simgrid_source"), "dgx_h100's network model; --cfg for network/model");
}

// The golden sweep's options from a config file (with a maxbytes the command line overrides) give the golden
// sweep's output.
TEST(CollectivesSweep, ConfigFileGivesTheCommandLinesOutput) {
  const auto dir = scratch_dir();
  const auto config = dir / "sweep.ini";
  std::ofstream(config) << "# the golden sweep\n"
                           "minbytes = 1K\n"
                           "maxbytes = 1M\n"
                           "stepfactor = 4\n"
                           "devices = 4\n"
                           "collectives = all_reduce,all_gather\n"
                           "algorithms = ring\n"
                           "abstract-above = 16K\n"
                           "check = true\n";
  const auto from_file = run_collectives(
      fmt::format("--config '{}' -e 64K --cfg=network/model:CM02 --cfg=network/crosstraffic:0",
                  config.string()),
      dir);
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  const auto from_command_line = run_collectives(kGoldenSweep, dir);
  ASSERT_EQ(from_command_line.status, 0) << from_command_line.err;
  EXPECT_EQ(normalised(from_file.out), normalised(from_command_line.out));
}

TEST(CollectivesSweep, CsvAndJsonParseAndAgreeWithTable) {
  const auto dir = scratch_dir();
  const auto csv_path = dir / "sweep.csv";
  const auto json_path = dir / "sweep.json";
  const auto run = run_collectives(
      fmt::format(
          "-b 64 -e 16K -f 4 --devices 2,4 --collectives psum,all_gather,psum_scatter,all_to_all "
          "--algorithms all --abstract-above 4K --check --cfg=network/model:CM02 --csv '{}' --json '{}'",
          csv_path.string(), json_path.string()),
      dir);
  ASSERT_EQ(run.status, 0) << run.err;

  const auto table = table_rows(run.out);
  const auto csv = lines_of(read_file(csv_path));
  const auto json = nlohmann::json::parse(read_file(json_path));
  EXPECT_EQ(json.at("schema_version"), 1);
  EXPECT_EQ(json.at("simgrid_config").at("network/model"), "CM02");
  const auto& rows = json.at("rows");
  ASSERT_FALSE(table.empty());
  ASSERT_EQ(rows.size(), table.size());
  ASSERT_EQ(csv.size(), table.size() + 1);
  const auto columns = fields_of(csv[0], ',');
  EXPECT_EQ(
      fmt::format("{}", fmt::join(columns, ",")),
      "collective,jax_name,size_bytes,count_elements,type,redop,algorithm,nccl_algorithm,protocol,channels,"
      "devices,time_us,algbw_GB_per_s,busbw_GB_per_s,busbw_factor,max_abs_error,mode");

  int abstract_rows = 0;
  for (std::size_t i = 0; i < table.size(); ++i) {
    SCOPED_TRACE(fmt::format("row {}: {}", i, fmt::join(table[i], " ")));
    const auto& cells = table[i];
    ASSERT_EQ(cells.size(), 14u);
    auto fields = fields_of(csv[i + 1], ',');
    if (fields.size() == columns.size() - 1) fields.emplace_back();  // a trailing empty field
    ASSERT_EQ(fields.size(), columns.size());
    std::map<std::string, std::string> csv_row;
    for (std::size_t c = 0; c < columns.size(); ++c) csv_row[columns[c]] = fields[c];
    const auto& j = rows[i];

    // Table against JSON.
    EXPECT_EQ(cells[0], std::to_string(j.at("size_bytes").get<std::uint64_t>()));
    EXPECT_EQ(cells[1], std::to_string(j.at("count_elements").get<std::int64_t>()));
    EXPECT_EQ(cells[2], j.at("type"));
    EXPECT_EQ(cells[3], j.at("redop"));
    EXPECT_EQ(cells[4], j.at("algorithm"));
    // No NCCL figures on this platform: nccl_ring runs without a protocol, as every other algorithm.
    EXPECT_EQ(cells[5], "-");
    EXPECT_EQ(cells[6], "-");
    EXPECT_EQ(cells[7], "-");
    EXPECT_TRUE(j.at("nccl_algorithm").is_null());
    EXPECT_TRUE(j.at("protocol").is_null());
    EXPECT_TRUE(j.at("channels").is_null());
    EXPECT_EQ(cells[8], std::to_string(j.at("devices").get<int>()));
    EXPECT_EQ(cells[9], fmt::format("{:.2f}", j.at("time_us").get<double>()));
    EXPECT_EQ(cells[10], fmt::format("{:.2f}", j.at("algbw_GB_per_s").get<double>()));
    EXPECT_EQ(cells[11], fmt::format("{:.2f}", j.at("busbw_GB_per_s").get<double>()));
    EXPECT_EQ(cells[13], j.at("mode"));
    if (j.at("mode") == "abstract") {
      ++abstract_rows;
      EXPECT_EQ(cells[12], "n/a");
      EXPECT_TRUE(j.at("max_abs_error").is_null());
    } else {
      const double error = j.at("max_abs_error").get<double>();
      EXPECT_EQ(cells[12], error == 0 ? "0" : fmt::format("{:.2e}", error));
      EXPECT_LT(error, 1e-5);  // float32 sums of a few values in [-1, 1)
    }

    // CSV against JSON: the same values, to the last digit.
    for (const char* key : {"collective", "jax_name", "type", "redop", "algorithm", "mode"})
      EXPECT_EQ(csv_row[key], j.at(key).get<std::string>()) << key;
    for (const char* key : {"size_bytes", "count_elements", "devices"})
      EXPECT_EQ(std::stod(csv_row[key]), j.at(key).get<double>()) << key;
    for (const char* key : {"time_us", "algbw_GB_per_s", "busbw_GB_per_s", "busbw_factor"})
      EXPECT_EQ(std::stod(csv_row[key]), j.at(key).get<double>()) << key;
    EXPECT_EQ(csv_row["max_abs_error"].empty(), j.at("max_abs_error").is_null());

    // nccl-tests' definitions: algbw = S / t, busbw = algbw x factor.
    const double seconds = j.at("time_us").get<double>() * 1e-6;
    const int p = j.at("devices");
    EXPECT_NEAR(j.at("algbw_GB_per_s").get<double>(), j.at("size_bytes").get<double>() / seconds / 1e9, 1e-9);
    const double factor =
        j.at("collective") == "all_reduce" ? 2.0 * (p - 1) / p : static_cast<double>(p - 1) / p;
    EXPECT_DOUBLE_EQ(j.at("busbw_factor").get<double>(), factor);
    EXPECT_NEAR(j.at("busbw_GB_per_s").get<double>(), j.at("algbw_GB_per_s").get<double>() * factor, 1e-9);
  }
  EXPECT_GT(abstract_rows, 0);
}

// One bad command line: its arguments and the message after "spmdsim collectives: ". With `config`, the
// arguments also name a file of that text, and "{config}" in the message stands for its path.
struct BadInput {
  const char* name;
  std::string args;
  std::string message;
  std::string config;
};

std::string algorithm_list(CollectiveKind kind) {
  return fmt::format("{}: {}, auto", collective_kind_name(kind), fmt::join(algorithm_names(kind), ", "));
}

std::vector<BadInput> bad_inputs() {
  return {
      {"UnknownCollective", "--collectives all_reduce,allreduce",
       "unknown collective 'allreduce' in --collectives; valid: all_reduce (psum), all_gather, "
       "reduce_scatter "
       "(psum_scatter), all_to_all"},
      {"UnknownAlgorithm", "--collectives all_reduce,all_to_all --algorithms ring,no_such",
       fmt::format("unknown algorithm 'no_such' in --algorithms; valid: {}; {} (or all, default)",
                   algorithm_list(CollectiveKind::all_reduce), algorithm_list(CollectiveKind::all_to_all))},
      {"AlgorithmOfNoChosenCollective", "--collectives all_reduce,all_to_all --algorithms ring",
       fmt::format(
           "no algorithm in --algorithms ring is registered for all_to_all; valid: {} (or all, default)",
           algorithm_list(CollectiveKind::all_to_all))},
      {"BadSizeSuffix", "-b 1X",
       "bad size '1X' for --minbytes: expected a whole number of bytes with an optional K, M or G suffix "
       "(powers "
       "of 1024), e.g. 64K"},
      {"MinbytesAboveMaxbytes", "-b 1M -e 64K", "--minbytes 1M is larger than --maxbytes 64K"},
      {"DimensionAlgorithmsOnASubset",
       "--topology torus:2x4 --devices 4,8 --dimension-algorithms ring,direct",
       "--dimension-algorithms follow the platform's shape, so --devices must be one count, the whole "
       "platform"},
      {"StepfactorBelowTwo", "-f 1", "--stepfactor must be a whole number from 2 to 999999999 (got '1')"},
      {"UnknownTopology", "--topology tours",
       "unknown --topology 'tours'; valid: switch, ring, full_mesh, torus[:XxY|XxYxZ], mesh[:XxY|XxYxZ], "
       "fat_tree[:K], dragonfly[:GxAxD]"},
      {"TorusShapeSmallerThanDevices", "--topology torus:4x4 --devices 8,32",
       "--devices 32 is more than the 16 devices of --topology torus:4x4"},
      {"TorusShapeOfFourDimensions", "--topology torus:4x4x4x4",
       "--topology torus:4x4x4x4: torus: shape must have 2 or 3 dimensions (got 4: 4x4x4x4)"},
      {"TorusShapeNotNumbers", "--topology torus:4xfour",
       "--topology torus:4xfour: expected XxY or XxYxZ, e.g. 4x4"},
      {"ParametersOfRing", "--topology ring:8", "--topology ring:8: ring takes no parameters"},
      {"UnknownPreset", "--preset h1000",
       fmt::format("unknown --preset 'h1000'; valid: devices {}; nodes {}; TPU slices {}",
                   fmt::join(topologies::preset_names(topologies::PresetKind::device), ", "),
                   fmt::join(topologies::preset_names(topologies::PresetKind::node), ", "),
                   fmt::join(topologies::preset_names(topologies::PresetKind::slice), ", "))},
      {"NodePresetWithTopology", "--preset dgx_h100 --topology ring",
       "--topology cannot be given with --preset dgx_h100: a node preset is a whole platform (--preset h100 "
       "puts "
       "its devices on a --topology)"},
      {"MoreDevicesThanNodePreset", "--preset dgx_h100 --devices 8,16",
       "--devices 16 is more than the 8 devices of --preset dgx_h100 (--nodes N joins N of them)"},
      {"NodesOfDevicePreset", "--preset h100 --nodes 2",
       fmt::format("--nodes joins nodes of a node preset ({}); --preset h100 is a device",
                   fmt::join(topologies::preset_names(topologies::PresetKind::node), ", "))},
      {"UnknownConfigKey", "",
       "{config}: unknown key 'bytes'; valid: minbytes, maxbytes, stepfactor, collectives, algorithms, "
       "devices, "
       "dtype, topology, preset, nodes, platform, hostfile, host-cpu, csv, json, plot, abstract-above, "
       "check, "
       "aggregate, "
       "dimension-algorithms, channels, protocol, shard",
       "devices = 4\nbytes = 1K\n"},
      {"BadConfigValue", "",
       "{config}, key maxbytes: bad size '64KB' for --maxbytes: expected a whole number of bytes with an "
       "optional K, "
       "M or G suffix (powers of 1024), e.g. 64K",
       "maxbytes = 64KB\n"},
      {"MissingConfigFile", "--config /nonexistent/sweep.ini",
       "--config: cannot read '/nonexistent/sweep.ini' (No such file or directory)"},
      {"UnknownDtype", "--dtype bool",
       "unknown --dtype 'bool'; valid: float32, bfloat16, float16, float64, int32"},
      {"BadDeviceCount", "--devices 8,1", "--devices: '1' is not a device count from 2 to 131072"},
      {"UnknownOption", "--bogus", "unrecognised option '--bogus'"},
      {"ZeroChannels", "--channels 0", "--channels must be a whole number from 1 to 64 (got '0')"},
  };
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, ExitsTwoWithMessage) {
  const auto& bad = GetParam();
  const auto dir = scratch_dir();
  auto args = bad.args;
  auto message = bad.message;
  if (!bad.config.empty()) {
    const auto config = dir / "sweep.ini";
    std::ofstream(config) << bad.config;
    args += fmt::format(" --config '{}'", config.string());
    message.replace(message.find("{config}"), std::string_view("{config}").size(), config.string());
  }
  const auto run = run_collectives(args, dir);
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, fmt::format("spmdsim collectives: {}\n(see spmdsim collectives --help)\n", message));
}

INSTANTIATE_TEST_SUITE_P(CollectivesSweep, BadInputTest, ::testing::ValuesIn(bad_inputs()),
                         [](const auto& test) { return std::string(test.param.name); });

TEST(CollectivesSweep, HelpListsOptionsAndExitsZero) {
  const auto run = run_collectives("--help", scratch_dir());
  EXPECT_EQ(run.status, 0);
  for (const char* option :
       {"--minbytes", "--maxbytes", "--stepfactor", "--collectives", "--algorithms", "--devices", "--dtype",
        "--topology", "--preset", "--nodes", "--platform", "--hostfile", "--host-cpu", "--csv", "--json",
        "--plot", "--abstract-above", "--check", "--config"})
    EXPECT_NE(run.out.find(option), std::string::npos) << option;
}

// The plots need a python3 with matplotlib (scripts/bootstrap.sh installs Debian's); without one the sweep
// must refuse --plot before it runs.
TEST(CollectivesSweep, PlotWritesPngAndSvg) {
  const auto dir = scratch_dir();
  const auto prefix = dir / "sweep";
  const auto run = run_collectives(fmt::format("-b 1K -e 1M -f 8 --devices 2,4 --collectives "
                                               "all_reduce,all_to_all --abstract-above 64K --plot '{}'",
                                               prefix.string()),
                                   dir);
  if (plotting_unavailable(run)) GTEST_SKIP() << run.err;
  ASSERT_EQ(run.status, 0) << run.err;
  expect_plot_files(prefix);
}

}  // namespace
}  // namespace spmdsim
