"""An emulated Wuji Hand 2 fingertip system, byte-exact to the vendor contract, fed with the
simulation's pad forces.

`EmulatedHand2` has the SDK's accessor names (`fingertip_<f>_info().get()`, optionally the
per-index `get_fingertip_info(i)`, `fingertip_<f>_data().subscribe()` → `recv()`/`close()`/
`set_rate()` and `.subscribe_with_callback(cb, on_error)`, `fingertip_<f>_status().get()`,
`fingertip_online()`, `calibrate_fingertip()`, `serial_number`; headers are the SDK's own
`FrameHeader` when it is installed), so `SdkFingertipDevice(EmulatedHand2(...))` is exactly the path a real hand
takes. The device's own point layout *is* the simulation's taxel layout: each pad's sensor module
frame is the simulated pad frame (`base_xyz`/`base_rpy`), point axes are the simulated taxel
axes expressed as device axes through the inverse of the producer's axis mapping, and `emit()`
turns a contract force frame (176, 3) [N] into the five fingers' frames: i16 with a scale, in
newtons (firmware < v2.4.0) or normalized to a full scale (≥ v2.4.0, saturating), plus the
aggregate block (resultant [N] in the module axes, temperature [°C]).

Fault injection: `set_online`, `set_sending` (stall), `revise_info` (mid-stream info revision, with
or without a layout change), `desync_digest` (frames name an info the device never serves),
`inject` (truncated / oversized / duplicate next frame), `jump_clock`.

Behaviours of a real hand the producer must tolerate:
- `set_timing(finger, phase_us=, rate_hz=, drift_ppm=, jitter_us=)`: each fingertip module samples
  on its own clock — a phase offset (up to a period), another rate, a clock running fast or slow
  (drift), timestamp jitter (uniform ±jitter_us, seeded);
- `format_extras` / `temperature_unit`: firmware `format` JSON with keys this package does not
  know and other unit spellings;
- `fail_next(call, error, count)`: SDK calls that time out, fail, report a node offline or hang;
- `lose_link()` / `restore_link()`: the hand drops off the network (every call and stream raises
  the SDK's `WujiException`), and comes back to be reconnected through `EmulatedSdkManager`;
- `reported_side`: a hand whose `handedness()` is not what the caller asked for.

Identity and health as the SDK reports them: `serial_number`, `handedness().get()` ('left' /
'right'), `hw_version().get()`, `info.firmware_version`, `joint_diagnostics().subscribe()` (one
`JointDiagnosticsFrame` look-alike every `diagnostics_every` emits, with per-finger tactile link status).

Measured joint angles as the SDK streams them: `joint_states().subscribe()` delivers one
`JointStateFrame` look-alike per `emit()` once the hand has joint positions (`emit(...,
joint_angles=q)` with the simulation's 20 angles [rad, firmware order], or `set_joint_positions`):
header on the same device clock as the fingertip frames (+ `joint_time_offset_us`), one entry per
online joint (nid = bus·5 + node, position [rad], velocity [rad/s] by finite difference, effort 0).
A hand that was never given positions sends none (it does not pretend to know its joints).
Faults: `set_joint_online(index, False)` (the joint's entry is absent), `set_joint_states_sending`.
"""
from __future__ import annotations

import time

import numpy as np

from ...contract.geometry import matrix_to_rpy
from ...contract.joints import FINGERS
from ..hardware.device import (MODEL_STANDARD, MODEL_THUMB, STATE_CALIBRATING, STATE_READY, EmulatedNodeOfflineError,
                               sdk_module)
from ..hardware.format import FIELD_TYPES
from ..hardware.layout_metadata import DEFAULT_AXIS_MAPPING, AxisMapping
from .joints import EmulatedJoints
from .pad_module import DEFAULT_FULL_SCALE, PadModule, encode_frame, half_step, write_format
from .sdk_failures import CallFailures, sdk_exception
from .sdk_types import (EmulatedCommSummary, EmulatedData, EmulatedDeviceInfo, EmulatedHeader, EmulatedHwVersion,
                        EmulatedInfo, EmulatedJointDiagnosticsFrame,
                        EmulatedJointStateFrame, EmulatedStatus, Getter)
