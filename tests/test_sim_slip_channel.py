"""The pads' slip output recorded on `<collection>/pad_slip` and read back (recording/slip_channel.py)."""
from __future__ import annotations

import numpy as np
import pytest

from wuji_tactile_device.errors import RecordingError
from wuji_tactile_device.producers.sim.contact_model import DistributedContact
from wuji_tactile_device.producers.sim.scenarios import make_scenario
from wuji_tactile_device.recording.slip_channel import (PAD_SLIP_FRAME, decode_pad_slip, encode_pad_slip,
                                                        iter_pad_slip, pad_slip_topic)
from wuji_tactile_device.run.simulation import record_simulation

FRAMES = 340          # the slip scenario through its drag start (3 s) into gross slip (≈ 3.3 s)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("slip") / "slip.mcap"
    truth = []

    def keep(sim, reading, timestamp):
        truth.append((int(timestamp[1]), np.concatenate([reading.pad_slip_velocity,
                                                         reading.pad_stuck_fraction[:, None]], axis=1)))
    n = record_simulation(path, make_scenario("slip"), max_frames=FRAMES, on_frame=keep, profile="default",
                          compression="zstd")
    return path, n, truth


def test_every_frame_is_recorded_with_the_producers_values(recorded):
    path, n, truth = recorded
    got = list(iter_pad_slip(path, "tactile/right"))
    assert n == FRAMES and len(got) == FRAMES == len(truth)
    assert {t for t, _ in got} == {pad_slip_topic("tactile/right")}
    for (_, s), (sample_time, ref) in zip(got, truth, strict=True):
        assert s.sample_time_ns == sample_time
        np.testing.assert_allclose(s.velocity, ref[:, :3], rtol=1e-8, atol=1e-15)
        np.testing.assert_allclose(s.stuck_fraction, ref[:, 3], rtol=1e-8, atol=1e-15)


def test_the_recording_holds_stick_then_slip_at_the_index_pad(recorded):
    path, _, _ = recorded
    s = [x for _, x in iter_pad_slip(path)]
    speed = np.array([np.linalg.norm(x.velocity[1]) for x in s])
    stuck = np.array([x.stuck_fraction[1] for x in s])
    assert stuck[0] == 1.0 and speed[:290].max() == 0.0        # before the drag: stuck, no slip
    assert stuck[-1] == 0.0 and 0.005 < speed[-1] < 0.02        # gross slip at the 10 mm/s drag


def test_channel_states_its_frame():
    assert "pad frame" in PAD_SLIP_FRAME and "+Y toward the nail" in PAD_SLIP_FRAME


def test_encoding_refuses_bad_shapes_and_values():
    ts = (1, 2, 3)
    with pytest.raises(ValueError, match=r"expected shape \(5, 4\)"):
        encode_pad_slip(np.zeros((5, 3)), ts)
    bad = np.zeros((5, 4))
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        encode_pad_slip(bad, ts)
    msg = encode_pad_slip(np.arange(20.0).reshape(5, 4) * 1e-3, ts)
    back = decode_pad_slip(msg, 7)
    assert back.log_time_ns == 7 and back.sample_time_ns == 2
    np.testing.assert_allclose(back.velocity, (np.arange(20.0).reshape(5, 4) * 1e-3)[:, :3])
    with pytest.raises(RecordingError, match="pads"):
        decode_pad_slip(msg.replace(b'"thumb"', b'"thumbs"'))


def test_gaussian_model_declares_no_slip_output():
    from wuji_tactile_device.producers.sim.producer import SimProducer
    sc = make_scenario("slip")
    sc.contact_model = "gaussian"
    p = SimProducer(sc, max_frames=1)
    assert "pad_slip" not in p.extras_provided
    assert isinstance(SimProducer(make_scenario("slip"), max_frames=1).sim.contacts.distributed, DistributedContact)


def test_lerobot_export_carries_the_slip_columns(recorded, tmp_path):
    pytest.importorskip("pyarrow", reason="the LeRobot export needs pyarrow (extra 'lerobot')")
    import pyarrow.parquet as pq

    from wuji_tactile_device.recording.lerobot_export import export_lerobot

    path, _, truth = recorded
    result = export_lerobot([path], tmp_path / "ds", fps=100)
    p = "observation.tactile.right"
    assert result.features[f"{p}.pad_slip_velocity"]["unit"] == "m/s"
    assert result.features[f"{p}.pad_slip_velocity"]["frame"] == "pad"
    table = pq.read_table(sorted((tmp_path / "ds" / "data").rglob("*.parquet"))[0]).to_pydict()
    valid = np.array(table[f"{p}.pad_slip_valid"])
    vel = np.array(table[f"{p}.pad_slip_velocity"], dtype=np.float64).reshape(-1, 5, 3)
    stuck = np.array(table[f"{p}.pad_stuck_fraction"], dtype=np.float64)
    assert valid.all() and len(vel) == len(truth)
    ref = np.stack([r for _, r in truth])
    np.testing.assert_allclose(vel, ref[:, :, :3].astype(np.float32), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(stuck, ref[:, :, 3].astype(np.float32), rtol=1e-6, atol=1e-9)
