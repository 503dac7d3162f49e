#!/usr/bin/env bash
# The README's test command: set up (idempotent), lint, then run the test suite.
# Extra arguments go to pytest, e.g. `bash tools/test.sh -m "not slow"` or `-k model`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
# The browser-viewer test drives Debian's chromium (installed once, skipped when present).
bash "$root/tools/install_browser.sh"
# shellcheck disable=SC1091
source "$root/.venv/wbm_env.sh"
cd "$root"
# Process-level tests use their own DDS domain and stay on this machine.
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 100 ))}"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
echo "[wbm test] ruff check"
ruff check src tests tools
# Two workers (pytest-xdist; WBM_TEST_WORKERS=0 runs in one process): the tests that start ROS 2
# nodes run in one group, one at a time, beside the others (tests/parallel_runs.py says why).
workers="${WBM_TEST_WORKERS:-2}"
echo "[wbm test] pytest (ROS_DOMAIN_ID=$ROS_DOMAIN_ID, $workers workers)"
exec python -m pytest -n "$workers" --dist loadscope --no-loadscope-reorder "$@"
