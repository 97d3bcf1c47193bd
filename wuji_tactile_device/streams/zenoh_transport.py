"""Zenoh transport: a collection's streams between processes and machines (eclipse-zenoh 1.x).

Keys: force records on `<collection_id>` (e.g. `tactile/right`), metadata records on
`<collection_id>/metadata`. Every sample carries a 16-byte attachment, little-endian
`u64 producer_session, u64 sequence` (`ATTACHMENT`). Producer liveliness is a Zenoh liveliness
token `<collection_id>/@tactile_producer/<session as 16 hex digits>`; the `@` chunk is verbatim,
so no data wildcard (`tactile/**`) ever matches it. A subscription declares one sample subscriber
on `<collection_id>/**` (keeps metadata and data in send order; samples of nested collections are
skipped) and a liveliness subscriber with history, so a late subscriber learns about producers
already running.

Default network configuration (no `config` given) — loopback only, never all interfaces:
- peer mode, multicast scouting off;
- listen on `tcp/127.0.0.1:7447` (`DEFAULT_PORT`, or `$WUJI_TACTILE_ZENOH_PORT`) and on an
  ephemeral loopback port; the first
  process on the machine gets 7447, the others fail to bind it (not an error) and keep the
  ephemeral one;
- connect to `tcp/127.0.0.1:7447`; peers learn each other's loopback endpoints by gossip over
  that connection and connect directly, so any set of processes on one machine finds each other.
- Zenoh's own message-size limit (`transport/link/rx/max_message_size`, Zenoh's default 1 GiB)
  is `MAX_MESSAGE_SIZE`: the contract's largest record plus the message envelope, so a peer's
  150 MB put is discarded by Zenoh as it arrives instead of being reassembled in memory.
A user `config` (path of a JSON5 file, a JSON5 string, or a dict) is Zenoh's own configuration;
settings it leaves at Zenoh's built-in defaults for listen endpoints, connect endpoints,
multicast scouting and the message-size limit get the defaults above (Zenoh's own default would
listen on all interfaces). Explicit `listen=` / `connect=` endpoint lists override both.

Zenoh calls back from its own threads: callbacks only put into the subscription's
`queue.SubscriptionQueue` (bounded by events and bytes; overflow, oversize payloads — refused
before they are queued — and unparseable samples are counted, never raised); all checking of the
records happens in the consumer's thread.
"""
from __future__ import annotations

import json
import os
import struct
import threading
import time
from pathlib import Path
from typing import Any, TypedDict

import zenoh

from ..contract.naming import Stream, stream_key, validate_collection_id
from ..contract.records import DEFAULT_MAX_FLATBUFFER_SIZE, TRACKER_METADATA_MAX_SIZE
from ..errors import TransportError
from .base import DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_LIMIT, LivelinessChange, Message, ProducerLink, Subscription, Transport
from .queue import QueuedSubscription, SubscriptionQueue

#: The loopback port the default configuration listens on (first process) and connects to.
DEFAULT_PORT = 7447
#: Sample attachment: producer session (u64), sequence (u64), little-endian.
ATTACHMENT = struct.Struct("<QQ")
#: Verbatim key chunk under which producers declare liveliness tokens.
LIVELINESS_CHUNK = "@tactile_producer"
#: Largest Zenoh message a session accepts [bytes]: the contract's largest record (a metadata
#: record a tracker adopts, 256 KiB; a force record is at most 8 KiB by default) plus 4 KiB for
#: the key, the attachment and Zenoh's headers. Larger messages are dropped by Zenoh on arrival
#: (the link stays up). A tracker configured for larger records needs a config raising it.
MAX_MESSAGE_SIZE = max(DEFAULT_MAX_FLATBUFFER_SIZE, TRACKER_METADATA_MAX_SIZE) + 4096
MESSAGE_SIZE_KEY = "transport/link/rx/max_message_size"
_unpack_attachment = ATTACHMENT.unpack
_monotonic_ns = time.monotonic_ns
_new_tuple = tuple.__new__
_DATA = Stream.DATA  # (reading an Enum member off its class costs ~0.15 us)
_METADATA = Stream.METADATA


