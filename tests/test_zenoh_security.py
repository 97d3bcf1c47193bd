"""Several machines, secured with Zenoh's own mechanisms (docs/streams.md, "Deploying across
machines"): TLS with mutual authentication and access control, so that only the named producer
may publish on a collection. An intruder with a certificate from the same CA but another name has
its samples dropped at the router (they reach neither the tracker nor the recording); a client
whose certificate the CA did not sign cannot connect at all.

Certificates are made at test time with `wuji-tactile certs` (openssl). The deployment runs as
three OS processes per run (hub = router + tracker + recorder, producer, intruder). The multi-host
variant puts the producer side and the hub side in two network namespaces joined by a veth pair
(created and removed here; needs root and iproute2)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from streams_helpers import free_port as _free_port
from wuji_tactile_device.errors import TransportError
from wuji_tactile_device.streams.zenoh_security import access_control, secure_client_config, secure_router_config
from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

HERE = Path(__file__).resolve().parent
PEER = HERE / "zenoh_secure_peer.py"
NS_ADDRESSES = ("10.231.7.1", "10.231.7.2")  # hub side, producer side (only inside our namespaces)

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None,
                                reason="needs the openssl command to make the test certificates")




def _make_certs(out: Path, port: int, router_address: str) -> None:
    subprocess.run([sys.executable, "-m", "wuji_tactile_device.cli", "certs", str(out), "--router-address", router_address,
                    "--router-address", "localhost", "--producer", "tactile/right=producer-right",
                    "--consumer", "tracker", "--client", "intruder", "--port", str(port)],
                   check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def rogue(tmp_path_factory) -> Path:
    """A certificate for 'producer-right' signed by ANOTHER CA (same name, wrong authority)."""
    out = tmp_path_factory.mktemp("rogue")
    _make_certs(out, 7447, "127.0.0.1")
    return out


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    return env


def _run_deployment(certs: Path, router_config: Path, tmp: Path, *, wrap_hub=(), wrap_producers=(),
                    rogue_config: Path | None = None) -> dict:
    out = tmp / f"secure-{uuid.uuid4().hex[:6]}.mcap"
    hub = subprocess.Popen([*wrap_hub, sys.executable, str(PEER), "hub", str(certs), str(router_config), str(out), "90"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        assert json.loads(hub.stdout.readline()) == {"ready": True}, hub.stderr.read()
        procs = {
            "producer": [*wrap_producers, sys.executable, str(PEER), "publish", str(certs / "producer-right.json5"), "-1.0", "200"],
            "intruder": [*wrap_producers, sys.executable, str(PEER), "publish", str(certs / "intruder.json5"), "-9.0", "200"],
        }
        if rogue_config is not None:
            procs["rogue"] = [*wrap_producers, sys.executable, str(PEER), "publish", str(rogue_config), "-7.0", "50"]
        running = {k: subprocess.Popen(v, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
                   for k, v in procs.items()}
        results = {}
        for name, proc in running.items():
            stdout, stderr = proc.communicate(timeout=60)
            assert stdout.strip(), f"{name} printed nothing: {stderr[-2000:]}"
            results[name] = json.loads(stdout.strip().splitlines()[-1])
        stdout, stderr = hub.communicate("stop\n", timeout=60)  # the clients are done: stop the hub
        results["hub"] = json.loads(stdout.strip().splitlines()[-1])
        return results
    finally:
        if hub.poll() is None:
            hub.kill()


def _check_only_the_producer_got_through(results: dict) -> None:
    producer, intruder, hub = results["producer"], results["intruder"], results["hub"]
    assert producer["ok"] and intruder["ok"], results  # the intruder cannot even tell it is refused
    assert hub["sessions"] == [producer["session"]], results
    assert hub["values"] == [-1.0], results  # no -9.0 from the intruder ever reached the tracker
    assert hub["delivered"] >= 190, results  # the producer's 200 frames (a few may precede confirmation)
    assert hub["recorded_sessions"] == [producer["session"]], results
    assert intruder["session"] not in hub["recorded_sessions"]
    # The authorized producer's liveliness reaches the consumers (alive, then gone); the intruder's never.
    assert hub["liveliness"] == [[producer["session"], False], [producer["session"], True]], results


def test_access_control_rules_name_each_collection_and_deny_the_rest():
    acl = access_control({"tactile/right": ["producer-right"], "tactile/left": ["producer-left"]}, ["tracker"])
    assert acl["default_permission"] == "deny" and acl["enabled"] is True
    publish = {r["id"]: r for r in acl["rules"]}["publish tactile/right"]
    assert publish["flows"] == ["ingress"] and set(publish["messages"]) == {"put", "liveliness_token"}
    assert publish["key_exprs"] == ["tactile/right", "tactile/right/metadata", "tactile/right/@tactile_producer/*"]
    subjects = {s["id"]: s["cert_common_names"] for s in acl["subjects"]}
    assert sorted(subjects.values()) == [["producer-left"], ["producer-right"], ["tracker"]]
    with pytest.raises(ValueError, match="at least one producer"):
        access_control({"tactile/right": []}, ["tracker"])
    with pytest.raises(ValueError, match="tls/"):
        secure_router_config("certs", ["tcp/0.0.0.0:7447"], {"tactile/right": ["p"]}, ["t"])
    with pytest.raises(ValueError, match="tls/"):
        secure_client_config("certs", "p", ["tcp/127.0.0.1:7447"])


def test_only_the_named_producer_reaches_tracker_and_recording_on_loopback(tmp_path, rogue):
    port = _free_port()
    certs = tmp_path / "certs"
    _make_certs(certs, port, "127.0.0.1")
    rogue_cfg = rogue / "rogue-client.json5"
    rogue_cfg.write_text(json.dumps(secure_client_config(rogue, "producer-right", [f"tls/127.0.0.1:{port}"])))
    results = _run_deployment(certs, certs / "router.json5", tmp_path, rogue_config=rogue_cfg)
    _check_only_the_producer_got_through(results)
    # A certificate from another CA does not get a connection at all.
    assert results["rogue"]["ok"] is False and results["rogue"]["error"] == "TransportError", results


def test_without_access_control_the_intruder_gets_through(tmp_path):
    """The control: the same deployment with access control off delivers the intruder's frames, so
    the check above fails when the rules are missing."""
    port = _free_port()
    certs = tmp_path / "certs"
    _make_certs(certs, port, "127.0.0.1")
    config = json.loads((certs / "router.json5").read_text())
    config["access_control"]["enabled"] = False
    open_router = tmp_path / "router-no-acl.json5"
    open_router.write_text(json.dumps(config))
    results = _run_deployment(certs, open_router, tmp_path)
    assert sorted(results["hub"]["sessions"]) == sorted([results["producer"]["session"], results["intruder"]["session"]])
    assert results["hub"]["values"] == [-9.0, -1.0]


def test_a_client_with_plain_tcp_cannot_reach_a_tls_router(tmp_path):
    port = _free_port()
    with pytest.raises(TransportError, match="cannot open zenoh session"):
        ZenohTransport({"mode": "client", "connect": {"endpoints": [f"tcp/127.0.0.1:{port}"]}})


def _netns_available() -> str:
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("ip") is None:
        return "no iproute2 'ip' command"
    probe = f"wtprobe{os.getpid() % 10000}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ""


@pytest.fixture
def two_hosts():
    """Two network namespaces joined by a veth pair: (hub namespace, producer namespace)."""
    why = _netns_available()
    if why:
        pytest.skip(f"multi-host variant needs network namespaces ({why}); the loopback test covers the rules")
    tag = f"{os.getpid() % 10000}"
    hub_ns, prod_ns = f"wthub{tag}", f"wtprod{tag}"
    hub_if, prod_if = f"wth{tag}", f"wtp{tag}"

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)

    try:
        ip("netns", "add", hub_ns)
        ip("netns", "add", prod_ns)
        ip("link", "add", hub_if, "type", "veth", "peer", "name", prod_if)
        ip("link", "set", hub_if, "netns", hub_ns)
        ip("link", "set", prod_if, "netns", prod_ns)
        for ns, dev, addr in ((hub_ns, hub_if, NS_ADDRESSES[0]), (prod_ns, prod_if, NS_ADDRESSES[1])):
            ip("-n", ns, "addr", "add", f"{addr}/30", "dev", dev)
            ip("-n", ns, "link", "set", dev, "up")
            ip("-n", ns, "link", "set", "lo", "up")
        yield hub_ns, prod_ns
    finally:
        for ns in (hub_ns, prod_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_only_the_named_producer_gets_through_across_two_hosts(tmp_path, two_hosts):
    hub_ns, prod_ns = two_hosts
    certs = tmp_path / "certs"
    _make_certs(certs, 7447, NS_ADDRESSES[0])  # each namespace has its own port space
    results = _run_deployment(certs, certs / "router.json5", tmp_path,
                              wrap_hub=("ip", "netns", "exec", hub_ns), wrap_producers=("ip", "netns", "exec", prod_ns))
    _check_only_the_producer_got_through(results)


def test_router_command_runs_on_loopback_and_stops_on_signals(tmp_path):
    import signal

    for sig, code in ((signal.SIGTERM, 0), (signal.SIGINT, 130)):
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-m", "wuji_tactile_device.cli", "router", "--listen",
                                 f"tcp/127.0.0.1:{port}"], stderr=subprocess.PIPE, text=True, env=_env())
        try:
            line = proc.stderr.readline()
            assert f"listening on tcp/127.0.0.1:{port} (no access control)" in line, line
            # A client can reach it.
            with ZenohTransport({"mode": "client", "connect": {"endpoints": [f"tcp/127.0.0.1:{port}"]}}) as client:
                assert len(list(client.session.info.routers_zid())) == 1
            proc.send_signal(sig)
            assert proc.wait(timeout=30) == code
        finally:
            if proc.poll() is None:
                proc.kill()
