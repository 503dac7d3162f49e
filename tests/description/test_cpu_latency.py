"""A CPU wake-up latency request (wbm_description.cpu_latency), read back from the kernel.

Reading ``/dev/cpu_dma_latency`` gives the kernel's current aggregate request (the smallest of
those held, [us]): the request must show there while it holds, and the value before it must
come back once it is released (a request ends with its file). Each case runs in a child process
so that nothing outlives it. Refused as an unprivileged user (the device is root's, mode 0600):
the outcome says why and the aggregate is unchanged. The suite runs as root on the machines it
runs on; elsewhere the privileged cases fail with the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wbm_description.cpu_latency import NONE, request_cpu_latency

CHILD = r"""
import json, os, struct, sys
from wbm_description.cpu_latency import DEVICE, request_cpu_latency
def current():
    with open(DEVICE, "rb") as device:
        return struct.unpack("i", device.read(4))[0]
before = current()
if sys.argv[2] == "drop":
    os.setgid(65534)
    os.setuid(65534)
request = request_cpu_latency(int(sys.argv[1]))
during = current() if sys.argv[2] != "drop" else None
applied, line, error = request.applied, request.describe(), request.error
request.release()
request.release()  # idempotent
after = current() if sys.argv[2] != "drop" else None
print(json.dumps({"before": before, "during": during, "after": after, "applied": applied,
                  "line": line, "error": error}))
"""


def run_child(microseconds: int, mode: str = "root") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(microseconds), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("microseconds", [0, 7])
def test_the_request_holds_while_open_and_ends_with_release(microseconds):
    result = run_child(microseconds)
    assert result["applied"], result["line"]
    assert result["during"] == min(microseconds, result["before"])
    assert result["after"] == result["before"]
    assert f"cpu_dma_latency {microseconds} us: requested" in result["line"]


def test_refused_without_root_says_why():
    result = run_child(0, "drop")
    assert not result["applied"]
    assert "needs root" in result["error"]
    assert "not applied" in result["line"]


def test_none_asks_nothing_and_bad_values_are_refused():
    request = request_cpu_latency(NONE)
    assert not request.applied and request.error == ""
    assert "no CPU latency request" in request.describe()
    for bad in (-2, 1.5, True, "0"):
        with pytest.raises(ValueError, match="cpu_dma_latency"):
            request_cpu_latency(bad)
