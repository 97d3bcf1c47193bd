"""`wuji-tactile router`: run a Zenoh router for tactile collections across machines, until
Ctrl-C (exit 130) or SIGTERM (exit 0). See docs/streams.md, "Deploying across machines"."""
from __future__ import annotations

import argparse
import signal
import sys
import threading


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "router", help="run a Zenoh router (for producers and consumers on several machines)",
        description="Run a Zenoh session in router mode. Default: loopback only (tcp/127.0.0.1:7447). "
                    "For several machines pass a configuration with TLS and access control, e.g. the "
                    "router.json5 that `wuji-tactile certs` writes.")
    p.add_argument("--zenoh-config", metavar="FILE", help="a Zenoh JSON5 configuration file (mode router)")
    p.add_argument("--listen", metavar="ENDPOINT", action="append",
                   help="listen on this endpoint, e.g. tls/192.168.1.10:7447 (repeatable; overrides the config's)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..streams.zenoh_router import ZenohRouter

    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with ZenohRouter(args.zenoh_config, listen=args.listen) as router:
            acl = "access control on" if router.access_control else "no access control"
            print(f"wuji-tactile router: listening on {', '.join(router.listen_endpoints)} ({acl}); "
                  "Ctrl-C to stop", file=sys.stderr, flush=True)
            while not stop.wait(0.5):
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0
