"""The hardware producer: a Wuji Hand 2's five fingertip streams → the tactile contract.

`HardwareProducer` is a source-driven `Producer` (see `producers.base`): the run loop
(`ProducerRunner`) publishes its frames, republishes its metadata, records and stops it.
Start-up confirms every finger (online, info fetched, `format` parsed, units usable) and builds
the metadata from the device's own point layout and the shared hand kinematics. Each
`next_frame()` hands out the oldest assembled tick; when none is waiting it pulls what arrived,
checks every frame (info digest, exact length), assembles ticks by device timestamp, decodes
(one strided read per finger), converts units (normalized × full scale) and maps device point
axes to contract taxel axes. Per-finger resultants [N] and temperature [°C] from the device's
aggregate block are kept per published tick in `resultants` / `last_tick` (recorded on their own
MCAP topic by `resultant_topic.ResultantRecorder`, the producer's recording output), never mixed
into the contract stream.

Hand poses: when the hand streams its measured joint angles (the SDK's joint states), each
published tick carries the joint sample nearest to it in device time (`joint_states`, bounded by
`joint_max_age_s`) in `Frame.extras["hand_joints"]`, and the producer records the hand's 26
OpenXR joint poses as side data (`EXTRA_HAND_POSES`, recorded on Isaac Teleop's hand channels) in the stated
base space (the wrist frame, or `base_pose`).

Never stale: a finger that sends nothing for `stale_after_s` marks the hand unavailable (no tick
can complete, so nothing is published), is reported by name (offline vs stalled, from the
device's online flags), and is re-confirmed (info fetched, digest and layout checked) before
its frames are used again.
"""
from __future__ import annotations

import logging
import time
from collections import deque
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ...errors import DeviceFormatError, FingerOfflineError, LayoutChangedError, ProducerError
from ...contract.geometry import rpy_to_matrix
from ...contract.records import DeviceDataTimestamp
from ...hands.wuji_hand2 import FINGERS
from ...contract.side_data import DEFAULT_HAND_BASE_NAME, EXTRA_HAND_POSES, HandChannels, HandPoses
from ..base import Counters, Frame, FrameSink, Producer
from .assembly import AssemblyCounters, TickAssembler
from .calibration import SATURATION_LEVEL, load_full_scale, missing_calibration_error
from .device import FingertipDevice, FingertipFrame, FingertipInfo, JointStateSource, LinkCounters
from .format import SensorFormat, parse_format
from .identity import resolve_side
from .layout_metadata import DEFAULT_AXIS_MAPPING, AxisMapping, hardware_metadata
from .recovery import Backoff, RetryPolicy, bounded, is_timeout
from ...hands.openxr_pose import JOINT_RADIUS_M
from .hand_pose import HAND_JOINTS_EXTRA, HandPoseSolver, as_base_pose, base_space_description
from .health_topic import HealthRecorder
from .joint_states import JointPairing, default_max_age_us
from .resultant_topic import FingerResultant, ResultantRecorder, TickResultants

log = logging.getLogger(__name__)

#: Consecutive frames whose info_digest still differs after a fresh info fetch before giving up.
MAX_DIGEST_RETRIES = 3


