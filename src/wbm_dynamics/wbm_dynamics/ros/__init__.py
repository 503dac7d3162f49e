"""ROS 2 side of wbm_dynamics: the robot-interface node and its message builders.

Only this subpackage imports rclpy and message packages.
"""
