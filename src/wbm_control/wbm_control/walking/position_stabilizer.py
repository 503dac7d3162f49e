"""ZMP-CoM controller for position-controlled walking: the CoM command of the IK.

A position-controlled robot cannot be given the DCM stabilizer's CoM acceleration; its servos
track joint references. Following the position-controlled iCub walking of Romualdi et al. (2018,
"A Benchmarking of DCM Based Architectures for Position and Velocity Controlled Walking of
Humanoid Robots") and the ZMP-CoM controller of Choi et al. (2007), the desired ZMP z_d of the
DCM stabilizer (:class:`~wbm_control.walking.stabilizer.DcmZmpStabilizer`, computed from the
MEASURED CoM state) is realized by the commanded horizontal CoM velocity

    cd_cmd = cd_ref - k_zmp (z_d - z) + k_com (c_ref - c),

with c the measured CoM, z the measured ZMP (the feet's F/T sensors) and (c_ref, cd_ref) the
planned CoM. The ZMP term moves the CoM command against the ZMP error (a CoM that decelerates
moves the ZMP forward: z = c - cdd / omega^2); the CoM term pulls the measured CoM onto the plan
whatever the servos' compliance (no steady offset: the command keeps moving until c = c_ref
when the ZMP error is zero). The command position c_cmd integrates cd_cmd (the IK tracks it, its
velocity as feed-forward); it stays within ``max_offset`` of the plan (anti wind-up: a fall the
CoM cannot catch is not followed).

Frames: world, z up; positions [m], velocities [m/s]; horizontal (x, y) only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_description.exceptions import InputError


@dataclass(frozen=True)
class ComCommand:
    """What the ZMP-CoM controller commands for one step.

    Attributes:
        position: Commanded CoM (x, y) [m] (the IK's CoM target).
        velocity: Commanded CoM velocity (x, y) [m/s] (the IK's feed-forward).
        zmp_error: Desired minus measured ZMP (x, y) [m] (zero when no foot is loaded).
        saturated: Whether the command was held within ``max_offset`` of the plan.
    """

    position: np.ndarray
    velocity: np.ndarray
    zmp_error: np.ndarray
    saturated: bool


class ZmpComController:
    """cd_cmd = cd_ref - k_zmp (z_d - z) + k_com (c_ref - c), integrated (see the module).

    Args:
        zmp_gain: k_zmp [1/s], >= 0.
        com_gain: k_com [1/s], >= 0.
        max_offset: Largest horizontal distance of the command from the plan [m], > 0.
    """

    def __init__(self, *, zmp_gain: float, com_gain: float, max_offset: float):
        if not zmp_gain >= 0.0:
            raise InputError("zmp_gain", "a ZMP gain >= 0 [1/s]", zmp_gain)
        if not com_gain >= 0.0:
            raise InputError("com_gain", "a CoM gain >= 0 [1/s]", com_gain)
        if not max_offset > 0.0:
            raise InputError("max_offset", "a largest command offset > 0 [m]", max_offset)
        self.zmp_gain = float(zmp_gain)
        self.com_gain = float(com_gain)
        self.max_offset = float(max_offset)
        self.position: np.ndarray | None = None

    def reset(self, position: np.ndarray | None = None) -> None:
        """Start the command at ``position`` (x, y) [m] (None: at the next plan)."""
        self.position = None if position is None else np.asarray(position, float)[:2].copy()

    def update(
        self,
        *,
        com_ref: np.ndarray,
        com_velocity_ref: np.ndarray,
        com: np.ndarray,
        zmp_desired: np.ndarray,
        zmp_measured: np.ndarray | None,
        dt: float,
    ) -> ComCommand:
        """Advance the command by dt [s].

        Args:
            com_ref: Planned CoM (x, y, ...) [m].
            com_velocity_ref: Planned CoM velocity (x, y, ...) [m/s].
            com: Measured CoM (x, y, ...) [m].
            zmp_desired: The DCM stabilizer's ZMP (x, y, ...) [m].
            zmp_measured: The F/T ZMP (x, y, ...) [m], None when no foot is loaded (no ZMP
                term).
            dt: Control period [s], > 0.

        Raises:
            InputError: A non-finite value or dt <= 0.
        """
        values = [np.asarray(v, dtype=float)[:2] for v in (com_ref, com_velocity_ref, com)]
        desired = np.asarray(zmp_desired, dtype=float)[:2]
        measured = desired if zmp_measured is None else np.asarray(zmp_measured, float)[:2]
        if not all(np.all(np.isfinite(v)) for v in (*values, desired, measured)):
            raise InputError("com_ref, com_velocity_ref, com, zmp", "finite values", values)
        if not dt > 0.0:
            raise InputError("dt", "a control period > 0 [s]", dt)
        c_ref, cd_ref, c = values
        zmp_error = desired - measured
        velocity = cd_ref - self.zmp_gain * zmp_error + self.com_gain * (c_ref - c)
        position = (c_ref if self.position is None else self.position) + velocity * dt
        offset = position - c_ref
        distance = float(np.hypot(offset[0], offset[1]))
        saturated = distance > self.max_offset
        if saturated:
            position = c_ref + offset * (self.max_offset / distance)
        self.position = position
        return ComCommand(
            position=position.copy(),
            velocity=velocity,
            zmp_error=zmp_error,
            saturated=saturated,
        )
