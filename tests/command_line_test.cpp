// What the commands share (experiments/common/): the --devices list, counts, sizes as nccl-tests reads and
// prints them, the row model written as table, CSV and JSON, and output files put in place by a run's commit.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/command_line.hpp"
#include "common/device_list.hpp"
#include "common/output_files.hpp"
#include "common/rows.hpp"
#include "common/sizes.hpp"
#include "scratch_dir.hpp"

namespace spmdsim::cli {
namespace {

// The UsageError's message, or "" when `parse` throws none.
template <class Parse>
std::string error_of(Parse&& parse) {
  try {
    parse();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceList, KeepsTheOrderGivenAndDropsRepeats) {
  EXPECT_EQ(parse_device_list("8,2,,8,4", 1), (std::vector<int>{8, 2, 4}));
  EXPECT_EQ(parse_device_list("1024", 2), (std::vector<int>{1024}));
}

TEST(DeviceList, RefusesWhatIsNoDeviceCountInRange) {
  EXPECT_EQ(error_of([] { parse_device_list("8,1", 2); }),
            "--devices: '1' is not a device count from 2 to 131072");
  EXPECT_EQ(error_of([] { parse_device_list("131073", 1); }),
            "--devices: '131073' is not a device count from 1 to 131072");
  EXPECT_EQ(error_of([] { parse_device_list("4x", 1); }),
            "--devices: '4x' is not a device count from 1 to 131072");
  EXPECT_EQ(error_of([] { parse_device_list("-2", 1); }),
            "--devices: '-2' is not a device count from 1 to 131072");
  EXPECT_EQ(error_of([] { parse_device_list("99999999999", 1); }),
            "--devices: '99999999999' is not a device count from 1 to 131072");
  EXPECT_EQ(error_of([] { parse_device_list(",,", 1); }), "--devices names no device count");
}

TEST(DeviceCount, OneCountInRange) {
  EXPECT_EQ(parse_device_count("8", 1), 8);
  EXPECT_EQ(error_of([] { parse_device_count("1", 2); }),
            "--devices must be a whole number from 2 to 131072 (got '1')");
  EXPECT_EQ(error_of([] { parse_device_count("2,4", 1); }),
            "--devices must be a whole number from 1 to 131072 (got '2,4')");
  EXPECT_EQ(error_of([] { parse_device_count("262144", 1); }),
            "--devices must be a whole number from 1 to 131072 (got '262144')");
}

TEST(Count, SaysItsRangeForAnyTextOutOfIt) {
  EXPECT_EQ(parse_count("0", "--prefetch", 0), 0);
  EXPECT_EQ(parse_count("999999999", "--batch", 1), 999999999);
  EXPECT_EQ(parse_count("0007", "--batch", 1, 7), 7);
  for (const char* text : {"99999999999", "1000000000", "99999999999999999999999", "-1", "", "1e3", "0"})
    EXPECT_EQ(error_of([&] { parse_count(text, "--batch", 1); }),
              fmt::format("--batch must be a whole number from 1 to 999999999 (got '{}')", text));
  EXPECT_EQ(error_of([] { parse_count("8", "--layers", 1, 4); }),
            "--layers must be a whole number from 1 to 4 (got '8')");
}

TEST(Sizes, ReadsPowersOf1024EitherCase) {
  EXPECT_EQ(parse_size("64", "-b"), 64u);
  EXPECT_EQ(parse_size("64K", "-b"), 64u << 10);
  EXPECT_EQ(parse_size("8m", "-b"), 8u << 20);
  EXPECT_EQ(parse_size("1048576G", "-b"), ByteCount{1} << 50);
}

TEST(Sizes, RefusesOtherTextAndSizesAbove1PiB) {
  EXPECT_EQ(
      error_of([] { parse_size("1X", "--maxbytes"); }),
      "bad size '1X' for --maxbytes: expected a whole number of bytes with an optional K, M or G suffix "
      "(powers of 1024), e.g. 64K");
  EXPECT_NE(error_of([] { parse_size("", "-e"); }), "");
  EXPECT_NE(error_of([] { parse_size("K", "-e"); }), "");
  EXPECT_NE(error_of([] { parse_size("1KK", "-e"); }), "");
  EXPECT_EQ(error_of([] { parse_size("1048577G", "-e"); }),
            "size '1048577G' for -e is too large (at most 1048576G)");
  EXPECT_EQ(error_of([] { parse_size("99999999999999999999", "-e"); }),
            "size '99999999999999999999' for -e is too large (at most 1048576G)");
}

TEST(Sizes, PrintsTheLargestExactUnit) {
  EXPECT_EQ(size_text(8), "8 B");
  EXPECT_EQ(size_text(1536), "1536 B");
  EXPECT_EQ(size_text(1024), "1 KiB");
  EXPECT_EQ(size_text(ByteCount{3} << 30), "3 GiB");
}

// A table-only column, a CSV-and-JSON-only one, an empty cell and a rounded one.
Rows sample_rows() {
  return {
      .columns = {{.key = "name", .header = "name", .width = 6, .left = true},
                  {.key = "kind"},
                  {.key = "time_us", .header = "time(us)", .width = 9},
                  {.key = "error", .header = "err", .width = 5},
                  {.header = "ok", .width = 3}},
      .cells = {
          {text_cell("a"), text_cell("x"), real_cell(1.23456, 2), real_cell(0.5, "5e-1"), text_cell("yes")},
          {text_cell("bb"), text_cell("y"), real_cell(10.0, 2), empty_cell("n/a"), text_cell("no")}}};
}

TEST(Rows, TableAlignsTheTableColumnsUnderAHashHeader) {
  std::ostringstream out;
  write_table(out, sample_rows());
  EXPECT_EQ(out.str(),
            "#name    time(us)    err   ok\n"
            "a            1.23   5e-1  yes\n"
            "bb          10.00    n/a   no\n");
}

TEST(Rows, CsvWritesTheKeyedColumnsWholeAndEmptyCellsEmpty) {
  std::ostringstream out;
  write_csv(out, sample_rows());
  EXPECT_EQ(out.str(),
            "name,kind,time_us,error\n"
            "a,x,1.23456,0.5\n"
            "bb,y,10,\n");
}

TEST(Rows, JsonKeysEachRowAsTheColumnsWithNullForEmpty) {
  const auto json = rows_json(sample_rows());
  EXPECT_EQ(json.dump(), R"([{"name":"a","kind":"x","time_us":1.23456,"error":0.5},)"
                         R"({"name":"bb","kind":"y","time_us":10.0,"error":null}])");
}

TEST(Rows, FitWidthsMakesRoomForHeadersAndCells) {
  Rows rows{.columns = {{.key = "d", .header = "device", .left = true}, {.key = "v", .header = "v"}},
            .cells = {{text_cell("a-long-name"), whole_cell(12345)}}};
  fit_widths(rows);
  std::ostringstream out;
  write_table(out, rows);
  EXPECT_EQ(out.str(),
            "#device          v\n"
            "a-long-name  12345\n");
}

namespace fs = std::filesystem;

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t entries_in(const fs::path& folder) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

TEST(OutputFiles, PutsTheFilesInPlaceOnlyAtTheCommit) {
  const testing::ScratchDir dir;
  const auto csv = (dir / "rows.csv").string(), json = (dir / "run.json").string();
  OutputFiles outputs({{"--csv", csv}, {"--json", json}, {"--trace", ""}});
  outputs.write(csv, [](std::ostream& out) { out << "a,b\n"; });
  write_file_through(outputs.staged(json), [](std::ostream& out) { out << "{}"; });
  EXPECT_FALSE(fs::exists(csv));
  EXPECT_FALSE(fs::exists(json));
  outputs.commit();
  EXPECT_EQ(text_of(csv), "a,b\n");
  EXPECT_EQ(text_of(json), "{}");
  EXPECT_EQ(entries_in(dir), 2u) << "no temporary file is left";
}

TEST(OutputFiles, ARunThatDoesNotCommitLeavesNothing) {
  const testing::ScratchDir dir;
  const auto kept = dir.write("kept.json", "old");
  {
    OutputFiles outputs({{"--csv", (dir / "rows.csv").string()}, {"--json", kept.string()}},
                        (dir / "p").string());
    outputs.write(dir / "rows.csv", [](std::ostream& out) { out << "a,b\n"; });
    outputs.write(kept, [](std::ostream& out) { out << "new"; });
    const auto prefix = outputs.staged_plot_prefix();
    std::ofstream(prefix.string() + ".png") << "png";
    std::ofstream(prefix.string() + ".svg.partial") << "svg";
  }
  EXPECT_EQ(text_of(kept), "old");
  EXPECT_EQ(entries_in(dir), 1u);
}

TEST(OutputFiles, ReplacesAFileKeepingItsPermissionsAndWritesThroughALink) {
  const testing::ScratchDir dir;
  const auto target = dir.write("target.json", "old");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("target.json", dir / "link.json");
  OutputFiles outputs({{"--json", (dir / "link.json").string()}});
  outputs.write(dir / "link.json", [](std::ostream& out) { out << "new"; });
  outputs.commit();
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(text_of(target), "new");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

// Makes the OutputFiles of a run, which checks `paths` (and the plot's).
void check(const std::vector<OutputPath>& paths, const std::string& plot_prefix = {}) {
  const OutputFiles outputs(paths, plot_prefix);
}

TEST(OutputFiles, RefusesBeforeTheRunWhatItCouldNotWrite) {
  const testing::ScratchDir dir;
  const auto folder = dir.path().string();
  EXPECT_EQ(error_of([&] {
              check({{"--json", folder}});
            }),
            fmt::format("--json '{}' is a directory", folder));
  EXPECT_EQ(error_of([&] {
              check({{"--csv", folder + "/no/x.csv"}});
            }),
            fmt::format("--csv '{0}/no/x.csv': no folder '{0}/no'", folder));
  EXPECT_EQ(error_of([&] {
              check({{"--csv", folder + "/x"}, {"--json", folder + "/./x"}});
            }),
            fmt::format("--csv '{0}/x' and --json '{0}/./x' name the same file", folder));
  EXPECT_EQ(error_of([&] {
              check({{"--json", folder + "/p.svg"}}, folder + "/p");
            }),
            fmt::format("--json '{0}/p.svg' and --plot '{0}/p.svg' name the same file", folder));
  EXPECT_EQ(entries_in(dir), 0u);
}

TEST(OutputFiles, WritesADeviceThroughAndSaysWhyItCannot) {
  OutputFiles outputs(std::vector<OutputPath>{{"--json", "/dev/null"}, {"--csv", "/dev/full"}});
  outputs.write("/dev/null", [](std::ostream& out) { out << "{}"; });
  try {
    outputs.write("/dev/full", [](std::ostream& out) { out << "a,b\n"; });
    ADD_FAILURE() << "/dev/full took the rows";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cannot write '/dev/full': No space left on device");
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

}  // namespace
}  // namespace spmdsim::cli
