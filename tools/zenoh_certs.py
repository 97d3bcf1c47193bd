#!/usr/bin/env python3
"""Make a private certificate authority and TLS certificates for a secured Zenoh deployment of
tactile collections (docs/streams.md, "Deploying across machines").

    python3 tools/zenoh_certs.py OUT_DIR --router-address 192.168.1.10 \
        --producer tactile/right=producer-right --consumer tracker

writes OUT_DIR/ca.pem (+ ca.key: keep it offline), OUT_DIR/<name>.pem + <name>.key for the router
(server certificate whose subject alternative names are the given addresses/host names) and for
every client (client certificate; its common name is what the router's access-control rules
match), and the Zenoh configurations to pass as `--zenoh-config`: OUT_DIR/router.json5 (TLS with
mutual authentication on tls/<first address>:7447, access control: only the named producers may
publish their collection, only the named consumers may subscribe) and OUT_DIR/<client>.json5 for
every producer and consumer. Keys are ECDSA P-256 in PKCS#8. Uses the `openssl` command-line tool.
"""
from __future__ import annotations

import argparse
import ipaddress
import shutil
import subprocess
import sys
from pathlib import Path

DAYS = 825


def _openssl(*args: str, cwd: Path) -> None:
    if shutil.which("openssl") is None:
        raise SystemExit("zenoh_certs: the 'openssl' command is needed (Debian/Ubuntu: apt-get install openssl)")
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _key(name: str, out: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{name}.key", cwd=out)


def make_ca(out: Path) -> None:
    """A self-signed CA: ca.pem / ca.key."""
    _key("ca", out)
    _openssl("req", "-x509", "-new", "-key", "ca.key", "-sha256", "-days", str(DAYS), "-subj", "/CN=wuji-tactile-ca",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-out", "ca.pem", cwd=out)


def make_cert(out: Path, name: str, *, server_names: list[str] | None = None) -> None:
    """A certificate `name.pem` / `name.key` signed by the CA, common name = `name`. With
    `server_names` it is a server certificate valid for those IP addresses / DNS names."""
    _key(name, out)
    _openssl("req", "-new", "-key", f"{name}.key", "-subj", f"/CN={name}", "-out", f"{name}.csr", cwd=out)
    ext = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature"]
    if server_names:
        sans = [f"IP:{n}" if _is_ip(n) else f"DNS:{n}" for n in server_names]
        ext += ["extendedKeyUsage=serverAuth,clientAuth", "subjectAltName=" + ",".join(sans)]
    else:
        ext += ["extendedKeyUsage=clientAuth"]
    (out / f"{name}.ext").write_text("\n".join(ext) + "\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", str(DAYS), "-sha256", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=out)
    for tmp in (f"{name}.csr", f"{name}.ext"):
        (out / tmp).unlink()


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write into (created)")
    parser.add_argument("--router", default="router", help="router certificate name (default: router)")
    parser.add_argument("--router-address", action="append", default=[], metavar="ADDR",
                        help="IP address or host name clients use to reach the router (repeatable; "
                             "default: 127.0.0.1 and localhost)")
    parser.add_argument("--client", action="append", default=[], metavar="NAME",
                        help="extra client certificate to make; NAME is its common name (repeatable)")
    parser.add_argument("--producer", action="append", default=[], metavar="COLLECTION=NAME",
                        help="allow certificate NAME to publish COLLECTION, e.g. tactile/right=producer-right")
    parser.add_argument("--consumer", action="append", default=[], metavar="NAME",
                        help="allow certificate NAME to subscribe to every listed collection")
    parser.add_argument("--port", type=int, default=7447, help="router TLS port (default 7447)")
    args = parser.parse_args(argv)
    producers: dict[str, list[str]] = {}
    for item in args.producer:
        cid, sep, name = item.partition("=")
        if not sep or not cid or not name:
            parser.error(f"--producer expects COLLECTION=NAME, got {item!r}")
        producers.setdefault(cid, []).append(name)
    addresses = args.router_address or ["127.0.0.1", "localhost"]
    clients = sorted({*args.client, *args.consumer, *(n for names in producers.values() for n in names)})
    args.out.mkdir(parents=True, exist_ok=True)
    make_ca(args.out)
    make_cert(args.out, args.router, server_names=addresses)
    for name in clients:
        make_cert(args.out, name)
    written = [f"{args.out}/ca.pem", f"{args.router}.pem/.key", *(f"{c}.pem/.key" for c in clients)]
    if producers:
        from wuji_tactile_device.streams.zenoh_security import (secure_client_config, secure_router_config,
                                                               write_config)

        endpoint = f"tls/{addresses[0]}:{args.port}"
        certs = args.out.resolve()
        write_config(secure_router_config(certs, [endpoint], producers, args.consumer, router_name=args.router),
                     args.out / "router.json5")
        for name in clients:
            write_config(secure_client_config(certs, name, [endpoint]), args.out / f"{name}.json5")
        written += ["router.json5", *(f"{c}.json5" for c in clients)]
    print("wrote " + ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
