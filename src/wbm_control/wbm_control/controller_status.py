"""What one step of the controller did: the content of the node's diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from wbm_control.base_estimator import BaseEstimate

if TYPE_CHECKING:
    from wbm_control.tasks.com_task import Balance


@dataclass
class ControllerStatus:
    """What the last step did (published as diagnostics by the node).

    Attributes:
        time: Time of the readings [s].
        mode: ``"ik"`` or ``"torque"``.
        safe: Whether the safe (hold) command was sent.
        reason: Why, when safe.
        solve_time: Wall time of the IK or QP step [s].
        step_time: Wall time of the whole step [s].
        task_errors: Task name to error norm [m or rad].
        active_contacts: Soles held.
        com: Estimated CoM [m].
        com_reference: CoM reference [m].
        dcm: Estimated DCM [m].
        zmp_measured: ZMP from the F/T sensors [m], or None when no foot is loaded (or the
            robot has no F/T sensors).
        zmp_estimated: ZMP from the whole-body dynamics (momentum rate of the estimate) [m],
            or None when the contacts do not push (:mod:`wbm_control.zmp_estimation`).
        estimated_contacts: Soles estimated in contact, for a robot with soles without F/T
            sensors (:mod:`wbm_control.contact_estimation`); empty otherwise.
        zmp_command: ZMP chosen by the DCM feedback [m].
        static_margin: Distance of the CoM's ground projection inside the support polygon [m]
            (negative outside: not statically stable).
        estimate: The base estimate of this step.
        fallback: The whole-body QP's fallback level used at this step
            (:data:`wbm_control.qp_fallback.LEVELS`), "" when the QP solved.
        fallback_reason: Why the fallback was used (the failed solve's error).
    """

    time: float = 0.0
    mode: str = ""
    safe: bool = False
    reason: str = ""
    solve_time: float = 0.0
    step_time: float = 0.0
    task_errors: dict[str, float] = field(default_factory=dict)
    active_contacts: tuple[str, ...] = ()
    com: np.ndarray | None = None
    com_reference: np.ndarray | None = None
    dcm: np.ndarray | None = None
    zmp_measured: np.ndarray | None = None
    zmp_estimated: np.ndarray | None = None
    estimated_contacts: tuple[str, ...] = ()
    zmp_command: np.ndarray | None = None
    static_margin: float | None = None
    estimate: BaseEstimate | None = None
    fallback: str = ""
    fallback_reason: str = ""

    def record_balance(self, balance: Balance) -> None:
        """The balance feedback's values (CoM, its reference and error, DCM, ZMP, margin)."""
        self.com = balance.com
        self.com_reference = balance.reference[0]
        if balance.static_margin is not None:
            self.static_margin = balance.static_margin
        self.dcm = balance.dcm
        self.zmp_command = balance.zmp
        self.task_errors["com"] = balance.error

    def record_fallback(self, level: str, reason: str, solve_time: float) -> None:
        """The QP failed (``reason``) and fallback ``level`` gave this step's command."""
        self.fallback = level
        self.fallback_reason = reason
        self.solve_time = solve_time
