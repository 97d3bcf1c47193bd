"""Simulated-hand costs, measured side by side in one run (interleaved by `compare`):

- bare simulation: one output frame = ten 1 ms `mj_step` + `mj_forward` (the floor);
- full producer: bare + contact extraction and distribution to 176 taxels + FlatBuffer encode +
  publish on the in-process bus (a subscriber drains it), one `ProducerRunner.step()` of the run
  loop (metadata timer, publish, producer hook, sinks) around a producer over that simulation;
- full producer with the five 48×32 force images.

All step the same simulation: the `press` scenario stopped at t = 8 s inside its hold, joint
targets then frozen (no force feedback), which stays at all five pads loaded at 0.50–0.52 N by
one contact per pad; so every frame has real contacts on every pad to process
(the costly case: frames without contact take an early exit), and one MjData is hot in the cache,
as in a real run. A fourth candidate publishes a fixed frame without extraction, splitting the
overhead into extraction and encode + publish. Targets: full ≥ 0.6 × the bare
frame rate, with images ≥ 0.45 ×. Times are this thread's CPU time (MuJoCo steps on the calling
thread): what other jobs on the machine take is not counted, so the ratios hold beside them (wall
time gave 0.43 for a 0.85 ratio beside two CPU burners). The real-time factor is 10 ms of
simulation / CPU time per frame.
"""
from __future__ import annotations

import time

import numpy as np

from . import Row, Section, Target, compare


def _hold_state_sim():
    from ..producers.sim.producer import SimProducer
    from ..producers.sim.scenarios import PressScenario

    producer = SimProducer(PressScenario(), max_frames=800)  # t = 8 s, inside the hold
    while not producer.finished:
        producer.next_frame()
    return producer.sim


def _hold_producer(sim, images: bool):
    """The simulation stepped with its joint targets frozen, as a `Producer` (the frame a
    `SimProducer` makes, without the scenario's control law)."""
    from ..producers.base import Frame, Producer
    from ..producers.sim.layout_metadata import sim_metadata

    class Hold(Producer):
        collection_id, metadata, period_s = "tactile/right", sim_metadata("right"), 0.01

        def __init__(self):
            self._frame = Frame(np.zeros((self.metadata.num_taxels, 3), np.float32), 0)

        def next_frame(self):
            sim.step_frame()
            frame = self._frame
            frame.forces, frame.sample_time_ns = sim.read(images=images).taxel_forces, sim.time_ns
            return frame

    return Hold()


def run(quick: bool = False) -> Section:
    from ..producers.base import ProducerRunner
    from ..producers.sim.layout_metadata import sim_metadata
    from ..streams.publisher import TactilePublisher
    from ..streams.inproc import InProcessBus

    sim = _hold_state_sim()
    bare_sim = full_sim = sim
    bus = InProcessBus()
    sub = bus.subscribe("tactile/right")
    pubs = [TactilePublisher("tactile/right", sim_metadata("right"), bus)]
    full_run = ProducerRunner(_hold_producer(sim, images=False), bus)
    img_run = ProducerRunner(_hold_producer(sim, images=True), bus)
    start = full_sim.read()
    contacts = start.num_contacts
    dm0 = sim.contacts.distributed
    backend = "gaussian" if dm0 is None else dm0.backend
    held = start.taxel_forces.copy()

    def bare():
        bare_sim.step_frame()

    def publish_only():  # the same frame cost without the extraction: splits the overhead
        bare_sim.step_frame()
        pubs[0].publish(held, sample_time_ns=bare_sim.time_ns)
        sub.drain()

    def full():
        full_run.step()
        sub.drain()

    def with_images():
        img_run.step()
        sub.drain()

    number, repeat = (20, 5) if quick else (50, 15)
    t = compare({"bare": bare, "publish": publish_only, "full": full, "images": with_images},
                number=number, repeat=repeat, clock=time.thread_time)
    for pub in pubs:
        pub.close()
    for runner in (full_run, img_run):
        runner.close()
    # The measured state must still be the loaded hold: every pad pressed, as many contacts.
    end = full_sim.read()
    loads = np.linalg.norm(end.resultants, axis=1)
    assert np.all(loads > 0.1) and end.num_contacts >= contacts, \
        f"benchmark state lost its load: pad forces {loads} N, {end.num_contacts} contacts (started with {contacts})"
    frame_s = 0.01
    rows = [
        Row("bare simulation (10 × mj_step + mj_forward)", 1 / t["bare"], "frames/s", f"{t['bare'] * 1e6:.0f} µs/frame"),
        Row("full producer (+ extraction, 176 taxels, encode, in-process publish)", 1 / t["full"], "frames/s",
            f"{t['full'] * 1e6:.0f} µs/frame, {contacts} contacts on 5 pads, {backend} read"),
        Row("full producer + five 48×32 force images", 1 / t["images"], "frames/s", f"{t['images'] * 1e6:.0f} µs/frame"),
        Row("extraction + encode + publish overhead", (t["full"] - t["bare"]) * 1e6, "µs/frame"),
        Row("  of which encode + in-process publish + drain", (t["publish"] - t["bare"]) * 1e6, "µs/frame"),
        Row("images overhead", (t["images"] - t["full"]) * 1e6, "µs/frame"),
        Row("real-time factor, full producer", frame_s / t["full"], "× real time", "100 Hz output"),
        Row("real-time factor, with images", frame_s / t["images"], "× real time"),
    ]
    targets = [
        Target("full producer frame rate / bare simulation", t["bare"] / t["full"], ">=", 0.6),
        Target("with images frame rate / bare simulation", t["bare"] / t["images"], ">=", 0.45),
    ]
    extra = _contact_model_section(sim, quick)
    rows += extra.rows
    targets += extra.targets
    return Section("sim — MuJoCo hand producer (press hold, 5 pads loaded)", rows, targets)


