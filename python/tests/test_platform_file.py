# A SimGrid XML platform file with an SMPI hostfile: the hostfile's lines are the devices, in order, and
# host_cpu names the host that runs the host program where the file marks none (docs/platforms.md).
import os
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmdsim

# Three hosts and a head node; a and b are joined by a fast link, a and c by a slow one.
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
<host id="head" speed="1e9f"/>
<host id="a" speed="1e12f"/>
<host id="b" speed="1e12f"/>
<host id="c" speed="1e12f"/>
<link id="pcie" bandwidth="10GBps" latency="1us"/>
<link id="fast" bandwidth="10GBps" latency="1us"/>
<link id="slow" bandwidth="1GBps" latency="1us"/>
<route src="head" dst="a"><link_ctn id="pcie"/></route>
<route src="head" dst="b"><link_ctn id="pcie"/></route>
<route src="head" dst="c"><link_ctn id="pcie"/></route>
<route src="a" dst="b"><link_ctn id="fast"/></route>
<route src="a" dst="c"><link_ctn id="slow"/></route>
</zone>
</platform>
"""


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as path:
        for name, text in (("p.xml", PLATFORM), ("hosts", "c\n\na:1\n"), ("two_on_one", "a:2\n")):
            with open(os.path.join(path, name), "w") as f:
                f.write(text)
        yield path


@pytest.fixture(scope="module")
def sim(folder):
    return spmdsim.Simulation(platform=os.path.join(folder, "p.xml"), hostfile=os.path.join(folder, "hosts"),
                              host_cpu="head", cfg=["network/model:CM02", "network/crosstraffic:0"],
                              algorithms={"all_gather": "ring"})


def test_the_hostfile_lines_are_the_devices(sim):
    assert sim.num_devices == 2
    assert sim.platform == "xml: p.xml (hostfile hosts), 2 x NVIDIA A100 SXM4 80GB"


def test_an_all_gather_crosses_the_link_between_the_listed_hosts(sim):
    x = np.arange(2 * 1024, dtype=np.float32).reshape(2, 1024)  # 4 KiB per device
    out = sim.run(jax.pmap(lambda v: jax.lax.all_gather(v, "i"), axis_name="i"), x)
    np.testing.assert_array_equal(out, np.stack([x, x]))
    (call,) = [c for c in sim.report()["calls"] if c["name"] != "device_get"]
    # The A100's 2 us kernel launch, then one ring step: each device sends its 4 KiB over the slow link a-c,
    # the two ways sharing it.
    times = [d["times"]["communication"]["all_gather"] for d in call["devices"]]
    assert times == pytest.approx([2e-6 + 1e-6 + 2 * 4096 / 1e9] * 2, abs=1e-12)


def test_a_hostfile_without_a_platform_is_refused():
    with pytest.raises(ValueError, match="--hostfile names hosts of a --platform file; give --platform too"):
        spmdsim.Simulation(preset="a100", hostfile="hosts")


def test_a_hostfile_putting_two_devices_on_a_host_is_refused(folder):
    with pytest.raises(ValueError, match=r"line 1: 'a:2' puts 2 devices on host 'a'; spmdsim runs one device per "
                                         r"host"):
        spmdsim.Simulation(platform=os.path.join(folder, "p.xml"), hostfile=os.path.join(folder, "two_on_one"),
                           host_cpu="head")