@dataclass
class HardwareConfig:
    """How to turn a hand's fingertip streams into the contract.

    `full_scale_path`: full-scale calibration file, required when a finger reports `normalized`.
    `fallback_layout`: per-finger (P, 7) taxel poses in tip_sensor_frame for fingers whose format
    declares no placement (e.g. `simulation_layout(side)`); None = refuse such fingers.
    `tolerance_us`: max device-timestamp spread within one tick (None = half a period).
    `stale_after_s`: silence after which a finger counts as gone (None = 5 periods).
    `metadata_period_s`: metadata republication period [s] when run by the CLI.
    `hand_poses`: subscribe to the hand's joint states and record its joint poses (when the hand
    offers them). `base_pose`: x, y, z [m], qx, qy, qz, qw of the OpenXR wrist frame in the
    recorded base space (None: the wrist frame is the base). `joint_max_age_s`: the largest
    device-time distance between a tick and its joint sample (None: one tactile period).
    `hands_name`: the hand channels' base name (`<hands_name>/right_hand`, ...).
    """

    side: str
    collection_id: str | None = None
    axis_mapping: AxisMapping = DEFAULT_AXIS_MAPPING
    full_scale_path: str | Path | None = None
    fallback_layout: Mapping[str, np.ndarray] | None = None
    fallback_name: str = "simulation layout"
    assume_point_unit: str | None = None
    tolerance_us: int | None = None
    stale_after_s: float | None = None
    startup_grace_s: float = 1.0
    clock_jump_us: int = 250_000
    metadata_period_s: float = 1.0
    hand_poses: bool = True
    base_pose: Sequence[float] | None = None
    joint_max_age_s: float | None = None
    hands_name: str = DEFAULT_HAND_BASE_NAME
    #: Bounds and backoff of every SDK call on the recovery path (see recovery.RetryPolicy).
    recovery: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def collection(self) -> str:
        return self.collection_id or f"tactile/{self.side}"


@dataclass
class _Finger:
    name: str
    info: FingertipInfo
    fmt: SensorFormat
    taxels: slice
    full_scale: np.ndarray | None = None  # (P, 3) float32 when normalized
    aggregate_rotation: np.ndarray | None = None  # aggregate axes → tip_sensor_frame
    last_received_ns: int = 0
    last_device_us: int | None = None
    unavailable: bool = False
    digest_failures: int = 0
    saturated: int = 0
    nonfinite_possible: bool = False
    unavailable_since_ns: int = 0


class _DecodedFrame(NamedTuple):
    """An accepted frame, decoded: point values [N] in device point axes (P, 3) float32."""

    finger: str
    seq: int
    timestamp_us: int
    received_ns: int
    values: np.ndarray
    resultant: FingerResultant | None


@dataclass
class RecoveryCounters:
    """SDK calls on a returning finger's recovery path (`HardwareProducer.recovery`)."""

    attempts: int = 0  # recovery attempts started
    timeouts: int = 0  # attempts that failed on an SDK call's timeout
    errors: int = 0  # attempts that failed on another SDK error
    offline: int = 0  # attempts that found the finger still offline
    recovered: int = 0  # fingers confirmed back
    reconnects: int = 0  # times the whole hand was reached again


@dataclass
class HardwareCounters(AssemblyCounters, Counters):
    """The assembly counters (per finger: dropped, lost, late, duplicate, malformed,
    digest_mismatch; ticks, clock_jumps) plus `frames` handed to the run loop, `info_revisions`,
    `saturated` samples per finger and the `unavailable` fingers."""

    frames: int = 0
    info_revisions: int = 0
    saturated: dict[str, int] = field(default_factory=dict)
    unavailable: tuple[str, ...] = ()
    recovery: RecoveryCounters = field(default_factory=RecoveryCounters)  # SDK calls on the recovery path
    link: LinkCounters = field(default_factory=LinkCounters)  # the device link: stream errors, reconnects, ...
    joint_states: dict[str, int] = field(default_factory=dict)  # joint samples: paired, stale, missing, ...


@dataclass
class ProducerEvent:
    kind: str  # "unavailable" | "recovered" | "info_revised" | "malformed" | "reconnected" | "recovery_failed"
    fingers: tuple[str, ...]
    message: str
    time_ns: int = field(default_factory=time.monotonic_ns)