def _contact_model_section(sim, quick: bool) -> Section:
    """Distributed contact model against the Gaussian blob, interleaved in one measurement on the
    same hold state: bare frame, full producer and full + images with each model, plus the
    machine's load average and each read's CPU time (less sensitive to a busy machine)."""
    import os

    from ..producers.sim.contact_forces import ContactForceModel
    from ..producers.sim.layout_metadata import sim_metadata
    from ..streams.inproc import InProcessBus
    from ..streams.publisher import TactilePublisher

    from ..producers.sim.contact_model import DistributedContact

    models = {name: ContactForceModel(sim.model, sim.side, sim.object_geom_ids, contact_model=name)
              for name in ("distributed", "gaussian")}
    # The numpy backend's read for comparison (CPU time only; the default is "native" when built).
    numpy_read = ContactForceModel(sim.model, sim.side, sim.object_geom_ids)
    numpy_read.distributed = DistributedContact(sim.model, numpy_read.pads, numpy_read.distal_bodies,
                                                numpy_read._object_geoms, backend="numpy")
    bus = InProcessBus()
    sub = bus.subscribe("tactile/right")
    pub = TactilePublisher("tactile/right", sim_metadata(sim.side), bus)

    def frame(model, images):
        def fn():
            sim.step_frame()
            r = model.read(sim.data, images=images)
            pub.publish(r.taxel_forces, sample_time_ns=sim.time_ns)
            sub.drain()
        return fn

    fns = {"bare": sim.step_frame}
    for name, m in models.items():
        fns[f"{name}"] = frame(m, False)
        fns[f"{name}+images"] = frame(m, True)
    load_before = os.getloadavg()[0]
    number, repeat = (20, 5) if quick else (50, 15)
    t = compare(fns, number=number, repeat=repeat, clock=time.thread_time)
    load_after = os.getloadavg()[0]
    pub.close()
    cpu = {}
    for name, m in [*models.items(), ("numpy", numpy_read)]:   # CPU time of the read alone, same state
        for images in (False, True):
            n = 200
            c0 = time.process_time()
            for _ in range(n):
                m.read(sim.data, images=images)
            cpu[name, images] = (time.process_time() - c0) / n
    dm = models["distributed"].distributed
    assert dm is not None, "a ContactForceModel built with contact_model='distributed' has its model"
    rows = [Row("machine load average (1 min) before / after the model comparison", load_before, "",
                f"after: {load_after:.2f} (2 cores shared)")]
    for name in models:
        backend = f", {dm.backend} backend" if name == "distributed" else ""
        rows += [
            Row(f"[{name}{backend}] full producer / bare", t["bare"] / t[name], "×",
                f"{t[name] * 1e6:.0f} µs/frame vs bare {t['bare'] * 1e6:.0f} µs"),
            Row(f"[{name}] with images / bare", t["bare"] / t[f"{name}+images"], "×",
                f"{t[f'{name}+images'] * 1e6:.0f} µs/frame"),
            Row(f"[{name}] read (contacts → 176 taxels), CPU time", cpu[name, False] * 1e6, "µs",
                f"with images {cpu[name, True] * 1e6:.0f} µs"),
        ]
    if dm.backend != "numpy":
        rows.append(Row("[distributed, numpy backend] read, CPU time", cpu["numpy", False] * 1e6, "µs",
                        f"with images {cpu['numpy', True] * 1e6:.0f} µs (the install without a C compiler)"))
    targets = [
        Target("distributed contact: full producer frame rate / bare simulation", t["bare"] / t["distributed"], ">=", 0.6),
        Target("distributed contact: with images frame rate / bare simulation",
               t["bare"] / t["distributed+images"], ">=", 0.45),
    ]
    return Section("sim — distributed contact vs Gaussian", rows, targets)


if __name__ == "__main__":
    print(run().markdown())