#: QoS of both stream publishers. Express (no batching): lowest latency, and metadata cannot be
#: held back in a batch behind data sent after it. BLOCK rather than Zenoh's default DROP: with
#: DROP, a producer starved of CPU for ~1 ms loses frames even at 100 Hz on loopback (measured);
#: a tactile stream is ~220 kB/s, so blocking only happens when the link is really saturated.
class _PublisherQos(TypedDict):
    express: bool
    congestion_control: zenoh.CongestionControl


PUBLISHER_QOS: _PublisherQos = {"express": True, "congestion_control": zenoh.CongestionControl.BLOCK}


def liveliness_key(collection_id: str, producer_session: int) -> str:
    """The liveliness token key of one producer session of a collection."""
    return f"{collection_id}/{LIVELINESS_CHUNK}/{producer_session:016x}"


#: Environment variable that moves the default loopback port (separate groups of processes on one
#: machine, like a ROS domain id).
PORT_ENV = "WUJI_TACTILE_ZENOH_PORT"


def default_port() -> int:
    """`DEFAULT_PORT`, or the port in `$WUJI_TACTILE_ZENOH_PORT` when set."""
    text = os.environ.get(PORT_ENV, "").strip()
    if not text:
        return DEFAULT_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise TransportError(f"{PORT_ENV}={text!r} is not a TCP port (1..65535)")
    return int(text)


def default_endpoints(port: int | None = None) -> tuple[list[str], list[str]]:
    """(listen, connect) endpoints of the default loopback configuration."""
    port = default_port() if port is None else port
    return [f"tcp/127.0.0.1:{port}", "tcp/127.0.0.1:0"], [f"tcp/127.0.0.1:{port}"]


def load_config(config: str | Path | dict | None = None) -> zenoh.Config:
    """A user's Zenoh configuration as given (JSON5 file path, JSON5 string or dict; None = Zenoh's
    built-in defaults), with no defaults of this package applied. `TransportError` when invalid."""
    try:
        if config is None:
            cfg = zenoh.Config()
        elif isinstance(config, dict):
            cfg = zenoh.Config.from_json5(json.dumps(config))
        elif isinstance(config, Path) or (isinstance(config, str) and not config.lstrip().startswith("{")):
            # A string that is not a JSON5 object is a file path: report it missing as such.
            if not Path(config).is_file():
                raise TransportError(f"zenoh config file {str(config)!r} does not exist")
            cfg = zenoh.Config.from_file(str(config))
        elif isinstance(config, str):
            cfg = zenoh.Config.from_json5(config)
        else:
            raise TransportError(f"zenoh config must be a file path, a JSON5 string or a dict, got {type(config).__name__}")
    except zenoh.ZError as exc:
        raise TransportError(f"invalid zenoh config {_describe(config)}: {exc}") from exc
    return cfg


def limit_message_size(cfg: zenoh.Config) -> zenoh.Config:
    """Set Zenoh's message-size limit to `MAX_MESSAGE_SIZE` unless the config sets its own."""
    if cfg.get_json(MESSAGE_SIZE_KEY) == zenoh.Config().get_json(MESSAGE_SIZE_KEY):
        cfg.insert_json5(MESSAGE_SIZE_KEY, str(MAX_MESSAGE_SIZE))
    return cfg


def build_config(config: str | Path | dict | None = None, *, listen: list[str] | None = None,
                 connect: list[str] | None = None) -> zenoh.Config:
    """The Zenoh configuration a `ZenohTransport` opens with (see module doc for the rules)."""
    cfg = load_config(config)
    vanilla = zenoh.Config()
    default_listen, default_connect = default_endpoints()
    listen_unset = cfg.get_json("listen/endpoints") == vanilla.get_json("listen/endpoints")
    connect_unset = cfg.get_json("connect/endpoints") == vanilla.get_json("connect/endpoints")
    if json.loads(cfg.get_json("mode")) == "client":
        listen_unset = False  # a Zenoh client never listens: it talks to its router only
    if listen is None and connect is None:
        if listen_unset:
            listen = default_listen
            if connect_unset:
                connect = default_connect
    elif listen is None:
        listen = ["tcp/127.0.0.1:0"] if listen_unset else None
    elif connect is None:
        connect = []
    try:
        if listen is not None:
            cfg.insert_json5("listen/endpoints", json.dumps(list(listen)))
            if len(listen) > 1:  # binding one of several (e.g. a taken well-known port) may fail
                cfg.insert_json5("listen/exit_on_failure", "false")
        if connect is not None:
            cfg.insert_json5("connect/endpoints", json.dumps(list(connect)))
        if cfg.get_json("scouting/multicast/enabled") == "null":
            cfg.insert_json5("scouting/multicast/enabled", "false")
        limit_message_size(cfg)
    except zenoh.ZError as exc:
        raise TransportError(f"invalid zenoh endpoints listen={listen!r} connect={connect!r}: {exc}") from exc
    return cfg


