"""Sensor model: each effect's statistics, seeding, randomisation ranges, file format, hand hook."""
from __future__ import annotations

import json
import math

import mujoco
import numpy as np
import pytest

from wuji_tactile_device.errors import ProducerError
from wuji_tactile_device.producers.sim.sensor_model import SensorModel, load_sensor_specs
from wuji_tactile_device.producers.sim.taxels import pad_taxels

N = 176


def _model(seed=0, **specs) -> SensorModel:
    return SensorModel.for_hand(specs, "right", seed=seed)


def _run(model: SensorModel, inputs: np.ndarray) -> np.ndarray:
    """Outputs (T, 176, 3) for inputs (T, 176, 3)."""
    return np.stack([model.apply(x) for x in inputs]).astype(np.float64)


def test_off_by_default_is_the_identity():
    m = _model()
    x = np.random.default_rng(0).normal(size=(5, N, 3))
    np.testing.assert_array_equal(_run(m, x), x.astype(np.float32))


def test_white_noise_sigma_within_5_percent_over_1e4_samples():
    m = _model(seed=3, noise_std=0.01)
    y = _run(m, np.zeros((20, N, 3)))           # 20 × 528 = 10 560 samples
    assert y.size >= 1e4
    assert abs(y.std() / 0.01 - 1) < 0.05
    assert abs(y.mean()) < 3 * 0.01 / math.sqrt(y.size)
    # Independent between frames: lag-1 correlation near 0.
    c = np.corrcoef(y[:-1].ravel(), y[1:].ravel())[0, 1]
    assert abs(c) < 0.05


def test_bias_random_walk_grows_as_sqrt_time():
    m = _model(seed=4, bias_drift=0.02)               # N/√s
    y = _run(m, np.zeros((100, N, 3)))              # 1 s
    # Across 528 channels, the std at t = 1 s is 0.02 N (±5 % sampling error at 3σ ≈ 9 %).
    assert abs(y[-1].std() / (0.02 * math.sqrt(1.0)) - 1) < 0.1
    assert abs(y[24].std() / (0.02 * math.sqrt(0.25)) - 1) < 0.1
    # A random walk: increments are independent with variance drift²·Δt.
    inc = np.diff(y, axis=0)
    assert abs(inc.std() / (0.02 * math.sqrt(0.01)) - 1) < 0.05


def test_initial_bias_is_constant_within_an_episode():
    m = _model(seed=5, bias_initial=0.05)
    y = _run(m, np.zeros((3, N, 3)))
    np.testing.assert_array_equal(y[0], y[2])
    assert abs(y[0].std() / 0.05 - 1) < 0.1


def test_first_order_lag_step_response_time_constant():
    tau = 0.05
    m = _model(time_constant=tau)
    x = np.zeros((60, N, 3))
    x[1:] = 1.0                                      # unit step at frame 1
    y = _run(m, x)[:, 0, 2]
    # y_k = 1 − e^(−k·Δt/τ) after k frames of the step.
    k = np.arange(60) - 0
    expected = np.where(k >= 1, 1 - np.exp(-k * 0.01 / tau), 0.0)
    np.testing.assert_allclose(y, expected, atol=1e-6)
    # The 63.2 % crossing is τ after the step (within one frame).
    t63 = np.argmax(y >= 1 - math.exp(-1)) * 0.01
    assert abs(t63 - tau) <= 0.01


def test_fixed_latency_delays_by_whole_frames():
    m = _model(latency=0.03)
    x = np.zeros((10, N, 3))
    x[2:] = 0.7
    y = _run(m, x)[:, 5, 0]
    assert np.all(y[:5] == 0) and np.allclose(y[5:], 0.7)


def test_hysteresis_loop_width_is_twice_the_half_width():
    h = 0.02
    m = _model(hysteresis=h)
    up = np.linspace(0, 1, 101)
    ramp = np.concatenate([up, up[::-1]])
    y = _run(m, np.broadcast_to(ramp[:, None, None], (len(ramp), N, 3)).copy())[:, 0, 2]
    loading, unloading = y[:101], y[101:][::-1]
    mid = slice(20, 80)
    np.testing.assert_allclose(unloading[mid] - loading[mid], 2 * h, atol=1e-6)


def test_crosstalk_reaches_only_neighbours_on_the_same_pad():
    m = _model(crosstalk=0.1, crosstalk_radius=0.004)
    pos = np.concatenate([p.positions for p in pad_taxels("right")])
    x = np.zeros((N, 3))
    k = 50                                            # an index-pad taxel
    x[k, 2] = -1.0
    y = m.apply(x)[:, 2].astype(np.float64)
    d = np.linalg.norm(pos - pos[k], axis=1)
    same_pad = (np.arange(N) >= 40) & (np.arange(N) < 74)
    neighbours = (d <= 0.004) & (d > 0) & same_pad
    assert neighbours.sum() >= 2
    np.testing.assert_allclose(y[neighbours], -0.1, atol=1e-7)
    assert y[k] == np.float32(-1.0)
    assert np.all(y[~neighbours & (np.arange(N) != k)] == 0)


def test_quantisation_step_and_error_distribution():
    q = 0.01
    m = _model(quantisation=q)
    x = np.random.default_rng(1).uniform(-1, 1, (20, N, 3))
    y = _run(m, x)
    np.testing.assert_allclose(np.round(y / q) * q, y, atol=1e-6)
    err = y - x.astype(np.float32)
    assert np.all(np.abs(err) <= q / 2 + 1e-6)
    assert abs(err.std() / (q / math.sqrt(12)) - 1) < 0.05


