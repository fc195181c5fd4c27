// SimGrid XML platforms: devices picked out by a host property, ordered by index or by name, their specs
// overridden by properties; each bad input a ValueError naming the file and the fault; and the switch
// cluster written as XML timing exactly like the switch cluster itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <regex>
#include <sstream>
#include <string>

#include <simgrid/s4u/Host.hpp>

#include "child_process.hpp"
#include "scratch_dir.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "spmdsim/topologies/xml_platform.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using topologies::xml_platform;
using topologies::XmlPlatformOptions;

// A platform file around `hosts` (host elements), with `zone_properties` at the top of the root zone, and a
// route between every two hosts over one link (the loader checks the routes a run takes).
std::string platform_xml(const std::string& hosts, const std::string& zone_properties = "") {
  std::vector<std::string> names;
  const std::regex host_id("<host id=\"([^\"]+)\"");
  for (std::sregex_iterator it(hosts.begin(), hosts.end(), host_id), end; it != end; ++it)
    names.push_back((*it)[1]);
  std::string routes = "    <link id=\"test.bus\" bandwidth=\"1GBps\" latency=\"1us\"/>\n";
  for (std::size_t a = 0; a < names.size(); ++a)
    for (std::size_t b = a + 1; b < names.size(); ++b)
      routes += "    <route src=\"" + names[a] + "\" dst=\"" + names[b] +
                "\"><link_ctn id=\"test.bus\"/></route>\n";
  return "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\">\n"
         "  <zone id=\"test\" routing=\"Full\">\n" +
         zone_properties + hosts + routes +
         "  </zone>\n"
         "</platform>\n";
}

// A host element with the given properties ("name=value" pairs).
std::string host(const std::string& name,
                 std::initializer_list<std::pair<std::string, std::string>> properties) {
  std::string xml = "    <host id=\"" + name + "\" speed=\"1e9f\">\n";
  for (const auto& [key, value] : properties)
    xml += "      <prop id=\"" + key + "\" value=\"" + value + "\"/>\n";
  return xml + "    </host>\n";
}

std::string cpu() {
  return host("cpu", {{"spmdsim.role", "host"}});
}
std::string device(const std::string& name) {
  return host(name, {{"spmdsim.role", "device"}});
}
std::string device(const std::string& name, int index) {
  return host(name, {{"spmdsim.role", "device"}, {"spmdsim.index", std::to_string(index)}});
}

std::vector<std::string> device_names(const Simulation& sim) {
  std::vector<std::string> names;
  for (const auto& d : sim.platform().devices) names.push_back(d.name);
  return names;
}

// The message of the ValueError that building a Simulation on `xml` raises ("" if it raises none).
std::string load_error(const std::string& xml, XmlPlatformOptions options = {}) {
  testing::ScratchDir dir;
  const auto file = dir.write("platform.xml", xml);
  try {
    Simulation sim(xml_platform(file, std::move(options)));
  } catch (const ValueError& error) {
    return error.what();
  }
  return "";
}

TEST(XmlPlatform, DevicesFollowTheirIndexNotTheirNames) {
  testing::ScratchDir dir;
  const auto file = dir.write(
      "p.xml", platform_xml(cpu() + device("b", 2) + device("c", 0) + device("a", 1) + device("d", 3)));
  Simulation sim(xml_platform(file));
  EXPECT_EQ(device_names(sim), (std::vector<std::string>{"c", "a", "b", "d"}));
  EXPECT_EQ(sim.platform().host_cpu, "cpu");
  EXPECT_TRUE(sim.platform().dimensions.empty());
  EXPECT_EQ(sim.platform().description, "xml: p.xml, 4 x A100-SXM4-80GB");
}

