"""What the spmdsim plotting scripts share: reading spmdsim's JSON, writing the figure, the command line.

Imported by plot_collectives.py, plot_train.py and plot_memory.py, which sit beside it in the source tree and
where they are installed.
"""

import json
import os
import sys
import textwrap

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


def optimizer_label(document):
    """The optimizer as the commands' headers name it: "adam", or "adam fused" under --fused-optimizer."""
    return document["optimizer"] + (" fused" if document.get("fused_optimizer") else "")


def finish(figure, prefix, document, heading, layout_rect=(0, 0, 1, 1)):
    """Titles the figure with `heading` and the document's SimGrid settings, each wrapped to the figure's
    width, lays it out within layout_rect and saves it as PREFIX.png and PREFIX.svg."""
    settings = ", ".join(f"{k}:{v}" for k, v in document.get("simgrid_config", {}).items())
    characters = int(figure.get_figwidth() * 11)  # of a 10-point title per inch of figure
    figure.suptitle("\n".join([textwrap.fill(heading, characters), textwrap.fill(settings, characters)]),
                    fontsize=10)
    figure.tight_layout(rect=layout_rect)
    save(figure, prefix)


def main(argv, script, what, plot):
    """`script WHAT.json PREFIX`: plots the document with plot(document, prefix)."""
    if len(argv) != 3:
        sys.exit(f"usage: {script} {what}.json PREFIX   (writes PREFIX.png and PREFIX.svg)")
    plot(load(argv[1], script), argv[2])
