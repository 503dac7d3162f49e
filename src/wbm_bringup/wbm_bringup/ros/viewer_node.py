"""The browser viewer node: the robot and its markers in a MeshCat page on localhost.

Run::

    wbm_viewer --ros-args --params-file config/icub/state_publisher.yaml

and open the URL it prints (``wbm_viewer: open http://127.0.0.1:<port>/static/``). For installs
without RViz: it mirrors ``joint_states`` and the base pose topic (the state publisher's
parameters, same file) into the scene at ``viewer_rate``, with the markers of
:mod:`wbm_description.markers` (CoM, CoP, support polygon, contact forces) from the F/T topics.
Until a state arrives it shows the robot config's initial posture. The MeshCat server is a
child process that ends with the node.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from wbm_bringup.viewer import MeshcatServer, RobotViewer
from wbm_description.exceptions import WbmError
from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.markers import marker_scene
from wbm_description.registry import load_robot
from wbm_description.ros.node_runtime import WbmNode, declare_settings, run_node
from wbm_description.ros.state_inputs import RobotStateInputs
from wbm_description.ros.state_publisher_node import (
    check_parameters as check_state_publisher_parameters,
)
from wbm_description.state_publisher_settings import StatePublisherSettings
from wbm_description.whole_body_model import WholeBodyModel


class ViewerNode(WbmNode):
    """Mirrors one robot's state and markers into a MeshCat scene (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__("viewer", **kwargs)
        self.settings = declare_settings(self, StatePublisherSettings)
        self.model = WholeBodyModel.from_config(load_robot(self.settings.robot))
        self.sensors = FootForceSensors(self.model)
        self.marker_options = self.settings.marker_options()
        self.inputs = RobotStateInputs(self, self.model, self.settings)
        self.server = MeshcatServer()
        try:
            self.viewer = RobotViewer(self.model, self.server.zmq_url)
            self.viewer.display(self.model.initial_configuration())
        except BaseException:
            self.server.close()
            raise
        self._shown: np.ndarray | None = None
        self._shown_readings: dict[str, np.ndarray] = {}
        self.create_timer(1.0 / self.settings.viewer_rate, self._refresh)
        print(f"wbm_viewer: open {self.server.web_url}", flush=True)
        self.get_logger().info(
            f"MeshCat viewer of '{self.model.config.name}' at {self.server.web_url}"
        )

    def _refresh(self) -> None:
        q = self.inputs.configuration()
        if q is None:
            return
        readings = dict(self.inputs.readings)
        unchanged = (
            self._shown is not None
            and np.array_equal(q, self._shown)
            and readings.keys() == self._shown_readings.keys()
            and all(np.array_equal(readings[k], self._shown_readings[k]) for k in readings)
        )
        if unchanged:
            return
        try:
            self.viewer.display(q)
            self.viewer.draw_markers(marker_scene(self.sensors, q, readings, self.marker_options))
        except WbmError as error:
            self.inputs.reporter.drop("viewer", error)
            return
        self._shown, self._shown_readings = q, readings

    def stop(self) -> None:
        """Stop the MeshCat server with the node."""
        self.server.close()


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks of this node's parameters, without starting it (``wbm launch`` pre-flight).

    The viewer reads the state publisher's parameters (:class:`StatePublisherSettings`), so
    they are the state publisher's checks.

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name.
    """
    check_state_publisher_parameters(parameters)


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_viewer``."""
    return run_node(ViewerNode, "wbm_viewer", args)


if __name__ == "__main__":
    sys.exit(main())
