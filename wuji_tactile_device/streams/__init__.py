"""The streams layer: how a collection's two streams travel from a producer to its consumers.

`base` (the transport interface, its events and the one counters shape), `queue` (the
subscription queue every transport shares), `inproc` (one process), `zenoh_transport` (between
processes and machines), `publisher` (`TactilePublisher`, the producer side), `tracker`
(`TactileTracker`, the consumer side; both use `contract.records.ForceRecordCodec` on the hot
path), `zenoh_router` / `zenoh_security` (several machines), and `open_transport(spec)`.
"""
from __future__ import annotations

from pathlib import Path

from .base import (DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_LIMIT, DroppedPayload, Event, LivelinessChange, Message,
                   ProducerLink, Subscription, Transport)
from .inproc import InProcessBus
from .queue import SubscriptionQueue
from .publisher import TactilePublisher
from .tracker import TactileFrame, TactileTracker, TrackerCounters

TRANSPORTS = ("inproc", "zenoh")


def open_transport(spec: str = "zenoh", *, config: str | Path | dict | None = None,
                   listen: list[str] | None = None, connect: list[str] | None = None) -> Transport:
    """Open a transport by name: `"inproc"` (this process only) or `"zenoh"` (loopback by default;
    `config` / `listen` / `connect` as for `ZenohTransport`). Raises `ValueError` for another name."""
    if spec == "inproc":
        if config is not None or listen or connect:
            raise ValueError("the inproc transport takes no config, listen or connect endpoints")
        return InProcessBus()
    if spec == "zenoh":
        from .zenoh_transport import ZenohTransport  # imports zenoh only when asked for

        return ZenohTransport(config, listen=listen, connect=connect)
    raise ValueError(f"unknown transport {spec!r}; choose one of {', '.join(TRANSPORTS)}")


__all__ = ["DEFAULT_QUEUE_BYTES", "DEFAULT_QUEUE_LIMIT", "DroppedPayload", "Event", "InProcessBus",
           "LivelinessChange", "Message", "ProducerLink", "Subscription", "SubscriptionQueue", "TRANSPORTS",
           "TactileFrame", "TactilePublisher", "TactileTracker", "Transport", "TrackerCounters", "open_transport"]
