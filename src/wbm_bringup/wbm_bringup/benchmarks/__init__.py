"""Benchmarks that need both the simulator (wbm_dynamics) and the controller (wbm_control)."""