def test_saturation_clips_each_channel():
    m = _model(saturation=0.5)
    x = np.full((N, 3), -2.0)
    x[:, 0] = 0.3
    y = m.apply(x)
    assert np.all(y[:, 1:] == -0.5) and np.allclose(y[:, 0], 0.3)


def test_dead_taxels_read_zero_and_are_seeded():
    a, b, c = _model(seed=1, dead_fraction=0.05), _model(seed=1, dead_fraction=0.05), _model(seed=2, dead_fraction=0.05)
    assert a.dead.sum() == round(0.05 * N) == 9
    np.testing.assert_array_equal(a.dead, b.dead)
    assert not np.array_equal(a.dead, c.dead)
    y = a.apply(np.ones((N, 3)))
    assert np.all(y[a.dead] == 0) and np.all(y[~a.dead] == 1)


def test_ranges_are_drawn_per_episode_and_reproducible():
    m = _model(seed=7, noise_std=(0.001, 0.003), time_constant=(0.01, 0.03))
    first = m.params
    assert 0.001 <= first.noise_std <= 0.003 and 0.01 <= first.time_constant <= 0.03
    seq1 = _run(m, np.zeros((3, N, 3)))
    m.reset(8)
    assert m.params != first
    m.reset(7)
    assert m.params == first
    np.testing.assert_array_equal(_run(m, np.zeros((3, N, 3))), seq1)


def test_invalid_parameters_are_refused_with_their_name():
    with pytest.raises(ValueError, match="unknown parameter"):
        _model(noise=0.1)
    with pytest.raises(ValueError, match="dead_fraction must satisfy"):
        _model(dead_fraction=1.5)
    with pytest.raises(ValueError, match="noise_std must satisfy"):
        _model(noise_std=(0.3, 0.1))


def test_file_format_units_and_errors(tmp_path):
    good = {"format": "wuji-tactile-sensor-model", "version": 1,
            "parameters": {"noise_std": {"value": 0.002, "unit": "N"},
                           "time_constant": {"range": [0.005, 0.02], "unit": "s"}}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(good))
    assert load_sensor_specs(path) == {"noise_std": 0.002, "time_constant": (0.005, 0.02)}
    m = SensorModel.from_file(path, seed=1)
    assert m.params.noise_std == 0.002 and 0.005 <= m.params.time_constant <= 0.02
    bad = dict(good, parameters={"noise_std": {"value": 2.0, "unit": "mN"}})
    path.write_text(json.dumps(bad))
    with pytest.raises(ProducerError, match=r"parameter 'noise_std' needs \"unit\": 'N', got 'mN'"):
        load_sensor_specs(path)
    path.write_text(json.dumps(dict(good, version=2)))
    with pytest.raises(ProducerError, match="unsupported version 2"):
        load_sensor_specs(path)
    path.write_text(json.dumps(dict(good, parameters={"dead_fraction": {"value": 2, "unit": "1"}})))
    with pytest.raises(ProducerError, match="dead_fraction must satisfy"):
        load_sensor_specs(path)
    with pytest.raises(ProducerError, match="does not exist"):
        load_sensor_specs(tmp_path / "missing.json")


def test_shipped_example_file_loads():
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "docs" / "sensor_model_example.json"
    specs = load_sensor_specs(path)
    assert set(specs) >= {"noise_std", "bias_drift", "hysteresis", "time_constant", "latency", "crosstalk",
                          "quantisation", "saturation", "dead_fraction"}


def test_hand_simulation_applies_the_model_once_per_frame():
    from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
    from wuji_tactile_device.producers.sim.model import build_hand_spec
    spec = build_hand_spec("right")
    spec.worldbody.add_body(name="far", pos=[0.5, 0, 0]).add_geom(name="far_geom", type=mujoco.mjtGeom.mjGEOM_BOX,
                                                                  size=[0.01] * 3)
    sim = HandSimulation("right", spec, ["far_geom"], sensor_model=_model(seed=2, noise_std=0.01))
    sim.step_frame()
    a, b = sim.read(), sim.read()
    np.testing.assert_array_equal(a.taxel_forces, b.taxel_forces)   # same frame, same output
    assert a.taxel_forces.std() > 0.005 and not a.ideal_taxel_forces.any()
    assert not a.resultants.any()                                   # resultants stay ideal
    sim.step_frame()
    assert not np.array_equal(sim.read().taxel_forces, a.taxel_forces)


def test_press_with_the_example_sensor_model_passes_and_its_zero_check_reads_the_physics():
    """The 'exactly zero after release' check judges the noise-free forces: with the shipped
    (noisy, hysteretic) model the run passes; judged during the hold (forces present) it fails."""
    from pathlib import Path

    from wuji_tactile_device.run.simulation import run_scenario
    from wuji_tactile_device.producers.sim.scenarios import PressScenario

    example = Path(__file__).resolve().parents[1] / "docs" / "sensor_model_example.json"
    sensed = []

    def scenario(zero_from=None):
        s = PressScenario()
        s.sensor_model = SensorModel.from_file(example, "right", seed=3)
        if zero_from is not None:
            s.ZERO_FROM = zero_from
        return s

    result = run_scenario(scenario(), on_frame=lambda sim, r: sensed.append(r.taxel_forces.any()))
    assert result.passed, result.report()
    assert all(sensed[-50:]), "the noisy model's output should not be exactly zero after release"
    zero = next(c for c in run_scenario(scenario(zero_from=10.0)).checks if "exactly zero" in c.name)
    assert not zero.passed and zero.value < 100.0, zero.line()