def _describe(config: Any) -> str:
    return repr(str(config)) if isinstance(config, (str, Path)) and len(str(config)) < 200 else f"({type(config).__name__})"


class ZenohSubscription(QueuedSubscription):
    """Both streams of one collection plus its producers' liveliness, queued for `drain()`."""

    def __init__(self, session: zenoh.Session, queue: SubscriptionQueue, on_close):
        super().__init__(queue)
        collection_id = queue.collection_id
        self._on_close = on_close
        self._closed = False
        self._put = queue.put_fitting  # the callback has refused what exceeds max_payload
        # Each stream's key (compared as Zenoh key expressions: cheaper than the sample's key as a
        # str) and the largest payload the queue could ever hold on it [bytes].
        self._data_key = zenoh.KeyExpr(stream_key(collection_id, Stream.DATA))
        self._metadata_key = zenoh.KeyExpr(stream_key(collection_id, Stream.METADATA))
        self._max_data = queue.max_payload(Stream.DATA)
        self._max_metadata = queue.max_payload(Stream.METADATA)
        # One subscriber for both keys: zenoh-python runs each subscriber's callback on its own
        # thread, so two subscribers would reorder metadata and data sent one after the other.
        # `<id>/**` also matches nested collections (`<id>/x`); their samples are skipped.
        self._declared = [
            session.declare_subscriber(f"{collection_id}/**", self._sample_callback),
            session.liveliness().declare_subscriber(f"{collection_id}/{LIVELINESS_CHUNK}/*",
                                                    self._liveliness_callback, history=True),
        ]

    # Callbacks run on Zenoh threads: enqueue only, never raise. The sample callback is the hot
    # path: no per-sample object but the payload's bytes and the queued Message (built as the bare
    # tuple it is). The payload is copied out of Zenoh once, then its size checked (the length of
    # the bytes costs nothing, a `ZBytes` length as much as the copy); Zenoh's message-size limit
    # (`MAX_MESSAGE_SIZE` unless configured) bounds what an oversize payload costs.
    def _sample_callback(self, sample: zenoh.Sample) -> None:
        now = _monotonic_ns()
        key = sample.key_expr
        if key == self._data_key:
            stream, max_payload = _DATA, self._max_data
        elif key == self._metadata_key:
            stream, max_payload = _METADATA, self._max_metadata
        else:
            return  # another (nested) collection's stream
        attachment = sample.attachment
        if attachment is None:  # not from a TactilePublisher
            self.queue.count_malformed()
            return
        try:
            session, sequence = _unpack_attachment(attachment.to_bytes())
        except struct.error:  # a short attachment: not from a TactilePublisher
            self.queue.count_malformed()
            return
        payload = sample.payload.to_bytes()
        size = len(payload)
        if size > max_payload:
            self.queue.refuse(stream, size, session, sequence, now)
            return
        self._put(_new_tuple(Message, (self.collection_id, stream, payload, session, sequence, now)), size)

    def _liveliness_callback(self, sample: zenoh.Sample) -> None:
        try:
            session = int(str(sample.key_expr).rsplit("/", 1)[1], 16)
        except (ValueError, IndexError):  # a foreign token under our verbatim chunk
            self.queue.count_malformed()
            return
        self.queue.put_liveliness(LivelinessChange(self.collection_id, session, sample.kind == zenoh.SampleKind.PUT))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            for declared in self._declared:
                declared.undeclare()
            self._on_close(self)


