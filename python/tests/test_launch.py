# python -m spmdsim.launch: the script runs in a process whose allocator is jemalloc, with its arguments and
# exit status; what it cannot run is an error naming what was wrong, exit 2.
import os
import subprocess
import sys
import tempfile

import pytest

from spmdsim import launch

CHILD = """
import sys
maps = open("/proc/self/maps").read()
print("jemalloc" if "libjemalloc" in maps else "glibc", *sys.argv[1:])
sys.exit(int(sys.argv[-1]))
"""


def launched(*args):
    return subprocess.run([sys.executable, "-m", "spmdsim.launch", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def child():
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "child.py")
        with open(path, "w") as f:
            f.write(CHILD)
        yield path


def test_the_script_runs_on_jemalloc_with_its_arguments_and_status(child):
    assert launch.jemalloc() is not None, "the set-up installs libjemalloc2"
    plain = subprocess.run([sys.executable, child, "0"], capture_output=True, text=True)
    assert plain.stdout.split() == ["glibc", "0"]
    result = launched(child, "--flag", "x y", "3")
    assert result.stdout.split("\n")[0] == "jemalloc --flag x y 3"
    assert result.returncode == 3


@pytest.mark.parametrize("args, says", [((), "no script to run"),
                                        (("--help",), "no script to run"),
                                        (("missing.py",), "'missing.py' does not exist")])
def test_what_cannot_run_is_an_error(args, says):
    result = launched(*args)
    assert result.returncode == 2
    assert says in result.stderr and "usage: python -m spmdsim.launch SCRIPT" in result.stderr
