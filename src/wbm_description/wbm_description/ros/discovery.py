"""How fast the nodes find each other: wbm's default Fast DDS participant profile.

A DDS participant learns of another one from that one's announcements: Fast DDS sends 5 at
0.1 s intervals when a participant starts, then one every 3 s. The nodes of a launch start
within a few seconds of each other (the controller last: it imports the solvers and its compiled
kernels), so a node that started more than 0.5 s after another waited for that one's next
periodic announcement, and a lockstep loop closed 2.3-3.0 s after the controller was ready in 9
of 12 launches measured (the robot side republishing its first sample meanwhile).
``fastdds_profile.xml`` beside this module keeps Fast DDS's defaults but for 50 announcements
at start (5 s): the loop then closed within 0.01-0.09 s of the controller being ready.

:func:`use_default_profile` points Fast DDS at that file (``FASTDDS_DEFAULT_PROFILES_FILE``)
unless the environment already names a profile file of its own (that variable, or Fast DDS 2's
``FASTRTPS_DEFAULT_PROFILES_FILE``) or another middleware is chosen (``RMW_IMPLEMENTATION``):
every wbm node calls it before ``rclpy.init`` (:func:`~wbm_description.ros.node_runtime.run_node`),
and ``.venv/wbm_env.sh`` exports the same file for the tests, benchmarks and scripts. A node of
another program (RViz, a recorder) that starts later finds the wbm nodes from its own
announcements, which they answer.

No rclpy: the environment only.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

PROFILE = Path(__file__).with_name("fastdds_profile.xml")
"""wbm's default Fast DDS participant profile (module docstring)."""

PROFILE_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")
"""The environment variables that name a Fast DDS profile file (Fast DDS 3, then 2)."""

FAST_DDS_RMWS = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")
"""The middleware implementations that read Fast DDS profiles."""


def use_default_profile(environ: MutableMapping[str, str] | None = None) -> Path | None:
    """Point Fast DDS at :data:`PROFILE` unless a profile or another middleware is chosen.

    Args:
        environ: The environment to read and change (default: this process's).

    Returns:
        The profile set, or None when the environment already decides.
    """
    env = os.environ if environ is None else environ
    if any(env.get(name) for name in PROFILE_VARIABLES):
        return None
    rmw = env.get("RMW_IMPLEMENTATION", "")
    if rmw and rmw not in FAST_DDS_RMWS:
        return None
    env[PROFILE_VARIABLES[0]] = str(PROFILE)
    return PROFILE


__all__ = ["FAST_DDS_RMWS", "PROFILE", "PROFILE_VARIABLES", "use_default_profile"]
