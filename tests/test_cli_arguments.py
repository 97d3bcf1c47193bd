"""Absurd command-line values are refused at parse time: one line on stderr naming the flag and
the rule, exit 2 (argparse's usage error), never a traceback after a long run."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("argv,message", [
    (["sim", "--duration", "inf"], "--duration: 'inf': must be a finite number of seconds > 0"),
    (["sim", "--seed", "-1"], "--seed: '-1': a seed is an integer in 0..4294967295"),
    (["sim", "--scenario", "playback", "--joints", "."], "--joints: '.' is not a regular file"),
    (["sim", "--images", "/nonexistent-dir/x.npz"], "directory '/nonexistent-dir' does not exist"),
    (["sim", "--record", "."], "'.' is a directory, not a file name"),
    (["sim", "--zenoh-config", "missing.json5", "--publish", "zenoh"], "--zenoh-config: 'missing.json5' does not exist"),
    (["replay", "x.mcap", "--start", "nan"], "--start: 'nan': must be a finite number of seconds >= 0"),
    (["replay", "x.mcap", "--end", "inf"], "--end: 'inf': must be a finite number of seconds > 0"),
    (["replay", "x.mcap", "--speed", "0"], "--speed: '0': must be a finite number in [0.001, 1e6]"),
    (["replay", "x.mcap", "--every", "0"], "--every: '0': must be an integer >= 1"),
    (["record", "x.mcap", "-c", "tactile/right", "--duration", "-1"], "--duration: '-1': must be a finite number of seconds > 0"),
    (["record", "x.mcap", "-c", "tactile/right", "--duration", "nan"], "--duration: 'nan': must be a finite number of seconds > 0"),
    (["record", "x.mcap", "-c", "tactile/right", "--duration", "inf"], "--duration: 'inf': must be a finite number of seconds > 0"),
    (["echo", "--count", "0"], "--count: '0': must be an integer >= 1"),
    (["echo", "--timeout", "-2"], "--timeout: '-2': must be a finite number of seconds > 0"),
    (["export", "x.mcap", "--fps", "0"], "--fps: '0': must be an integer in [1, 10000]"),
    (["view", "--port", "70000"], "--port: '70000': a TCP port is 0..65535 (0: any free port)"),
    (["view", "--range", "nan"], "--range: 'nan': must be a finite number of newtons > 0"),
    (["view", "--arrow-scale", "-1"], "--arrow-scale: '-1': must be a finite number of mm per newton > 0"),
    (["sim", "--foxglove-range", "inf"], "--foxglove-range: 'inf': must be a finite number of newtons > 0"),
    (["replay", "x.mcap", "--foxglove-port", "-1"], "--foxglove-port: '-1': a TCP port is 0..65535"),
    (["plot", "x.mcap", "--range", "abc"], "--range: 'abc' is not a number, or 'recording'"),
])
def test_absurd_arguments_are_one_line_usage_errors(argv, message, capsys):
    from wuji_tactile_device.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
