#!/bin/bash
# An experiment, not part of wbm's set-up: build Cyclone DDS 0.10.5 and rmw_cyclonedds_cpp
# (3.2.0, patched for Kilted) against the ROS 2 Kilted wheels of this checkout's .venv, so that
# the same nodes and benchmarks can run on another middleware than Fast DDS:
#
#   bash tools/rmw_cyclonedds/build.sh [BUILD_DIR]     # about 30 s of builds on 2 cores
#   source .venv/wbm_env.sh && source BUILD_DIR/env.sh
#   wbm_benchmark_bringup --seconds 20 --warmup 5 --rows lockstep-500
#
# BUILD_DIR defaults to /tmp/wbm_rmw_cyclonedds. The sources are cloned from GitHub, or from
# CYCLONEDDS_GIT / RMW_CYCLONEDDS_GIT (any git URL or path) if set. Cyclone DDS is built without
# security, SSL or shared memory (iceoryx). The patch: ament_cmake_ros -> ament_cmake_ros_core
# (the wheels have only the latter), rmw_dds_common/security.hpp removed (moved to
# rmw_security_common in Kilted; only used with DDS security), rmw_event_type_is_supported()
# added (new in rmw 7.8). Figures: README, "Fifteenth pass" under Benchmarks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=$root/.venv
out=${1:-/tmp/wbm_rmw_cyclonedds}
cyclonedds_git=${CYCLONEDDS_GIT:-https://github.com/eclipse-cyclonedds/cyclonedds.git}
rmw_git=${RMW_CYCLONEDDS_GIT:-https://github.com/ros2/rmw_cyclonedds.git}
cyclonedds_rev=2cdd114cbd18340c606573b4cc8dc20cc161ec5a  # tag 0.10.5
rmw_rev=854b89d5b03110e63d778908c35d55d01d8495d1  # 3.2.0 (rolling, 2024-12-20)
[ -f "$venv/wbm_env.sh" ] || { echo "build.sh: no $venv/wbm_env.sh: run bash tools/setup.sh first" >&2; exit 2; }

rm -rf "$out/src" "$out/build" "$out/install" "$out/stub"
mkdir -p "$out/src" "$out/build" "$out/stub"
git clone -q --no-checkout "$cyclonedds_git" "$out/src/cyclonedds"
git -C "$out/src/cyclonedds" checkout -q "$cyclonedds_rev"
git clone -q --no-checkout "$rmw_git" "$out/src/rmw_cyclonedds"
git -C "$out/src/rmw_cyclonedds" checkout -q "$rmw_rev"
patch -s -d "$out/src/rmw_cyclonedds" -p1 < "$here/rmw_cyclonedds_kilted.patch"

cmake -S "$out/src/cyclonedds" -B "$out/build/cyclonedds" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$out/install" -DBUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF \
  -DBUILD_DDSPERF=OFF -DENABLE_SSL=OFF -DENABLE_SECURITY=OFF -DENABLE_SHM=OFF -DBUILD_IDLC=ON \
  > "$out/build/cyclonedds.log"
cmake --build "$out/build/cyclonedds" -j2 >> "$out/build/cyclonedds.log"
cmake --install "$out/build/cyclonedds" >> "$out/build/cyclonedds.log"

source "$venv/wbm_env.sh"
# tracetools' CMake export asks for lttng-ust, which the wheels ship renamed by auditwheel: a
# name for the linker; --as-needed keeps it out of the library's dependencies.
lttng=$(ls "$venv"/lib/python3.11/site-packages/ros_tracetools.libs/liblttng-ust-*.so.* | head -1)
ln -sf "$lttng" "$out/stub/liblttng-ust.so"
cmake -S "$out/src/rmw_cyclonedds/rmw_cyclonedds_cpp" -B "$out/build/rmw_cyclonedds_cpp" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out/install" \
  -DCMAKE_PREFIX_PATH="$out/install;$venv" -DBUILD_TESTING=OFF \
  -DPython3_EXECUTABLE="$venv/bin/python3" \
  -DCMAKE_SHARED_LINKER_FLAGS="-L$out/stub -Wl,--as-needed" > "$out/build/rmw_cyclonedds_cpp.log"
cmake --build "$out/build/rmw_cyclonedds_cpp" -j2 >> "$out/build/rmw_cyclonedds_cpp.log"
cmake --install "$out/build/rmw_cyclonedds_cpp" >> "$out/build/rmw_cyclonedds_cpp.log"

cat > "$out/env.sh" <<ENV
# Source after .venv/wbm_env.sh: rclpy then runs on rmw_cyclonedds_cpp (tools/rmw_cyclonedds).
export AMENT_PREFIX_PATH="$out/install\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export LD_LIBRARY_PATH="$out/install/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PYTHONPATH="$here\${PYTHONPATH:+:\$PYTHONPATH}"
export WBM_CYCLONE_RMW_LIB="$out/install/lib/librmw_cyclonedds_cpp.so"
export RMW_IMPLEMENTATION=rmw_cyclonedds_cpp
ENV
echo "built into $out; use: source $out/env.sh (after .venv/wbm_env.sh)"
