"""The ROS 2 edge of wbm_description: message converters and nodes (the only rclpy users)."""
