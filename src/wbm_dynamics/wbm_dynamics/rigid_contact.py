"""Rigid point contact with exact Coulomb cones, solved by Pinocchio 4's constraint solvers.

Time stepping at the velocity level (Moreau-Jean / Anitescu): over a step of length dt, with the
free velocity v_free = v + dt M^-1 (tau - h + J_e^T f_e) (every force but the contacts), the
contact impulses lambda (one 3D impulse per active point, in a contact frame whose z is the
surface normal) solve the nonlinear complementarity problem

    sigma = G lambda + g,  G = J M^-1 J^T (the Delassus operator),  g = J v_free + b,
    lambda in K_mu (Coulomb cone),  sigma + desaxce(sigma) in K_mu* ,  lambda . sigma = 0,

where J stacks the point Jacobians (contact axes, Pinocchio's ``PointContactConstraintModel``
between the world and the robot) and b the position terms: a point at a gap phi > 0 may close it
during the step (b_n = phi / dt), a penetrating one is pushed out by a fraction of its depth per
step (b_n = beta phi / dt). G is formed densely from Pinocchio's M^-1 (``computeMinverse``) and
handed to the solver as a ``DelassusOperatorDense``; the problem is solved with ADMM
(``ADMMConstraintSolver``, the default) or projected Gauss-Seidel (``PGSConstraintSolver``). The
contact forces over the step are lambda / dt.

Points closer to a surface than ``activation_distance`` enter the problem; the solver is warm
started with the previous step's impulses of the same points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_dynamics.contact_points import ContactKinematics, ContactPointSet
from wbm_dynamics.environment import Environment
from wbm_dynamics.settings import RigidContactSettings


@dataclass(frozen=True)
class RigidContactResult:
    """Outcome of one rigid contact solve.

    Attributes:
        forces: Mean force of the environment on the robot over the step at each point of the
            kinematics given to the solver (zero for points not in the problem), world axes
            [N], (m, 3).
        active: Number of points in the problem.
        converged: Whether the solver met its tolerance.
        iterations: Iterations the solver used.
    """

    forces: np.ndarray
    active: int
    converged: bool
    iterations: int


_IDENTITY = np.eye(3)


@dataclass
class _Problem:
    """Pinocchio constraint models and datas of one set of active points."""

    models: pin.StdVec_ConstraintModel
    datas: pin.StdVec_ConstraintData
    # Views on the placements inside ``models`` (written in place at every solve): per point,
    # the contact frame on the surface (rotation, translation) and the point frame's rotation
    # in its joint (its translation, the point's position in the joint, is set once).
    surface_rotation: list[np.ndarray]
    surface_translation: list[np.ndarray]
    point_rotation: list[np.ndarray]
    # The models' ``calc`` methods paired with their datas (indexing the std::vectors from
    # Python builds a proxy object per access).
    calcs: list[tuple[object, object]]


def contact_rotation(normal: np.ndarray) -> np.ndarray:
    """A rotation whose z axis is the unit ``normal`` (x, y span the tangent plane), 3 x 3.

    The ground's normal +z gives the identity (contact axes = world axes).
    """
    nx, ny, nz = normal.tolist()
    if nx == 0.0 and ny == 0.0 and nz > 0.0:
        return _IDENTITY
    # x: the world axis least aligned with the normal, made orthogonal to it.
    hx, hy = (1.0, 0.0) if abs(nx) < 0.9 else (0.0, 1.0)
    dot = hx * nx + hy * ny
    x = np.array([hx - dot * nx, hy - dot * ny, -dot * nz])
    x /= np.sqrt(x @ x)
    y = np.array([ny * x[2] - nz * x[1], nz * x[0] - nx * x[2], nx * x[1] - ny * x[0]])
    return np.column_stack([x, y, (nx, ny, nz)])


class RigidContactSolver:
    """Solves the contact impulses of one step.

    Args:
        model: The Pinocchio model (its armature is part of the mass matrix).
        settings: The rigid model's constants.
        environment: The surfaces.
        points: The robot's contact points.
    """

    def __init__(
        self,
        model: pin.Model,
        settings: RigidContactSettings,
        environment: Environment,
        points: ContactPointSet,
    ):
        self.model = model
        self.settings = settings
        self.environment = environment
        self.points = points
        # Warm start: the last impulse of each point (rows of points not in the last problem: 0).
        self._previous = np.zeros((points.size, 3))
        self._has_previous = np.zeros(points.size, dtype=bool)
        size = model.nv
        self._lower = np.tril_indices(size, -1)
        # The same entries as flat indices: M^-1's lower triangle is copied from the upper.
        self._lower_flat = np.ravel_multi_index(self._lower, (size, size))
        self._upper_flat = np.ravel_multi_index(self._lower[::-1], (size, size))
        self._ground_only = not environment.has_boxes
        self._ground_friction = environment.ground_friction
        self._problems: dict[tuple, _Problem] = {}
        if settings.solver == "admm":
            self._solver = pin.ADMMConstraintSolver(3 * max(points.size, 1))
            self._solver_settings = pin.ADMMSolverSettings()
            self._result = pin.ADMMSolverResult()
        else:
            self._solver = pin.PGSConstraintSolver(3 * max(points.size, 1))
            self._solver_settings = pin.PGSSolverSettings()
            self._result = pin.PGSSolverResult()
        solver_settings = self._solver_settings
        solver_settings.max_iterations = settings.max_iterations
        solver_settings.absolute_feasibility_tol = settings.tolerance
        solver_settings.absolute_complementarity_tol = settings.tolerance
        solver_settings.relative_feasibility_tol = settings.tolerance
        solver_settings.relative_complementarity_tol = settings.tolerance

    def reset(self) -> None:
        """Forget the warm start."""
        self._has_previous[:] = False

    @property
    def previous_impulses(self) -> dict[int, np.ndarray]:
        """The last solve's impulse of each point in its problem, by point index [N s]."""
        return {int(p): self._previous[p].copy() for p in np.flatnonzero(self._has_previous)}

    def _problem(self, index: np.ndarray, surfaces: np.ndarray, friction: np.ndarray) -> _Problem:
        """Constraint models and datas of an active set (cached: sets recur from step to step)."""
        key = (tuple(index.tolist()), tuple(surfaces.tolist()))
        problem = self._problems.get(key)
        if problem is None:
            if len(self._problems) > 256:
                self._problems.clear()
            models = pin.StdVec_ConstraintModel()
            datas = pin.StdVec_ConstraintData()
            for k, point in enumerate(index.tolist()):
                constraint = pin.PointContactConstraintModel(
                    self.model,
                    0,
                    pin.SE3.Identity(),
                    int(self.points.joint[point]),
                    pin.SE3.Identity(),
                )
                constraint.setFriction(float(friction[k]))
                models.append(pin.ConstraintModel(constraint))
                datas.append(models[k].createData())
            placements = [
                (model.extract().joint1_placement, model.extract().joint2_placement)
                for model in models
            ]
            for (_, on_robot), point in zip(placements, index.tolist(), strict=True):
                on_robot.translation[:] = self.points.position_in_joint[point]
            problem = _Problem(
                models,
                datas,
                [on_surface.rotation for on_surface, _ in placements],
                [on_surface.translation for on_surface, _ in placements],
                [on_robot.rotation for _, on_robot in placements],
                [(models[k].calc, datas[k]) for k in range(len(models))],
            )
            self._problems[key] = problem
        return problem

    def solve(
        self,
        data: pin.Data,
        q: np.ndarray,
        v_free: np.ndarray,
        kinematics: ContactKinematics,
        dt: float,
    ) -> RigidContactResult:
        """Contact forces of the step from q with free velocity ``v_free``.

        ``data`` is overwritten (mass matrix and constraint Jacobians at q).
        """
        if self._ground_only:
            return self._solve_on_ground(data, q, v_free, kinematics, dt)
        forces = np.zeros((kinematics.index.size, 3))
        empty = RigidContactResult(forces, 0, True, 0)
        if kinematics.index.size == 0:
            self.reset()
            return empty
        query = self.environment.query(kinematics.position)
        active = query.distance < self.settings.activation_distance
        if not active.any():
            self.reset()
            return empty
        rows = np.flatnonzero(active)
        index = kinematics.index[rows]
        distance = query.distance[active]
        normals = query.normal[active]
        friction = query.friction[active]
        surfaces = query.surface[active]
        problem = self._problem(index, surfaces, friction)
        model = self.model
        # On the ground (normal +z) the contact axes are the world axes.
        flat = not surfaces.any()
        on_surface = kinematics.position[rows] - distance[:, np.newaxis] * normals
        # Point frame on the robot: aligned with the contact frame at this configuration.
        if flat:
            rotations = None
            in_joint = kinematics.rotation[rows].transpose(0, 2, 1)
        else:
            rotations = np.array([contact_rotation(normal) for normal in normals])
            in_joint = np.einsum("kji,kjl->kil", kinematics.rotation[rows], rotations)
        for k in range(index.size):
            problem.surface_rotation[k][:] = _IDENTITY if rotations is None else rotations[k]
            problem.surface_translation[k][:] = on_surface[k]
            problem.point_rotation[k][:] = in_joint[k]
        inverse_mass = pin.computeMinverse(model, data, q)
        pin.computeJointJacobians(model, data, q)  # the constraints read data.J
        for constraint, constraint_data in zip(problem.models, problem.datas, strict=True):
            constraint.calc(model, data, constraint_data)
        jacobian = pin.getConstraintsJacobian(model, data, problem.models, problem.datas)
        inverse_mass[self._lower] = inverse_mass.T[self._lower]  # upper triangle computed
        delassus_matrix = jacobian @ inverse_mass @ jacobian.T
        # A tiny diagonal regularisation: the Delassus matrix of two flat feet is singular.
        delassus_matrix.flat[:: delassus_matrix.shape[0] + 1] += 1e-10
        delassus = pin.DelassusOperatorDense(delassus_matrix)
        constraint_models, constraint_datas = problem.models, problem.datas
        g = jacobian @ v_free
        beta = self.settings.penetration_correction
        g[2::3] += np.where(distance > 0.0, distance, beta * distance) / dt
        warm = self._has_previous[index]
        if warm.any():
            self._result.setConstraintImpulseGuess(
                np.where(warm[:, np.newaxis], self._previous[index], 0.0).ravel()
            )
        else:
            self._result.clearConstraintImpulseGuess()
        converged = self._solver.solve(
            delassus, g, constraint_models, constraint_datas, self._solver_settings, self._result
        )
        impulses = self._result.retrieveConstraintImpulses().reshape(-1, 3)
        self._has_previous[:] = False
        self._has_previous[index] = True
        self._previous[index] = impulses
        if rotations is None:
            forces[rows] = impulses / dt
        else:
            forces[rows] = np.einsum("kij,kj->ki", rotations, impulses) / dt
        return RigidContactResult(
            forces, int(rows.size), bool(converged), int(self._result.iterations)
        )

    def _solve_on_ground(
        self,
        data: pin.Data,
        q: np.ndarray,
        v_free: np.ndarray,
        kinematics: ContactKinematics,
        dt: float,
    ) -> RigidContactResult:
        """:meth:`solve` with the ground alone (normal +z: contact axes = world axes).

        The same arithmetic as the general path, value for value, with what is constant on the
        ground left out: the contact frames' rotations (the identity, set when a problem is
        built) and their heights (0), the normals and the surface query.
        """
        m = kinematics.index.size
        if m == 0:
            self.reset()
            return RigidContactResult(np.zeros((0, 3)), 0, True, 0)
        position = kinematics.position
        heights = position[:, 2]
        active = heights < self.settings.activation_distance
        everything = bool(active.all())
        rows = kinematics.rows if everything else np.flatnonzero(active)
        n = m if everything else rows.size
        if n == 0:
            self.reset()
            return RigidContactResult(np.zeros((m, 3)), 0, True, 0)
        # The points' rows of the warm start (a slice gives views).
        previous_rows = kinematics.rows if everything else kinematics.index[rows]
        index = kinematics.index if everything else kinematics.index[rows]
        distance = heights if everything else heights[rows]
        points = position if everything else position[rows]
        rotation = kinematics.rotation if everything else kinematics.rotation[rows]
        problem = self._problems.get(("ground", *index.tolist()))
        if problem is None:
            problem = self._problem(
                index, np.zeros(n, dtype=int), np.full(n, self._ground_friction)
            )
            self._problems[("ground", *index.tolist())] = problem
            for surface_rotation in problem.surface_rotation:
                surface_rotation[:] = _IDENTITY
        # Contact frame on the ground below each point (its height stays 0); the point frame
        # on the robot aligned with it: R_joint^T.
        for translation, point_rotation, (x, y, _), joint_rotation in zip(
            problem.surface_translation,
            problem.point_rotation,
            points.tolist(),
            rotation.transpose(0, 2, 1),
            strict=True,
        ):
            translation[0] = x
            translation[1] = y
            point_rotation[:] = joint_rotation
        model = self.model
        inverse_mass = pin.computeMinverse(model, data, q)
        pin.computeJointJacobians(model, data, q)  # the constraints read data.J
        for calc, constraint_data in problem.calcs:
            calc(model, data, constraint_data)
        jacobian = pin.getConstraintsJacobian(model, data, problem.models, problem.datas)
        flat = inverse_mass.reshape(-1)
        flat[self._lower_flat] = flat[self._upper_flat]  # upper triangle computed
        delassus_matrix = jacobian @ inverse_mass @ jacobian.T
        # A tiny diagonal regularisation: the Delassus matrix of two flat feet is singular.
        delassus_matrix.flat[:: delassus_matrix.shape[0] + 1] += 1e-10
        delassus = pin.DelassusOperatorDense(delassus_matrix)
        g = jacobian @ v_free
        beta = self.settings.penetration_correction
        # The position terms per point (the same operations as the general path, on floats).
        g[2::3] += [(d if d > 0.0 else beta * d) / dt for d in distance.tolist()]
        warm = self._has_previous[previous_rows]
        if warm.all():
            self._result.setConstraintImpulseGuess(self._previous[previous_rows].ravel())
        elif warm.any():
            self._result.setConstraintImpulseGuess(
                np.where(warm[:, np.newaxis], self._previous[index], 0.0).ravel()
            )
        else:
            self._result.clearConstraintImpulseGuess()
        converged = self._solver.solve(
            delassus, g, problem.models, problem.datas, self._solver_settings, self._result
        )
        impulses = self._result.retrieveConstraintImpulses().reshape(-1, 3)
        self._has_previous[:] = False
        self._has_previous[previous_rows] = True
        self._previous[previous_rows] = impulses
        if everything:
            forces = impulses / dt
        else:
            forces = np.zeros((m, 3))
            forces[rows] = impulses / dt
        return RigidContactResult(forces, n, bool(converged), int(self._result.iterations))
