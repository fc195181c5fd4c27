#!/usr/bin/env python3
"""Fails when a file includes against the layers: experiments -> models -> sim <- topologies.

sim/ sees neither models/ nor topologies/; topologies/ and models/ do not see each other; SimGrid (its
<simgrid/...>, <xbt/...> and <smpi/...> headers) is a private dependency of sim/ and topologies/, so it
appears neither in models/ nor in experiments/ nor in a public header of sim/ or topologies/.

Usage: check_include_layers.py SOURCE_DIR; prints each violation as file:line and exits 1 if any.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
SIMGRID = ("simgrid/", "xbt/", "smpi/")
SOURCES = (".hpp", ".cpp", ".h", ".cc")

# (folder, what it may not include, why), folders relative to the source tree.
RULES = [
    ("sim", ("spmdsim/models/", "spmdsim/topologies/"), "sim/ is below models/ and topologies/"),
    ("topologies", ("spmdsim/models/",), "topologies/ does not see models/"),
    ("models", ("spmdsim/topologies/",), "models/ does not see topologies/"),
    ("models", SIMGRID, "SimGrid is private to sim/ and topologies/"),
    ("experiments", SIMGRID, "SimGrid is private to sim/ and topologies/"),
    ("sim/include", SIMGRID, "a public header of sim/ names no SimGrid type"),
    ("topologies/include", SIMGRID, "a public header of topologies/ names no SimGrid type"),
]


def violations(root):
    for folder, forbidden, why in RULES:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCES:
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if match and match.group(1).startswith(forbidden):
                    yield f"{path.relative_to(root)}:{number}: includes <{match.group(1)}>: {why}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    if not (root / "sim").is_dir():
        sys.exit(f"{root} is not spmdsim's source tree (no sim/)")
    found = list(violations(root))
    for v in found:
        print(v)
    print(f"{len(found)} include(s) against the layers" if found else "includes follow the layers")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
