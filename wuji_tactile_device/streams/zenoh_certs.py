"""A private certificate authority, TLS certificates and Zenoh configurations for a secured
deployment of tactile collections (`wuji-tactile certs`; docs/deployment.md).

`make_deployment(out, router_addresses=..., producers=..., consumers=..., clients=...)` writes
`out/ca.pem` (+ `ca.key`: keep it offline), `out/<name>.pem` + `<name>.key` for the router (a
server certificate whose subject alternative names are the given addresses / host names) and for
every client (a client certificate; its common name is what the router's access rules match), and,
when producers are named, the configurations to pass as `--zenoh-config`: `out/router.json5` (TLS
with mutual authentication on `tls/<first address>:<port>`, access control from
`zenoh_security.secure_router_config`: only the named producers may publish their collection, only
the named consumers may subscribe) and `out/<client>.json5` for every client. Keys are ECDSA P-256
in PKCS#8, certificates valid `DAYS` days.

It runs the `openssl` command-line tool (no Python dependency; present on every Linux and macOS
machine, `apt-get install openssl` otherwise). A missing tool or a failing step is a
`TransportError` naming the step.
"""
from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..contract.naming import validate_collection_id
from ..errors import TransportError
from .zenoh_security import secure_client_config, secure_router_config, write_config

#: Validity of every certificate [days] (825: the longest most TLS clients accept for a server).
DAYS = 825
#: What a certificate name may be: it becomes a file name and the certificate's common name.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_name(name: str, what: str = "certificate name") -> str:
    """`name` if it can be a certificate's common name and file stem, else TransportError."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise TransportError(f"{what} {name!r}: use 1-64 letters, digits, '.', '_' or '-' (it is a file name and "
                             "the certificate's common name)")
    return name


def _openssl(*args: str, cwd: Path) -> None:
    if shutil.which("openssl") is None:
        raise TransportError("certs: the 'openssl' command is needed (Debian/Ubuntu: apt-get install openssl)")
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise TransportError(f"certs: openssl {args[0]} failed in {cwd}: {said}")


def _key(name: str, out: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{name}.key", cwd=out)


def make_ca(out: Path) -> None:
    """A self-signed CA in `out`: ca.pem / ca.key."""
    _key("ca", out)
    _openssl("req", "-x509", "-new", "-key", "ca.key", "-sha256", "-days", str(DAYS), "-subj", "/CN=wuji-tactile-ca",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-out", "ca.pem", cwd=out)


def make_cert(out: Path, name: str, *, server_names: Sequence[str] | None = None) -> None:
    """A certificate `name.pem` / `name.key` signed by the CA in `out`, common name = `name`. With
    `server_names` it is a server certificate valid for those IP addresses / DNS names."""
    check_name(name)
    _key(name, out)
    _openssl("req", "-new", "-key", f"{name}.key", "-subj", f"/CN={name}", "-out", f"{name}.csr", cwd=out)
    ext = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature"]
    if server_names:
        sans = [f"IP:{n}" if _is_ip(n) else f"DNS:{n}" for n in server_names]
        ext += ["extendedKeyUsage=serverAuth,clientAuth", "subjectAltName=" + ",".join(sans)]
    else:
        ext += ["extendedKeyUsage=clientAuth"]
    (out / f"{name}.ext").write_text("\n".join(ext) + "\n")
    try:
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", str(DAYS), "-sha256", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=out)
    finally:
        for tmp in (f"{name}.csr", f"{name}.ext"):
            (out / tmp).unlink(missing_ok=True)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _check_address(text: str) -> str:
    if _is_ip(text) or re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})", text or ""):
        return text
    raise TransportError(f"router address {text!r} is neither an IP address nor a host name")


def make_deployment(out: str | Path, *, router_addresses: Sequence[str] = ("127.0.0.1", "localhost"),
                    producers: Mapping[str, Sequence[str]] | None = None, consumers: Sequence[str] = (),
                    clients: Sequence[str] = (), router: str = "router", port: int = 7447) -> list[str]:
    """Write the CA, the router's and every client's certificate and (when `producers` maps a
    collection to the certificate names allowed to publish it) the Zenoh configurations into
    `out` (created). Returns the names written, for a one-line report. The router listens on
    `tls/<router_addresses[0]>:<port>`; clients are `clients`, `consumers` and the producers."""
    producers = {cid: list(names) for cid, names in (producers or {}).items()}
    for cid, names in producers.items():
        validate_collection_id(cid)
        for n in names:
            check_name(n, f"producer certificate of {cid}")
    for n in consumers:
        check_name(n, "consumer certificate")
    for n in clients:
        check_name(n, "client certificate")
    check_name(router, "router certificate name")
    if not 0 < port < 65536:
        raise TransportError(f"router port {port} is not in 1..65535")
    addresses = [_check_address(a) for a in router_addresses] or ["127.0.0.1", "localhost"]
    names = sorted({*clients, *consumers, *(n for ns in producers.values() for n in ns)})
    if router in names:
        raise TransportError(f"certificate name {router!r} is both the router and a client")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TransportError(f"certs: cannot create {out}: {exc.strerror or exc}") from None
    make_ca(out)
    make_cert(out, router, server_names=addresses)
    for name in names:
        make_cert(out, name)
    written = ["ca.pem", "ca.key", f"{router}.pem/.key", *(f"{c}.pem/.key" for c in names)]
    if producers:
        endpoint = f"tls/{addresses[0]}:{port}"
        certs = out.resolve()
        write_config(secure_router_config(certs, [endpoint], producers, list(consumers), router_name=router),
                     out / "router.json5")
        for name in names:
            write_config(secure_client_config(certs, name, [endpoint]), out / f"{name}.json5")
        written += ["router.json5", *(f"{c}.json5" for c in names)]
    return written


__all__ = ["DAYS", "check_name", "make_ca", "make_cert", "make_deployment"]
