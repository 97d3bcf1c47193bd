"""`wuji-tactile certs OUT_DIR`: the private CA, TLS certificates and Zenoh configurations of a
secured deployment (`streams.zenoh_certs`; docs/deployment.md). Needs the `openssl` command."""
from __future__ import annotations

import argparse

from ..errors import TactileError


def producer_grant(text: str) -> tuple[str, str]:
    """`COLLECTION=NAME` of --producer, as (collection, certificate name)."""
    cid, sep, name = text.partition("=")
    if not sep or not cid or not name:
        raise argparse.ArgumentTypeError(f"expects COLLECTION=NAME, got {text!r}")
    return cid, name


def tcp_port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a port number, got {text!r}") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"{port} is not in 1..65535")
    return port


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "certs", help="make the CA, TLS certificates and Zenoh configs of a secured deployment",
        description="Make a private certificate authority, the router's and each client's TLS certificate "
                    "(ECDSA P-256) and, with --producer, the Zenoh configurations to pass as --zenoh-config: "
                    "OUT_DIR/router.json5 (TLS with mutual authentication, access control: only the named "
                    "producers publish their collection, only the named consumers subscribe) and "
                    "OUT_DIR/<name>.json5 per client. Keep OUT_DIR/ca.key offline. Needs the openssl command.")
    p.add_argument("out", metavar="OUT_DIR", help="directory to write into (created)")
    p.add_argument("--router", default="router", metavar="NAME", help="router certificate name (default: router)")
    p.add_argument("--router-address", action="append", default=[], metavar="ADDR",
                   help="IP address or host name clients use to reach the router (repeatable; the first is the "
                        "router's listen address; default: 127.0.0.1 and localhost)")
    p.add_argument("--client", action="append", default=[], metavar="NAME",
                   help="extra client certificate to make; NAME is its common name (repeatable)")
    p.add_argument("--producer", action="append", default=[], metavar="COLLECTION=NAME", type=producer_grant,
                   help="allow certificate NAME to publish COLLECTION, e.g. tactile/right=producer-right (repeatable)")
    p.add_argument("--consumer", action="append", default=[], metavar="NAME",
                   help="allow certificate NAME to subscribe to every listed collection (repeatable)")
    p.add_argument("--port", type=tcp_port, default=7447, help="router TLS port (default 7447)")
    p.add_argument("--overwrite", action="store_true", help="write into an OUT_DIR that already holds a ca.pem")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import os

    from ..streams.zenoh_certs import make_deployment

    producers: dict[str, list[str]] = {}
    for cid, name in args.producer:
        producers.setdefault(cid, []).append(name)
    if os.path.exists(os.path.join(args.out, "ca.pem")) and not args.overwrite:
        raise TactileError(f"{args.out} already holds a ca.pem (use --overwrite to make a new CA there)")
    written = make_deployment(args.out, router_addresses=args.router_address or ("127.0.0.1", "localhost"),
                              producers=producers, consumers=args.consumer, clients=args.client,
                              router=args.router, port=args.port)
    print(f"wrote into {args.out}: " + ", ".join(written))
    return 0
