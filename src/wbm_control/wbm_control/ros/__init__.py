"""ROS 2 layer of wbm_control: the controller node and its message converters (imports rclpy)."""
