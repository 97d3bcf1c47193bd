"""A Zenoh router for tactile collections across machines (`wuji-tactile router`).

On one machine the default peer configuration needs no router. Across machines, run one router
(on the machine that records or consumes, or any host both sides reach); producers and consumers
connect to it as Zenoh *clients*, so every sample crosses the router, where TLS with mutual
authentication and access-control rules apply (docs/streams.md, "Deploying across machines").

Default (no config): router mode on `tcp/127.0.0.1:7447` (loopback only, like the peer default),
multicast scouting off, Zenoh's message-size limit `zenoh_transport.MAX_MESSAGE_SIZE`. A user config (JSON5 file, string or dict) is Zenoh's own; it must set
`mode: "router"` or leave mode unset; listen endpoints it leaves unset get the loopback default.
"""
from __future__ import annotations

import json
from pathlib import Path

import zenoh

from ..errors import TransportError
from .zenoh_transport import default_port, limit_message_size, load_config


def router_config(config: str | Path | dict | None = None, *, listen: list[str] | None = None) -> zenoh.Config:
    """The configuration a `ZenohRouter` opens with (see module doc)."""
    cfg = load_config(config)
    vanilla = zenoh.Config()
    mode = json.loads(cfg.get_json("mode"))
    if mode not in (None, "router"):
        raise TransportError(f"zenoh router config sets mode {mode!r}; a router needs mode 'router' (or none)")
    try:
        cfg.insert_json5("mode", '"router"')
        if listen is not None:
            cfg.insert_json5("listen/endpoints", json.dumps(list(listen)))
        elif cfg.get_json("listen/endpoints") == vanilla.get_json("listen/endpoints"):
            cfg.insert_json5("listen/endpoints", json.dumps([f"tcp/127.0.0.1:{default_port()}"]))
        if cfg.get_json("connect/endpoints") == vanilla.get_json("connect/endpoints"):
            cfg.insert_json5("connect/endpoints", "[]")
        if cfg.get_json("scouting/multicast/enabled") == "null":
            cfg.insert_json5("scouting/multicast/enabled", "false")
        limit_message_size(cfg)  # a 150 MB put is dropped on arrival, not reassembled
    except zenoh.ZError as exc:
        raise TransportError(f"invalid zenoh router endpoints listen={listen!r}: {exc}") from exc
    return cfg


class ZenohRouter:
    """A Zenoh session in router mode; close it (or use it as a context manager) to stop routing."""

    def __init__(self, config: str | Path | dict | None = None, *, listen: list[str] | None = None):
        cfg = router_config(config, listen=listen)
        self.listen_endpoints = json.loads(cfg.get_json("listen/endpoints"))
        self.access_control = json.loads(cfg.get_json("access_control/enabled")) is True
        try:
            self.session = zenoh.open(cfg)
        except zenoh.ZError as exc:
            raise TransportError(f"cannot start the zenoh router (listen={self.listen_endpoints}): {exc}") from exc
        self._closed = False

    def clients(self) -> list[str]:
        """Zenoh ids of the sessions connected to this router."""
        return [str(z) for z in self.session.info.peers_zid()]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.session.close()

    def __enter__(self) -> ZenohRouter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
