"""Compliant (penalty) point contact: spatial_v2's ``gcontact`` law with a stick anchor.

Per contact point penetrating a surface by depth d > 0 (seed 004 eqs 8.1-8.2, seed 001 gcontact),
with n the surface's outward normal, v the point's velocity, v_n = v . n, v_t = v - v_n n:

- normal force, never pulling: f_n = max(0, sqrt(d) (K d - D v_n));
- tangential force, a spring-damper to a stick anchor a on the surface, u = tangential part of
  (p - a): f_t = -sqrt(d) (K_t u + D_t v_t), limited to the Coulomb cone |f_t| <= mu f_n.

The anchor is the model's state (spatial_v2's tangential deformation u). It is placed where a
point first touches and released when it leaves. While |sqrt(d) K_t u| <= mu f_n the point sticks
(the anchor stays); beyond, it slides: :meth:`CompliantContactModel.update_anchors` drags the
anchor so that the spring sits on the cone (a return map), so a sliding point feels mu f_n against
its sliding velocity. Anchors change once per time step; within a step (the stages of RK4) the
forces are a smooth function of the configuration and velocity.

With the ground alone (normal +z everywhere) a short path avoids the general surface query.
"""

from __future__ import annotations

import math

import numpy as np

from wbm_dynamics.contact_points import ContactKinematics
from wbm_dynamics.environment import Environment
from wbm_dynamics.settings import CompliantContactSettings

_TINY = 1e-300


