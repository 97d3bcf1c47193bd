"""`BatchedScenes`: many independent copies of one simulated hand scene stepped together, for data
generation (thousands of tactile frames per second instead of one real-time stream).

All scenes share one compiled `MjModel` (that of a `HandSimulation`); each has its own `MjData`.
One frame of a scene is what `HandSimulation.step_frame` does (ten 1 ms `mj_step`, then
`mj_forward`); `step_frame()` runs the scenes' frames on a pool of threads (MuJoCo's functions
release the GIL, so the threads step scenes on all cores at once). `read()` then takes every
scene's taxel forces with the hand's own contact model in one pass over all scenes
(`ContactForceModel.read_many`: each scene equal to `HandSimulation.contacts.read` of it, bit for
bit) and returns them as `(scenes, N, 3)`.

Why threads and not `mujoco.rollout`: `rollout` integrates open-loop control sequences and returns
states; a tactile frame needs the contact solution in an `MjData` after `mj_forward`, so every
frame would cost a `mj_setState` + `mj_forward` more per scene than stepping the `MjData`s in place.

The read runs on the calling thread (numpy, one pass: its fixed per-call cost is paid once per
batch) while the stepping is parallel (docs/performance.md, "Batched simulation").
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import mujoco
import numpy as np

from .hand_sim import STEPS_PER_FRAME, HandSimulation

_STATE = mujoco.mjtState.mjSTATE_INTEGRATION  # everything that evolves: time, qpos, qvel, act, ctrl, ...


class BatchedScenes:
    """`scenes` copies of `sim`'s current state (model shared, one `MjData` each), stepped on
    `threads` threads (default: one per CPU, at most one per scene).

    `sim` itself is not stepped; its contact model reads every scene. `ctrl` [per actuator]:
    `(scenes, nu)` controls to start from (default: `sim`'s)."""

    def __init__(self, sim: HandSimulation, scenes: int, *, threads: int | None = None,
                 ctrl: np.ndarray | None = None) -> None:
        if isinstance(scenes, bool) or not isinstance(scenes, int) or scenes < 1:
            raise ValueError(f"scenes must be an integer >= 1, got {scenes!r}")
        import os

        threads = min(scenes, os.cpu_count() or 1) if threads is None else threads
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
        self.sim = sim
        self.model = sim.model
        self.threads = threads
        state = np.empty(mujoco.mj_stateSize(self.model, _STATE))
        mujoco.mj_getState(self.model, sim.data, state, _STATE)
        self.datas = [mujoco.MjData(self.model) for _ in range(scenes)]
        for d in self.datas:
            mujoco.mj_setState(self.model, d, state, _STATE)
        if ctrl is not None:
            self.set_ctrl(ctrl)
        for d in self.datas:
            mujoco.mj_forward(self.model, d)
        # Scenes split into `threads` contiguous groups, one task per group and frame.
        self._groups = [self.datas[i::threads] for i in range(threads)]
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="wuji-sim-batch") if threads > 1 else None
        self.frames = 0

    @property
    def scenes(self) -> int:
        return len(self.datas)

    def set_ctrl(self, ctrl: np.ndarray) -> None:
        """Controls of every scene, `(scenes, nu)` (e.g. the 20 joint position targets [rad] and
        the lift target [m] at their actuator indices)."""
        ctrl = np.asarray(ctrl, dtype=np.float64)
        if ctrl.shape != (self.scenes, self.model.nu):
            raise ValueError(f"ctrl must have shape ({self.scenes}, {self.model.nu}), got {ctrl.shape}")
        for d, c in zip(self.datas, ctrl, strict=True):
            d.ctrl[:] = c

    def _step_group(self, datas: list) -> None:
        m, step, forward = self.model, mujoco.mj_step, mujoco.mj_forward
        for d in datas:
            for _ in range(STEPS_PER_FRAME):
                step(m, d)
            forward(m, d)

    def step_frame(self) -> None:
        """Advance every scene one output frame (ten 1 ms steps + `mj_forward`), in parallel."""
        if self._pool is None:
            self._step_group(self.datas)
        else:
            for future in [self._pool.submit(self._step_group, g) for g in self._groups]:
                future.result()  # re-raises a worker's exception here
        self.frames += 1

    def read(self) -> np.ndarray:
        """Taxel forces of every scene now, `(scenes, N, 3)` float32 [N] in each taxel's axes
        (metadata taxel order): the hand's contact model reads all scenes in one pass
        (`ContactForceModel.read_many`), each scene equal to its own `read` bit for bit."""
        return self.sim.contacts.read_many(self.datas)

    def qpos(self) -> np.ndarray:
        """Joint positions of every scene, `(scenes, nq)`."""
        return np.stack([d.qpos for d in self.datas])

    def close(self) -> None:
        """Stop the worker threads. Idempotent."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> BatchedScenes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
