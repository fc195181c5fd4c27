"""Runs a Python script with jemalloc as the process's allocator, as the `spmdsim` command is linked:

    python -m spmdsim.launch your_script.py [its arguments]

A large simulation makes and frees hundreds of millions of small objects (SimGrid's activities, one per
message of a walked ring; buffers and handles), and glibc's malloc, Python's default, slows down as they pile
up: the 7B step at 1,024 devices, rings walked, ran 1.9 times as long on it (docs/python.md, "Performance").
An allocator is chosen when a process starts, so this starts the script in a new one with jemalloc preloaded
(LD_PRELOAD), as launchers of other frameworks offer (Intel's PyTorch launcher, `--enable_jemalloc`). The
script's exit status is the launcher's.
"""
import ctypes.util
import os
import sys

USAGE = "usage: python -m spmdsim.launch SCRIPT [ARGUMENTS...]"


def jemalloc():
    """The name of the jemalloc library the dynamic loader finds, or None."""
    return ctypes.util.find_library("jemalloc")


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(f"error: no script to run. {USAGE}", file=sys.stderr)
        return 2
    script = argv[0]
    if not os.path.isfile(script):
        print(f"error: the script '{script}' does not exist or is not a file. {USAGE}", file=sys.stderr)
        return 2
    library = jemalloc()
    if library is None:
        print("error: jemalloc is not installed (Debian's libjemalloc2; scripts/bootstrap.sh installs it); "
              f"run the script with python itself to use glibc's malloc. {USAGE}", file=sys.stderr)
        return 2
    preloaded = [p for p in os.environ.get("LD_PRELOAD", "").split(":") if p]
    env = dict(os.environ)
    if not any("jemalloc" in p for p in preloaded):
        env["LD_PRELOAD"] = ":".join([library, *preloaded])
    os.execve(sys.executable, [sys.executable, *argv], env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
