"""The benchmark entry point runs every engine and prints the table."""

from __future__ import annotations

from wbm_dynamics.mujoco import MujocoEngine
from wbm_dynamics.mujoco.benchmark import (
    BenchmarkResult,
    format_repeats,
    format_table,
    main,
    run_standing,
)
from wbm_dynamics.mujoco.scenarios import standing_servo_gains


def test_run_standing_times_the_requested_simulated_time(icub):
    kp, kd = standing_servo_gains(icub)
    result = run_standing(
        "mujoco",
        lambda: MujocoEngine(icub, servo_kp=kp, servo_kd=kd),
        icub,
        seconds=0.2,
        control_period=0.005,
    )
    assert result.simulated_time == 0.2
    assert result.wall_time > 0.0
    assert result.real_time_factor == 0.2 / result.wall_time
    assert result.cpu_real_time_factor == 0.2 / result.cpu_time
    assert result.com_drift < 5e-3  # [m]: iCub stands


def test_table_ratios_are_relative_to_the_first_row():
    table = format_table(
        [BenchmarkResult("a", 2.0, 0.1, 1e-3), BenchmarkResult("b", 2.0, 0.4, 2e-3)]
    )
    lines = table.splitlines()
    assert lines[1].split()[-3:] == ["20.00", "1.000", "1.00"]
    assert lines[2].split()[-3:] == ["5.00", "0.250", "2.00"]


def test_repeats_give_the_median_and_spread_of_the_per_repeat_ratios():
    # Repeat 1: MuJoCo RTF 20, ours 5 (ratio 0.25); repeat 2: 10 and 4 (0.4); repeat 3: 40 and
    # 8 (0.2). The ratio is taken per repeat: median 0.25, spread 0.2-0.4.
    repeats = [
        [
            BenchmarkResult("mujoco", 2.0, wall, 1e-3, wall / 2),
            BenchmarkResult("ours", 2.0, w, 0, w),
        ]
        for wall, w in ((0.1, 0.4), (0.2, 0.5), (0.05, 0.25))
    ]
    lines = format_repeats(repeats).splitlines()
    assert lines[1].split() == ["mujoco", "20.00", "[10.00-40.00]", "1.000", "[1.000-1.000]"] + [
        "40.00",
        "[20.00-80.00]",
        "1.00",
    ]
    assert lines[2].split()[1:7] == ["5.00", "[4.00-8.00]", "0.250", "[0.200-0.400]", "5.00"] + [
        "[4.00-8.00]"
    ]


def test_main_prints_every_engine(capsys):
    main(["--seconds", "0.05", "--repeats", "2"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("icub standing, 0.05 s simulated")
    assert lines[0].endswith("2 side-by-side repeats")
    assert lines[1].startswith("machine reference: one pin.aba on icub")
    assert [line.split("  ")[0].strip() for line in lines[3:]] == [
        "mujoco",
        "wbm simulator compliant",
        "wbm simulator rigid",
    ]