from .subscriptions import DataResource, DiagnosticsResource, JointStatesResource


class EmulatedHand2:
    """An emulated Wuji Hand 2 with five fingertip sensors (see module docstring).

    `firmware`: "newton" or "normalized". `mounting`: declare point_rpy/base_xyz/base_rpy;
    `positions`: declare positions (both default True; False emulates older firmware).
    `axis_mapping`: the mapping the producer is expected to use (the emulator applies its
    inverse). `accessors`: "named" (SDK 2026.10.26), "indexed" (`get_fingertip_info(i)`) or
    "both". `full_scale`: (3,) N per device axis for the normalized firmware. `start_time_us`:
    the device clock at start (u64 µs; 1 h of uptime by default, so clock jumps back stay ≥ 0)."""

    def __init__(self, side: str = "right", *, firmware: str = "newton", mounting: bool = True,
                 positions: bool = True, axis_mapping: AxisMapping = DEFAULT_AXIS_MAPPING,
                 accessors: str = "named", full_scale=DEFAULT_FULL_SCALE, rate_hz: float = 100.0,
                 serial_number: str | None = None, start_time_us: int = 3_600_000_000, queue_limit: int = 256,
                 calibration_ticks: int = 10, pad_taxels=None, reported_side: str | None = None,
                 firmware_version: str | None = None, hw_version: tuple[int, int, int] = (2, 0, 1),
                 format_extras: dict | None = None, field_extras: dict | None = None,
                 temperature_unit: str = "C", diagnostics_every: int = 10, seed: int = 0,
                 calibration_delay_ticks: int = 0):
        if firmware not in ("newton", "normalized"):
            raise ValueError(f"firmware must be 'newton' or 'normalized', got {firmware!r}")
        if accessors not in ("named", "indexed", "both"):
            raise ValueError(f"accessors must be 'named', 'indexed' or 'both', got {accessors!r}")
        if pad_taxels is None:
            from ..sim.taxels import pad_taxels as sim_pad_taxels
            pad_taxels = sim_pad_taxels(side)
        self.side = side
        #: What `handedness()` answers (a hand whose side is not the one asked for: wrong_side).
        self.reported_side = reported_side or side
        self.firmware_version = firmware_version or ("v2.3.1" if firmware == "newton" else "v2.4.0")
        self.hw_version_triple = tuple(hw_version)
        self.format_extras = dict(format_extras or {})
        self.field_extras = dict(field_extras or {})
        self.temperature_unit = temperature_unit
        self.diagnostics_every = diagnostics_every
        self.faults = CallFailures()
        self.link_up = True
        self.connected = True
        self.device_name = "emulated"
        self.address: str | None = None  # on the emulated LAN, set by EmulatedSdkManager
        self._rng = np.random.default_rng(seed)
        self._emits = 0
        self.firmware = firmware
        self.rate_hz = float(rate_hz)
        self.joints = EmulatedJoints(self.rate_hz)
        self.serial_number = serial_number or ("EMUK0001" if side == "right" else "EMUJ0001")
        self.queue_limit = queue_limit
        self.full_scale = np.asarray(full_scale, dtype=np.float64)
        self.calibration_ticks = calibration_ticks
        self._declare_mounting, self._declare_positions = mounting, positions
        self._map = axis_mapping.matrix
        self._sign = axis_mapping.force_sign
        self._subs: dict[str, list] = {f: [] for f in FINGERS}
        sdk = sdk_module()
        # The SDK's own FrameHeader when installed (it is constructible), else a look-alike.
        self._header = sdk.FrameHeader if sdk is not None else EmulatedHeader
        self._pads: list[PadModule] = []
        start = 0
        for layout in pad_taxels:
            n = len(layout.positions)
            R_base = np.asarray(layout.pad_rotation, dtype=np.float64)
            origin = np.asarray(layout.pad_origin, dtype=np.float64)
            # taxel frame = R_point · Mᵀ  ⇒  device point axes R_point = R_taxel · M
            R_point = np.asarray(layout.rotations, dtype=np.float64) @ self._map
            pad = PadModule(layout.finger, slice(start, start + n), R_base, origin, R_point,
                       (np.asarray(layout.positions) - origin) @ R_base, matrix_to_rpy(R_base.T @ R_point),
                       {})
            self._pads.append(pad)
            self._write_format(pad)
            start += n
        self.num_taxels = start
        self._time_us = int(start_time_us)
        for pad in self._pads:
            pad.rate_hz = self.rate_hz
            pad.period_us = 1e6 / self.rate_hz
            pad.next_us = self._time_us + pad.period_us
        self._clock_offset_us = 0
        self._baseline = np.zeros((start, 3))
        self._last_input = np.zeros((start, 3))
        self._calibrating = 0
        self._calibration_delay = 0
        self.calibration_delay_ticks = calibration_delay_ticks
        self.saturated_samples = 0  # device-side clipping (i16 range or normalized full scale)
        for i, pad in enumerate(self._pads):
            f = pad.finger
            if accessors in ("named", "both"):
                setattr(self, f"fingertip_{f}_info", self._accessor(self._info, i))
            setattr(self, f"fingertip_{f}_data", self._accessor(DataResource, self, f, bare=True))
            setattr(self, f"fingertip_{f}_status", self._accessor(self._status, i))
        if accessors in ("indexed", "both"):
            self.get_fingertip_info = lambda i: self._info(int(i))

    @staticmethod
    def _accessor(fn, *args, bare: bool = False):
        return (lambda: fn(*args)) if bare else (lambda: Getter(lambda: fn(*args)))

    # ----- format and info -----
    def _write_format(self, pad: PadModule, *, point_type: str = "i16", point_scale: float | None = None) -> None:
        write_format(pad, firmware=self.firmware, mounting=self._declare_mounting, positions=self._declare_positions,
                     format_extras=self.format_extras, field_extras=self.field_extras,
                     temperature_unit=self.temperature_unit, point_type=point_type, point_scale=point_scale)

    def _offline_error(self, finger: str) -> Exception:
        sdk = sdk_module()
        cls = sdk.NodeOfflineError if sdk is not None else EmulatedNodeOfflineError
        return cls(f"fingertip module of the {finger} finger is not connected")

    def _info(self, index: int) -> EmulatedInfo:
        pad = self._pads[index]
        self._check(f"info:{pad.finger}")
        if not pad.online:
            raise self._offline_error(pad.finger)
        return EmulatedInfo(self._header(pad.seq, self.device_time_us, f"{self.side}_{pad.finger}_tip_sensor_frame"),
                            pad.digest, "wuji-emulated-fingertip", 0, pad.rate_hz, pad.format_text)

    def _status(self, index: int) -> EmulatedStatus:
        pad = self._pads[index]
        self._check(f"status:{pad.finger}")
        if not pad.online:
            raise self._offline_error(pad.finger)
        calibrating = self._calibrating and not self._calibration_delay
        return EmulatedStatus(MODEL_THUMB if pad.finger == "thumb" else MODEL_STANDARD,
                              STATE_CALIBRATING if calibrating else STATE_READY)

    def fingertip_online(self) -> list[bool]:
        self._check("fingertip_online")
        return [p.online for p in self._pads]

    def calibrate_fingertip(self) -> None:
        """Zero-baseline calibration of all pads: whatever load is on them now becomes zero
        (after `calibration_ticks` frames in the Calibrating state)."""
        self._check("calibrate_fingertip")
        off = [p.finger for p in self._pads if not p.online]
        if off:
            raise self._offline_error(off[0])
        self._calibration_delay = self.calibration_delay_ticks
        self._calibrating = self.calibration_ticks
        if self.calibration_ticks == 0:  # firmware too quick for any status read to see Calibrating
            self._baseline = self._last_input.copy()

    # ----- identity (as the SDK's WujiHand2 reports it) -----
    def handedness(self) -> Getter:
        """`hand.handedness()` → accessor whose `get()` answers 'left' or 'right'."""
        def get() -> str:
            self._check("handedness")
            return self.reported_side
        return Getter(get)

    def hw_version(self) -> Getter:
        sdk = sdk_module()
        cls = sdk.HwVersion if sdk is not None else EmulatedHwVersion
        def get() -> object:
            self._check("hw_version")
            return cls(*self.hw_version_triple)
        return Getter(get)

    @property
    def info(self) -> EmulatedDeviceInfo:
        return EmulatedDeviceInfo(self.serial_number, self.firmware_version)

    @property
    def is_connected(self) -> bool:
        return self.connected and self.link_up

    def disconnect(self) -> None:
        self.connected = False
        for subs in self._subs.values():
            for sub in list(subs):
                sub.dead = True
        self._subs = {k: [] for k in self._subs}

    def joint_diagnostics(self) -> DiagnosticsResource:
        return DiagnosticsResource(self)

    def joint_states(self) -> JointStatesResource:
        return JointStatesResource(self)

    @property
    def joint_positions(self) -> np.ndarray | None:
        """The hand's joint positions [rad, firmware order]; None until told (no joint states sent)."""
        return self.joints.positions

    @property
    def joint_states_sending(self) -> bool:
        return self.joints.sending

    @property
    def joint_time_offset_us(self) -> int:
        """Offset of the joint state timestamps from the hand tick [µs]."""
        return self.joints.time_offset_us

    @joint_time_offset_us.setter
    def joint_time_offset_us(self, value: int) -> None:
        self.joints.time_offset_us = int(value)

    def set_joint_positions(self, joint_angles) -> None:
        """The hand's joint positions from now on: 20 angles [rad], firmware order."""
        self.joints.set_positions(joint_angles)

    def set_joint_online(self, joint_index: int, online: bool) -> None:
        """An offline joint is absent from the joint state frames (as the SDK's are: online only)."""
        self.joints.online[int(joint_index)] = bool(online)

    def set_joint_states_sending(self, sending: bool) -> None:
        """A stalled joint state stream: the fingertips keep sending, the joints do not."""
        self.joints.sending = bool(sending)

    def joint_state_frame(self) -> EmulatedJointStateFrame:
        """The hand's joint state now (online joints only), timestamped on the device clock."""
        return self.joints.state_frame(self._header, self.device_time_us)

    def set_joint_error(self, joint_index: int, code: int) -> None:
        """A joint reports an active fault code in its diagnostics (0 clears it)."""
        self.joints.errors[int(joint_index)] = int(code)

    # ----- behaviours of a real hand -----
    def set_timing(self, finger: str, *, phase_us: float | None = None, rate_hz: float | None = None,
                   drift_ppm: float = 0.0, jitter_us: float = 0.0) -> None:
        """The finger's module samples at `rate_hz` (default the hand's) on a clock `drift_ppm`
        fast (> 0) or slow, `phase_us` after the hand's tick (0 ≤ phase < one period), with its
        timestamps jittered uniformly by ±`jitter_us` (< half a period)."""
        pad = self.pad(finger)
        rate = self.rate_hz if rate_hz is None else float(rate_hz)
        if not rate > 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        period = 1e6 / rate / (1.0 + drift_ppm * 1e-6)
        if not 0 <= jitter_us < period / 2:
            raise ValueError(f"jitter_us must be in [0, {period / 2:.0f}) µs, got {jitter_us}")
        if phase_us is not None:
            if not 0 <= phase_us < period:
                raise ValueError(f"phase_us must be in [0, {period:.0f}) µs, got {phase_us}")
            pad.next_us = pad.next_us - pad.phase_us + phase_us
            pad.phase_us = float(phase_us)
        pad.period_us = period
        pad.rate_hz = rate
        pad.jitter_us = float(jitter_us)

    def fail_next(self, call: str, error: str = "timeout", *, count: int = 1, hang_s: float = 0.5) -> None:
        """The next `count` calls of `call` fail: 'fingertip_online', 'calibrate_fingertip',
        'handedness', 'hw_version', 'info[:finger]', 'status[:finger]', 'subscribe[:finger]',
        'recv[:finger]'; `error` in 'timeout', 'error', 'offline', 'hang'."""
        self.faults.add(call, error, count, hang_s)

    def lose_link(self) -> None:
        """The hand drops off the network: every call and stream raises the SDK's Disconnected
        error until `restore_link()` and a new connection (`EmulatedSdkManager.connect`)."""
        self.link_up = False
        self.disconnect()

    def restore_link(self) -> None:
        self.link_up = True

    def _sdk_error(self, kind: str, what: str) -> Exception:
        return sdk_exception(kind, f"{what} of hand {self.serial_number}")

    def _check(self, call: str) -> None:
        if not (self.link_up and self.connected):
            raise self._sdk_error("disconnected", call)
        fault = self.faults.take(call)
        if fault is None:
            return
        kind, hang_s = fault
        if kind == "hang":
            time.sleep(hang_s)
            return
        raise self._sdk_error(kind, call)

    # ----- fault injection -----
    def pad(self, finger: str) -> PadModule:
        return self._pads[FINGERS.index(finger)]

    def set_online(self, finger: str, online: bool) -> None:
        """Offline: no info, no status, no frames, `fingertip_online()` False."""
        self.pad(finger).online = online

    def set_sending(self, finger: str, sending: bool) -> None:
        """A stall: the finger stays online but sends no frames."""
        self.pad(finger).sending = sending

    def revise_info(self, finger: str, *, point_type: str = "i16", point_scale: float | None = None,
                    move_taxels_m: float = 0.0) -> None:
        """Publish a new info revision (new digest). `point_type`/`point_scale` change the encoding
        only; `move_taxels_m` ≠ 0 shifts every point (a layout change)."""
        pad = self.pad(finger)
        if point_type not in FIELD_TYPES:
            raise ValueError(point_type)
        pad.revision += 1
        if move_taxels_m:
            pad.positions_module = pad.positions_module + np.array([0.0, 0.0, move_taxels_m])
        self._write_format(pad, point_type=point_type, point_scale=point_scale)

    def inject(self, finger: str, fault: str) -> None:
        """Corrupt the finger's next frame: 'truncated' (last byte missing), 'oversized' (one extra
        byte) or 'duplicate' (the frame is delivered twice)."""
        if fault not in ("truncated", "oversized", "duplicate"):
            raise ValueError(f"unknown fault {fault!r}")
        self.pad(finger).inject.append(fault)

    def desync_digest(self, finger: str, digest: int | None) -> None:
        """Frames carry `digest` as info_digest although the info keeps its own (None = heal):
        a device whose frames refer to an info revision it never serves."""
        self.pad(finger).frame_digest = digest

    def jump_clock(self, delta_us: int) -> None:
        """Step the device clock (e.g. a time-sync correction or a device reboot)."""
        self._clock_offset_us += int(delta_us)

    @property
    def device_time_us(self) -> int:
        return self._time_us + self._clock_offset_us

    # ----- frames -----
    def device_point_forces(self, forces: np.ndarray) -> np.ndarray:
        """Contract forces (N, 3) [N, taxel axes] → what the device's points measure [N, point axes]:
        f_point = force_sign · Mᵀ · f_contract."""
        return self._sign * (np.asarray(forces, dtype=np.float64) @ self._map)

    def encode_frame(self, finger: str, forces: np.ndarray) -> bytes:
        """The finger's frame bytes for contract forces (N, 3) of the whole hand."""
        pad = self.pad(finger)
        data, saturated = encode_frame(pad, self.device_point_forces(forces[pad.taxels]), self.full_scale)
        self.saturated_samples += saturated
        return data

    def emit(self, forces: np.ndarray, *, device_time_us: int | None = None, joint_angles=None) -> None:
        """One hand tick: the device clock advances by one period (or to `device_time_us`) and
        every online, sending finger delivers the samples its own clock took meanwhile (one,
        unless `set_timing` made it drift, run at another rate or start later), each sensing
        `forces` (176, 3) [N, contract axes] (e.g. the simulation's taxel forces). `joint_angles`
        (20,) [rad]: the joints' positions at this tick (else they keep their last); the hand then
        sends one joint state frame, if it knows its positions."""
        forces = np.asarray(forces, dtype=np.float64)
        if forces.shape != (self.num_taxels, 3):
            raise ValueError(f"emit: forces must be ({self.num_taxels}, 3), got {forces.shape}")
        if device_time_us is None:
            self._time_us += int(round(1e6 / self.rate_hz))
        else:
            self._time_us = int(device_time_us)
        self._last_input = forces
        if self._calibration_delay:
            self._calibration_delay -= 1
        elif self._calibrating:
            self._calibrating -= 1
            if self._calibrating == 0:
                self._baseline = forces.copy()
        loaded = forces - self._baseline
        now = self._time_us
        for pad in self._pads:
            while pad.next_us <= now:
                t = pad.next_us
                pad.next_us += pad.period_us
                if pad.jitter_us:
                    t += self._rng.uniform(-pad.jitter_us, pad.jitter_us)
                if pad.online and pad.sending and self.link_up:
                    self._send(pad, loaded, int(round(t)) + self._clock_offset_us)
        self._emits += 1
        if joint_angles is not None:
            self.set_joint_positions(joint_angles)
        if self.joint_positions is not None and self.joint_states_sending and self.link_up:
            frame = self.joint_state_frame()
            for sub in self._subs.get("joint_states", []):
                sub._put(frame)
        if self.diagnostics_every and self._emits % self.diagnostics_every == 0 and self.link_up:
            diag = self.joint_diagnostics_frame()
            for sub in self._subs.get("joint_diagnostics", []):
                sub._put(diag)

    def _send(self, pad: PadModule, loaded: np.ndarray, timestamp_us: int) -> None:
        data = self.encode_frame(pad.finger, loaded)
        faults = pad.inject
        fault = faults.popleft() if faults else None
        if fault == "truncated":
            data = data[:-1]
        elif fault == "oversized":
            data = data + b"\x00"
        header = self._header(pad.seq, timestamp_us, f"{self.side}_{pad.finger}_tip_sensor_frame")
        msg = EmulatedData(header, pad.digest if pad.frame_digest is None else pad.frame_digest, data)
        for sub in self._subs[pad.finger]:
            sub._put(msg)
            if fault == "duplicate":
                sub._put(msg)
        pad.seq = (pad.seq + 1) % (1 << 32)

    def joint_diagnostics_frame(self) -> EmulatedJointDiagnosticsFrame:
        """The hand's joint diagnostics now: 20 joints (nid = bus·5 + node, node 1..4) with
        temperature, current, bus voltage and fault code, and the tactile link summary."""
        joints = self.joints.diagnostics_entries()
        online = [p.online for p in self._pads]
        comm = EmulatedCommSummary(0, sum(1 << i for i, ok in enumerate(online) if ok), self._emits, 0, 0,
                                   [100 if ok else 0 for ok in online],
                                   [0 if ok else self._emits for ok in online], 0)
        return EmulatedJointDiagnosticsFrame(self._header(self._emits, self.device_time_us, "hand"), 20, joints, comm)

    def quantisation_step(self) -> np.ndarray:
        """(N, 3) largest decode error [N] per contract component: half a raw step (× full scale in
        normalized mode), in contract axes."""
        step = np.empty((self.num_taxels, 3))
        for pad in self._pads:
            step[pad.taxels] = np.abs(self._map) @ half_step(pad, self.full_scale)
        return step