TEST(XmlPlatform, WithoutIndicesDevicesGoByNameWithNumbersAsNumbers) {
  testing::ScratchDir dir;
  const auto file = dir.write("p.xml", platform_xml(device("gpu10") + device("gpu2") + cpu() +
                                                    device("gpu1") + host("storage", {}) + device("gpu0")));
  Simulation sim(xml_platform(file));
  EXPECT_EQ(device_names(sim), (std::vector<std::string>{"gpu0", "gpu1", "gpu2", "gpu10"}));
}

TEST(XmlPlatform, PropertiesOverrideTheDeviceSpecAndTheRootZoneGivesDimensions) {
  testing::ScratchDir dir;
  const std::string big = host("d0", {{"spmdsim.role", "device"},
                                      {"spmdsim.memory_bytes", "40e9"},
                                      {"spmdsim.peak_flops_f32", "1.5e13"},
                                      {"spmdsim.memory_bandwidth", "inf"}});
  const auto file = dir.write(
      "p.xml",
      platform_xml(cpu() + big + device("d1") + device("d2") + device("d3") + device("d4") + device("d5"),
                   "    <prop id=\"spmdsim.dimensions\" value=\"2, 3\"/>\n"));
  Simulation sim(xml_platform(file));
  const auto& devices = sim.platform().devices;
  ASSERT_EQ(devices.size(), 6u);
  EXPECT_EQ(devices[0].spec.memory_capacity, 40e9);
  EXPECT_EQ(devices[0].spec.peak_flops_for(DType::f32), 1.5e13);
  EXPECT_TRUE(std::isinf(devices[0].spec.memory_bandwidth));
  EXPECT_EQ(devices[0].spec.peak_flops_for(DType::bf16), 312e12);  // the rest stays the default A100's
  const auto a100 = topologies::a100_like_device();
  EXPECT_EQ(devices[1].spec.memory_capacity, a100.memory_capacity);
  EXPECT_EQ(devices[1].spec.memory_bandwidth, a100.memory_bandwidth);
  EXPECT_EQ(sim.platform().dimensions, (std::vector<int>{2, 3}));
}

TEST(XmlPlatform, TheRolePropertyAndItsValuesAreOptions) {
  testing::ScratchDir dir;
  const auto file =
      dir.write("p.xml", platform_xml(host("x", {{"kind", "cpu"}}) + host("g1", {{"kind", "gpu"}}) +
                                      host("g0", {{"kind", "gpu"}})));
  XmlPlatformOptions options;
  options.role_property = "kind";
  options.device_role = "gpu";
  options.host_role = "cpu";
  options.device = testing::round_numbers_cluster(1).device;
  Simulation sim(xml_platform(file, options));
  EXPECT_EQ(device_names(sim), (std::vector<std::string>{"g0", "g1"}));
  EXPECT_EQ(sim.platform().host_cpu, "x");
  EXPECT_EQ(sim.platform().devices[0].spec.model, "test-device");
}

// Bad input: one ValueError each, naming the file and what is wrong.

TEST(XmlPlatformErrors, AMissingFileIsNamedBeforeAnyEngineStarts) {
  try {
    xml_platform("/nonexistent/dir/cluster.xml");
    FAIL() << "no error";
  } catch (const ValueError& error) {
    EXPECT_STREQ(
        error.what(),
        "SimGrid platform file '/nonexistent/dir/cluster.xml' does not exist or is not a regular file");
  }
}

