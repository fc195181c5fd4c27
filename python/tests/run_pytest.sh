#!/usr/bin/env bash
# Runs one pytest file of the Python front end with the repository's .venv/ (scripts/bootstrap.sh makes it),
# on the package built in the build tree.  usage: run_pytest.sh SOURCE_DIR PACKAGE_PARENT_DIR TEST_FILE
set -euo pipefail
source_dir=$1 package_dir=$2 test_file=$3
python="$source_dir/.venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "error: $python is missing: the Python front end's tests run in .venv/ (bash scripts/bootstrap.sh test makes it)" >&2
  exit 1
fi
cd "$(dirname "$test_file")"
PYTHONPATH="$package_dir" PYTHONDONTWRITEBYTECODE=1 exec "$python" -m pytest -q -p no:cacheprovider "$test_file"
