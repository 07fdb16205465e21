"""The projection logic of ``benchmarks/bench_dask.py`` (issue #31): how units of given costs fill
k workers, and how many engine blocks a chapter's ``paper`` scale table gives."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_dask", ROOT / "benchmarks/bench_dask.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_makespan_of_units_taken_in_order_by_the_first_free_worker(bench):
    assert bench.makespan([1.0] * 8, 8) == 1.0
    assert bench.makespan([1.0] * 9, 8) == 2.0  # one unit waits for a second round
    assert bench.makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0  # the long unit bounds the time
    assert bench.makespan([1.0, 1.0, 1.0, 3.0], 2) == 4.0  # ... more so when it comes last
    assert bench.makespan([2.0, 5.0], 64) == 5.0
    assert bench.makespan([0.5] * 10, 1) == pytest.approx(5.0)


def test_engine_blocks_at_paper_are_counted_from_the_scale_table(bench):
    # Chapter 4 at paper, blocks of 50: n_nets 200 -> 4, batch_nets 200 at 4 batch sizes -> 16,
    # conv_nets 1000 -> 20, data_nets 200 -> 4
    units = bench._engine_units("04_bn_exploding_sensitivity")
    assert len(units) == 4 + 16 + 20 + 4
    assert sum(n for n, *_ in units) == 200 + 4 * 200 + 1000 + 200
    assert sorted({b for _, _, b, _, _ in units}) == [64, 128, 256, 512]
    assert sum(conv for *_, conv in units) == 20


def test_gpu_projection_returns_the_measured_network_times_at_their_own_size(bench):
    # the rows measured on one H100 come back at their own configuration ...
    assert bench.gpu_network_seconds("04", 512, 64, 200, True) == pytest.approx(1.2)
    assert bench.gpu_network_seconds("04", 512, 64, 200, False) == pytest.approx(0.069)
    assert bench.gpu_network_seconds("05", 512, 64, 500, False) == pytest.approx(
        0.24
    )  # 2 layers/unit
    assert bench.gpu_network_seconds("03", 512, 64, 200, False) == pytest.approx(0.053)
    # ... and scale with width² · batch · layers
    assert bench.gpu_network_seconds("04", 256, 128, 100, False) == pytest.approx(0.069 / 4)
    # Chapter 4's 1 000 paper conv nets: the README's "≈ 20 minutes on one GPU"
    conv = [u for u in bench._engine_units("04_bn_exploding_sensitivity") if u[-1]]
    seconds = sum(n * bench.gpu_network_seconds("04", w, b, d, c) for n, w, b, d, c in conv)
    assert seconds == pytest.approx(1000 * 1.2)


def test_cpu_projection_costs_a_paper_conv_network_minutes_not_a_dense_fraction(bench):
    # one core: twice the 112.8 s per network of the two-worker whole run (the 31 h for
    # Chapter 4's 1 000 conv nets on the 2-core machine)
    assert bench.cpu_network_seconds("04", 512, 64, 200, True, 1e-9) == pytest.approx(225.6)
    conv = [u for u in bench._engine_units("04_bn_exploding_sensitivity") if u[-1]]
    hours = sum(n * bench.cpu_network_seconds("04", w, b, d, c, 1e-9) for n, w, b, d, c in conv)
    assert hours / 3600 / 2 == pytest.approx(1000 * 112.8 / 3600)  # two cores: ≈ 31 h
    # dense nets: the measured cost per width² · batch · layer, Chapter 5's units of 2 layers
    assert bench.cpu_network_seconds("05", 10, 2, 3, False, 0.5) == pytest.approx(0.5 * 100 * 2 * 6)