TEST(XmlPlatformErrors, NoDeviceHostNamesThePropertyAndValueLookedFor) {
  XmlPlatformOptions options;
  options.role_property = "kind";
  options.device_role = "gpu";
  options.host_role = "cpu";
  const std::string message = load_error(
      platform_xml(host("x", {{"kind", "cpu"}}) + host("n0", {{"spmdsim.role", "device"}})), options);
  EXPECT_NE(message.find("platform.xml' has no device: no host has the property kind=gpu"), std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, NoHostCpu) {
  const std::string message = load_error(platform_xml(device("d0") + device("d1")));
  EXPECT_NE(message.find("' has no host CPU: no host has the property spmdsim.role=host"), std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, TwoHostCpus) {
  const std::string message =
      load_error(platform_xml(cpu() + host("cpu2", {{"spmdsim.role", "host"}}) + device("d0")));
  EXPECT_NE(message.find("' has 2 host CPUs (spmdsim.role=host on cpu, cpu2); mark exactly one"),
            std::string::npos)
      << message;
}

// SimGrid loads these and aborts at the first transfer or computation over them (tests/fuzz found them; its
// corpus has the negative and NaN bandwidths too).
std::string with_link(const std::string& attributes) {
  return platform_xml(cpu() + device("d0") + "    <link id=\"bus\" " + attributes + "/>\n");
}

TEST(XmlPlatformErrors, ALinkOfNoBandwidth) {
  const std::string message = load_error(with_link("bandwidth=\"0Bps\" latency=\"1us\""));
  EXPECT_NE(message.find("platform.xml': link 'bus' has bandwidth 0; expected a positive finite number"),
            std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, ALinkOfNegativeLatency) {
  const std::string message = load_error(with_link("bandwidth=\"1GBps\" latency=\"-1s\""));
  EXPECT_NE(message.find("platform.xml': link 'bus' has latency -1; expected a finite number >= 0"),
            std::string::npos)
      << message;
}

constexpr const char* kDoctype = "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n";

// SimGrid aborts while loading these; spmdsim names the file and the lines when the builder is made.
std::string declaration_error(const std::string& body) {
  testing::ScratchDir dir;
  const auto file = dir.write("platform.xml", "<?xml version='1.0'?>\n" + std::string(kDoctype) +
                                                  "<platform version=\"4.1\">\n"
                                                  "<zone id=\"z\" routing=\"Full\">\n" +
                                                  body + "</zone>\n</platform>\n");
  try {
    (void)xml_platform(file);
  } catch (const ValueError& error) {
    const std::string message = error.what();
    return message.substr(message.find("platform.xml'"));
  }
  return "";
}

TEST(XmlPlatformErrors, ALinkIdDeclaredTwiceIsRefusedWithBothLines) {
  EXPECT_EQ(
      declaration_error("<link id=\"l\" bandwidth=\"1GBps\" latency=\"0s\"/>\n<!-- <link id=\"l\"/> -->\n"
                        "<link id=\"l\" bandwidth=\"2GBps\" latency=\"0s\"/>\n"),
      "platform.xml', line 7: link 'l' is declared again (first on line 5); every link needs its own id");
}

TEST(XmlPlatformErrors, ARouteGivenTwiceCountsASymmetricalRouteBothWays) {
  const std::string hosts = cpu() + device("d0") + "<link id=\"l\" bandwidth=\"1GBps\" latency=\"0s\"/>\n";
  const std::string route = "<route src=\"cpu\" dst=\"d0\"><link_ctn id=\"l\"/></route>\n";
  EXPECT_EQ(declaration_error(hosts + route + "<route src=\"d0\" dst=\"cpu\"><link_ctn id=\"l\"/></route>\n"),
            "platform.xml', line 13: the route from 'd0' to 'cpu' is given again (first on line 12); a route "
            "goes both ways unless it says symmetrical=\"NO\"");
  // One way each, twice: fine.
  EXPECT_EQ(declaration_error(
                hosts + "<route src=\"cpu\" dst=\"d0\" symmetrical=\"NO\"><link_ctn id=\"l\"/></route>\n"
                        "<route src=\"d0\" dst=\"cpu\" symmetrical=\"NO\"><link_ctn id=\"l\"/></route>\n"),
            "");
}

TEST(XmlPlatformErrors, AZoneRoutingSimGridDoesNotKnowIsRefusedWithItsNames) {
  EXPECT_EQ(declaration_error("<zone id=\"inner\" routing=\"_ull\">\n</zone>\n"),
            "platform.xml', line 5: zone 'inner' has routing '_ull'; SimGrid's are Cluster, Dijkstra, "
            "DijkstraCache, Floyd, Full, None, Vivaldi, Wifi");
  // Any case, as SimGrid compares them.
  EXPECT_EQ(declaration_error("<zone id=\"inner\" routing=\"floyd\">\n</zone>\n"), "");
}

// A file without the routes a run takes: SimGrid would abort at the first transfer over it.
std::string routed_platform(const std::string& routes) {
  return "<?xml version='1.0'?>\n" + std::string(kDoctype) +
         "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n" + cpu() + device("d0", 0) +
         device("d1", 1) + device("d2", 2) + "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n" +
         routes + "</zone>\n</platform>\n";
}

std::string route(const std::string& src, const std::string& dst) {
  return "<route src=\"" + src + "\" dst=\"" + dst + "\"><link_ctn id=\"l\"/></route>\n";
}

// One load per test: each Simulation needs a process of its own (SimGrid's engine is per process).
TEST(XmlPlatformErrors, AMissingRouteBetweenDevicesIsNamed) {
  const std::string to_host = route("cpu", "d0") + route("cpu", "d1") + route("cpu", "d2");
  const std::string message = load_error(routed_platform(to_host + route("d0", "d1") + route("d1", "d2")));
  EXPECT_NE(message.find("platform.xml': no route from 'd0' to 'd2'; the run uses devices 0..2 and needs a "
                         "route from the host CPU to each of them and back, and between every two of them"),
            std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, AMissingRouteToTheHostIsNamed) {
  const std::string no_host = load_error(routed_platform(
      route("cpu", "d0") + route("cpu", "d1") + route("d0", "d1") + route("d1", "d2") + route("d0", "d2")));
  EXPECT_NE(no_host.find("no route from 'cpu' to 'd2'"), std::string::npos) << no_host;
}

TEST(XmlPlatformErrors, ARunOnTheFirstDevicesNeedsOnlyTheirRoutes) {
  XmlPlatformOptions first_two;
  first_two.devices_used = 2;
  EXPECT_EQ(
      load_error(routed_platform(route("cpu", "d0") + route("cpu", "d1") + route("d0", "d1")), first_two),
      "");
}

TEST(XmlPlatformErrors, AHostOfNoSpeed) {
  const std::string message =
      load_error(platform_xml(cpu() + device("d0") +
                              "    <host id=\"d1\" speed=\"0f\"><prop id=\"spmdsim.role\" "
                              "value=\"device\"/></host>\n"));
  EXPECT_NE(message.find("platform.xml': host 'd1' has speed 0; expected a positive finite number"),
            std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, AnUnknownRoleValue) {
  const std::string message = load_error(platform_xml(cpu() + host("d0", {{"spmdsim.role", "devices"}})));
  EXPECT_NE(message.find("': host 'd0' has spmdsim.role='devices'; expected 'device' or 'host'"),
            std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, ADuplicateIndex) {
  const std::string message =
      load_error(platform_xml(cpu() + device("d0", 0) + device("d1", 1) + device("d2", 1)));
  EXPECT_NE(message.find("': devices 'd1' and 'd2' both have spmdsim.index 1"), std::string::npos) << message;
}

TEST(XmlPlatformErrors, AnIndexMissingOnSomeDevices) {
  const std::string message =
      load_error(platform_xml(cpu() + device("d0", 0) + device("d1") + device("d2", 1)));
  EXPECT_NE(
      message.find("': device(s) d1 have no spmdsim.index but other devices have one; number every device "
                   "0..2 or none (then devices go by host name)"),
      std::string::npos)
      << message;
}

// A gap in the numbering (0, 2 for two devices) is an index out of range.
TEST(XmlPlatformErrors, AnIndexOutOfRange) {
  const std::string message = load_error(platform_xml(cpu() + device("d0", 0) + device("d1", 2)));
  EXPECT_NE(
      message.find("': device 'd1' has spmdsim.index 2, outside 0..1 (the 2 devices are numbered from 0 "
                   "without gaps)"),
      std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, AnIndexThatIsNotAnInteger) {
  const std::string message =
      load_error(platform_xml(cpu() + host("d0", {{"spmdsim.role", "device"}, {"spmdsim.index", "first"}})));
  EXPECT_NE(message.find("': device 'd0' has spmdsim.index 'first', not an integer"), std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, APropertyThatIsNotANumber) {
  const std::string message = load_error(
      platform_xml(cpu() + host("d0", {{"spmdsim.role", "device"}, {"spmdsim.memory_bytes", "80GB"}})));
  EXPECT_NE(message.find("': device 'd0': spmdsim.memory_bytes is '80GB', not a number"), std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, DimensionsThatDoNotMultiplyToTheDeviceCount) {
  const std::string message =
      load_error(platform_xml(cpu() + device("d0") + device("d1") + device("d2"),
                              "    <prop id=\"spmdsim.dimensions\" value=\"2,2\"/>\n"));
  EXPECT_NE(message.find("': spmdsim.dimensions '2,2' makes 4 devices, but the platform has 3"),
            std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, AFileSimGridCannotParse) {
  const std::string message =
      load_error("<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n<host id=\"a\"");
  EXPECT_EQ(message.rfind("SimGrid cannot load platform '", 0), 0u) << message;
}

// SMPI hostfiles: the devices are the hosts of the lines, in order, as smpirun places ranks.

// The message of the ValueError that building a Simulation on `xml` with `hostfile` (its text) raises.
std::string hostfile_error(const std::string& xml, const std::string& hostfile,
                           XmlPlatformOptions options = {}) {
  testing::ScratchDir dir;
  options.hostfile = dir.write("hosts", hostfile);
  return load_error(xml, std::move(options));
}

TEST(XmlPlatformHostfile, DevicesAreTheLinesInOrderAsSmpirunReadsThem) {
  testing::ScratchDir dir;
  const auto file =
      dir.write("p.xml", platform_xml(cpu() + host("n0", {{"spmdsim.memory_bytes", "40e9"}}) +
                                      host("n1", {}) + host("n2", {}) + host("n3", {}) + device("marked")));
  // Blank lines are skipped and "name:1" is "name"; hosts not listed (a marked device too) are not devices.
  XmlPlatformOptions options{.hostfile = dir.write("hosts", "n2\n\n  n0 \r\nn3:1\n")};
  Simulation sim(xml_platform(file, options));
  EXPECT_EQ(device_names(sim), (std::vector<std::string>{"n2", "n0", "n3"}));
  EXPECT_EQ(sim.platform().host_cpu, "cpu");
  EXPECT_EQ(sim.platform().devices[1].spec.memory_capacity, 40e9);  // the host's properties still apply
  EXPECT_EQ(sim.platform().description, "xml: p.xml (hostfile hosts), 3 x A100-SXM4-80GB");
}

TEST(XmlPlatformHostfile, APlatformWithoutRolesRunsWithAHostfileAndANamedHostCpu) {
  testing::ScratchDir dir;
  const auto file = dir.write("p.xml", platform_xml(host("head", {}) + host("n0", {}) + host("n1", {})));
  Simulation sim(xml_platform(file, {.hostfile = dir.write("hosts", "n1\nn0\n"), .host_cpu = "head"}));
  EXPECT_EQ(device_names(sim), (std::vector<std::string>{"n1", "n0"}));
  EXPECT_EQ(sim.platform().host_cpu, "head");
}

TEST(XmlPlatformHostfile, ANamedHostCpuReplacesTheMarkedOne) {
  testing::ScratchDir dir;
  const auto file = dir.write("p.xml", platform_xml(cpu() + host("head", {}) + device("d0") + device("d1")));
  Simulation sim(xml_platform(file, {.host_cpu = "head"}));
  EXPECT_EQ(sim.platform().host_cpu, "head");
  EXPECT_EQ(device_names(sim), (std::vector<std::string>{"d0", "d1"}));
}

// A platform written for smpirun marks no host CPU; where the run allows it, device 0's host runs the host
// program (reaching its own device over SimGrid's loopback).
TEST(XmlPlatformHostfile, WithoutAHostCpuDeviceZerosHostMayRunTheHostProgram) {
  testing::ScratchDir dir;
  const auto file = dir.write("p.xml", platform_xml(host("a", {}) + host("b", {})));
  Simulation sim(
      xml_platform(file, {.hostfile = dir.write("hosts", "b\na\n"), .host_on_first_device = true}));
  EXPECT_EQ(device_names(sim), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(sim.platform().host_cpu, "b");
  EXPECT_EQ(sim.platform().description,
            "xml: p.xml (hostfile hosts; host program on device 0's host b), 2 x A100-SXM4-80GB");
}

TEST(XmlPlatformHostfileErrors, AMissingHostfileIsNamedBeforeAnyEngineStarts) {
  testing::ScratchDir dir;
  const auto file = dir.write("p.xml", platform_xml(cpu() + device("d0")));
  try {
    xml_platform(file, {.hostfile = "/nonexistent/hosts"});
    FAIL() << "no error";
  } catch (const ValueError& error) {
    EXPECT_STREQ(error.what(), "hostfile '/nonexistent/hosts' does not exist or is not a regular file");
  }
}

TEST(XmlPlatformHostfileErrors, AHostfileOfNoHost) {
  const std::string message = hostfile_error(platform_xml(cpu() + device("d0")), "\n  \n");
  EXPECT_NE(message.find("hosts' lists no host; expected one host name per line, device i on line i"),
            std::string::npos)
      << message;
}

TEST(XmlPlatformHostfileErrors, SeveralDevicesOnOneHost) {
  const std::string message = hostfile_error(platform_xml(cpu() + device("d0")), "d0:2\n");
  EXPECT_NE(
      message.find("hosts', line 1: 'd0:2' puts 2 devices on host 'd0'; spmdsim runs one device per host"),
      std::string::npos)
      << message;
}

TEST(XmlPlatformHostfileErrors, ACountThatIsNotANumber) {
  const std::string message = hostfile_error(platform_xml(cpu() + device("d0")), "d0\nd1:two\n");
  EXPECT_NE(message.find("hosts', line 2: 'd1:two' is not a host name or name:count"), std::string::npos)
      << message;
}

TEST(XmlPlatformHostfileErrors, AHostListedTwice) {
  const std::string message =
      hostfile_error(platform_xml(cpu() + device("d0") + device("d1")), "d0\nd1\n\nd0\n");
  EXPECT_NE(message.find("hosts', line 4: host 'd0' is listed again (first on line 1); each device needs its "
                         "own host"),
            std::string::npos)
      << message;
}

TEST(XmlPlatformHostfileErrors, AHostThePlatformLacks) {
  const std::string message = hostfile_error(platform_xml(cpu() + device("d0")), "d0\nd9\n");
  EXPECT_NE(message.find("hosts', line 2: platform '"), std::string::npos) << message;
  EXPECT_NE(message.find("platform.xml' has no host 'd9'"), std::string::npos) << message;
}

TEST(XmlPlatformHostfileErrors, TheHostCpuListedAsADevice) {
  const std::string message = hostfile_error(platform_xml(cpu() + device("d0")), "d0\ncpu\n");
  EXPECT_NE(
      message.find("hosts', line 2: 'cpu' is the host CPU, which runs the host program; a device needs a "
                   "host of its own"),
      std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, ANamedHostCpuThePlatformLacks) {
  const std::string message = load_error(platform_xml(cpu() + device("d0")), {.host_cpu = "head"});
  EXPECT_NE(message.find("platform.xml' has no host 'head' to run the host program"), std::string::npos)
      << message;
}

TEST(XmlPlatformErrors, ANamedHostCpuThatIsAMarkedDevice) {
  const std::string message =
      load_error(platform_xml(cpu() + device("d0") + device("d1")), {.host_cpu = "d1"});
  EXPECT_NE(message.find("platform.xml': host 'd1' is named the host CPU but has spmdsim.role=device"),
            std::string::npos)
      << message;
}

// The writer: the switch cluster as XML, loaded back, times a psum exactly as the switch cluster does.

TEST(SwitchClusterXml, HasTheRolesLinksAndRoutesOfTheSwitchCluster) {
  std::ostringstream out;
  topologies::write_switch_cluster_xml(out, testing::round_numbers_cluster(2));
  const std::string xml = out.str();
  for (const char* expected :
       {"<platform version=\"4.1\">", "<zone id=\"switch_cluster\" routing=\"Full\">",
        "<host id=\"host\" speed=\"100000000000f\">", "<prop id=\"spmdsim.role\" value=\"host\"/>",
        "<host id=\"dev1\" speed=\"1000000000000f\">", "<prop id=\"spmdsim.index\" value=\"1\"/>",
        "<prop id=\"spmdsim.memory_bytes\" value=\"1000000000\"/>",
        "<link id=\"dev0.fabric.up\" bandwidth=\"100000000000Bps\" latency=\"1e-06s\"/>",
        "<link id=\"dev1.pcie.d2h\" bandwidth=\"10000000000Bps\" latency=\"1e-06s\"/>",
        "<route src=\"host\" dst=\"dev1\" symmetrical=\"NO\"><link_ctn id=\"dev1.pcie.h2d\"/></route>",
        "<route src=\"dev0\" dst=\"dev1\" symmetrical=\"NO\"><link_ctn id=\"dev0.fabric.up\"/>"
        "<link_ctn id=\"dev1.fabric.down\"/></route>"})
    EXPECT_NE(xml.find(expected), std::string::npos) << "missing " << expected << " in\n" << xml;
}

TEST(SwitchClusterXml, RefusesWhatTheSwitchClusterRefuses) {
  auto spec = testing::round_numbers_cluster(2);
  spec.device_link.bandwidth = 0;
  std::ostringstream out;
  EXPECT_THROW(topologies::write_switch_cluster_xml(out, spec), ValueError);
}

// The longest psum of `floats` float32 per device on any device, under the pinned alpha-beta model.
double psum_time(const PlatformBuilder& builder, int p, std::int64_t floats) {
  Simulation sim(builder, {alpha_beta_config(), {}});
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  f(sim, {Array::full({p, floats}, 1.0)});
  double longest = 0;
  const auto report = sim.report();  // named: a range-for would not keep a temporary alive
  for (const auto& times : report.calls.back().times)
    longest = std::max(longest, times.communication.at("psum"));
  return longest;
}

TEST(SwitchClusterXml, APsumTakesExactlyAsLongAsOnTheSwitchCluster) {
  const int p = 4;
  const std::int64_t floats = 3 * 5 * 7 * 8 * 1024;
  const auto spec = testing::free_compute_cluster(p);
  const double on_switch_cluster =
      testing::in_child_process([&] {
        return std::vector{psum_time(topologies::switch_cluster(spec), p, floats)};
      }).at(0);

  testing::ScratchDir dir;
  std::ostringstream xml;
  topologies::write_switch_cluster_xml(xml, spec);
  const auto file = dir.write("switch.xml", xml.str());
  const double on_xml = psum_time(xml_platform(file, {.device = spec.device}), p, floats);

  EXPECT_EQ(on_xml, on_switch_cluster);
  // And both are the closed form 2(p-1) alpha + 2 (p-1)/p n beta (tests/timing_test.cpp).
  const double n = static_cast<double>(floats) * 4;
  EXPECT_NEAR(on_xml, 2 * (p - 1) * 2e-6 + 2.0 * (p - 1) / p * n / 100e9, 1e-12 * on_xml);
}

}  // namespace
}  // namespace spmdsim