class CompliantContactModel:
    """Forces of the compliant contact model and its anchor state.

    Args:
        settings: The model's constants.
        environment: The surfaces.
        size: Number of contact points.
    """

    def __init__(self, settings: CompliantContactSettings, environment: Environment, size: int):
        self.stiffness = settings.stiffness
        self.damping = settings.damping
        self.tangential_stiffness = settings.tangential_stiffness_value
        self.tangential_damping = settings.tangential_damping_value
        self.environment = environment
        self._ground_only = not environment.has_boxes
        self._ground_friction = environment.ground_friction
        self.size = size
        self._anchor = np.zeros((size, 3))
        self._anchor_surface = np.full(size, -1, dtype=int)
        # With the ground alone the anchors live on Python floats (the per-point law reads and
        # writes them at every step): per point, whether it is anchored and the anchor's x, y.
        self._held = [False] * size
        self._anchor_xy = [[0.0, 0.0] for _ in range(size)]

    @property
    def anchor(self) -> np.ndarray:
        """Stick anchor of each point (where it holds one), world [m], (size, 3)."""
        if self._ground_only:
            return np.array([[x, y, 0.0] for x, y in self._anchor_xy]).reshape(-1, 3)
        return self._anchor

    @property
    def anchor_surface(self) -> np.ndarray:
        """Surface each point's anchor is on (0 the ground, 1 + i box i), -1 none, (size,)."""
        if self._ground_only:
            return np.array([0 if held else -1 for held in self._held], dtype=int)
        return self._anchor_surface

    def reset(self) -> None:
        """Release every anchor."""
        self._anchor[:] = 0.0
        self._anchor_surface[:] = -1
        self._held = [False] * self.size
        self._anchor_xy = [[0.0, 0.0] for _ in range(self.size)]

    @property
    def anchored(self) -> np.ndarray:
        """Which points hold a stick anchor (are in contact), (size,) bool."""
        return self.anchor_surface >= 0

    def _normal_terms(self, kinematics: ContactKinematics):
        """Depth, sqrt(depth) (0 when not touching), normals, normal speeds, surfaces, mu."""
        if self._ground_only:
            depth = -kinematics.position[:, 2]
            root = np.sqrt(np.maximum(depth, 0.0))
            surface = (depth > 0.0).astype(int) - 1  # 0: the ground, -1: no contact
            return depth, root, None, kinematics.velocity[:, 2], surface, self._ground_friction
        query = self.environment.query(kinematics.position)
        depth = -query.distance
        root = np.sqrt(np.maximum(depth, 0.0))
        normal_speed = np.einsum("ij,ij->i", kinematics.velocity, query.normal)
        surface = np.where(depth > 0.0, query.surface, -1)
        return depth, root, query.normal, normal_speed, surface, query.friction

    def _ground(self, kinematics: ContactKinematics, update: bool) -> np.ndarray:
        """The ground-only path of :meth:`update_anchors` (update) and :meth:`forces`.

        The normal is +z everywhere. Written out per point on Python floats: for the few points
        of a robot's soles this costs less than the dozens of numpy calls of the batched form
        (each ~1-2 us on arrays this small); the formulas are the same, term by term.
        """
        rows = kinematics.rows
        points = (
            range(rows.start, rows.stop) if isinstance(rows, slice) else kinematics.index.tolist()
        )
        xs, ys, zs = kinematics.position.T.tolist()
        vxs, vys, vzs = kinematics.velocity.T.tolist()
        anchors = self._anchor_xy
        held = self._held
        new_held = [False] * self.size
        stiffness, damping = self.stiffness, self.damping
        tangential_stiffness, tangential_damping = (
            self.tangential_stiffness,
            self.tangential_damping,
        )
        friction = self._ground_friction
        forces = []
        for k, (point, z) in enumerate(zip(points, zs, strict=True)):
            depth = -z
            if not depth > 0.0:  # not touching: no force, the anchor is released
                forces.append((0.0, 0.0, 0.0))
                if update:
                    anchor = anchors[point]
                    anchor[0] = xs[k]
                    anchor[1] = ys[k]
                continue
            root = math.sqrt(depth)
            normal_force = root * (stiffness * depth - damping * vzs[k])
            if not normal_force > 0.0:
                normal_force = 0.0
            limit = friction * normal_force
            x, y = xs[k], ys[k]
            anchor = anchors[point]
            if held[point]:  # held by its anchor
                ux, uy = x - anchor[0], y - anchor[1]
            else:
                ux = uy = 0.0
            if update:
                spring = tangential_stiffness * math.hypot(ux, uy) * root
                scale = limit / (spring if spring > _TINY else _TINY)
                if scale < 1.0:  # sliding: the anchor is dragged onto the cone
                    ux *= scale
                    uy *= scale
                anchor[0] = x - ux
                anchor[1] = y - uy
                new_held[point] = True
            tx = -root * (tangential_stiffness * ux + tangential_damping * vxs[k])
            ty = -root * (tangential_stiffness * uy + tangential_damping * vys[k])
            magnitude = math.hypot(tx, ty)
            scale = limit / (magnitude if magnitude > _TINY else _TINY)
            if scale < 1.0:
                tx *= scale
                ty *= scale
            forces.append((tx, ty, normal_force))
        if update:
            self._held = new_held
        return np.array(forces)

    def update_anchors(self, kinematics: ContactKinematics) -> np.ndarray:
        """Place, drag (sliding) or release the stick anchors at the current state (once a step).

        Returns:
            The contact forces at the current state with the updated anchors, as
            :meth:`forces` would (world axes [N], (m, 3)).
        """
        index = kinematics.index
        if self._ground_only:
            if index.size == 0:
                self._held = [False] * self.size
                return np.zeros((0, 3))
            return self._ground(kinematics, update=True)
        surface_before = self.anchor_surface[index]
        self.anchor_surface[:] = -1
        if index.size == 0:
            return np.zeros((0, 3))
        terms = self._normal_terms(kinematics)
        depth, root, normal, normal_speed, surface, friction = terms
        position = kinematics.position
        # New contacts (or a change of surface) anchor where they are; so do free points.
        keep = (surface >= 0) & (surface == surface_before)
        anchor = np.where(keep[:, np.newaxis], self.anchor[index], position)
        normal_force = np.maximum(
            0.0, root * (self.stiffness * depth - self.damping * normal_speed)
        )
        u = position - anchor
        if normal is None:
            u[:, 2] = 0.0
        else:
            u -= np.einsum("ij,ij->i", u, normal)[:, np.newaxis] * normal
        spring = root * self.tangential_stiffness * np.sqrt((u * u).sum(axis=1))
        scale = np.minimum(1.0, friction * normal_force / np.maximum(spring, _TINY))
        u *= scale[:, np.newaxis]
        self.anchor[index] = position - u
        self.anchor_surface[index] = surface
        return self._forces(kinematics, terms, normal_force, u)

    def forces(self, kinematics: ContactKinematics) -> np.ndarray:
        """Forces of the environment on the robot at the points, world axes [N], (m, 3).

        Zero for points not touching; uses the current anchors (no state change).
        """
        index = kinematics.index
        if index.size == 0:
            return np.zeros((0, 3))
        if self._ground_only:
            return self._ground(kinematics, update=False)
        terms = self._normal_terms(kinematics)
        depth, root, normal, normal_speed, surface, _ = terms
        normal_force = np.maximum(
            0.0, root * (self.stiffness * depth - self.damping * normal_speed)
        )
        valid = (surface >= 0) & (surface == self.anchor_surface[index])
        u = np.where(valid[:, np.newaxis], kinematics.position - self.anchor[index], 0.0)
        if normal is not None:
            u -= np.einsum("ij,ij->i", u, normal)[:, np.newaxis] * normal
        return self._forces(kinematics, terms, normal_force, u)

    def _forces(self, kinematics, terms, normal_force, u) -> np.ndarray:
        """Normal force plus the tangential spring-damper limited to the friction cone."""
        _, root, normal, normal_speed, _, friction = terms
        velocity = kinematics.velocity
        if normal is None:
            tangential = -root[:, np.newaxis] * (
                self.tangential_stiffness * u[:, :2] + self.tangential_damping * velocity[:, :2]
            )
        else:
            slip_velocity = velocity - normal_speed[:, np.newaxis] * normal
            tangential = -root[:, np.newaxis] * (
                self.tangential_stiffness * u + self.tangential_damping * slip_velocity
            )
        magnitude = np.sqrt((tangential * tangential).sum(axis=1))
        scale = np.minimum(1.0, friction * normal_force / np.maximum(magnitude, _TINY))
        tangential *= scale[:, np.newaxis]
        if normal is None:
            forces = np.empty((velocity.shape[0], 3))
            forces[:, :2] = tangential
            forces[:, 2] = normal_force
            return forces
        return normal_force[:, np.newaxis] * normal + tangential
