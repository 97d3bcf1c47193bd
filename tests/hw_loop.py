"""A hardware producer on the shared run loop, stepped by a test."""
from __future__ import annotations

from wuji_tactile_device.producers.base import ProducerRunner
from wuji_tactile_device.producers.hardware import HardwareProducer


class OnLoop:
    """`step()` publishes every ready tick through a `ProducerRunner` and returns how many;
    `published` is what the loop published; everything else is the producer's."""

    def __init__(self, producer: HardwareProducer, transport) -> None:
        self.producer, self.runner = producer, ProducerRunner(producer, transport)

    def step(self) -> int:
        return self.runner.step()

    @property
    def published(self) -> int:
        return self.runner.counters.published

    def close(self) -> None:
        self.runner.close()

    def __enter__(self) -> OnLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name):
        return getattr(self.producer, name)
