"""ament_python / pip set-up of wbm_description."""

from glob import glob

from setuptools import find_packages, setup

package_name = "wbm_description"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    package_data={package_name: ["robots/*.yaml", "robots/*.urdf", "ros/fastdds_profile.xml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/robots", glob(f"{package_name}/robots/*")),
    ],
    install_requires=["setuptools", "numpy", "pyyaml"],
    zip_safe=True,
    maintainer="wbm maintainers",
    maintainer_email="maintainers@wbm-project.org",
    description="Robot registry, validated configs and the whole-body model on Pinocchio.",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "wbm_benchmark_model = wbm_description.benchmark_model:main",
            "wbm_state_publisher = wbm_description.ros.state_publisher_node:main",
            "wbm_benchmark_state_publisher = wbm_description.ros.benchmark_state_publisher:main",
        ],
    },
)
