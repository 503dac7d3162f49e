"""wbm_bringup: how wbm is brought up and watched.

Launch files and node parameter files per robot (installed to ``share/wbm_bringup``), the
``wbm`` command (:mod:`wbm_bringup.cli`: ``wbm launch``, ``wbm info``), the recorder, the demo,
the browser viewer, and what needs both the simulator and the controller (the in-process closed
loop, cross-package benchmarks). It may import every other wbm package; none imports it.
"""
