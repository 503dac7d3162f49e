"""The Foxglove layout shipped with wbm: what it reads, and a copy beside a recording (no ROS).

``wbm_layout.json`` (in ``src/wbm_bringup/foxglove``, installed to
``share/wbm_bringup/foxglove``) has a 3D panel (the robot from ``/robot_description`` placed by
``/tf`` and ``/tf_static``, the state publisher's ``/markers``, a walking node's
``/walking/markers``), plots of the base height (``/ground_truth/odom`` and the estimate
``/odom``) and of the pushes (``/apply_wrench``), and the controller's ``/diagnostics`` as raw
messages. :func:`layout_uses` lists every topic and message path it reads (a test checks them
against a recorded MCAP); :func:`copy_layout_beside` puts it next to a recording.

To look at a recording in Foxglove (desktop app, or https://app.foxglove.dev in a browser): open
the ``.mcap`` file inside the rosbag2 directory (the demo's ``output/demo/recording``), then
"Layouts" > "Import from file..." and pick ``wbm_layout.json`` (beside the recording when it was
copied there, else in ``share/wbm_bringup/foxglove``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wbm_bringup.share import share_directory
from wbm_description.exceptions import ConfigError

#: File name of the layout, in the share directory and beside a recording.
LAYOUT_NAME = "wbm_layout.json"


@dataclass(frozen=True)
class LayoutUse:
    """One topic a panel of the layout reads.

    Attributes:
        panel: The panel's id (``"3D!robot"``, ``"Plot!base"``, ...).
        topic: The topic (absolute name).
        fields: Message fields down to the value plotted (``("pose", "pose", "position", "z")``),
            empty when the panel shows whole messages.
    """

    panel: str
    topic: str
    fields: tuple[str, ...] = ()


def installed_layout() -> Path:
    """The layout in the installed share directory (``share/wbm_bringup/foxglove``)."""
    return share_directory() / "foxglove" / LAYOUT_NAME


def _message_path(panel: str, path: str) -> LayoutUse:
    topic, _, fields = path.partition(".")
    names = tuple(fields.split(".")) if fields else ()
    if not topic.startswith("/") or any(not name.isidentifier() for name in names):
        raise ConfigError(
            None,
            f"configById.{panel}",
            "message paths /<topic>.<field>.<field> (no filters or indices)",
            path,
        )
    return LayoutUse(panel, topic, names)


def layout_uses(layout: Mapping) -> list[LayoutUse]:
    """Every topic and message path the layout's panels read.

    Args:
        layout: The layout (the JSON file's content).

    Raises:
        ConfigError: A panel of a kind this reader does not know, or a message path it cannot
            parse (the layout would need a new check).
    """
    uses = []
    for panel, config in layout["configById"].items():
        kind = panel.split("!", 1)[0]
        if kind == "3D":
            uses += [LayoutUse(panel, topic) for topic in config.get("topics", {})]
        elif kind == "Plot":
            uses += [_message_path(panel, entry["value"]) for entry in config["paths"]]
        elif kind == "RawMessages":
            uses.append(_message_path(panel, config["topicPath"]))
        else:
            raise ConfigError(None, f"configById.{panel}", "a 3D, Plot or RawMessages panel")
    return uses


def copy_layout_beside(recording: Path, layout: Path | None = None) -> Path:
    """Copy the layout next to a recording (``<recording>/../wbm_layout.json``).

    Args:
        recording: The rosbag2 directory.
        layout: The layout file; the installed one by default.

    Returns:
        The copy.
    """
    source = installed_layout() if layout is None else Path(layout)
    json.loads(source.read_text())  # a broken file stops here, not in Foxglove
    target = Path(recording).parent / LAYOUT_NAME
    shutil.copyfile(source, target)
    return target
