#!/usr/bin/env bash
# The README's demo command: set up (idempotent), then run the demo: iCub stands in the wbm
# simulator, moves its left hand (seed 004), takes a 4 N s push and recovers, all through the
# real ROS 2 nodes started by `wbm launch`. It prints a report and writes plots and an MCAP
# recording to output/demo/. Options go to wbm_demo, e.g.:
#   bash tools/demo.sh --viewer                 # keep running with the browser viewer (Ctrl-C)
#   bash tools/demo.sh --controller-mode ik --contact-model rigid
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
echo "[wbm demo] set-up (first run: about 4 minutes)"
bash "$root/tools/setup.sh"
# shellcheck disable=SC1091
source "$root/.venv/wbm_env.sh"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
echo "[wbm demo] what the model knows about iCub:"
wbm info icub | sed -n '1,8p'
echo "[wbm demo] running the simulation bringup (lockstep) with the demo scenario"
exec wbm_demo --launch-file "$root/launch/demo.launch.yaml" --output "$root/output/demo" "$@"
