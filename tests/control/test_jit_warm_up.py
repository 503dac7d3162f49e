"""The kernels' warm-up covers what the controller calls: no compile in a control step.

numba compiles a kernel once per signature (argument types, array layouts). ``warm_up_all``
(what the controller node calls while it starts, and ``tools/setup.sh`` into the cache) must
compile every signature a step then uses: otherwise a control cycle pays a compile (0.1-2 s).
Checked on the regression sequence (mode torque with and without servo references, mode ik;
targets, a released and re-held sole, a swing target, a safe hold), with the shipped settings
(the polish on; mode ik with its motion feed-forward, through the regression's contact events),
and on a walk on our simulator through its first swing.
"""

from __future__ import annotations

import importlib
import pkgutil

import numba
from control_helpers import CONTROLLER_YAML
from controller_regression import VARIANTS, contact_events, readings_at, run_sequence

import wbm_control.jit as jit
from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.jit.warm_up import MODULES, warm_up_all


def _kernel_modules() -> list:
    """Every module of the package that defines a kernel (the files, not the list)."""
    modules = []
    for info in pkgutil.iter_modules(jit.__path__):
        module = importlib.import_module(f"{jit.__name__}.{info.name}")
        if any(isinstance(v, numba.core.registry.CPUDispatcher) for v in vars(module).values()):
            modules.append(module)
    return modules


def test_every_kernel_module_is_warmed_up():
    modules = _kernel_modules()
    assert modules, "no kernel module in wbm_control.jit"
    assert sorted(m.__name__ for m in modules) == sorted(m.__name__ for m in MODULES)
    assert all(callable(getattr(m, "warm_up", None)) for m in MODULES)


def _signatures() -> dict[str, set]:
    found = {}
    for module in _kernel_modules():
        info_name = module.__name__.rsplit(".", 1)[1]
        for name, value in vars(module).items():
            if isinstance(value, numba.core.registry.CPUDispatcher):
                found[f"{info_name}.{name}"] = set(value.signatures)
    return found


def test_no_step_compiles_a_kernel(icub):
    warm_up_all()
    before = _signatures()
    assert before, "no compiled kernel found in wbm_control.jit"
    for variant in VARIANTS:
        run_sequence(icub, variant)
    shipped = WholeBodyController(icub, ControllerSettings.from_yaml(CONTROLLER_YAML))
    for step in range(40):
        shipped.step(readings_at(icub, step))
    # Mode ik as shipped (the regression's ik variant has the quasi-static feed-forward): the
    # motion feed-forward's kernels, through a released, lifted and re-held sole.
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML)
    shipped_ik = WholeBodyController(icub, settings.replace(mode="ik"))
    for step in range(70):
        shipped_ik.step(readings_at(icub, step))
        contact_events(shipped_ik, step)
    after = _signatures()
    new = {k: after[k] - before.get(k, set()) for k in after if after[k] - before.get(k, set())}
    assert not new, f"compiled in a control step (add to the module's warm_up): {new}"


def test_no_walking_step_compiles_a_kernel(icub):
    """Walking: swing-foot frame tasks, single support, the pattern generator's references."""
    warm_up_all()
    before = _signatures()
    rig = make_walking_rig(
        icub, controller_settings(CONTROLLER_YAML, "torque"), "compliant", stand=0.3
    )
    rig.command("set_velocity_command", 0.2, 0.0, 0.0)
    contacts = set()
    for _ in range(9):  # 0.9 s: through the first swing (its touch-down is at about 1.1 s)
        rig.run(0.1)
        contacts.add(len(rig.controller.status.active_contacts))
    assert 1 in contacts, f"no single support in the walk's first 0.9 s: {contacts}"
    after = _signatures()
    new = {k: after[k] - before.get(k, set()) for k in after if after[k] - before.get(k, set())}
    assert not new, f"compiled in a walking step (add to the module's warm_up): {new}"
