"""The live view's WebSocket server: one port for every Foxglove client, bounded.

Foxglove clients speak the Foxglove WebSocket protocol v1 under two subprotocol names:
`foxglove.websocket.v1` (Lichtblick, Foxglove Studio, `@foxglove/ws-protocol`) and
`foxglove.sdk.v1` (the current Foxglove app and the Foxglove SDK; the same messages under the new
name). The Foxglove SDK's server (foxglove-sdk 0.30, every release up to it) accepts only
`foxglove.sdk.v1` and answers `400 Bad Request` to the others. So `LiveServer` runs:

- the SDK's own server (`foxglove.start_server`) on a private loopback port: it speaks the whole
  protocol (advertise, subscribe, message data, schemas) from the SDK `Context` the view logs to;
- in front of it, on the public port, a relay (asyncio, a daemon thread): it reads the viewer's
  WebSocket handshake request with the `websockets` library's HTTP/1.1 parser, and when the viewer
  offers only `foxglove.websocket.v1` it asks the SDK for `foxglove.sdk.v1` and names the accepted
  subprotocol `foxglove.websocket.v1` in the answer. After the handshake it copies bytes both ways
  unchanged; it never parses a protocol message.

Bounds (a viewer that never reads neither grows memory nor stalls the producer):

- at most `max_clients` viewers at once; one more gets `503 Service Unavailable` (counted);
- the relay always reads the SDK at once (so the SDK never waits on a viewer) and queues at most
  `max_backlog_bytes` per viewer; a viewer whose queue exceeds it is disconnected (counted, the
  first one logged as a warning);
- a handshake must arrive within `HANDSHAKE_TIMEOUT_S` and fit in `MAX_HANDSHAKE_BYTES`;
- `close()` aborts every viewer connection before it stops the SDK's server, so a frozen viewer
  cannot hold the process (the SDK's `stop()` waits for its clients).

The SDK's log records (logger `foxglove`, e.g. "Error receiving from client … Connection reset by
peer" when a viewer leaves) go to this package's logger `wuji_tactile_device.foxglove` at DEBUG:
hidden by the CLI's default rule, like the relay's own per-viewer notes.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from typing import Any

from ..errors import TactileError

SDK_SUBPROTOCOL = "foxglove.sdk.v1"
CLASSIC_SUBPROTOCOL = "foxglove.websocket.v1"
#: Viewers served at once (each costs the SDK a client with its own message queue).
DEFAULT_MAX_CLIENTS = 16
#: Bytes queued for one viewer before it is disconnected [B] (about 3 s of a 100 Hz view).
DEFAULT_MAX_BACKLOG_BYTES = 4 * 1024 * 1024
#: Messages the SDK queues per client (its default: 1024); the relay reads them at once.
SDK_MESSAGE_BACKLOG = 256
HANDSHAKE_TIMEOUT_S = 10.0
MAX_HANDSHAKE_BYTES = 64 * 1024
_CHUNK = 64 * 1024

log = logging.getLogger("wuji_tactile_device.foxglove")


@dataclasses.dataclass
class ServerCounters:
    """What the server did: viewers served per subprotocol, refused, disconnected."""
    served: dict = dataclasses.field(default_factory=dict)  # accepted subprotocol -> viewers
    refused_over_limit: int = 0
    refused_handshake: int = 0  # malformed, too large, too slow, or refused by the SDK
    dropped_backlog: int = 0

    def summary(self) -> str:
        served = sum(self.served.values())
        per = ", ".join(f"{n} {p}" for p, n in sorted(self.served.items()))
        text = f"{served} viewer(s) served" + (f" ({per})" if per else "")
        if self.dropped_backlog:
            text += f", {self.dropped_backlog} disconnected for not reading"
        if self.refused_over_limit:
            text += f", {self.refused_over_limit} refused over the limit"
        if self.refused_handshake:
            text += f", {self.refused_handshake} bad handshake(s)"
        return text


class _SdkLogRecords(logging.Handler):
    """The SDK's records re-logged on the package's logger at DEBUG (routine per-connection noise)."""

    def emit(self, record: logging.LogRecord) -> None:
        log.debug("foxglove-sdk %s: %s", record.levelname.lower(), record.getMessage())


#: The SDK's loggers: its own and its WebSocket library's (Rust targets as Python logger names).
_SDK_LOGGERS = ("foxglove", "tungstenite")


def route_sdk_logging() -> None:
    """Send the `foxglove` and `tungstenite` loggers' records to `wuji_tactile_device.foxglove` at DEBUG, not to
    the root logger (whose last-resort handler printed them on stderr). Idempotent."""
    for name in _SDK_LOGGERS:
        sdk = logging.getLogger(name)
        if not any(isinstance(h, _SdkLogRecords) for h in sdk.handlers):
            sdk.addHandler(_SdkLogRecords())
        sdk.propagate = False


def _plain_response(status: int, reason: str, text: str) -> bytes:
    body = (text + "\n").encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


async def _read_head(stream: asyncio.StreamReader, parse) -> tuple[Any, bytes]:
    """One HTTP/1.1 head parsed by `parse(reader)` (a `websockets.http11` parser over a
    `websockets.streams.StreamReader`) from `stream`; returns it and the bytes read past it."""
    from websockets.streams import StreamReader

    buffer = StreamReader()
    parser = parse(buffer)
    total = 0
    try:
        next(parser)
        while True:
            data = await stream.read(4096)
            total += len(data)
            if total > MAX_HANDSHAKE_BYTES:
                raise ValueError(f"handshake longer than {MAX_HANDSHAKE_BYTES} bytes")
            if data:
                buffer.feed_data(data)
            else:
                buffer.feed_eof()
            next(parser)
    except StopIteration as done:
        return done.value, bytes(buffer.buffer)


def _parse_request(buffer):
    from websockets.http11 import Request

    return Request.parse(buffer.read_line)


def _parse_response(buffer):
    from websockets.http11 import Response

    return Response.parse(buffer.read_line, buffer.read_exact, buffer.read_to_eof)


def offered_subprotocols(headers: Any) -> list[str]:
    """The subprotocols a handshake offers (every `Sec-WebSocket-Protocol` header, comma lists)."""
    return [p.strip() for value in headers.get_all("Sec-WebSocket-Protocol") for p in value.split(",") if p.strip()]


class LiveServer:
    """The SDK's WebSocket server for `context`, served on `host:port` to clients of both
    subprotocols (see the module). `port=0` picks a free port (`.port`). Raises `TactileError`
    when it cannot listen."""

    def __init__(self, context: Any, *, host: str = "127.0.0.1", port: int = 8765, name: str = "wuji-tactile",
                 max_clients: int = DEFAULT_MAX_CLIENTS, max_backlog_bytes: int = DEFAULT_MAX_BACKLOG_BYTES):
        import foxglove

        if not (isinstance(max_clients, int) and max_clients >= 1):
            raise ValueError(f"max_clients must be an integer >= 1, got {max_clients!r}")
        if not (isinstance(max_backlog_bytes, int) and max_backlog_bytes >= _CHUNK):
            raise ValueError(f"max_backlog_bytes must be an integer >= {_CHUNK}, got {max_backlog_bytes!r}")
        self.max_clients = max_clients
        self.max_backlog_bytes = max_backlog_bytes
        self.counters = ServerCounters()
        self._conns: set[asyncio.WriteTransport] = set()
        self._active = 0
        self._warned_drop = self._warned_limit = False
        route_sdk_logging()
        self._sdk = foxglove.start_server(name=name, host="127.0.0.1", port=0, context=context,
                                          message_backlog_size=SDK_MESSAGE_BACKLOG)
        self._sdk_port = int(self._sdk.port)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="foxglove-relay", daemon=True)
        self._thread.start()
        try:
            self._listener = asyncio.run_coroutine_threadsafe(
                asyncio.start_server(self._serve, host, port, limit=_CHUNK), self._loop).result(timeout=10)
        except (OSError, TimeoutError) as exc:
            self._stop_loop()
            self._sdk.stop()
            raise TactileError(f"cannot start the Foxglove view on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from exc
        self._closed = False

    @property
    def port(self) -> int:
        """The public TCP port."""
        return int(self._listener.sockets[0].getsockname()[1])

    @property
    def clients(self) -> int:
        """Viewers connected now."""
        return self._active

    # -- the relay (runs on the loop's thread) -----------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._active >= self.max_clients:
            self.counters.refused_over_limit += 1
            if not self._warned_limit:
                self._warned_limit = True
                log.warning("foxglove: a viewer was refused: at most %d viewers at once", self.max_clients)
            writer.write(_plain_response(503, "Service Unavailable",
                                         f"this view serves at most {self.max_clients} viewers at once"))
            writer.transport.close()
            return
        self._active += 1
        self._conns.add(writer.transport)
        upstream = None
        try:
            upstream = await self._handshake(reader, writer)
            if upstream is not None:
                await self._pipe(reader, writer, *upstream)
        except asyncio.CancelledError:
            pass  # close(): the connections are aborted below
        except OSError as exc:  # the viewer or the SDK side went away mid-handshake
            log.debug("foxglove: connection from %s ended: %s", writer.get_extra_info("peername"), exc)
        finally:
            self._active -= 1
            for transport in (writer.transport, None if upstream is None else upstream[1].transport):
                if transport is not None:
                    self._conns.discard(transport)
                    transport.abort()

    async def _handshake(self, reader, writer):
        """Relay the handshake; the SDK-side (reader, writer) when it switched protocols, else None."""
        from websockets.exceptions import SecurityError

        peer = writer.get_extra_info("peername")
        try:
            request, rest = await asyncio.wait_for(_read_head(reader, _parse_request), HANDSHAKE_TIMEOUT_S)
        except (TimeoutError, EOFError, ValueError, SecurityError, LookupError) as exc:
            self.counters.refused_handshake += 1
            log.debug("foxglove: bad handshake from %s: %s", peer, exc)
            writer.write(_plain_response(400, "Bad Request", f"not a WebSocket handshake: {exc}"))
            return None
        offered = offered_subprotocols(request.headers)
        rename = SDK_SUBPROTOCOL not in offered and CLASSIC_SUBPROTOCOL in offered
        if rename:
            del request.headers["Sec-WebSocket-Protocol"]
            request.headers["Sec-WebSocket-Protocol"] = SDK_SUBPROTOCOL
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._sdk_port, limit=_CHUNK)
        self._conns.add(up_writer.transport)
        up_writer.write(request.serialize() + rest)
        try:
            response, rest = await asyncio.wait_for(_read_head(up_reader, _parse_response), HANDSHAKE_TIMEOUT_S)
        except (TimeoutError, EOFError, ValueError, SecurityError, LookupError) as exc:
            self.counters.refused_handshake += 1
            log.debug("foxglove: the SDK server gave no handshake answer for %s: %s", peer, exc)
            writer.write(_plain_response(502, "Bad Gateway", "the view's server did not answer"))
            up_writer.transport.abort()
            return None
        accepted = response.headers.get("Sec-WebSocket-Protocol")
        if rename and response.status_code == 101 and accepted == SDK_SUBPROTOCOL:
            del response.headers["Sec-WebSocket-Protocol"]
            response.headers["Sec-WebSocket-Protocol"] = accepted = CLASSIC_SUBPROTOCOL
        writer.write(response.serialize() + rest)
        if response.status_code != 101:
            self.counters.refused_handshake += 1
            log.debug("foxglove: handshake from %s refused (%d), offered %s", peer, response.status_code, offered)
            up_writer.transport.abort()
            return None
        self.counters.served[accepted] = self.counters.served.get(accepted, 0) + 1
        log.info("foxglove: viewer %s connected (%s)", peer, accepted)
        return up_reader, up_writer

    async def _pipe(self, reader, writer, up_reader, up_writer) -> None:
        peer = writer.get_extra_info("peername")

        async def down() -> None:  # SDK -> viewer: never waits on the viewer
            while data := await up_reader.read(_CHUNK):
                writer.write(data)
                if writer.transport.get_write_buffer_size() > self.max_backlog_bytes:
                    self.counters.dropped_backlog += 1
                    if not self._warned_drop:
                        self._warned_drop = True
                        log.warning("foxglove: viewer %s disconnected: it left more than %d MiB unread "
                                    "(further ones are counted in the summary)", peer, self.max_backlog_bytes >> 20)
                    return

        async def up() -> None:  # viewer -> SDK (subscriptions): the SDK's pace
            while data := await reader.read(_CHUNK):
                up_writer.write(data)
                await up_writer.drain()

        tasks = [asyncio.ensure_future(down()), asyncio.ensure_future(up())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        log.info("foxglove: viewer %s left", peer)

    # -- shutdown ---------------------------------------------------------------------------
    async def _abort_all(self) -> None:
        self._listener.close()
        for transport in list(self._conns):
            transport.abort()
        self._conns.clear()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()

    def close(self) -> None:
        """Disconnect every viewer, stop the relay and the SDK's server. Idempotent; bounded in
        time whatever the viewers do."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self._abort_all(), self._loop).result(timeout=5)
        finally:
            self._stop_loop()
            self._sdk.stop()

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["CLASSIC_SUBPROTOCOL", "DEFAULT_MAX_BACKLOG_BYTES", "DEFAULT_MAX_CLIENTS", "LiveServer", "SDK_SUBPROTOCOL",
           "ServerCounters", "offered_subprotocols", "route_sdk_logging"]