class ZenohProducerLink(ProducerLink):
    """A producer session: two publishers and a liveliness token."""

    def __init__(self, session: zenoh.Session, collection_id: str, producer_session: int, on_close):
        self.collection_id = collection_id
        self.producer_session = producer_session
        self._pack = ATTACHMENT.pack
        self._on_close = on_close
        self._data = session.declare_publisher(stream_key(collection_id, Stream.DATA), **PUBLISHER_QOS)
        self._metadata = session.declare_publisher(stream_key(collection_id, Stream.METADATA), **PUBLISHER_QOS)
        self._token = session.liveliness().declare_token(liveliness_key(collection_id, producer_session))
        self._closed = False

    def publish(self, stream: Stream, payload: bytes, sequence: int) -> None:
        if self._closed:
            raise TransportError(f"collection {self.collection_id!r}: producer session "
                                 f"{self.producer_session:016x} is closed; cannot publish")
        publisher = self._data if stream is _DATA else self._metadata
        try:
            publisher.put(payload, attachment=self._pack(self.producer_session, sequence))
        except zenoh.ZError as exc:
            raise TransportError(f"collection {self.collection_id!r}: zenoh put failed: {exc}") from exc

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._token.undeclare()
            self._data.undeclare()
            self._metadata.undeclare()
            self._on_close(self)


class ZenohTransport(Transport):
    """A `Transport` over a Zenoh session (loopback-only unless configured otherwise).

    `config`: Zenoh configuration (JSON5 file path, JSON5 string or dict); `listen` / `connect`:
    explicit endpoint lists such as `["tcp/127.0.0.1:7448"]`, overriding the config's."""

    def __init__(self, config: str | Path | dict | None = None, *, listen: list[str] | None = None,
                 connect: list[str] | None = None):
        cfg = build_config(config, listen=listen, connect=connect)
        self.listen_endpoints = json.loads(cfg.get_json("listen/endpoints"))
        self.connect_endpoints = json.loads(cfg.get_json("connect/endpoints"))
        try:
            self.session = zenoh.open(cfg)
        except zenoh.ZError as exc:
            raise TransportError(f"cannot open zenoh session (listen={self.listen_endpoints}, "
                                 f"connect={self.connect_endpoints}): {exc}") from exc
        self._lock = threading.Lock()
        self._links: list[ZenohProducerLink] = []
        self._subs: list[ZenohSubscription] = []
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError("zenoh transport is closed")

    def open_producer(self, collection_id: str, producer_session: int) -> ProducerLink:
        validate_collection_id(collection_id)
        with self._lock:
            self._check_open()
            if any(link.collection_id == collection_id and link.producer_session == producer_session
                   for link in self._links):
                raise TransportError(f"collection {collection_id!r}: producer session "
                                     f"{producer_session:016x} is already open")
            link = ZenohProducerLink(self.session, collection_id, producer_session, self._forget)
            self._links.append(link)
        return link

    def subscribe(self, collection_id: str, *, queue_limit: int = DEFAULT_QUEUE_LIMIT,
                  queue_bytes: int = DEFAULT_QUEUE_BYTES, max_data_size: int | None = None,
                  max_metadata_size: int | None = None) -> Subscription:
        validate_collection_id(collection_id)
        queue = SubscriptionQueue(collection_id, limit=queue_limit, max_bytes=queue_bytes,
                                  max_data_size=max_data_size, max_metadata_size=max_metadata_size)
        with self._lock:
            self._check_open()
            sub = ZenohSubscription(self.session, queue, self._forget)
            self._subs.append(sub)
        return sub

    def _forget(self, item: object) -> None:
        with self._lock:
            if item in self._links:
                self._links.remove(item)
            if item in self._subs:
                self._subs.remove(item)

    def peers(self) -> list[str]:
        """Zenoh ids of the peers this session is connected to."""
        return [str(z) for z in self.session.info.peers_zid()]

    def connected_zids(self) -> list[str]:
        """Zenoh ids of every peer and router this session is connected to (empty: nobody)."""
        info = self.session.info
        return [str(z) for z in info.peers_zid()] + [str(z) for z in info.routers_zid()]

    def close(self) -> None:
        if self._closed:
            return
        for item in list(self._links) + list(self._subs):
            item.close()
        self._closed = True
        self.session.close()

