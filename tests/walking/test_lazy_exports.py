"""wbm_control.walking's package exports, imported on first use (PEP 562).

Every name of ``__all__`` resolves to the object its submodule defines (``_EXPORTS`` names the
submodule), and importing the settings submodule alone, as ``wbm launch``'s pre-flight checks
of the controller do, imports neither the pattern generator nor numba (checked in a fresh
interpreter: this test process has imported them already).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import wbm_control.walking as walking


def test_every_export_resolves_to_its_submodules_object():
    assert sorted(walking.__all__) == sorted(walking._EXPORTS)
    for name, module in walking._EXPORTS.items():
        defined = getattr(importlib.import_module(f"wbm_control.walking.{module}"), name)
        assert getattr(walking, name) is defined, name
    assert set(walking.__all__) <= set(dir(walking))


def test_an_unknown_name_is_an_attribute_error():
    try:
        walking.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "has no attribute 'NoSuchThing'" in str(error)
    else:
        raise AssertionError("no AttributeError")


def test_the_settings_alone_import_neither_the_pattern_generator_nor_numba():
    code = (
        "import json, sys; import wbm_control.controller_settings; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('numba', "
        "'wbm_control.walking.pattern_generator', 'wbm_control.jit', 'proxsuite')))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
