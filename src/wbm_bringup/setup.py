"""ament_python / pip set-up of wbm_bringup."""

from glob import glob

from setuptools import find_packages, setup

package_name = "wbm_bringup"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", glob("launch/*.launch.yaml")),
        (f"share/{package_name}/rviz", glob("rviz/*.rviz")),
        (f"share/{package_name}/foxglove", glob("foxglove/*.json")),
        *[
            (f"share/{package_name}/{directory}", glob(f"{directory}/*.yaml"))
            for directory in sorted(glob("config/*"))
        ],
    ],
    install_requires=["setuptools", "numpy", "pyyaml"],
    zip_safe=True,
    maintainer="wbm maintainers",
    maintainer_email="maintainers@wbm-project.org",
    description=(
        "How wbm is brought up and watched: launch and parameter files, the wbm command, the "
        "recorder, the demo, the browser viewer and the cross-package benchmarks."
    ),
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "wbm = wbm_bringup.cli:main",
            "wbm_model_info = wbm_bringup.cli:model_info_main",
            "wbm_viewer = wbm_bringup.ros.viewer_node:main",
            "wbm_recorder = wbm_bringup.ros.recorder_node:main",
            "wbm_scenario = wbm_bringup.ros.scenario_node:main",
            "wbm_demo = wbm_bringup.demo.run:main",
            "wbm_benchmark_bringup = wbm_bringup.ros.benchmark_bringup:main",
            "wbm_benchmark_push = wbm_bringup.benchmarks.push:main",
            "wbm_benchmark_soak = wbm_bringup.ros.benchmark_soak:main",
            "wbm_benchmark_loop_latency = wbm_bringup.benchmarks.loop_latency:main",
            "wbm_benchmark_launches = wbm_bringup.ros.benchmark_launches:main",
            "wbm_benchmark_walking = wbm_bringup.benchmarks.walking:main",
        ]
    },
)
