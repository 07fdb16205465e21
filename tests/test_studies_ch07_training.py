"""Chapter 7's trainings: grouping the stacked networks over threads changes no number."""

from __future__ import annotations

import numpy as np
import torch

from layerwise import trainability
from layerwise.data import standardise_digits


def _digits_unit():
    x, y = standardise_digits("pixel", eps=1e-8, unit_length=True, dtype=np.float32)
    return x[:400], y[:400]


def test_grouped_trainings_equal_one_group_bit_for_bit():
    # with T torch threads the K networks train in min(K, T) groups on threads of their own;
    # every product and reduction is per network and the groups draw the same mini-batches,
    # so accuracies and losses must be identical to one group of K (1 thread)
    x, y = _digits_unit()
    kw = dict(
        sigma_w2s=np.array([1.0, 1.7, 2.5, 3.2, 4.0]),
        depth=4,
        sigma_b2=0.05,
        width=16,
        steps=30,
        early_steps=10,
        lr=0.05,
        batch=32,
        seed=5,
    )
    prev = torch.get_num_threads()
    try:
        runs = {}
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            runs[threads] = trainability.train_depth_grid(x, y, **kw)
            assert torch.get_num_threads() == threads  # restored after the groups
    finally:
        torch.set_num_threads(prev)
    one = runs[1]
    assert one["loss"].shape == (30, 5) and one["accuracy"].shape == (5,)
    for threads in (2, 3):
        assert set(runs[threads]) == set(one)
        for k in one:
            np.testing.assert_array_equal(runs[threads][k], one[k])
    # the networks differ from one another (a grouping that swapped or repeated one would show)
    assert len(set(one["loss"][-1].tolist())) == 5
