"""Robot config and URDF validation: one test per kind of error.

Every error must name the file, the key (or URDF element) and what was expected. The config is
read by the shared settings reader (wbm_description.settings), whose wording is used for file,
type and shape errors ("a readable YAML file", "a list", "a list of 3 values").
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from wbm_description import (
    ConfigError,
    InputError,
    NameNotFound,
    UrdfError,
    WholeBodyModel,
    available_robots,
    load_robot,
    load_robot_config,
)
from wbm_description.registry import robot_config_path
from wbm_description.urdf_checks import check_urdf

DATA = Path(__file__).resolve().parents[1] / "data"
PLANAR_URDF = (DATA / "planar_2link.urdf").read_text()


@pytest.fixture(scope="module")
def icub_raw() -> dict:
    raw = yaml.safe_load(robot_config_path("icub").read_text())
    raw["urdf"] = str(load_robot("icub").urdf_path)  # absolute, so the copy loads from tmp
    return raw


def write_config(tmp_path: Path, raw: dict) -> Path:
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def config_error(tmp_path: Path, raw: dict, *, build_model: bool = False) -> ConfigError:
    path = write_config(tmp_path, raw)
    with pytest.raises(ConfigError) as info:
        config = load_robot_config(path)
        if build_model:
            WholeBodyModel.from_config(config)
    error = info.value
    assert str(path) in str(error), "the error names the file"
    return error


def test_registry_lists_icub_and_panda():
    assert {"icub", "panda"} <= set(available_robots())
    with pytest.raises(ConfigError, match="registered robot"):
        load_robot("no_such_robot")


def test_icub_loads_with_its_mass_dofs_and_frames(icub: WholeBodyModel):
    # Independent reference: the sum of the URDF's <mass> values, read with an XML parser.
    robot = check_urdf(icub.urdf_path)
    urdf_mass = sum(float(m.get("value")) for m in robot.iter("mass"))
    assert icub.total_mass == pytest.approx(urdf_mass, rel=1e-12)
    assert icub.total_mass == pytest.approx(28.346871, abs=1e-6)
    assert (icub.ndof, icub.nq, icub.nv) == (29, 36, 35)
    config = icub.config
    for frame in [s.frame for s in config.soles] + [s.frame for s in config.ft_sensors]:
        icub.frame_id(frame)
    assert {"l_sole", "r_sole", "l_foot_ft_sensor", "r_foot_ft_sensor", "imu_frame"} <= set(
        icub.frame_names
    )
    assert config.imu_frame == "imu_frame"
    assert config.sole("left_foot").corners().shape == (4, 3)


def test_second_robot_fixed_base_arm(panda: WholeBodyModel):
    assert not panda.floating_base
    assert (panda.ndof, panda.nq) == (7, 7)  # finger joints locked
    robot = check_urdf(panda.urdf_path)
    assert panda.total_mass == pytest.approx(
        sum(float(m.get("value")) for m in robot.iter("mass")) + 0.5, rel=1e-12
    )


def test_sole_corners_from_rectangle():
    sole = load_robot("icub").sole("left_foot")
    corners = sole.corners()
    # 0.14 x 0.07 rectangle centred at x = 0.02: x in [-0.05, 0.09], y in [-0.035, 0.035].
    np.testing.assert_allclose(corners[:, 0].min(), -0.05)
    np.testing.assert_allclose(corners[:, 0].max(), 0.09)
    np.testing.assert_allclose(np.abs(corners[:, 1]), 0.035)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="readable YAML file") as info:
        load_robot_config(tmp_path / "absent.yaml")
    assert "absent.yaml" in str(info.value) and "No such file" in str(info.value)


def test_unreadable_config_file(tmp_path):
    # A directory in place of the file cannot be read, even by root.
    (tmp_path / "robot.yaml").mkdir()
    with pytest.raises(ConfigError, match="readable"):
        load_robot_config(tmp_path / "robot.yaml")


def test_invalid_yaml(tmp_path):
    path = tmp_path / "robot.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="readable YAML file") as info:
        load_robot_config(path)
    # The YAML parser's own message says where the syntax broke.
    assert str(path) in str(info.value) and "line 2" in str(info.value)


def test_unknown_key(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["jionts"] = raw["joints"]
    error = config_error(tmp_path, raw)
    assert error.key == "jionts"


def test_missing_urdf_file(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["urdf"] = "missing.urdf"
    error = config_error(tmp_path, raw)
    assert error.key == "urdf" and "existing URDF file" in str(error)


def test_wrong_type(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["joints"] = "l_knee"
    error = config_error(tmp_path, raw)
    assert error.key == "joints" and "expected a list, got 'l_knee'" in str(error)


def test_wrong_shape(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["gravity"] = [0.0, -9.81]
    error = config_error(tmp_path, raw)
    assert error.key == "gravity" and "list of 3 values" in str(error)


def test_wrong_per_joint_list_length(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["servo_gains"]["kp"] = [100.0, 100.0]
    error = config_error(tmp_path, raw)
    assert error.key == "servo_gains.kp" and "29 numbers" in str(error)


def test_unknown_joint_name(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["joints"][2] = "l_hip_yaw_typo"
    error = config_error(tmp_path, raw, build_model=True)
    assert error.key == "joints[2]" and "movable joint" in str(error)


def test_unknown_link_name(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["payloads"] = [
        {"link": "l_hnd", "mass": 0.5, "com": [0, 0, 0], "inertia": [1e-4, 1e-4, 1e-4, 0, 0, 0]}
    ]
    error = config_error(tmp_path, raw, build_model=True)
    assert error.key == "payloads[0].link" and "l_hnd" in str(error)


def test_unknown_frame_name(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["ft_sensors"]["left_foot"]["frame"] = "l_foot_ft"
    error = config_error(tmp_path, raw, build_model=True)
    assert error.key == "ft_sensors.left_foot.frame"


def test_wrong_base_link(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["base"]["link"] = "root_link"
    error = config_error(tmp_path, raw, build_model=True)
    assert error.key == "base.link" and "'base_link'" in str(error)


def test_non_positive_payload_mass(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["payloads"] = [
        {"link": "l_hand", "mass": -1.0, "com": [0, 0, 0], "inertia": [1e-4, 1e-4, 1e-4, 0, 0, 0]}
    ]
    error = config_error(tmp_path, raw)
    assert error.key == "payloads[0].mass" and "> 0" in str(error)


def test_non_positive_payload_inertia(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["payloads"] = [
        {"link": "l_hand", "mass": 1.0, "com": [0, 0, 0], "inertia": [1e-4, -1e-4, 1e-4, 0, 0, 0]}
    ]
    error = config_error(tmp_path, raw)
    assert error.key == "payloads[0].inertia" and "positive definite" in str(error)


def test_limits_lower_above_upper(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["joint_limits"]["position"] = {"l_knee": [0.5, -0.5]}
    error = config_error(tmp_path, raw)
    assert error.key == "joint_limits.position.l_knee" and "lower <= upper" in str(error)


def test_non_positive_torque_limit(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["joint_limits"]["torque"]["joints"]["l_knee"] = 0.0
    error = config_error(tmp_path, raw)
    assert error.key == "joint_limits.torque.joints.l_knee"


def test_initial_posture_outside_limits(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["initial_posture"]["l_knee"] = 1.5  # the knee's upper limit is 0.4 rad
    error = config_error(tmp_path, raw, build_model=True)
    assert error.key == "initial_posture.l_knee" and "within the joint limits" in str(error)


def urdf_error(tmp_path: Path, text: str) -> UrdfError:
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    with pytest.raises(UrdfError) as info:
        WholeBodyModel.from_urdf(path, floating_base=False)
    assert str(path) in str(info.value), "the error names the file"
    return info.value


def test_urdf_missing(tmp_path):
    with pytest.raises(UrdfError, match="readable URDF file"):
        WholeBodyModel.from_urdf(tmp_path / "absent.urdf")


def test_urdf_malformed_xml(tmp_path):
    error = urdf_error(tmp_path, PLANAR_URDF.replace("</robot>", ""))
    assert "well-formed XML" in str(error)


def test_urdf_negative_mass(tmp_path):
    error = urdf_error(
        tmp_path, PLANAR_URDF.replace('<mass value="0.7"/>', '<mass value="-0.7"/>')
    )
    assert error.element == "link 'link2' inertial mass"


def test_urdf_non_positive_inertia(tmp_path):
    text = PLANAR_URDF.replace('iyy="0.01" iyz="0" izz="0.01"', 'iyy="0.01" iyz="0" izz="-0.01"')
    error = urdf_error(tmp_path, text)
    assert error.element == "link 'link2' inertia" and "semi-definite" in str(error)


def test_urdf_limits_lower_above_upper(tmp_path):
    limit = '<limit lower="-3.14" upper="3.14" effort="50" velocity="10"/>'
    text = PLANAR_URDF.replace(limit, '<limit lower="1" upper="-1" effort="50" velocity="10"/>', 1)
    error = urdf_error(tmp_path, text)
    assert error.element == "joint 'joint1' limit" and "lower <= upper" in str(error)


def test_model_rejects_bad_inputs(icub: WholeBodyModel):
    q = icub.initial_configuration()
    v = np.zeros(icub.nv)
    with pytest.raises(InputError, match="length 36"):
        icub.mass_matrix(q[:-1])
    bad = q.copy()
    bad[10] = np.nan
    with pytest.raises(InputError, match="non-finite"):
        icub.bias_forces(bad, v)
    bad = q.copy()
    bad[3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(InputError, match="unit base quaternion"):
        icub.com_position(bad)
    with pytest.raises(NameNotFound, match="unknown frame 'l_sol'"):
        icub.frame_jacobian(q, "l_sol")
    with pytest.raises(InputError, match="representation"):
        icub.frame_jacobian(q, "l_sole", representation="world")
    with pytest.raises(InputError, match="joint_torques"):
        icub.forward_dynamics(q, v, np.zeros(3))
    with pytest.raises(InputError, match="kp"):
        icub.contact_forward_dynamics(q, v, np.zeros(icub.ndof), ["l_sole"], kp=-1.0)
    with pytest.raises(NameNotFound):
        icub.inverse_dynamics(q, v, v, external_wrenches={"nowhere": np.zeros(6)})
    with pytest.raises(InputError, match="external_wrenches"):
        icub.inverse_dynamics(q, v, v, external_wrenches={"l_hand": [np.inf, 0, 0, 0, 0, 0]})


def test_joint_limit_check(icub: WholeBodyModel):
    q = icub.initial_configuration()
    assert icub.check_joint_limits(q) == []
    q[7 + icub.joint_index("l_knee")] = 1.0
    assert icub.check_joint_limits(q) == ["l_knee"]


def test_per_joint_values_in_their_three_forms(tmp_path, icub_raw):
    # The same values written as a number, a list in `joints` order and {default, joints}: the
    # arrays must be equal, and equal to the values written (independent of the reader's code).
    joints = icub_raw["joints"]
    n = len(joints)
    forms = {
        "number": 3.0,
        "list": [3.0] * (n - 1) + [7.0],
        "table": {"default": 3.0, "joints": {joints[-1]: 7.0}},
    }
    expected = np.full(n, 3.0)
    expected_last = expected.copy()
    expected_last[-1] = 7.0
    for form, value in forms.items():
        raw = copy.deepcopy(icub_raw)
        raw["servo_gains"]["kp"] = value
        raw["friction"] = {"viscous": value}
        config = load_robot_config(write_config(tmp_path, raw))
        want = expected if form == "number" else expected_last
        np.testing.assert_array_equal(config.servo_kp, want, err_msg=form)
        np.testing.assert_array_equal(config.viscous_friction, want, err_msg=form)
        np.testing.assert_array_equal(config.coulomb_friction, np.zeros(n), err_msg=form)


def test_icub_values_are_the_files(icub_raw):
    config = load_robot("icub")
    joints = list(config.joints)
    assert joints == icub_raw["joints"]
    torque = icub_raw["joint_limits"]["torque"]
    for joint, limit in torque["joints"].items():
        assert config.torque_limits[joints.index(joint)] == limit
    assert config.torque_limits[joints.index("l_shoulder_pitch")] == torque["default"]
    for joint, angle in icub_raw["initial_posture"].items():
        assert config.initial_posture[joints.index(joint)] == angle
    assert config.initial_posture[joints.index("torso_yaw")] == 0.0
    assert np.isnan(config.position_limits[0]).all() and np.isnan(config.position_limits[1]).all()
    assert [(s.name, s.frame, s.length, s.width, s.center) for s in config.soles] == [
        ("left_foot", "l_sole", 0.14, 0.07, (0.02, 0.0)),
        ("right_foot", "r_sole", 0.14, 0.07, (0.02, 0.0)),
    ]
    assert [(s.name, s.frame) for s in config.ft_sensors] == [
        ("left_foot", "l_foot_ft_sensor"),
        ("right_foot", "r_foot_ft_sensor"),
    ]
    assert [(t.name, t.link, t.position) for t in config.tools] == [
        ("l_hand_tool", "l_hand", (0.0, 0.0, -0.05))
    ]


def test_payload_inertia_and_default_name(tmp_path, icub_raw):
    raw = copy.deepcopy(icub_raw)
    raw["payloads"] = [
        {"link": "l_hand", "mass": 0.5, "inertia": [1.0, 2.0, 3.0, 0.1, 0.2, 0.3]},
    ]
    raw["joint_limits"]["position"] = {"l_knee": [-1.0, 0.2]}
    config = load_robot_config(write_config(tmp_path, raw))
    (payload,) = config.payloads
    assert payload.name == "payload_0" and payload.com == (0.0, 0.0, 0.0)
    # [ixx, iyy, izz, ixy, ixz, iyz] -> the symmetric matrix.
    assert payload.inertia == ((1.0, 0.1, 0.2), (0.1, 2.0, 0.3), (0.2, 0.3, 3.0))
    knee = config.joints.index("l_knee")
    assert (config.position_limits[0][knee], config.position_limits[1][knee]) == (-1.0, 0.2)


@pytest.mark.parametrize(
    ("change", "key", "expected"),
    [
        (lambda raw: raw.pop("servo_gains"), "servo_gains", "a mapping {kp, kd}"),
        (lambda raw: raw.pop("base"), "base", "a mapping {type, link}"),
        (lambda raw: raw.pop("name"), "name", "a non-empty string"),
        (lambda raw: raw["servo_gains"].pop("kd"), "servo_gains.kd", "a value (number, list"),
        (lambda raw: raw["base"].update(type="flying"), "base.type", "one of ['floating'"),
        (
            lambda raw: raw["servo_gains"]["kp"]["joints"].update(l_kne=1.0),
            "servo_gains.kp.joints.l_kne",
            "one of the config's joints",
        ),
        (
            lambda raw: raw["servo_gains"]["kp"].update(gain=1.0),
            "servo_gains.kp",
            "only the keys 'default' and 'joints'",
        ),
        (lambda raw: raw["friction"].update(viscous=-0.1), "friction.viscous", "a number >= 0"),
        (
            lambda raw: raw["initial_posture"].update(l_kne=0.1),
            "initial_posture.l_kne",
            "one of the config's joints",
        ),
        (
            lambda raw: raw["joint_limits"].update(position={"l_kne": [0.0, 1.0]}),
            "joint_limits.position.l_kne",
            "one of the config's joints",
        ),
        (lambda raw: raw["joints"].append("l_knee"), "joints", "each joint named once"),
        (
            lambda raw: raw["soles"]["left_foot"].update(size=[0.14, 0.0]),
            "soles.left_foot.size",
            "a number > 0",
        ),
        (
            lambda raw: raw["ft_sensors"]["left_foot"].pop("frame"),
            "ft_sensors.left_foot.frame",
            "a non-empty string",
        ),
        (lambda raw: raw.update(urdf={"path": "x.urdf"}), "urdf.package", "a non-empty string"),
        (
            lambda raw: raw.update(urdf={"package": "no_such_package_wbm", "path": "x.urdf"}),
            "urdf.package",
            "an installed package",
        ),
        (lambda raw: raw["tools"][0].pop("name"), "tools[0].name", "a non-empty string"),
    ],
)
def test_errors_name_file_key_and_expectation(tmp_path, icub_raw, change, key, expected):
    raw = copy.deepcopy(icub_raw)
    change(raw)
    error = config_error(tmp_path, raw)
    assert error.key == key, str(error)
    assert expected in error.expected, str(error)
