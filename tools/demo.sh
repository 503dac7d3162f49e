#!/usr/bin/env bash
# The README's demo command: set up (idempotent), then run the demo.
# Arguments go to `wbm info` (e.g. a robot name or config path).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
# shellcheck disable=SC1091
source "$root/.venv/wbm_env.sh"
exec wbm info "$@"
