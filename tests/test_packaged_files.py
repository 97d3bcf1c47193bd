"""N7: what messages and docs name exists for an installed user, not only in a clone.

The example sensor model is package data (read through importlib.resources, the same bytes as
the clone's docs/ copy) and a name (`--sensor-model example`, `wuji-tactile sensor-model`); the
certificates are a command (`wuji-tactile certs`; tests/test_zenoh_security.py runs the mTLS
deployment on its output); the viewer layout `sim --foxglove` points to is `wuji-tactile layout`.
A wheel built from the clone carries all of it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from wuji_tactile_device.cli import main
from wuji_tactile_device.producers.sim.sensor_model import EXAMPLE_NAME, SensorModel, load_sensor_specs

ROOT = Path(__file__).resolve().parent.parent
DOCS_EXAMPLE = ROOT / "docs" / "sensor_model_example.json"
RESOURCE = ("wuji_tactile_device.producers.sim", "sensor_model_example.json")


def test_n7_the_example_sensor_model_is_package_data_equal_to_the_docs_copy():
    data = resources.files(RESOURCE[0]).joinpath(RESOURCE[1]).read_bytes()
    assert data == DOCS_EXAMPLE.read_bytes(), "the shipped example and docs/sensor_model_example.json differ"
    assert json.loads(data)["format"] == "wuji-tactile-sensor-model"
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert RESOURCE[1] in package_data[RESOURCE[0]]


def test_n7_example_by_name_is_the_same_model_as_the_docs_file():
    assert load_sensor_specs(EXAMPLE_NAME) == load_sensor_specs(DOCS_EXAMPLE)
    a, b = SensorModel.from_file(EXAMPLE_NAME, seed=3), SensorModel.from_file(DOCS_EXAMPLE, seed=3)
    assert a.params == b.params and (a.dead == b.dead).all()


def test_n7_sensor_model_command_prints_the_example_and_checks_a_file(capsys, tmp_path):
    assert main(["sensor-model"]) == 0
    printed = capsys.readouterr().out
    assert printed == DOCS_EXAMPLE.read_text(encoding="utf-8")
    mine = tmp_path / "mine.json"
    mine.write_text(printed)  # save, then use: the documented way to start an own model
    assert load_sensor_specs(mine) == load_sensor_specs(DOCS_EXAMPLE)
    assert main(["sensor-model", str(mine)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "noise_std: 0.002 N" in out and "bias_initial: 0 .. 0.01 N (drawn per episode)" in out, out
    bad = tmp_path / "bad.json"
    bad.write_text(printed.replace('"unit": "s"}', '"unit": "ms"}', 1))
    assert main(["sensor-model", str(bad)]) == 1
    assert "needs \"unit\": 's'" in capsys.readouterr().err


def test_n7_sim_accepts_the_example_by_name_and_refuses_a_missing_file(capsys):
    from wuji_tactile_device.cli import build_parser

    args = build_parser().parse_args(["sim", "--sensor-model", "example"])
    assert args.sensor_model == "example"
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["sim", "--sensor-model", "no_such_model.json"])
    assert exit_.value.code == 2 and "'no_such_model.json' does not exist" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("openssl") is None, reason="wuji-tactile certs runs the openssl command")
def test_n7_certs_command_writes_a_ca_signed_deployment(tmp_path, capsys):
    out = tmp_path / "certs"
    assert main(["certs", str(out), "--router-address", "127.0.0.1", "--producer", "tactile/right=robot-right",
                 "--consumer", "workstation"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote into {out}: ca.pem, ca.key, router.pem/.key")
    for name in ("router", "robot-right", "workstation"):  # each certificate verifies against the CA
        r = subprocess.run(["openssl", "verify", "-CAfile", str(out / "ca.pem"), str(out / f"{name}.pem")],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and r.stdout.strip().endswith(": OK"), r.stdout + r.stderr
    subject = subprocess.run(["openssl", "x509", "-in", str(out / "robot-right.pem"), "-noout", "-subject"],
                             capture_output=True, text=True, timeout=30).stdout
    assert "CN = robot-right" in subject or "CN=robot-right" in subject, subject
    router = (out / "router.json5").read_text()
    assert "tls/127.0.0.1:7447" in router and "robot-right" in router and "workstation" in router
    # a second run does not replace the CA silently
    assert main(["certs", str(out)]) == 1
    assert "already holds a ca.pem (use --overwrite" in capsys.readouterr().err


def test_n7_certs_refuses_a_bad_name_before_writing_anything(tmp_path, capsys):
    out = tmp_path / "never"
    assert main(["certs", str(out), "--producer", "tactile/right=../evil"]) == 1
    assert "'../evil'" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(SystemExit) as exit_:
        main(["certs", str(out), "--producer", "tactile/right"])
    assert exit_.value.code == 2 and "expects COLLECTION=NAME" in capsys.readouterr().err


def test_n7_the_tools_script_is_the_command(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "zenoh_certs.py"), "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: wuji-tactile certs"), done.stdout + done.stderr


def test_n7_router_help_and_the_foxglove_hint_name_commands_not_clone_files():
    from wuji_tactile_device.cli import common

    router_help = subprocess.run([sys.executable, "-m", "wuji_tactile_device.cli", "router", "--help"],
                                 capture_output=True, text=True, timeout=60).stdout
    assert "`wuji-tactile certs`" in " ".join(router_help.split()) and "tools/" not in router_help
    source = Path(common.__file__).read_text()
    assert "a layout: wuji-tactile layout -o tactile_view.json" in source  # what sim --foxglove prints


@pytest.mark.skipif(shutil.which("git") is None, reason="the wheel is built from the clone's files")
def test_n7_a_wheel_built_from_the_clone_carries_the_package_data(tmp_path):
    """`pip wheel . --no-deps` (what docs/hardware.md tells); needs setuptools and wheel offline."""
    pytest.importorskip("setuptools", reason="building the wheel needs setuptools")
    pytest.importorskip("wheel", reason="building the wheel offline (no build isolation) needs the wheel package")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "-w", str(tmp_path), "--no-deps",
                           "--no-build-isolation", "-q"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (whl,) = tmp_path.glob("wuji_tactile_device-*.whl")
    names = set(zipfile.ZipFile(whl).namelist())
    for path in ("wuji_tactile_device/producers/sim/sensor_model_example.json",
                 "wuji_tactile_device/producers/sim/taxel_influence.npz",
                 "wuji_tactile_device/streams/zenoh_certs.py", "wuji_tactile_device/cli/cmd_certs.py",
                 "wuji_tactile_device/producers/hardware/bridge_probe.py"):
        assert path in names, path
