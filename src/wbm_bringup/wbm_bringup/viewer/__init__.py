"""The browser viewer: see and drive the robot in a web page, where RViz is not installed.

The node (:mod:`wbm_bringup.ros.viewer_node`) serves a page on localhost with the robot
(its URDF visual meshes placed by the whole-body model's kinematics from ``joint_states`` and the
base pose topic), every marker of the MarkerArray topics by namespace, a status panel
(controller mode, safe hold and reason, real-time factor), live plots (CoM and ZMP over the
support polygon seen from above, tracking errors over a sliding window) and controls that
publish on the topics any node uses (``targets/*``, ``apply_wrench``, ``cmd_vel``,
``goal_pose``) or call the robot interface's ``reset``/``pause``/``resume``.

Library: viser (PyPI ``viser==1.1.1``, Python >= 3.8, a 3.6 MB wheel, about 9 MB installed plus
small pure-Python dependencies: msgspec, websockets, trimesh, imageio, rich, zstandard). Compared:

- meshcat 0.3.2 (the previous viewer): last released in 2021; a ZeroMQ server subprocess, a
  scene-path API, no GUI controls or plots, its camera only settable through scene paths, and
  its COLLADA loader failed on iCub's multi-part meshes;
- viser: maintained (releases through 2026), three.js scene with meshes, lines, arrows, labels,
  transform-control gizmos, GUI panel (buttons, sliders, numbers, markdown, images) and uPlot
  plots, an initial camera given as position / look-at / up / vertical field of view, one
  server thread in-process (``stop()`` ends it), static page served from the wheel (no network);
- rerun-sdk: maintained, good time-series logging and a web viewer, but a ~50 MB binary wheel and
  its viewer is one-way (no controls that call back into Python);
- foxglove-sdk: maintained, a WebSocket server for the Foxglove app, but the app itself is not
  served locally (no pip-only page to open);
- nicegui / trame / k3d / pythreejs: general UI or notebook toolkits, where the scene, gizmos and
  robot loading would be ours to write.

Meshes: :mod:`.urdf_visuals` parses the URDF's ``<visual>`` elements itself and loads meshes with
trimesh (pycollada for COLLADA), turning COLLADA's declared up axis to z; a mesh that cannot be
loaded is named and left out. Modules: :mod:`.settings` (node parameters), :mod:`.urdf_visuals`,
:mod:`.robot_scene`, :mod:`.camera` (default camera framing the robot), :mod:`.markers_view`,
:mod:`.push`, :mod:`.status`, :mod:`.plots`, :mod:`.app` (the page), :mod:`.live_view` (from
the node's inputs to the page: state, markers, status, real-time factor, refresh),
:mod:`.foxglove_layout`. None imports rclpy.

Beside it: ``src/wbm_bringup/rviz/wbm.rviz`` (RViz: robot model, TF, markers, the walking
markers with the footstep plan, goal pose tool; installed to ``share/wbm_bringup/rviz``) and
``src/wbm_bringup/foxglove/wbm_layout.json`` (installed to ``share/wbm_bringup/foxglove``).
Neither RViz nor Foxglove runs here: ``tests/viewer/test_rviz_foxglove.py`` checks the RViz
displays' topics and types against what running nodes announce, and
``tests/viewer/test_foxglove_recording.py`` records the demo bringup and checks every topic,
schema and plotted message path of the layout against the MCAP file, read with the ``mcap``
library as Foxglove reads it.

Recordings in Foxglove: the demo records every topic to ``output/demo/recording`` (a rosbag2
directory with one ``.mcap`` file; ``wbm launch launch/sim.launch.yaml record:=<dir>`` records
any run). :func:`.foxglove_layout.copy_layout_beside` puts ``wbm_layout.json`` next to a
recording (``output/demo/wbm_layout.json``). In Foxglove (desktop app, or
https://app.foxglove.dev): "Open local file" and pick the ``.mcap`` file, then "Layouts" >
"Import from file..." and pick ``wbm_layout.json``. The 3D panel loads the robot from the
recorded ``/robot_description``; its meshes are ``package://example-robot-data/...`` URIs that
Foxglove has to resolve to files (its ROS package path must include example-robot-data's
``share`` directory); that part is not checked here, the frames and markers need nothing more.
"""
