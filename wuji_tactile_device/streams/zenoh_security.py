"""Zenoh configurations for tactile collections across machines: TLS with mutual authentication,
and access control so that only named producers may publish on a collection.

Topology: one router (`wuji-tactile router`); producers and consumers are Zenoh *clients* of it,
so every sample crosses the router, which authenticates each client by its certificate (signed by
your private CA; `wuji-tactile certs` makes them) and applies the rules below, by the common name
(CN) of the client's certificate. Default permission: deny. Per collection `<cid>`:

| who (certificate CN)       | may                                                             |
|----------------------------|-----------------------------------------------------------------|
| its producers              | put `<cid>` and `<cid>/metadata`, declare liveliness tokens     |
|                            | `<cid>/@tactile_producer/*`; learn of subscribers (so they send) |
| consumers (trackers, recorders) | subscribe to `<cid>/**` (samples) and                    |
|                            | `<cid>/@tactile_producer/*` (liveliness, its history)           |

A client whose certificate is not signed by the CA cannot connect at all; a client with a valid
certificate but a CN the rules do not name for that collection has its puts dropped at the router:
they never reach a tracker or a recording. Configurations are plain Zenoh JSON5 (dicts here), so
they can be written to files and passed as `--zenoh-config`; each sets Zenoh's message-size limit
to the contract's largest record plus envelope (`zenoh_transport.MAX_MESSAGE_SIZE`), also for a
router started by another Zenoh tool from the written file.
"""
from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Mapping, Sequence

from ..contract.naming import METADATA_SUFFIX, validate_collection_id
from .zenoh_transport import LIVELINESS_CHUNK, MAX_MESSAGE_SIZE


def _tls(certs: Path, name: str, *, server: bool) -> dict:
    side = "listen" if server else "connect"
    return {"link": {"rx": {"max_message_size": MAX_MESSAGE_SIZE}, "tls": {
        "root_ca_certificate": str(certs / "ca.pem"),
        f"{side}_private_key": str(certs / f"{name}.key"),
        f"{side}_certificate": str(certs / f"{name}.pem"),
        "enable_mtls": True,
    }}}


def access_control(producers: Mapping[str, Sequence[str]], consumers: Sequence[str]) -> dict:
    """Zenoh `access_control` rules: `producers` maps each collection id to the certificate common
    names allowed to publish it; `consumers` are the common names allowed to subscribe to every
    listed collection. Everything else is denied."""
    if not producers:
        raise ValueError("access_control needs at least one collection with its producers")
    rules, subjects, policies = [], [], []
    consumer_keys = []
    for i, (cid, names) in enumerate(sorted(producers.items())):
        validate_collection_id(cid)
        if not names:
            raise ValueError(f"collection {cid!r}: name at least one producer certificate")
        rules += [
            {"id": f"publish {cid}", "permission": "allow", "flows": ["ingress"], "messages": ["put", "liveliness_token"],
             "key_exprs": [cid, cid + METADATA_SUFFIX, f"{cid}/{LIVELINESS_CHUNK}/*"]},
            {"id": f"interest {cid}", "permission": "allow", "flows": ["egress"], "messages": ["declare_subscriber"],
             "key_exprs": [f"{cid}/**"]},
        ]
        subjects.append({"id": f"producers {i}", "cert_common_names": list(names)})
        policies.append({"rules": [f"publish {cid}", f"interest {cid}"], "subjects": [f"producers {i}"]})
        # `**` never matches the verbatim `@tactile_producer` chunk: the liveliness keys are named.
        consumer_keys += [f"{cid}/**", f"{cid}/{LIVELINESS_CHUNK}/*"]
    if consumers:
        rules += [
            {"id": "subscribe", "permission": "allow", "flows": ["ingress"],
             "messages": ["declare_subscriber", "declare_liveliness_subscriber", "liveliness_query"],
             "key_exprs": consumer_keys},
            {"id": "deliver", "permission": "allow", "flows": ["egress"],
             "messages": ["put", "liveliness_token", "reply"], "key_exprs": consumer_keys},
        ]
        subjects.append({"id": "consumers", "cert_common_names": list(consumers)})
        policies.append({"rules": ["subscribe", "deliver"], "subjects": ["consumers"]})
    return {"enabled": True, "default_permission": "deny", "rules": rules, "subjects": subjects,
            "policies": policies}


def secure_router_config(certs: str | Path, listen: Sequence[str], producers: Mapping[str, Sequence[str]],
                         consumers: Sequence[str], *, router_name: str = "router") -> dict:
    """A router configuration: TLS with mutual authentication on `listen` (e.g.
    `["tls/192.168.1.10:7447"]`), certificates from `certs` (`ca.pem`, `<router_name>.pem/.key`),
    and `access_control(producers, consumers)`."""
    certs = Path(certs)
    bad = [e for e in listen if not e.startswith("tls/")]
    if not listen or bad:
        raise ValueError(f"a secure router listens on tls/ endpoints only, got {list(listen)}")
    return {"mode": "router", "listen": {"endpoints": list(listen)}, "connect": {"endpoints": []},
            "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
            "transport": _tls(certs, router_name, server=True),
            "access_control": access_control(producers, consumers)}


def secure_client_config(certs: str | Path, name: str, router: Sequence[str]) -> dict:
    """A producer's or consumer's configuration: a Zenoh client of the `router` endpoints (tls/...),
    authenticating with `<name>.pem/.key` from `certs` (its CN is `name`)."""
    certs = Path(certs)
    bad = [e for e in router if not e.startswith("tls/")]
    if not router or bad:
        raise ValueError(f"a secure client connects to tls/ router endpoints only, got {list(router)}")
    return {"mode": "client", "connect": {"endpoints": list(router)},
            "scouting": {"multicast": {"enabled": False}},
            "transport": _tls(certs, name, server=False)}


def write_config(config: dict, path: str | Path) -> Path:
    """Write a configuration as a JSON5-compatible JSON file; return its path."""
    path = Path(path)
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path
