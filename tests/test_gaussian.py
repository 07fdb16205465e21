"""The one Gaussian-expectation routine against closed forms and scipy's adaptive quadrature over
the whole range the book uses (q from 1e-4 to 1e4; smooth, kinked-at-0 and growing integrands)."""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import erf, ndtr

from layerwise import capacity as C
from layerwise import gaussian as G
from layerwise.params import ParameterError

QS = np.geomspace(1e-4, 1e4, 9)


def quad_ref(g, q):
    """E g(x), x ~ N(0, q), by scipy's adaptive quad on [0, h], [h, 2h], [2h, 4h], … up to 14√q on
    each side, h = min(1, √q)/4, so that neither the unit scale of g nor the width √q is missed."""
    s = math.sqrt(q)
    edges = [0.0, min(1.0, s) / 4]
    while edges[-1] < 14 * s:
        edges.append(min(2 * edges[-1], 14 * s))
    def f(x):
        return float(g(np.array([x]))[0]) * math.exp(-x * x / (2 * q)) / math.sqrt(2 * math.pi * q)

    return sum(
        quad(f, a, b, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
        + quad(f, -b, -a, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
        for a, b in zip(edges[:-1], edges[1:])
    )


CLOSED = {  # E g(√q z) in closed form
    "relu": (lambda x: np.maximum(x, 0.0), lambda q: math.sqrt(q / (2 * math.pi))),
    "relu²": (lambda x: np.maximum(x, 0.0) ** 2, lambda q: q / 2),
    "abs": (np.abs, lambda q: math.sqrt(2 * q / math.pi)),
    "x⁴": (lambda x: x**4, lambda q: 3 * q * q),
    "erf²": (
        lambda x: erf(x) ** 2,
        lambda q: 2 / math.pi * math.asin(2 * q / (1 + 2 * q)),
    ),  # Williams 1997
    "erf'²": (
        lambda x: 4 / math.pi * np.exp(-2 * x * x),
        lambda q: 4 / math.pi / math.sqrt(1 + 4 * q),
    ),
    "Φ² (GELU η²)": (
        lambda x: ndtr(x) ** 2,
        lambda q: 0.25 + math.asin(q / (1 + q)) / (2 * math.pi),
    ),
    "unit peak": (lambda x: np.exp(-x * x / 2), lambda q: 1 / math.sqrt(1 + q)),
}


@pytest.mark.parametrize("name", CLOSED)
def test_closed_forms_over_the_whole_range(name):
    g, exact = CLOSED[name]
    for q in QS:
        ref = exact(q)
        assert abs(G.expectation(g, q) - ref) <= 1e-14 * max(1.0, abs(ref)), (name, q)


def _tanh_d2(x):
    t = np.tanh(x)
    return -2 * t * (1 - t * t)


SMOOTH = {  # no closed form: the mean-field and ν(f; q) integrands
    "tanh²": lambda x: np.tanh(x) ** 2,
    "tanh'²": lambda x: (1 - np.tanh(x) ** 2) ** 2,
    "tanh·tanh''": lambda x: np.tanh(x) * _tanh_d2(x),
    "tanh(x)/x": lambda x: C.eta("tanh", x),
    "(tanh(x)/x)²": lambda x: C.eta("tanh", x) ** 2,
    "ELU η² (kink at 0)": lambda x: C.eta("elu", x) ** 2,
    "SiLU η": lambda x: C.eta("silu", x),
}


@pytest.mark.parametrize("name", SMOOTH)
def test_against_adaptive_quadrature_over_the_whole_range(name):
    g = SMOOTH[name]
    for q in QS:
        ref = quad_ref(g, q)
        assert abs(G.expectation(g, q) - ref) <= 1e-12 * max(1.0, abs(ref)), (name, q)


def test_nodes_and_edge_cases():
    for s in (0.0, 0.01, 1.0, 100.0):
        z, w = G.normal_nodes(s)
        assert w.sum() == pytest.approx(
            1 - 2 * ndtr(-G.TRUNCATION), abs=1e-15
        )  # the mass on [−9, 9]
        assert (
            np.allclose(z, -z[::-1]) and np.allclose(w, w[::-1]) and not np.any(z == 0)
        )  # 0 is a panel edge
        assert (
            np.max(np.diff(np.unique(np.round(z, 12)))) * max(1.0, s) <= 1.0
        )  # panels ≤ one unit of √q z
    assert G.expectation(lambda x: np.cos(x) + 2, 0.0) == pytest.approx(
        3 * (1 - 2 * ndtr(-9)), abs=1e-15
    )
    with pytest.raises(ParameterError):
        G.expectation(np.abs, -1.0)


def test_gauss_hermite_demonstration_is_poor_at_large_q():
    ref = G.expectation(lambda x: np.tanh(x) ** 2, 20.0)
    gh = G.gauss_hermite_expectation(lambda z: np.tanh(math.sqrt(20.0) * z) ** 2, 201)
    assert 1e-5 < abs(gh - ref) < 1e-3  # the 3e-4 quoted in Chapter 7
    assert G.gauss_hermite_expectation(lambda z: z**4, 5) == pytest.approx(
        3.0, rel=1e-13
    )  # exact for degree ≤ 9
