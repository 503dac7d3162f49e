"""wbm_control: what the robot should do.

Holds IK, the whole-body torque controller, balance, base state estimation, trajectories and the
controller node. It imports wbm_description, never wbm_dynamics.
"""
