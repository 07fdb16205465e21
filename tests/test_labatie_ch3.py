"""Tests of the statistics that decide Chapter 3's claims (layerwise.labatie, Chapter 3 section),
against closed forms and Monte-Carlo coverage on synthetic data with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import labatie
from layerwise.params import ParameterError


def test_one_layer_conservation_closed_form_and_coverage():
    # constant one-layer ratio c: log c exactly, no scatter
    m = np.cumprod(np.full((5, 11), 1.03), axis=1)
    r = labatie.one_layer_conservation(m)
    assert r["log_mean"] == pytest.approx(math.log(1.03)) and r["se"] == pytest.approx(
        0.0, abs=1e-15
    )
    assert r["dof"] == 4 and r["n"] == 5
    # log-normal one-layer ratios with unit mean (a chain that conserves the expectation)
    rng = np.random.default_rng(3)
    s2 = 0.08
    vals, ses = [], []
    for _ in range(300):
        steps = np.exp(rng.normal(-s2 / 2, math.sqrt(s2), (20, 50)))
        chain = np.concatenate([np.ones((20, 1)), np.cumprod(steps, axis=1)], axis=1)
        c = labatie.one_layer_conservation(chain)
        vals.append(c["log_mean"])
        ses.append(c["se"])
    vals = np.array(vals)
    assert abs(vals.mean()) < 4 * vals.std() / math.sqrt(len(vals))
    assert vals.std() / np.mean(ses) == pytest.approx(1.0, abs=0.15)
    # while the typical value drifts: log of the end-to-end ratio has mean −L·s²/2
    assert np.log(chain[:, -1]).mean() == pytest.approx(
        -50 * s2 / 2, abs=4 * math.sqrt(50 * s2 / 20)
    )
    # a 5 % excess per layer is detected
    steps = 1.05 * np.exp(rng.normal(-s2 / 2, math.sqrt(s2), (40, 50)))
    c = labatie.one_layer_conservation(np.cumprod(steps, axis=1))
    assert abs(c["log_mean"] - math.log(1.05)) < 4 * c["se"] and c["log_mean"] > 5 * c["se"]
    with pytest.raises(ParameterError):
        labatie.one_layer_conservation(np.ones(5))


def test_lognormal_balance_is_one_for_a_conserved_lognormal_and_two_for_double_drift():
    rng = np.random.default_rng(5)
    s2 = 4.0
    v, se = labatie.lognormal_balance(rng.normal(-s2 / 2, math.sqrt(s2), 4000), seed=1)
    assert abs(v - 1.0) < 4 * se and se < 0.05
    v2, se2 = labatie.lognormal_balance(rng.normal(-s2, math.sqrt(s2), 4000), seed=1)
    assert abs(v2 - 2.0) < 4 * se2
    # the bootstrap error matches the scatter of the estimator
    reps = [
        labatie.lognormal_balance(rng.normal(-s2 / 2, math.sqrt(s2), 200), n_boot=200, seed=i)
        for i in range(100)
    ]
    vals, ses = np.array([r[0] for r in reps]), np.array([r[1] for r in reps])
    assert vals.std() / ses.mean() == pytest.approx(1.0, abs=0.2)
