"""ament_python / pip set-up of wbm_dynamics."""

from setuptools import find_packages, setup

package_name = "wbm_dynamics"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
    ],
    install_requires=["setuptools", "numpy", "pyyaml"],
    zip_safe=True,
    maintainer="wbm maintainers",
    maintainer_email="maintainers@wbm-project.org",
    description=(
        "How the robot moves when simulated: contact models, integrators, actuators and s"
        "ensors, the simulator, robot backends and the robot-interface node."
    ),
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "wbm_robot_interface = wbm_dynamics.ros.robot_interface_node:main",
            "wbm_benchmark_simulator = wbm_dynamics.ros.benchmark:main",
            "wbm_benchmark_engines = wbm_dynamics.mujoco.benchmark:main",
        ]
    },
)
