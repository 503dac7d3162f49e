"""A MuJoCo model of a wbm robot, built from the same URDF and robot config as Pinocchio's.

The URDF goes through MuJoCo's own URDF compiler (an independent parser of the same file), then
the model is completed with ``mujoco.MjSpec`` from the robot config:

- visual and collision geometry are dropped before parsing (no package:// meshes to resolve);
  the only collision geometry is one box per sole, whose bottom face is the config's sole
  rectangle (bottom face on the sole plane, box inside the foot), and the ground plane z = 0;
- every URDF link is kept as a body (``fusestatic="false"``), so the sole, F/T and IMU frames
  exist; inertias are taken as written (``balanceinertia="false"``, ``inertiafromgeom="false"``);
  a link given a zero rotational inertia (a point mass, e.g. iCub's ``r_hip_1``) gets
  :data:`POINT_MASS_INERTIA` (MuJoCo refuses moving bodies without rotational inertia);
- a free joint on the config's base link for a floating base;
- the URDF's movable joints that the config does not list are deleted (welded at 0, as
  Pinocchio's ``buildReducedModel`` locks them at the neutral configuration), with any equality
  (URDF mimic) that refers to them;
- joint limits: the URDF's, overridden by the config's ``joint_limits.position``; joint damping =
  the config's viscous friction, frictionloss = its Coulomb friction; no armature;
- the config's payloads as welded child bodies of their link;
- one servo actuator per actuated joint in the model's joint order: force = ctrl - kp q - kd dq
  (MuJoCo "general" actuator, gain 1, affine bias), clamped to the config's torque limits; the
  engine sets ctrl and the bias gains from the command (see :mod:`.engine`);
- F/T sensors (MuJoCo ``force`` and ``torque`` sensors) on a site at each config F/T frame, and
  an IMU site with ``framequat``, ``gyro`` and ``accelerometer`` sensors.

Config frame names resolve to a MuJoCo body and a placement in it: a URDF link is its body; a
URDF joint (e.g. iCub's fixed joint ``l_foot_ft_sensor``) is its child link's frame, which the
URDF places at the joint; a config tool is its link's body with the tool placement.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field

import mujoco
import numpy as np
import pinocchio as pin

from wbm_description.exceptions import ConfigError, NameNotFound, UrdfError
from wbm_description.robot_config import RobotConfig
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.urdf_root import remove_floating_root
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.mujoco.conversions import StateMap
from wbm_dynamics.mujoco.settings import MujocoSettings

_MOVABLE = ("revolute", "continuous", "prismatic")
_INTEGRATORS = {
    "euler": mujoco.mjtIntegrator.mjINT_EULER,
    "rk4": mujoco.mjtIntegrator.mjINT_RK4,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
}
_CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
GROUND_GEOM = "ground"
"""Name of the ground plane geom."""


def sole_geom_name(sole: str) -> str:
    """Name of the collision box of a config sole."""
    return f"sole/{sole}"


def ft_site_name(sensor: str) -> str:
    """Name of the site of a config F/T sensor."""
    return f"ft/{sensor}"


IMU_SITE = "imu"
"""Name of the IMU site."""


@dataclass(frozen=True)
class FrameAnchor:
    """Where a config frame sits in the MuJoCo model.

    Attributes:
        body: MuJoCo body name.
        placement: Placement of the frame in the body frame (body_T_frame).
    """

    body: str
    placement: pin.SE3


@dataclass(frozen=True)
class SensorAddresses:
    """Addresses in ``MjData.sensordata``.

    Attributes:
        ft: Per config F/T sensor, the addresses of its force (3) and torque (3) readings.
        imu_orientation: Address of the IMU ``framequat`` (w, x, y, z), or None.
        imu_gyro: Address of the IMU ``gyro`` (3), or None.
        imu_accelerometer: Address of the IMU ``accelerometer`` (3), or None.
    """

    ft: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    imu_orientation: int | None = None
    imu_gyro: int | None = None
    imu_accelerometer: int | None = None


@dataclass(frozen=True)
class MujocoRobotModel:
    """A compiled MuJoCo model of a wbm robot and how to read it in wbm's terms.

    Attributes:
        model: The compiled ``mujoco.MjModel`` (each engine uses its own copy).
        xml: The completed model as MJCF, for inspection and for MuJoCo's own tools.
        joint_names: Actuated joints in wbm's model order; actuator i drives joint i.
        state_map: qpos/qvel addresses and base conversions (:class:`StateMap`).
        sensors: Sensor addresses.
        anchors: Config frames (soles, F/T, IMU, tools, contact points) to body placements.
        sole_geoms: Per config sole, its collision box geom id.
        ground_geom: Geom id of the ground plane.
        torque_limits: Actuator force range per joint [N m], model order (inf: unlimited).
    """

    model: mujoco.MjModel
    xml: str
    joint_names: tuple[str, ...]
    state_map: StateMap
    sensors: SensorAddresses
    anchors: Mapping[str, FrameAnchor]
    sole_geoms: Mapping[str, int]
    ground_geom: int
    torque_limits: np.ndarray

    def body_id(self, name: str) -> int:
        """MuJoCo id of a body, or NameNotFound."""
        body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, name)
        if body < 0:
            names = [self.model.body(i).name for i in range(self.model.nbody)]
            raise NameNotFound("body", name, names, where="MuJoCo model")
        return body


def mujoco_urdf_text(config: RobotConfig) -> str:
    """The config's URDF prepared for MuJoCo's URDF compiler.

    A floating root joint and its world link are removed (the base gets its free joint in
    :func:`build_mujoco_robot`, as in Pinocchio: :mod:`wbm_description.urdf_root`); visual and
    collision elements and the Gazebo/transmission/sensor extensions are removed (MuJoCo cannot
    resolve package:// meshes and the collision shapes are replaced by the soles), and a
    ``<mujoco><compiler .../></mujoco>`` element keeps every link as a body and the inertias
    exactly as written.

    Raises:
        UrdfError: The file cannot be read or is not XML.
    """
    path = config.urdf_path
    try:
        text, _ = remove_floating_root(path, path.read_text())
        root = ET.fromstring(text)
    except (OSError, ET.ParseError) as error:
        raise UrdfError(path, "robot", "a readable URDF", str(error)) from None
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for element in link.findall(tag):
                link.remove(element)
    for tag in ("gazebo", "transmission", "sensor", "mujoco"):
        for element in root.findall(tag):
            root.remove(element)
    extension = ET.SubElement(root, "mujoco")
    ET.SubElement(
        extension,
        "compiler",
        {
            "fusestatic": "false",
            "discardvisual": "true",
            "balanceinertia": "false",
            "inertiafromgeom": "false",
            "angle": "radian",
        },
    )
    return ET.tostring(root, encoding="unicode")


def _urdf_joints(config: RobotConfig) -> dict[str, tuple[str, str]]:
    """URDF joint name to (type, child link)."""
    root = ET.fromstring(config.urdf_path.read_text())
    joints = {}
    for joint in root.iter("joint"):
        child = joint.find("child")
        if child is not None and joint.get("name"):
            joints[joint.get("name")] = (joint.get("type", ""), child.get("link", ""))
    return joints


def _anchor(
    name: str,
    config: RobotConfig,
    bodies: set[str],
    urdf_joints: Mapping[str, tuple[str, str]],
    key: str,
) -> FrameAnchor:
    """Body and placement of a config frame name (link, URDF joint or config tool)."""
    if name in bodies:
        return FrameAnchor(name, pin.SE3.Identity())
    if name in urdf_joints and urdf_joints[name][1] in bodies:
        return FrameAnchor(urdf_joints[name][1], pin.SE3.Identity())
    for tool in config.tools:
        if tool.name == name:
            link = _anchor(tool.link, config, bodies, urdf_joints, key)
            local = pin.SE3(pin.rpy.rpyToMatrix(np.array(tool.rpy)), np.array(tool.position))
            return FrameAnchor(link.body, link.placement * local)
    raise ConfigError(config.config_path, key, "a link, joint or tool of the URDF/config", name)


def _quaternion_wxyz(rotation: np.ndarray) -> np.ndarray:
    quaternion = quaternion_of_rotation(rotation)
    return np.array([quaternion.w, quaternion.x, quaternion.y, quaternion.z])


POINT_MASS_INERTIA = 1.0e-9
"""Rotational inertia [kg m^2] per axis given to links that the URDF makes point masses.

MuJoCo refuses a moving body without rotational inertia (iCub's ``r_hip_1`` has 0.754 kg and a
zero inertia tensor; Pinocchio accepts it). 1e-9 kg m^2 is 1000 times below the smallest
inertia of any iCub link (~1e-6 kg m^2) and changes mass-matrix entries by at most ~1e-8.
"""


def _fix_point_mass_inertias(spec: mujoco.MjSpec) -> list[str]:
    """Give links with an all-zero inertia tensor :data:`POINT_MASS_INERTIA`; their names."""
    fixed = []
    for body in spec.bodies:
        full = np.asarray(body.fullinertia, dtype=float)
        if np.isnan(full).any():
            full = np.asarray(body.inertia, dtype=float)  # the URDF gave a diagonal tensor
        if body.explicitinertial and np.abs(full).max() < 1e-12:
            body.fullinertia = np.full(6, np.nan)
            body.inertia = np.full(3, POINT_MASS_INERTIA if body.mass > 0.0 else 0.0)
            body.iquat = np.array([1.0, 0.0, 0.0, 0.0])
            fixed.append(body.name)
    return fixed


def build_mujoco_robot(
    robot: WholeBodyModel, settings: MujocoSettings | None = None
) -> MujocoRobotModel:
    """Build and compile the MuJoCo model of a robot.

    Args:
        robot: The whole-body model built from a robot config (its URDF path, joint order and
            config are used; the physics comes from the URDF through MuJoCo's compiler).
        settings: Time step, integrator and contact constants; default :class:`MujocoSettings`.

    Returns:
        The compiled model and its wbm address maps.

    Raises:
        ConfigError: The model has no robot config, or a config name has no MuJoCo counterpart.
        UrdfError: MuJoCo cannot compile the URDF.
    """
    settings = settings if settings is not None else MujocoSettings()
    config = robot.config
    if config is None:
        raise ConfigError(None, "robot", "a WholeBodyModel built with from_config", "no config")
    cfg = config.config_path
    try:
        spec = mujoco.MjSpec.from_string(mujoco_urdf_text(config))
    except ValueError as error:
        raise UrdfError(config.urdf_path, "robot", "a URDF MuJoCo can parse", str(error)) from None
    spec.modelname = config.name
    _fix_point_mass_inertias(spec)

    option = spec.option
    option.timestep = settings.timestep
    option.integrator = _INTEGRATORS[settings.integrator]
    option.cone = _CONES[settings.cone]
    option.gravity = np.asarray(config.gravity, dtype=float)
    option.iterations = settings.solver_iterations

    urdf_joints = _urdf_joints(config)
    bodies = {body.name for body in spec.bodies}
    if config.base_link not in bodies:
        raise ConfigError(cfg, "base.link", "a link of the URDF", config.base_link)

    # Lock the movable joints the config does not list (and the mimic equalities on them).
    locked = [
        name
        for name, (kind, _) in urdf_joints.items()
        if kind in _MOVABLE and name not in config.joints
    ]
    for equality in list(spec.equalities):
        if equality.name1 in locked or equality.name2 in locked:
            spec.delete(equality)
    for name in locked:
        joint = spec.joint(name)
        if joint is not None:
            spec.delete(joint)

    if config.floating_base:
        spec.body(config.base_link).add_freejoint(name="base_free_joint")

    # Joint limits, friction and servo actuators, in the model's joint order.
    lower = robot.from_config_order(config.position_limits[0])  # NaN: the URDF's limit
    upper = robot.from_config_order(config.position_limits[1])
    torque_limits = np.asarray(robot.torque_limits, dtype=float)
    for model_index, name in enumerate(robot.joint_names):
        joint = spec.joint(name)
        if joint is None:
            raise ConfigError(cfg, "joints", "joints MuJoCo's URDF compiler kept", name)
        if not np.isnan(lower[model_index]):
            joint.range = np.array([lower[model_index], upper[model_index]])
            joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.damping = np.array([robot.viscous_friction[model_index], 0.0, 0.0])
        joint.frictionloss = float(robot.coulomb_friction[model_index])
        joint.armature = 0.0
        joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_FALSE
        actuator = spec.add_actuator(name=f"servo/{name}", target=name)
        actuator.trntype = mujoco.mjtTrn.mjTRN_JOINT
        actuator.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        actuator.gainprm = np.concatenate([[1.0], np.zeros(len(actuator.gainprm) - 1)])
        actuator.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        actuator.biasprm = np.zeros(len(actuator.biasprm))
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        limit = torque_limits[model_index]
        if np.isfinite(limit) and limit > 0.0:
            actuator.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            actuator.forcerange = np.array([-limit, limit])
        else:
            actuator.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE

    anchors: dict[str, FrameAnchor] = {}

    def anchor(name: str, key: str) -> FrameAnchor:
        if name not in anchors:
            anchors[name] = _anchor(name, config, bodies, urdf_joints, key)
        return anchors[name]

    for i, payload in enumerate(config.payloads):
        link = anchor(payload.link, f"payloads[{i}].link")
        offset = link.placement
        body = spec.body(link.body).add_body(name=f"payload/{payload.name}")
        body.pos = offset.translation
        body.quat = _quaternion_wxyz(offset.rotation)
        body.mass = payload.mass
        body.ipos = np.array(payload.com)
        inertia = np.array(payload.inertia)
        body.fullinertia = np.array(
            [
                inertia[0, 0],
                inertia[1, 1],
                inertia[2, 2],
                inertia[0, 1],
                inertia[0, 2],
                inertia[1, 2],
            ]
        )
        body.explicitinertial = True
    for i, tool in enumerate(config.tools):
        anchor(tool.name, f"tools[{i}].name")
    for point in config.contact_points:
        anchor(point.frame, f"contact_points.{point.name}.frame")

    # Ground and sole collision boxes: only these collide.
    ground = spec.worldbody.add_geom(name=GROUND_GEOM, type=mujoco.mjtGeom.mjGEOM_PLANE)
    ground.size = np.array([0.0, 0.0, 1.0])
    contact_geoms = [ground]
    half_thickness = settings.sole_thickness / 2.0
    for sole in config.soles:
        placement = anchor(sole.frame, f"soles.{sole.name}.frame").placement
        center_in_sole = np.array([sole.center[0], sole.center[1], half_thickness])
        geom = spec.body(anchors[sole.frame].body).add_geom(
            name=sole_geom_name(sole.name), type=mujoco.mjtGeom.mjGEOM_BOX
        )
        geom.size = np.array([sole.length / 2.0, sole.width / 2.0, half_thickness])
        geom.pos = placement.act(center_in_sole)
        geom.quat = _quaternion_wxyz(placement.rotation)
        geom.mass = 0.0
        contact_geoms.append(geom)
    for geom in contact_geoms:
        geom.friction = np.array([settings.friction, 0.0, 0.0])
        geom.condim = 3
        geom.solref = np.array(settings.solref)
        geom.solimp = np.array(settings.solimp)

    # Sensors.
    for sensor in config.ft_sensors:
        site = _add_site(
            spec,
            anchor(sensor.frame, f"ft_sensors.{sensor.name}.frame"),
            ft_site_name(sensor.name),
        )
        for kind, suffix in (
            (mujoco.mjtSensor.mjSENS_FORCE, "force"),
            (mujoco.mjtSensor.mjSENS_TORQUE, "torque"),
        ):
            spec.add_sensor(
                name=f"{site}/{suffix}", type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site
            )
    if config.imu_frame is not None:
        site = _add_site(spec, anchor(config.imu_frame, "imu.frame"), IMU_SITE)
        for kind, suffix in (
            (mujoco.mjtSensor.mjSENS_FRAMEQUAT, "orientation"),
            (mujoco.mjtSensor.mjSENS_GYRO, "gyro"),
            (mujoco.mjtSensor.mjSENS_ACCELEROMETER, "accelerometer"),
        ):
            spec.add_sensor(
                name=f"{site}/{suffix}", type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site
            )

    try:
        model = spec.compile()
    except ValueError as error:
        raise UrdfError(
            config.urdf_path, "robot", "a model MuJoCo can compile", str(error)
        ) from None

    qpos_index = np.array([model.jnt_qposadr[model.joint(n).id] for n in robot.joint_names])
    dof_index = np.array([model.jnt_dofadr[model.joint(n).id] for n in robot.joint_names])
    for i, name in enumerate(robot.joint_names):
        if model.actuator(f"servo/{name}").id != i:
            raise ConfigError(cfg, "joints", "actuators in the model's joint order", name)

    def address(name: str) -> int:
        return int(model.sensor_adr[model.sensor(name).id])

    sensors = SensorAddresses(
        ft={
            s.name: (
                address(f"{ft_site_name(s.name)}/force"),
                address(f"{ft_site_name(s.name)}/torque"),
            )
            for s in config.ft_sensors
        },
        imu_orientation=address(f"{IMU_SITE}/orientation") if config.imu_frame else None,
        imu_gyro=address(f"{IMU_SITE}/gyro") if config.imu_frame else None,
        imu_accelerometer=address(f"{IMU_SITE}/accelerometer") if config.imu_frame else None,
    )
    return MujocoRobotModel(
        model=model,
        xml=spec.to_xml(),
        joint_names=tuple(robot.joint_names),
        state_map=StateMap(config.floating_base, qpos_index, dof_index),
        sensors=sensors,
        anchors=dict(anchors),
        sole_geoms={s.name: model.geom(sole_geom_name(s.name)).id for s in config.soles},
        ground_geom=model.geom(GROUND_GEOM).id,
        torque_limits=np.where(
            np.isfinite(torque_limits) & (torque_limits > 0), torque_limits, np.inf
        ),
    )


def _add_site(spec: mujoco.MjSpec, anchor: FrameAnchor, name: str) -> str:
    site = spec.body(anchor.body).add_site(name=name)
    site.pos = anchor.placement.translation
    site.quat = _quaternion_wxyz(anchor.placement.rotation)
    return name
