"""Make rclpy from the PyPI wheels use rmw_cyclonedds_cpp (an experiment: tools/rmw_cyclonedds).

The wheels have no ``librmw_implementation.so``: ``librcl.so`` and rclpy's extension link
``librmw_fastrtps_cpp.so`` directly, so ``RMW_IMPLEMENTATION`` alone cannot switch the
middleware. Loading ``librmw_cyclonedds_cpp.so`` with ``RTLD_GLOBAL`` before rclpy is imported
puts its ``rmw_*`` symbols first in the global lookup scope, so rcl's calls bind to Cyclone DDS
(ELF symbol interposition); Fast DDS stays loaded but idle. Python imports this module at start
when its directory is on ``PYTHONPATH`` (``env.sh`` of the build puts it there), in place of
any other ``sitecustomize`` further down the path (this environment has none).
"""

import ctypes
import os

if os.environ.get("RMW_IMPLEMENTATION") == "rmw_cyclonedds_cpp":
    ctypes.CDLL(os.environ["WBM_CYCLONE_RMW_LIB"], mode=ctypes.RTLD_GLOBAL)
