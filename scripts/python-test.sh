#!/usr/bin/env bash
# Builds the Python package into a fresh-or-reused venv with `pip install .` (as a user
# would) and runs its tests: the drop-in functions against scikit-image and SciPy, plans,
# arrays, wisdom, and flcc.dask on a LocalCluster.
#
#   scripts/python-test.sh [pytest args...]
#
# Environment: FLCC_PY_VENV (venv folder, default build-python/venv), PYTHON (the interpreter
# that makes the venv, default python3).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${FLCC_PY_VENV:-$root/build-python/venv}
if [ ! -x "$venv/bin/python" ]; then
    echo "python-test: creating venv $venv"
    "${PYTHON:-python3}" -m venv "$venv"
fi
py="$venv/bin/python"
echo "python-test: pip install $root[test]"
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q "$root[test]"
cd "$root"
"$py" -m pytest -q -ra python/tests "$@"
