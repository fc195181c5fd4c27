"""The `spmdsim` command of the build tree the package comes from, for the tests that compare the front end
with the C++ API's models."""
import json
import subprocess
import tempfile
from pathlib import Path

import spmdsim

COMMAND = Path(spmdsim.__file__).resolve().parents[2] / "experiments" / "spmdsim"


def train_row(*args):
    """The one row `spmdsim train ARGS` writes to its JSON (one device count)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "train.json"
        subprocess.run([str(COMMAND), "train", *args, "--json", str(out)], check=True, stdout=subprocess.DEVNULL)
        (row,) = json.loads(out.read_text())["rows"]
    return row
