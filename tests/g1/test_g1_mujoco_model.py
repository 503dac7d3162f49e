"""G1 in MuJoCo: the model builder on G1's URDF, as installed and with its floating joint enabled.

MuJoCo's URDF compiler turns a ``floating`` joint into a free joint; the builder adds its own on
the base link, so without removing the URDF's (``wbm_description.urdf_root``) the pelvis would
carry two ("more than 6 dofs in body 'pelvis'"). References: the URDF's link masses read as XML,
and the model built from the installed URDF.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from g1_helpers import urdf_root, write_floating_variant

from wbm_description import WholeBodyModel, load_robot_config
from wbm_dynamics.mujoco.engine import MujocoEngine


def free_joints(model: mujoco.MjModel) -> list[str]:
    return [
        model.joint(i).name
        for i in range(model.njnt)
        if model.jnt_type[i] == mujoco.mjtJoint.mjJNT_FREE
    ]


@pytest.fixture(scope="module")
def installed(g1):
    return MujocoEngine(g1).mujoco_robot.model


def test_mujoco_model_of_g1(g1: WholeBodyModel, installed):
    masses = [float(m.get("value")) for m in urdf_root(g1.config.urdf_path).iter("mass")]
    # The URDF's masses as written (no payloads): 1e-9 kg, round-off of MuJoCo's compiler.
    assert installed.body_mass.sum() == pytest.approx(sum(masses), abs=1e-9)
    assert free_joints(installed) == ["base_free_joint"]
    assert (installed.nq, installed.nv, installed.nu) == (g1.nq, g1.nv, g1.ndof)


def test_urdf_floating_joint_is_replaced_by_the_builders_free_joint(g1, installed, tmp_path):
    _, config = write_floating_variant(g1.config.urdf_path, tmp_path)
    variant = MujocoEngine(WholeBodyModel.from_config(load_robot_config(config)))
    model = variant.mujoco_robot.model
    assert free_joints(model) == ["base_free_joint"]
    assert (model.nq, model.nv, model.nu, model.nbody) == (
        installed.nq,
        installed.nv,
        installed.nu,
        installed.nbody,
    )
    names = [model.body(i).name for i in range(model.nbody)]
    assert names == [installed.body(i).name for i in range(installed.nbody)]
    np.testing.assert_allclose(model.body_mass, installed.body_mass, atol=0.0)
