"""What the spmdsim plotting scripts share: reading spmdsim's JSON, writing the figure, the command line.

Imported by plot_collectives.py, plot_train.py and plot_memory.py, which sit beside it in the source tree and
where they are installed.
"""

import json
import os
import sys

SUPPORTED_SCHEMA = 1


def load(path, script):
    """The JSON document spmdsim wrote; exits naming `script` when its schema is not the one read here."""
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    version = document.get("schema_version")
    if version != SUPPORTED_SCHEMA:
        sys.exit(f"{script}: {path} has schema_version {version}; this script reads {SUPPORTED_SCHEMA}")
    return document


def save(figure, prefix):
    """PREFIX.png and PREFIX.svg, each written whole or not at all, as spmdsim writes its files."""
    for extension in ("png", "svg"):
        partial = f"{prefix}.{extension}.partial"
        figure.savefig(partial, format=extension, dpi=90)
        os.replace(partial, f"{prefix}.{extension}")


def main(argv, script, what, plot):
    """`script WHAT.json PREFIX`: plots the document with plot(document, prefix)."""
    if len(argv) != 3:
        sys.exit(f"usage: {script} {what}.json PREFIX   (writes PREFIX.png and PREFIX.svg)")
    plot(load(argv[1], script), argv[2])