class HardwareProducer(Producer):
    """A hand's fingertip tactile data as contract frames (`Producer`, source-driven: run it
    with `ProducerRunner(producer, transport)`). Closing it closes the device."""

    period_s = None

    def __init__(self, device: FingertipDevice, config: HardwareConfig, *,
                 on_event: Callable[[ProducerEvent], None] | None = None,
                 clock_ns: Callable[[], int] | None = None):
        self.device = device
        #: The one local monotonic clock [ns] of this producer: staleness, backoff, events, the
        #: start-up grace — the device's (`device.clock_ns`, which stamps arrivals) unless given;
        #: the run loop takes the same one (`Producer.clock_ns`).
        self.clock_ns = clock_ns or getattr(device, "clock_ns", None) or time.monotonic_ns
        self.config = config
        #: The stated base pose of the recorded hand poses (x, y, z, qx, qy, qz, qw; None: the wrist frame).
        self.base_pose = as_base_pose(config.base_pose)
        if config.joint_max_age_s is not None and not config.joint_max_age_s > 0:
            raise ValueError(f"joint_max_age_s must be > 0 s, got {config.joint_max_age_s!r}")
        self.collection_id = config.collection
        self.on_event = on_event
        self.events: list[ProducerEvent] = []
        self.info_revisions = 0
        #: The last published tick's device resultants (finger → FingerResultant).
        self.resultants: dict[str, FingerResultant] = {}
        self.last_tick: TickResultants | None = None
        #: The hand's identity (serial, side, versions) when the device reports one; its side
        #: must be the configured one (HandednessMismatchError otherwise).
        self.identity = getattr(device, "identity", None)
        if self.identity is not None:
            resolve_side(config.side, self.identity.side, serial_number=self.identity.serial_number,
                         source=self.identity.side_source or "")
        self.recovery = RecoveryCounters()
        self._backoff = {f: Backoff(config.recovery) for f in FINGERS}
        self._generation = getattr(device, "generation", 0)
        self._fingers = self._confirm_all()
        rates = {f: s.info.rate_hz for f, s in self._fingers.items()}
        bad = {f: r for f, r in rates.items() if not (r > 0 and np.isfinite(r))}
        if bad:
            raise ProducerError("fingers report invalid rates: " + ", ".join(f"{f} {r!r} Hz" for f, r in bad.items()))
        rate = min(rates.values())  # ticks follow the slowest finger
        if len(set(rates.values())) > 1:
            log.warning("fingers report different rates (%s); ticks follow the slowest, %g Hz; the faster fingers' "
                        "extra samples are superseded", ", ".join(f"{f} {r:g} Hz" for f, r in rates.items()), rate)
        self.rate_hz = rate
        period_us = 1e6 / rate
        tolerance_us = None if config.tolerance_us is None else int(config.tolerance_us)
        if tolerance_us is not None and not 0 < tolerance_us < period_us:
            raise ProducerError(f"sync tolerance {tolerance_us} µs must be > 0 and below one period "
                                f"({period_us:.0f} µs at {rate:g} Hz), or ticks could mix neighbouring samples")
        stale_s = config.stale_after_s if config.stale_after_s is not None else 5 / rate
        if not stale_s > 0:
            raise ProducerError(f"stale_after_s must be > 0 s, got {stale_s}")
        self._stale_ns = int(stale_s * 1e9)
        self.assembler: TickAssembler[_DecodedFrame] = TickAssembler(rate_hz=rates, tolerance_us=tolerance_us, clock_jump_us=config.clock_jump_us)
        for name, s in self._fingers.items():
            if s.fmt.unknown:
                log.warning("%s: the sensor format declares what this decoder does not use (kept in the recording's "
                            "metadata): %s", name, "; ".join(s.fmt.unknown))
        self.metadata, self.layout_sources = hardware_metadata(
            config.side, {f: s.fmt for f, s in self._fingers.items()}, config.axis_mapping,
            fallback_layout=config.fallback_layout, fallback_name=config.fallback_name)
        self.num_taxels = self.metadata.num_taxels
        self._device_forces = np.zeros((self.num_taxels, 3), dtype=np.float32)
        self._forces = np.zeros((self.num_taxels, 3), dtype=np.float32)
        self._force_matrix_t = np.ascontiguousarray(config.axis_mapping.force_matrix.T, dtype=np.float32)
        self._load_calibration()
        self._ready: deque[list[_DecodedFrame]] = deque()  # assembled ticks not handed out yet
        self._frame = Frame(self._forces, 0, 0)
        self._tick_resultants: dict[str, FingerResultant] = {}
        self.frames = 0
        #: Frames the run loop published (counted in `on_published`).
        self.published = 0
        self.device.open_streams()
        #: The device as the source of joint states (None: not recorded), and what pairs the
        #: hand's joint samples with the ticks (None: no joint states recorded).
        self._joint_source: JointStateSource | None = None
        self.joints: JointPairing | None = self._open_joint_states()
        self._solver: HandPoseSolver | None = None
        if self.joints is not None:
            self._frame.extras = {HAND_JOINTS_EXTRA: None}
            # side data: the hand's joint poses from its measured angles, for the hand channels
            self.extras_provided = frozenset({EXTRA_HAND_POSES})
            self.hand_channels = HandChannels(config.hands_name, base_space_description(config.side, self.base_pose))
        self._grace_end_ns = self.clock_ns() + int(config.startup_grace_s * 1e9)
        for f in self._fingers.values():
            f.last_received_ns = self._grace_end_ns

    def _open_joint_states(self) -> JointPairing | None:
        cfg = self.config
        device = self.device
        if not cfg.hand_poses or not isinstance(device, JointStateSource):
            return None
        self._joint_source = device
        if not device.open_joint_states():
            log.info("hand %s offers no joint state stream: no hand poses are recorded", self.device.serial_number)
            return None
        max_age_us = (default_max_age_us(self.rate_hz) if cfg.joint_max_age_s is None
                      else int(round(cfg.joint_max_age_s * 1e6)))
        return JointPairing(max_age_us)

    # ----- start-up and re-confirmation -----
    def _confirm_all(self) -> dict[str, _Finger]:
        online = self.device.fingertip_online()
        off = [f for f, ok in zip(FINGERS, online, strict=True) if not ok]
        if off:
            raise FingerOfflineError(tuple(off), f"fingertip module(s) offline: {', '.join(off)} "
                                     "(fingertip_online() is False); check that they are attached and powered")
        out: dict[str, _Finger] = {}
        start = 0
        for finger in FINGERS:
            info = self.device.fingertip_info(finger)
            fmt = parse_format(finger, info.format, assume_point_unit=self.config.assume_point_unit)
            out[finger] = _Finger(finger, info, fmt, slice(start, start + fmt.point_count))
            out[finger].aggregate_rotation = _aggregate_rotation(fmt)
            out[finger].nonfinite_possible = fmt.may_be_nonfinite
            start += fmt.point_count
        return out

    def _load_calibration(self) -> None:
        normalized = [f for f, s in self._fingers.items() if s.fmt.point_unit == "normalized"]
        if not normalized:
            return
        if self.config.full_scale_path is None:
            raise missing_calibration_error(normalized)
        table = load_full_scale(self.config.full_scale_path, {f: s.fmt for f, s in self._fingers.items()},
                                serial_number=self.device.serial_number or None)
        for f in normalized:
            self._fingers[f].full_scale = table[f]

    def _reconfirm(self, finger: _Finger, frame_digest: int, info: FingertipInfo | None = None) -> bool:
        """Fetch the finger's info again (bounded; or use `info` just fetched). True when the
        frame's digest now matches (decoder rebuilt if the encoding changed); raises
        LayoutChangedError when the taxel layout changed."""
        if info is None:
            info = bounded(lambda: self.device.fingertip_info(finger.name), self.config.recovery.timeout_s,
                           f"{finger.name}: re-reading the fingertip info")
        if info.digest != frame_digest:
            return False
        if info.digest == finger.info.digest and info.format == finger.info.format:
            return True
        fmt = parse_format(finger.name, info.format, assume_point_unit=self.config.assume_point_unit)
        if fmt.layout_key() != finger.fmt.layout_key():
            what = ("point_count" if fmt.point_count != finger.fmt.point_count
                    else "point placement (positions / point_rpy / base_xyz / base_rpy)")
            raise LayoutChangedError(
                f"{finger.name}: the device revised its sensor info mid-session (digest "
                f"{finger.info.digest:#010x} → {info.digest:#010x}) and changed the {what}; the published "
                f"metadata no longer describes its data — restart the producer to publish the new layout")
        full_scale = None
        if fmt.point_unit == "normalized":
            if self.config.full_scale_path is None:
                raise missing_calibration_error([finger.name])
            full_scale = load_full_scale(self.config.full_scale_path, {finger.name: fmt},
                                         serial_number=self.device.serial_number or None)[finger.name]
        finger.info, finger.fmt, finger.full_scale = info, fmt, full_scale
        finger.aggregate_rotation = _aggregate_rotation(fmt)
        finger.nonfinite_possible = fmt.may_be_nonfinite
        self.info_revisions += 1
        self._event("info_revised", (finger.name,), f"{finger.name}: sensor info revised (digest "
                    f"{info.digest:#010x}); decoder rebuilt, layout unchanged")
        return True

    # ----- the loop -----
    @property
    def unavailable_fingers(self) -> tuple[str, ...]:
        return tuple(f for f, s in self._fingers.items() if s.unavailable)

    @property
    def saturated(self) -> dict[str, int]:
        """Saturated taxel samples per finger (normalized mode: any axis at |v| ≥ 1)."""
        return {f: s.saturated for f, s in self._fingers.items()}

    def frames_waiting(self) -> bool:
        """True while ticks assembled by the last device poll are not handed out yet."""
        return bool(self._ready)

    @property
    def counters(self) -> HardwareCounters:
        """A snapshot of the counters."""
        link = getattr(self.device, "link_counters", None)
        return HardwareCounters(**self.assembler.counters.as_dict(), frames=self.frames,
                                info_revisions=self.info_revisions, saturated=self.saturated,
                                unavailable=self.unavailable_fingers, recovery=dataclasses.replace(self.recovery),
                                link=dataclasses.replace(link) if link is not None else LinkCounters(),
                                joint_states=self.joints.counters.as_dict() if self.joints is not None else {})

    def device_metadata(self) -> dict[str, str]:
        """String pairs for the recording's file metadata: the hand's identity (serial number,
        side, firmware / hardware / SDK versions) and, per finger, what its format declared
        that this decoder does not use (`format_unknown_<finger>`)."""
        out = dict(self.identity.metadata()) if self.identity is not None else {}
        serial_number: str = getattr(self.device, "serial_number", "")
        if self.identity is None and serial_number:
            out["device_serial_number"] = serial_number
        for name, s in self._fingers.items():
            if s.fmt.unknown:
                out[f"format_unknown_{name}"] = "; ".join(s.fmt.unknown)
        return out

    def next_frame(self, now_ns: int | None = None) -> Frame | None:
        """The oldest assembled tick as a frame (reused: valid until the next call); when none is
        waiting, pull, check and assemble what arrived first. None: no complete tick (or a finger
        is unavailable)."""
        if not self._ready:
            self._pull(self.clock_ns() if now_ns is None else now_ns)
        if not self._ready:
            return None
        return self._to_frame(self._ready.popleft())

    def _pull(self, now_ns: int) -> None:
        """Pull, check and assemble what arrived; complete ticks go to `_ready` (none while a
        finger is unavailable)."""
        if getattr(self.device, "generation", 0) != self._generation:
            self._reconnected()
        frames = self.device.poll()
        returning: set[str] = set()
        for fr in frames:
            finger = self._fingers[fr.finger]
            finger.last_received_ns = max(finger.last_received_ns, fr.received_ns)
            finger.last_device_us = fr.timestamp_us
            if finger.unavailable:
                returning.add(fr.finger)
            jumps = self.assembler.counters.clock_jumps
            decoded = self._decode(finger, fr) if not finger.unavailable and self._accept(finger, fr) else None
            if decoded is not None:
                self.assembler.push(decoded)
            else:
                self.assembler.push(fr, queue=False)
            if self.assembler.counters.clock_jumps != jumps:
                # the device clock stepped: the others' last timestamps are from the old epoch
                for other in self._fingers.values():
                    if other is not finger:
                        other.last_device_us = None
                if self.joints is not None:
                    self.joints.reset()  # so are the joint samples held for pairing
        if self.joints is not None and self._joint_source is not None:
            self.joints.push(self._joint_source.poll_joint_states())
        for name in sorted(returning, key=FINGERS.index):
            self._recover(self._fingers[name])
        self._check_stale(now_ns)
        if self.unavailable_fingers:
            return
        self._ready.extend(self.assembler.pop_ready())

    def _accept(self, finger: _Finger, fr: FingertipFrame) -> bool:
        c = self.assembler.counters
        if fr.info_digest != finger.info.digest:
            try:
                confirmed = self._reconfirm(finger, fr.info_digest)
            except LayoutChangedError:
                raise
            except ProducerError as exc:  # the SDK did not answer: the recovery path takes over
                self._mark_unavailable([finger], f"re-reading its info after a new digest failed ({exc})")
                return False
            if not confirmed:
                c.digest_mismatch[fr.finger] += 1
                finger.digest_failures += 1
                if finger.digest_failures >= MAX_DIGEST_RETRIES and not finger.unavailable:
                    raise DeviceFormatError(
                        f"{fr.finger}: {finger.digest_failures} frames carry info_digest "
                        f"{fr.info_digest:#010x} but the device's info reports digest {finger.info.digest:#010x} "
                        "even after fetching it again; refusing to decode frames with unknown layout")
                return False
        finger.digest_failures = 0
        if len(fr.data) != finger.fmt.frame_size:
            c.malformed[fr.finger] += 1
            kind = "truncated" if len(fr.data) < finger.fmt.frame_size else "oversized"
            self._event("malformed", (fr.finger,), f"{fr.finger}: {kind} frame seq {fr.seq} of {len(fr.data)} "
                        f"bytes (format declares {finger.fmt.frame_size}); dropped")
            return False
        return True

    def _check_stale(self, now_ns: int) -> None:
        # Two rules: silence on the local clock, and falling behind the other fingers on the
        # device clock (the hand keeps sending, this finger does not).
        newest = max((s.last_device_us for s in self._fingers.values() if s.last_device_us is not None), default=None)
        stale_us = self._stale_ns // 1000
        gone = [s for s in self._fingers.values() if not s.unavailable and (
            now_ns - s.last_received_ns > self._stale_ns
            or (s.last_device_us is not None and newest is not None and newest - s.last_device_us > stale_us))]
        if not gone:
            return
        online: dict[str, bool] = {}
        if getattr(self.device, "connected", True):
            try:
                online = dict(zip(FINGERS, bounded(self.device.fingertip_online, self.config.recovery.timeout_s,
                                                   "fingertip_online()"), strict=True))
            except Exception as exc:  # noqa: BLE001 - report the original cause, keep the stall reported
                log.warning("fingertip_online() failed while reporting a stall: %s", exc)
        why = ", ".join(f"{s.name} ({'offline' if online.get(s.name) is False else 'stalled: no frames'})" for s in gone)
        if not getattr(self.device, "connected", True):
            why += " — the connection to the hand is lost, reconnecting"
        self._mark_unavailable(gone, f"no data for {self._stale_ns / 1e6:.0f} ms from {why}")

    def _mark_unavailable(self, fingers: list[_Finger], why: str) -> None:
        names = tuple(s.name for s in fingers)
        now = self.clock_ns()
        for s in fingers:
            s.unavailable = True
            s.unavailable_since_ns = now
        self.assembler.reset(names)
        self._event("unavailable", names, f"{why}; publication stopped until the finger(s) return and are "
                    "re-confirmed")

    def _reconnected(self) -> None:
        """The device reconnected: every finger's info is re-confirmed before it is used again."""
        self._generation = getattr(self.device, "generation", 0)
        self.recovery.reconnects += 1
        available = [s for s in self._fingers.values() if not s.unavailable]
        if available:
            self._mark_unavailable(available, "the hand reconnected")
        self._event("reconnected", tuple(FINGERS), "reconnected to the hand; re-confirming every finger's sensor "
                    "info (digest and layout) before publishing again")

    def _recover(self, finger: _Finger) -> None:
        """Re-confirm a returning finger: online flag and info, each SDK call bounded by
        `config.recovery.timeout_s`; a failed attempt is retried with exponential backoff."""
        backoff = self._backoff[finger.name]
        now = self.clock_ns()
        if not backoff.due(now):
            return
        r = self.recovery
        r.attempts += 1
        timeout = self.config.recovery.timeout_s
        try:
            online = bounded(self.device.fingertip_online, timeout, f"{finger.name}: fingertip_online()")
            if not online[FINGERS.index(finger.name)]:
                raise FingerOfflineError((finger.name,), f"{finger.name}: frames arrive but fingertip_online() says offline")
            info = bounded(lambda: self.device.fingertip_info(finger.name), timeout,
                           f"{finger.name}: reading the fingertip info")
            confirmed = self._reconfirm(finger, info.digest, info)
        except LayoutChangedError:
            raise
        except ProducerError as exc:
            kind = "offline" if isinstance(exc, FingerOfflineError) else "timeouts" if is_timeout(exc) else "errors"
            setattr(r, kind, getattr(r, kind) + 1)
            wait = backoff.failed(now)
            self._event("recovery_failed", (finger.name,), f"{finger.name}: recovery attempt {backoff.failures} "
                        f"failed ({kind}: {exc}); next attempt in {wait:.2f} s")
            return
        if not confirmed:
            backoff.failed(now)
            return
        backoff.succeeded()
        r.recovered += 1
        finger.unavailable = False
        finger.digest_failures = 0
        self.assembler.reset((finger.name,))
        took = (now - finger.unavailable_since_ns) / 1e9 if finger.unavailable_since_ns else float("nan")
        self._event("recovered", (finger.name,), f"{finger.name}: frames again, info re-confirmed (digest "
                    f"{finger.info.digest:#010x}) {took:.2f} s after it became unavailable; publication resumes "
                    "when all fingers are available")

    def _event(self, kind: str, fingers: tuple[str, ...], message: str) -> None:
        ev = ProducerEvent(kind, fingers, message, self.clock_ns())
        self.events.append(ev)
        if len(self.events) > 1000:
            del self.events[:500]
        (log.info if kind in ("recovered", "info_revised") else log.warning)(message)
        if self.on_event is not None:
            self.on_event(ev)

    def _decode(self, finger: _Finger, fr: FingertipFrame) -> _DecodedFrame | None:
        """Decode an accepted frame now, with the format (and full scale) it was checked against —
        a later info revision must not reinterpret frames already queued. None (frame dropped,
        counted as malformed) when an f32 field carries NaN/inf."""
        values = np.empty((finger.fmt.point_count, 3), dtype=np.float32)
        agg = finger.fmt.decode_into(fr.data, values)
        if finger.nonfinite_possible and not np.isfinite(values).all():
            self.assembler.counters.malformed[fr.finger] += 1
            bad = int(np.argwhere(~np.isfinite(values))[0][0])
            self._event("malformed", (fr.finger,), f"{fr.finger}: frame seq {fr.seq} has a non-finite value at "
                        f"point {bad}; dropped")
            return None
        if finger.full_scale is not None:
            finger.saturated += int(np.count_nonzero((np.abs(values) >= SATURATION_LEVEL).any(axis=1)))
            np.multiply(values, finger.full_scale, out=values)
        resultant = None
        if agg is not None:
            tip = None if finger.aggregate_rotation is None else finger.aggregate_rotation @ agg.force
            resultant = FingerResultant(fr.finger, agg.force, tip, agg.temperature_c, fr.timestamp_us)
        return _DecodedFrame(fr.finger, fr.seq, fr.timestamp_us, fr.received_ns, values, resultant)

    def _to_frame(self, tick: list[_DecodedFrame]) -> Frame:
        dev = self._device_forces
        ts_sum = 0
        resultants: dict[str, FingerResultant] = {}
        for fr in tick:
            dev[self._fingers[fr.finger].taxels] = fr.values
            if fr.resultant is not None:
                resultants[fr.finger] = fr.resultant
            ts_sum += fr.timestamp_us
        np.matmul(dev, self._force_matrix_t, out=self._forces)
        ts_us = ts_sum // len(tick)
        frame = self._frame
        frame.sample_time_ns = self.assembler.clock.to_local_ns(ts_us)
        frame.device_time_ns = ts_us * 1000
        if self.joints is not None:
            extras = frame.extras
            assert extras is not None, "made in __init__ when joint states are recorded"
            joints = extras[HAND_JOINTS_EXTRA] = self.joints.pair(ts_us)
            if EXTRA_HAND_POSES in self.extras_wanted:
                extras[EXTRA_HAND_POSES] = self._hand_poses(joints)
        self._tick_resultants = resultants
        self.frames += 1
        return frame

    def on_published(self, frame: Frame, sequence: int, timestamp: DeviceDataTimestamp) -> None:
        self.published += 1
        self.resultants = self._tick_resultants
        assert frame.device_time_ns is not None, "this producer's frames carry the device time"
        self.last_tick = TickResultants(sequence, timestamp.available_time_local_common_clock,
                                        frame.sample_time_ns, frame.device_time_ns // 1000, self.resultants)

    def _hand_poses(self, joints) -> HandPoses | None:
        """The tick's `HandPoses` (None: no joint sample paired with it, the hand is not tracked)."""
        if joints is None:
            return None
        if self._solver is None:
            self._solver = HandPoseSolver(self.config.side, self.base_pose)
        return HandPoses({self._solver.side: self._solver.poses(joints.positions)},
                         self._solver.valid(joints.present), JOINT_RADIUS_M)

    def device_topics(self, recorder) -> list[FrameSink]:
        """The device's own topics beside the collection (the run function attaches them to a
        recording): its resultants (`<collection>/device_resultants`) and the hand's health
        (`<collection>/health`). The hand poses are side data (`EXTRA_HAND_POSES`), recorded by
        `recording.side_channels`."""
        return [ResultantRecorder(recorder, self.collection_id, source=self),
                HealthRecorder(recorder, self.collection_id, self)]

    def file_metadata(self) -> dict[str, str]:
        """The recording's file metadata: producer kind, side, the hand's identity (serial number,
        firmware / hardware / SDK versions) and what its formats declared that is not used."""
        return {"producer_kind": "hardware", "hand_side": self.config.side, "collections": self.collection_id,
                "axis_mapping": self.config.axis_mapping.describe(),
                "layout_sources": ",".join(f"{k}={v}" for k, v in self.layout_sources.items()),
                **self._hand_pose_metadata(), **self.device_metadata()}

    def _hand_pose_metadata(self) -> dict[str, str]:
        if self.joints is None:
            return {}
        return {"hand_channels": self.config.hands_name,
                "hand_base_space": base_space_description(self.config.side, self.base_pose),
                "hand_joint_max_age_us": str(self.joints.max_age_us)}

    @property
    def last_forces(self) -> np.ndarray:
        """The last frame (N, 3) [N], contract taxel axes (a view; copy to keep)."""
        return self._forces

    def close(self) -> None:
        self.device.close()


def _aggregate_rotation(fmt: SensorFormat) -> np.ndarray | None:
    if fmt.mounting is None:
        return None
    R = rpy_to_matrix(fmt.mounting.base_rpy)
    return R @ rpy_to_matrix(fmt.aggregate_rpy) if fmt.aggregate_rpy is not None else R
