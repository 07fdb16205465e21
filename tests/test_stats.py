"""Shared statistics against closed forms."""

import numpy as np
import pytest

from layerwise.params import ParameterError
from layerwise.stats import estimate, mean_se, mean_se_dof


def test_estimate_is_mean_standard_error_and_n_minus_one_dof():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    e = estimate(x)
    s = np.sqrt(((x - 3.5) ** 2).sum() / 3)
    assert (e.mean, e.dof, e.n) == (3.5, 3, 4) and e.se == pytest.approx(s / 2)
    assert mean_se_dof(x) == (e.mean, e.se, 3)
    assert mean_se_dof([2.5]) == (2.5, None, None)
    with pytest.raises(ParameterError):
        estimate([1.0])
    m, se = mean_se(np.stack([x, 2 * x]), axis=1)
    assert np.allclose(m, [3.5, 7.0]) and np.allclose(se, [s / 2, s])
