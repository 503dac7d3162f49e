"""wbm_dynamics: how the robot moves when simulated.

Holds the simulator core (contact models, integrators, actuators, sensors), the robot backends and
the robot-interface node. It imports wbm_description, never wbm_control.
"""
