"""The nodes of wbm_bringup (the only modules of the package that import rclpy)."""
