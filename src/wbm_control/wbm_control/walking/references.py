"""What walking hands the whole-body controller at each control tick.

Everything is in the world frame (z up, ground at z = 0), SI units.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from wbm_control.walking.footsteps import Footstep, Side
from wbm_control.walking.state_machine import ContactCommand, WalkingState
from wbm_control.walking.swing_foot import SwingFootSample


@dataclass(frozen=True)
class WalkingReferences:
    """References and contact commands for one control tick.

    Attributes:
        time: Time [s].
        state: The state machine's state.
        stance_side: The stance foot in single support, else None.
        com: Planned CoM position [m] (z: the LIP height).
        com_velocity: Planned CoM velocity [m/s].
        com_acceleration: Planned CoM acceleration [m/s^2] (feed-forward).
        zmp: Planned ZMP on the ground [m].
        dcm: Planned DCM [m].
        zmp_command: ZMP commanded by the DCM stabilizer for the measured CoM state, inside the
            support polygon [m].
        com_acceleration_command: LIP CoM acceleration under ``zmp_command`` at the measured
            CoM [m/s^2].
        dcm_error: Measured minus planned DCM (x, y) [m].
        swing: Swing-foot reference by side (only the swinging foot).
        support: Placement of each sole in contact, by side.
        support_polygon: (m, 2) CCW support polygon of the soles in contact (full rectangles) [m].
        contact_commands: Contacts to activate and release at this tick, in order.
        footsteps: Footsteps still to be walked after the current swing.
    """

    time: float
    state: WalkingState
    stance_side: Side | None
    com: np.ndarray
    com_velocity: np.ndarray
    com_acceleration: np.ndarray
    zmp: np.ndarray
    dcm: np.ndarray
    zmp_command: np.ndarray
    com_acceleration_command: np.ndarray
    dcm_error: np.ndarray
    swing: dict[Side, SwingFootSample] = field(default_factory=dict)
    support: dict[Side, pin.SE3] = field(default_factory=dict)
    support_polygon: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    contact_commands: tuple[ContactCommand, ...] = ()
    footsteps: tuple[Footstep, ...] = ()

    @property
    def phase_name(self) -> str:
        """``"standing"``, ``"double_support"``, ``"single_support_left"`` (stance foot), ..."""
        if self.state == WalkingState.SINGLE_SUPPORT:
            return f"single_support_{self.stance_side}"
        return self.state.value
