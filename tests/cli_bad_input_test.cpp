// Every command against the inputs a careless user gives it: output paths that name a directory, a missing
// folder, the same file twice, a device that cannot be written (/dev/full), a plot that fails after the JSON;
// stray arguments, counts out of range, an infinite learning rate. Each case checks the exit status (2 bad
// input, 1 failure at run time, 0 success), the message, that no signal ended the run, that the output folder
// holds exactly what it held plus what the run had to write (no temporary file), that a symlink given as an
// output is still a link and that /dev/null and /dev/full are still devices.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "spmdsim/models/data_parallel.hpp"

namespace spmdsim {
namespace {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::read_file;

struct Case {
  std::string name;
  std::string command;
  std::string args;     // "{out}" is the output folder
  int status;           // the exit status
  std::string message;  // stderr's first line after "spmdsim <command>: " ("...": its start); "" for none
  std::set<std::string> written = {};  // the files the run leaves in the output folder besides the fixture's
  bool fake_python = false;            // SPMDSIM_PYTHON: a python3 whose plot script fails after a png
  long address_space_kib = 0;          // run under `ulimit -v` of this many KiB (0: as the test runs)
};

// gtest prints a failing case by its name.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

std::string in_folder(const std::string& text, const fs::path& out) {
  std::string result = text;
  for (std::size_t at; (at = result.find("{out}")) != std::string::npos;) result.replace(at, 5, out.string());
  for (std::size_t at; (at = result.find("{platforms}")) != std::string::npos;)
    result.replace(at, 11, (out.parent_path() / "platforms").string());
  return result;
}

// Platform files SimGrid aborts on (a duplicated link or route, a missing route), each a variation of `ok`.
void write_platforms(const fs::path& folder) {
  fs::create_directories(folder);
  const auto write = [&](const std::string& name, const std::string& links, const std::string& routes) {
    std::ofstream(folder / name)
        << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
           "<host id=\"cpu\" speed=\"1e9f\"><prop id=\"spmdsim.role\" value=\"host\"/></host>\n"
           "<host id=\"d0\" speed=\"1e12f\"><prop id=\"spmdsim.role\" value=\"device\"/></host>\n"
           "<host id=\"d1\" speed=\"1e12f\"><prop id=\"spmdsim.role\" value=\"device\"/></host>\n"
        << links << routes << "</zone>\n</platform>\n";
  };
  const std::string links =
      "<link id=\"a\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
      "<link id=\"b\" bandwidth=\"1GBps\" latency=\"1us\"/>\n";
  const auto route = [](const std::string& src, const std::string& dst, const std::string& link) {
    return "<route src=\"" + src + "\" dst=\"" + dst + "\"><link_ctn id=\"" + link + "\"/></route>\n";
  };
  const std::string to_devices = route("cpu", "d0", "a") + route("cpu", "d1", "b");
  write("ok.xml", links, to_devices + route("d0", "d1", "a"));
  write("duplicated_link.xml", links + "<link id=\"a\" bandwidth=\"2GBps\" latency=\"1us\"/>\n",
        to_devices + route("d0", "d1", "a"));
  write("duplicated_route.xml", links, to_devices + route("d0", "d1", "a") + route("d1", "d0", "b"));
  write("no_device_route.xml", links, to_devices);
  write("no_host_route.xml", links, route("cpu", "d0", "a") + route("d0", "d1", "a"));
  std::ofstream(folder / "one_host") << "d1\n";
  std::ofstream(folder / "two_on_one") << "d0:2\n";
}

// The output folder's contents, a path relative to it per entry (a symlink not followed).
std::set<std::string> contents(const fs::path& out) {
  std::set<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(out))
    names.insert(entry.path().lexically_relative(out).string());
  return names;
}

constexpr const char* kMlp = "--model mlp --devices 2 --batch 4";
constexpr const char* kSweep = "--devices 2 -b 8 -e 8 --collectives all_reduce";
constexpr const char* kLogForm =
    "expected CATEGORY.thres:PRIORITY, CATEGORY.app:APPENDER, CATEGORY.fmt:LAYOUT or CATEGORY.add:on|off "
    "(e.g. --log=spmdsim.thres:debug)";
constexpr const char* kRoutes =
    "the run uses devices 0..1 and needs a route from the host CPU to each of them and back, and between "
    "every two of them";
constexpr const char* kTrain = "--devices 1 --steps 1 --batch 2";
constexpr const char* kStray = "unexpected argument 'extra': every option has a name (--name value)";

std::string count_message(const std::string& option, int least, const std::string& most,
                          const std::string& got) {
  return fmt::format("{} must be a whole number from {} to {} (got '{}')", option, least, most, got);
}

const Case kCases[] = {
    // Output paths refused before the run (exit 2), nothing written.
    {"JsonIsADirectory", "presets", "--json {out}/adir", 2, "--json '{out}/adir' is a directory"},
    {"JsonIsTheFolderItself", "presets", "--json {out}/.", 2, "--json '{out}/.' is a directory"},
    {"JsonInAMissingFolder", "presets", "--json {out}/nodir/x.json", 2,
     "--json '{out}/nodir/x.json': no folder '{out}/nodir'"},
    {"CsvFineJsonInAMissingFolder", "memory",
     fmt::format("{} --csv {{out}}/ok.csv --json {{out}}/nodir/x.json", kMlp), 2,
     "--json '{out}/nodir/x.json': no folder '{out}/nodir'"},
    {"JsonAndCsvTheSameFile", "memory",
     fmt::format("{} --json {{out}}/same.out --csv {{out}}/same.out", kMlp), 2,
     "--csv '{out}/same.out' and --json '{out}/same.out' name the same file"},
    {"JsonAndTraceTheSameFileThroughALink", "demo", "--json {out}/link.json --trace {out}/target.json", 2,
     "--json '{out}/link.json' and --trace '{out}/target.json' name the same file"},
    {"JsonIsThePlotsPng", "collectives", "-b 8 -e 8 --devices 2 --json {out}/p.png --plot {out}/p", 2,
     "--json '{out}/p.png' and --plot '{out}/p.png' name the same file"},
    {"PlotInAMissingFolder", "train", fmt::format("{} --plot {{out}}/nodir/p", kTrain), 2,
     "--plot '{out}/nodir/p.png': no folder '{out}/nodir'"},
    {"CollectivesUnknownProtocol", "collectives", "-b 8 -e 8 --devices 2 --protocol ll", 2,
     "--protocol 'll' is not one of NCCL's: LL, LL128, Simple"},
    {"CollectivesLL128OnRccl", "collectives", "-b 8 -e 8 --preset mi300x_8gpu --devices 8 --protocol LL128", 2,
     "--protocol LL128: mi300x_8gpu runs RCCL, which runs LL128 on gfx90a only; valid there: LL, Simple"},
    {"CalibrateDocsIsADirectory", "calibrate", "--write-docs={out}/adir", 2,
     "--write-docs '{out}/adir' is a directory"},
    // Failures at run time (exit 1): the reason, and none of the run's files left.
    {"JsonOnAFullDevice", "presets", "--json /dev/full", 1,
     "cannot write '/dev/full': No space left on device"},
    {"CsvWrittenThenJsonOnAFullDevice", "memory",
     fmt::format("{} --csv {{out}}/ok.csv --json /dev/full", kMlp), 1,
     "cannot write '/dev/full': No space left on device"},
    {"TraceOnAFullDevice", "train", fmt::format("{} --csv {{out}}/ok.csv --trace /dev/full", kTrain), 1,
     "cannot write '/dev/full': No space left on device"},
    {"PlotFailsAfterTheJson",
     "memory",
     fmt::format("{} --csv {{out}}/ok.csv --json {{out}}/x.json --plot {{out}}/p", kMlp),
     1,
     "--plot: ...",
     {},
     true},
    // Outputs written as asked (exit 0).
    {"JsonToDevNull", "presets", "--json /dev/null", 0, ""},
    {"JsonThroughASymlink", "presets", "--json {out}/link.json", 0, ""},
    {"JsonOverAnExistingFile", "presets", "--json {out}/existing.json", 0, ""},
    {"CsvAndJsonTogether",
     "memory",
     fmt::format("{} --csv {{out}}/ok.csv --json {{out}}/x.json", kMlp),
     0,
     "",
     {"ok.csv", "x.json"}},
    // Stray arguments, every command.
    {"StrayArgumentDemo", "demo", "extra", 2, kStray},
    {"StrayArgumentCollectives", "collectives", "extra", 2, kStray},
    {"StrayArgumentPresets", "presets", "extra", 2, kStray},
    {"StrayArgumentCalibrate", "calibrate", "extra", 2, kStray},
    {"StrayArgumentTrain", "train", "--devices 1 extra", 2, kStray},
    {"StrayArgumentMemory", "memory", "extra --devices 2", 2, kStray},
    {"StrayArgumentAfterAnOptionsValue", "demo", "--devices 4 8", 2,
     "unexpected argument '8': every option has a name (--name value)"},
    // Numbers out of range say the range.
    {"InfiniteLearningRate", "train", "--learning-rate inf", 2,
     "--learning-rate must be a positive finite number (got inf)"},
    {"NanLearningRate", "train", "--learning-rate nan", 2,
     "--learning-rate must be a positive finite number (got nan)"},
    {"HugeTrainBatch", "train", "--batch 99999999999", 2,
     count_message("--batch", 1, "999999999", "99999999999")},
    {"HugeMemoryBatch", "memory", "--batch 99999999999", 2,
     count_message("--batch", 1, "999999999", "99999999999")},
    {"HugeSteps", "train", "--steps 99999999999", 2, count_message("--steps", 1, "999999999", "99999999999")},
    {"HugeMicroBatches", "train", "--micro-batches 99999999999", 2,
     count_message("--micro-batches", 1, "999999999", "99999999999")},
    {"HugePrefetch", "train", "--prefetch 99999999999", 2,
     count_message("--prefetch", 0, "999999999", "99999999999")},
    {"HugeFitMax", "memory", "--fit batch --fit-max 99999999999", 2,
     count_message("--fit-max", 1, "999999999", "99999999999")},
    {"HugeStepfactor", "collectives", "-f 99999999999", 2,
     count_message("--stepfactor", 2, "999999999", "99999999999")},
    {"HugeDemoDevices", "demo", "--devices 99999999999", 2,
     count_message("--devices", 2, "131072", "99999999999")},
    {"HugeMemoryDevices", "memory", "--devices 99999999999", 2,
     count_message("--devices", 1, "131072", "99999999999")},
    {"HugeLayers", "memory", "--model custom --layers 99999999999 --hidden 8 --heads 1 --seq-len 4 --vocab 8",
     2, count_message("--layers", 1, "999999999", "99999999999")},
    {"NegativeSeed", "train", "--seed -1", 2, count_message("--seed", 0, "4294967295", "-1")},
    {"HugeSeed", "train", "--seed 4294967296", 2, count_message("--seed", 0, "4294967295", "4294967296")},
    {"NoJobs", "train", "--jobs 0", 2, count_message("--jobs", 1, "1024", "0")},
    // SimGrid settings it would abort on, or run with every time 0 or NaN: refused before it sees them.
    {"UnknownNetworkModel", "demo", "--cfg=network/model:FOO", 2,
     "--cfg=network/model:FOO: network/model 'FOO' is not allowed; expected one of LV08, CM02, SMPI, IB "
     "(SimGrid's Constant model refuses every link and ns-3 needs ns-3's own platforms)"},
    {"NetworkModelWithoutValue", "demo", "--cfg=network/model", 2,
     "--cfg=network/model: 'network/model' has no value; expected KEY:VALUE, e.g. --cfg=network/model:CM02"},
    {"LogOfColons", "demo", "--log=:::", 2,
     fmt::format("--log=:::: ':::' is not a log setting; {}", kLogForm)},
    {"UnknownContextFactory", "collectives", fmt::format("{} --cfg=contexts/factory:nope", kSweep), 2,
     "--cfg=contexts/factory:nope: contexts/factory 'nope' is not allowed; expected one of raw, ucontext, "
     "boost, thread"},
    {"ZeroBandwidthFactor", "train", fmt::format("{} --cfg=network/bandwidth-factor:0", kTrain), 2,
     "--cfg=network/bandwidth-factor:0: network/bandwidth-factor '0' is not allowed; expected a finite "
     "number "
     "> 0"},
    {"NanBandwidthFactor", "memory", fmt::format("{} --cfg=network/bandwidth-factor:nan", kMlp), 2,
     "--cfg=network/bandwidth-factor:nan: network/bandwidth-factor 'nan' is not allowed; expected a finite "
     "number > 0"},
    {"NegativeLatencyFactor", "demo", "--cfg=network/latency-factor:-1", 2,
     "--cfg=network/latency-factor:-1: network/latency-factor '-1' is not allowed; expected a finite number "
     ">= 0"},
    {"TinyStack", "demo", "--cfg=contexts/stack-size:1", 2,
     "--cfg=contexts/stack-size:1: contexts/stack-size '1' is not allowed; expected a whole number from "
     "1024 to 2097151 (KiB; a training step's Eigen kernels overflow 256 KiB)"},
    {"UnknownSetting", "demo", "--cfg=nope:1", 2,
     "--cfg=nope:1: 'nope' is not a SimGrid setting spmdsim takes; it takes network/model, ..."},
    {"NotABoolean", "demo", "--cfg=network/crosstraffic:maybe", 2,
     "--cfg=network/crosstraffic:maybe: network/crosstraffic 'maybe' is not allowed; expected yes, on, true, "
     "1, "
     "no, off, false or 0"},
    {"OneOfTwoSettingsBad", "demo", "--cfg=network/model:CM02,network/TCP-gamma:-5", 2,
     "--cfg=network/model:CM02,network/TCP-gamma:-5: network/TCP-gamma '-5' is not allowed; expected a "
     "finite "
     "number >= 0 (bytes; 0 turns the TCP window off)"},
    {"UnknownPriority", "demo", "--log=spmdsim.thres:loud", 2,
     "--log=spmdsim.thres:loud: priority 'loud'; expected trace, debug, verbose, info, warning, error or "
     "critical"},
    {"DottedCategory", "demo", "--log=spmdsim.coll.thres:debug", 2,
     fmt::format("--log=spmdsim.coll.thres:debug: 'coll.thres' is no setting of a log category; {}",
                 kLogForm)},
    {"UnknownLayoutDirective", "demo", "--log=root.fmt:%Q", 2,
     "--log=root.fmt:%Q: layout '%Q' has '%Q'; the directives are %c %p %h %t %a %i %F %l %L %M %d %r %m %n "
     "%e %% (with an optional width or .precision)"},
    {"LogFileInAMissingFolder", "demo", "--log=root.app:file:{out}/nodir/log.txt", 2,
     "--log=root.app:file:{out}/nodir/log.txt: SimGrid cannot write the log file '{out}/nodir/log.txt' (a "
     "file "
     "in a folder that exists and can be written)"},
    // Platform files SimGrid aborts on.
    {"PlatformFine",
     "collectives",
     fmt::format("{} --platform {{platforms}}/ok.xml --json {{out}}/x.json", kSweep),
     0,
     "",
     {"x.json"}},
    {"PlatformDuplicatedLink", "collectives",
     fmt::format("{} --platform {{platforms}}/duplicated_link.xml", kSweep), 2,
     "--platform: platform '{platforms}/duplicated_link.xml', line 10: link 'a' is declared again (first "
     "on line 8); every link needs its own id"},
    {"PlatformDuplicatedRoute", "collectives",
     fmt::format("{} --platform {{platforms}}/duplicated_route.xml", kSweep), 2,
     "--platform: platform '{platforms}/duplicated_route.xml', line 13: the route from 'd1' to 'd0' is given "
     "again (first on line 12); a route goes both ways unless it says symmetrical=\"NO\""},
    {"PlatformWithoutARouteBetweenDevices", "collectives",
     fmt::format("{} --platform {{platforms}}/no_device_route.xml", kSweep), 2,
     fmt::format("--platform: platform '{{platforms}}/no_device_route.xml': no route from 'd0' to 'd1'; {}",
                 kRoutes)},
    {"PlatformWithoutARouteToTheHost", "collectives",
     fmt::format("{} --platform {{platforms}}/no_host_route.xml", kSweep), 2,
     fmt::format("--platform: platform '{{platforms}}/no_host_route.xml': no route from 'cpu' to 'd1'; {}",
                 kRoutes)},
    {"HostfileWithoutPlatform", "collectives", fmt::format("{} --hostfile {{platforms}}/one_host", kSweep), 2,
     "--hostfile names hosts of a --platform file; give --platform too"},
    {"HostCpuWithoutPlatform", "collectives", fmt::format("{} --host-cpu cpu", kSweep), 2,
     "--host-cpu names hosts of a --platform file; give --platform too"},
    {"HostfileOfTwoDevicesOnOneHost", "collectives",
     fmt::format("{} --platform {{platforms}}/ok.xml --hostfile {{platforms}}/two_on_one", kSweep), 2,
     "--platform: hostfile '{platforms}/two_on_one', line 1: 'd0:2' puts 2 devices on host 'd0'; spmdsim "
     "runs "
     "one device per host (a device computes on its own host), so list each device's host once"},
    {"DevicesPastTheHostfile", "collectives",
     fmt::format("{} --platform {{platforms}}/ok.xml --hostfile {{platforms}}/one_host", kSweep), 2,
     "--devices 2 is more than the 1 devices of --platform {platforms}/ok.xml in --hostfile "
     "{platforms}/one_host"},
    // Runs that would not fit in the host's memory: the estimate and what fits (the figures after "about"
    // depend on the machine's MemAvailable, or on the page size and address space in use).
    {"DemoStacksPastUlimit",
     "demo",
     "--devices 1024",
     2,
     "--devices 1024: it needs about 12.0 GiB of address space (0.0 GiB of data and 1537 actors with 8196 "
     "KiB "
     "stacks) but RLIMIT_AS (ulimit -v) leaves ...",
     {},
     false,
     8000000},
    {"TrainBatchPastTheHost",
     "train",
     "--devices 8 --batch 4000000",
     2,
     "--devices 8 with --batch 4000000: it needs about 35.1 GiB of ...",
     {},
     false,
     8000000},
    {"TrainNcclChannelsPastTheHost",
     "train",
     "--model gpt_7b --preset dgx_b200 --nodes 128 --devices 1024 --batch 1024 --steps 1 --aggregate "
     "--algorithm nccl",
     2,
     "--devices 1024: it needs about ...",
     {},
     false,
     8000000},
    {"CollectivesRealRowsPastTheHost",
     "collectives",
     "--devices 512 -b 16M -e 16M --abstract-above 1G --collectives all_reduce --algorithms ring",
     2,
     "--abstract-above 1 GiB: the real rows up to 16 MiB at 512 devices do not fit: it needs about 48.4 GiB "
     "of "
     "...",
     {},
     false,
     8000000},
    {"MemoryStacksPastUlimit",
     "memory",
     "--model mlp --devices 1024 --batch 1",
     2,
     "--devices 1024: it needs about 24.0 GiB of address space (0.0 GiB of data and 3073 actors with 8196 "
     "KiB "
     "stacks) but RLIMIT_AS (ulimit -v) leaves ...",
     {},
     false,
     8000000},
};

class BadInputTest : public ::testing::TestWithParam<Case> {};

TEST_P(BadInputTest, ExitsWithItsStatusAndMessageAndLeavesOnlyItsFiles) {
  const Case& c = GetParam();
#ifdef SPMDSIM_SANITIZED
  // AddressSanitizer maps terabytes of shadow memory at start-up: no sanitized program runs under ulimit -v.
  if (c.address_space_kib != 0) GTEST_SKIP() << "a sanitized build cannot run under ulimit -v";
#endif
  const auto dir = testing::scratch_dir();
  const fs::path out = dir / "out";
  fs::create_directories(out / "adir");
  std::ofstream(out / "existing.json") << "old";
  std::ofstream(out / "target.json") << "old";
  fs::create_symlink("target.json", out / "link.json");
  if (c.fake_python) {
    // Imports matplotlib, then writes half a plot and fails.
    std::ofstream(dir / "python3") << "#!/bin/sh\ncase \"$1\" in -c) exit 0;; esac\n"
                                      "echo png > \"$3.png\"; echo svg > \"$3.svg.partial\"; exit 3\n";
    fs::permissions(dir / "python3", fs::perms::owner_all);
    ::setenv("SPMDSIM_PYTHON", (dir / "python3").c_str(), 1);
  }
  write_platforms(dir / "platforms");
  const auto run =
      c.address_space_kib == 0
          ? testing::run_cli(SPMDSIM_CLI, c.command, in_folder(c.args, out), dir)
          : testing::run_cli("sh", "-c",
                             fmt::format("'ulimit -v {}; exec \"{}\" {} {}'", c.address_space_kib,
                                         SPMDSIM_CLI, c.command, in_folder(c.args, out)),
                             dir);
  if (c.fake_python) ::unsetenv("SPMDSIM_PYTHON");

  EXPECT_NE(run.status, -1) << "ended by a signal: " << run.err;
  EXPECT_EQ(run.status, c.status) << run.err;
  const auto message = in_folder(c.message, out);
  if (message.empty()) {
    EXPECT_EQ(run.err, "");
  } else {
    const auto first = lines_of(run.err).empty() ? std::string() : lines_of(run.err).front();
    const auto expected = fmt::format("spmdsim {}: {}", c.command, message);
    if (expected.ends_with("..."))
      EXPECT_TRUE(first.starts_with(expected.substr(0, expected.size() - 3))) << first;
    else
      EXPECT_EQ(first, expected);
  }

  std::set<std::string> expected = {"adir", "existing.json", "link.json", "target.json"};
  expected.insert(c.written.begin(), c.written.end());
  EXPECT_EQ(contents(out), expected) << "the run leaves exactly its own files, and no temporary one";
  EXPECT_TRUE(fs::is_symlink(out / "link.json"));
  const bool through_link = c.status == 0 && c.args.find("{out}/link.json") != std::string::npos;
  EXPECT_EQ(read_file(out / "target.json").starts_with("{"), through_link);
  const bool over_existing = c.status == 0 && c.args.find("{out}/existing.json") != std::string::npos;
  EXPECT_EQ(read_file(out / "existing.json").starts_with("{"), over_existing);
  for (const char* device : {"/dev/null", "/dev/full"})
    EXPECT_TRUE(fs::is_character_file(device)) << device << " is still a device";
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInputTest, ::testing::ValuesIn(kCases),
                         [](const auto& param) { return param.param.name; });

// A FIFO given as an output is written through (a reader gets the JSON) and stays a FIFO.
TEST(Outputs, FifoIsWrittenThroughAndStaysAFifo) {
  const auto dir = testing::scratch_dir();
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto got = dir / "got.json";
  // The reader runs in the background of the same shell line, so the command finds the FIFO open.
  const auto run = testing::run_cli("sh", "-c",
                                    fmt::format("'cat \"{}\" > \"{}\" & \"{}\" presets --json \"{}\"; wait'",
                                                fifo.string(), got.string(), SPMDSIM_CLI, fifo.string()),
                                    dir);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(read_file(got).starts_with("{")) << read_file(got).substr(0, 100);
}

// A run ended by SIGTERM (or Ctrl-C) while its files wait for the commit leaves none of them: here the CSV is
// staged and the run waits to open a FIFO nobody reads, until the signal comes.
TEST(Outputs, ASignalLeavesNoTemporaryFile) {
  const auto dir = testing::scratch_dir();
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string csv = (dir / "ok.csv").string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(SPMDSIM_CLI, SPMDSIM_CLI, "memory", "--model", "mlp", "--devices", "2", "--batch", "4", "--csv",
            csv.c_str(), "--json", fifo.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto staged = [&] {
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().filename().string().starts_with("ok.csv.")) return true;
    return false;
  };
  while (!staged()) {  // the CSV's temporary file appears before the run blocks on the FIFO
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the run ended before its CSV was staged";
    ::usleep(10000);
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.insert(entry.path().filename().string());
  EXPECT_EQ(left, std::set<std::string>{"fifo"});
}

// /dev/stdout is the command's own standard output, written after the table: to a file (the shell's
// redirection, which a reopened /dev/stdout would overwrite) and to a pipe (which has no path to reopen).
TEST(Outputs, DevStdoutGetsTheJsonAfterTheTable) {
  const auto dir = testing::scratch_dir();
  const auto to_file =
      testing::run_cli(SPMDSIM_CLI, "train", fmt::format("{} --json /dev/stdout", kTrain), dir);
  const auto piped = testing::run_cli(
      "sh", "-c", fmt::format("'\"{}\" train {} --json /dev/stdout | cat'", SPMDSIM_CLI, kTrain), dir);
  for (const auto& run : {to_file, piped}) {
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(run.out.starts_with("# spmdsim train")) << run.out.substr(0, 100);
    const auto json = run.out.find("\n{");
    ASSERT_NE(json, std::string::npos) << run.out;
    EXPECT_EQ(nlohmann::json::parse(run.out.substr(json + 1))["command"], "spmdsim train");
  }
}

// --help lists every registered training strategy: the list is the registry's, so it cannot drift.
TEST(Help, StrategyListsEveryRegisteredStrategy) {
  for (const char* command : {"memory", "train"}) {
    const auto dir = testing::scratch_dir();
    const auto run = testing::run_cli(SPMDSIM_CLI, command, "--help", dir);
    ASSERT_EQ(run.status, 0) << run.err;
    for (const auto& info : models::training_strategies())
      EXPECT_NE(run.out.find(std::string(info.name)), std::string::npos)
          << command << " --help does not name " << info.name;
  }
}

}  // namespace
}  // namespace spmdsim
