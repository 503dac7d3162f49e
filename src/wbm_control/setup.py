"""ament_python / pip set-up of wbm_control."""

from setuptools import find_packages, setup

package_name = "wbm_control"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
    ],
    install_requires=["setuptools", "numpy", "scipy", "pyyaml", "numba"],
    zip_safe=True,
    maintainer="wbm maintainers",
    maintainer_email="maintainers@wbm-project.org",
    description=(
        "What the robot should do: IK, the whole-body torque controller, balance (ZMP, DC"
        "M), base state estimation, trajectories and the controller node."
    ),
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "wbm_controller = wbm_control.ros.controller_node:main",
            "wbm_benchmark_controller = wbm_control.benchmark:main",
        ],
        # wbm launch's pre-flight check of the node's parameters, without importing the node.
        "wbm.parameter_checks": [
            "wbm_controller = wbm_control.ros.controller_checks:check_parameters",
        ],
    },
)
