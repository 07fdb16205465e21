"""Shared statistics against closed forms."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from layerwise import stats
from layerwise.params import ParameterError
from layerwise.stats import estimate, estimate_or_point, mean_se


def test_estimate_is_mean_standard_error_and_n_minus_one_dof():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    e = estimate(x)
    s = np.sqrt(((x - 3.5) ** 2).sum() / 3)
    assert (e.mean, e.dof, e.n) == (3.5, 3, 4) and e.se == pytest.approx(s / 2)
    assert estimate_or_point(x) == e
    assert estimate_or_point([2.5]) == (2.5, None, None, 1, None, None)  # one replicate: a point
    with pytest.raises(ParameterError):
        estimate([1.0])
    m, se = mean_se(np.stack([x, 2 * x]), axis=1)
    assert np.allclose(m, [3.5, 7.0]) and np.allclose(se, [s / 2, s])


def test_mean_se_is_the_textbook_formula_bit_for_bit_and_leaves_out_nans():
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, size=(7, 5))
    for axis in (0, 1):
        m, se = mean_se(x, axis=axis)
        assert np.array_equal(m, x.mean(axis=axis))
        assert np.array_equal(se, x.std(axis=axis, ddof=1) / np.sqrt(x.shape[axis]))
    m, se = mean_se([1.0, np.nan, 3.0])
    assert m == 2.0 and se == pytest.approx(np.std([1.0, 3.0], ddof=1) / np.sqrt(2))
    assert np.isnan(mean_se([4.0])[1]) and np.isnan(mean_se([4.0, np.nan])[1])  # one value: no SE


def test_t_interval_quantile_and_coverage_by_simulation():
    from scipy import stats as sps

    from layerwise.claims import quantile
    from layerwise.stats import t_interval, t_quantile

    assert t_quantile(0.99, 7) == quantile(0.99, 7) and t_quantile(0.95) == pytest.approx(
        1.959964, abs=1e-6
    )
    assert t_interval(1.0, 0.5, 4, 0.9) == pytest.approx(
        (1.0 - 0.5 * sps.t.ppf(0.95, 4), 1.0 + 0.5 * sps.t.ppf(0.95, 4))
    )
    # coverage: a 90 % t interval from n = 5 Gaussian replicates covers the true mean 90 % of
    # the time
    rng = np.random.default_rng(1)
    trials, hits = 4000, 0
    for x in rng.normal(3.0, 2.0, size=(trials, 5)):
        e = estimate(x)
        lo, hi = t_interval(e.mean, e.se, e.dof, 0.9)
        hits += lo <= 3.0 <= hi
    assert abs(hits / trials - 0.9) < 4 * np.sqrt(0.9 * 0.1 / trials)
    with pytest.raises(ParameterError):
        t_quantile(1.0, 3)


def test_z_family_is_bonferroni():
    from scipy import stats as sps

    from layerwise.stats import z_family

    assert z_family(1, 0.05) == pytest.approx(1.959964, abs=1e-6)
    assert z_family(10, 0.01) == pytest.approx(sps.norm.ppf(1 - 0.0005))
    assert z_family(10, 0.01, dof=5) == pytest.approx(sps.t.ppf(1 - 0.0005, 5))


def test_inverse_variance_mean_closed_forms():
    from layerwise.stats import inverse_variance_mean, linear_fit

    m, se, dof = inverse_variance_mean([1.0, 3.0], [1.0, 1.0], 9)
    assert (m, se) == (pytest.approx(2.0), pytest.approx(np.sqrt(0.5)))
    assert dof == pytest.approx(18.0)  # equal weights and d.o.f.: the d.o.f. add up
    m, se, dof = inverse_variance_mean([1.0, 3.0], [1.0, 1e-3], [9, 4])
    assert m == pytest.approx(3.0, abs=1e-5) and dof == pytest.approx(4.0, rel=1e-5)
    # the same estimate as a weighted least-squares fit of a constant (x = 1 through the origin)
    x, s = np.array([0.3, 0.9, 0.5, 0.7]), np.array([0.1, 0.4, 0.2, 0.3])
    m, se, _ = inverse_variance_mean(x, s, 5)
    f = linear_fit(np.ones(4), x, sigma=s, through_origin=True)
    assert f["slope"] == pytest.approx(m, rel=1e-12) and f["slope_se"] == pytest.approx(
        se, rel=1e-12
    )
    with pytest.raises(ParameterError):
        inverse_variance_mean([1.0], [0.0], 3)


def test_linear_fit_against_the_normal_equations():
    from layerwise.stats import linear_fit

    rng = np.random.default_rng(3)
    x = np.linspace(0.0, 2.0, 40)
    y = 1.0 + 2.0 * x + rng.normal(0.0, 0.3, x.size)
    X = np.stack([np.ones_like(x), x], 1)
    # ordinary: β = (XᵀX)⁻¹Xᵀy, Cov β = s² (XᵀX)⁻¹ with s² = SS_res/(n − 2)
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    res = y - X @ beta
    cov = np.linalg.inv(X.T @ X) * (res @ res) / (x.size - 2)
    f = linear_fit(x, y)
    assert (f["intercept"], f["slope"]) == (
        pytest.approx(beta[0], rel=1e-12),
        pytest.approx(beta[1], rel=1e-12),
    )
    assert f["intercept_se"] == pytest.approx(np.sqrt(cov[0, 0]), rel=1e-10)
    assert f["slope_se"] == pytest.approx(np.sqrt(cov[1, 1]), rel=1e-10)
    assert f["r2"] == pytest.approx(1 - (res @ res) / np.sum((y - y.mean()) ** 2), rel=1e-12)
    assert linear_fit(np.arange(10.0), 3.0 + 0.5 * np.arange(10.0))["r2"] == pytest.approx(1.0)
    # weighted: β = (XᵀWX)⁻¹XᵀWy, Cov β = (XᵀWX)⁻¹, W = diag(1/σ²)
    sig = rng.uniform(0.1, 1.0, x.size)
    W = np.diag(1 / sig**2)
    A = X.T @ W @ X
    beta_w = np.linalg.solve(A, X.T @ W @ y)
    g = linear_fit(x, y, sigma=sig)
    assert (g["intercept"], g["slope"]) == (
        pytest.approx(beta_w[0], rel=1e-12),
        pytest.approx(beta_w[1], rel=1e-12),
    )
    cw = np.linalg.inv(A)
    assert (g["intercept_se"], g["slope_se"]) == (
        pytest.approx(np.sqrt(cw[0, 0]), rel=1e-12),
        pytest.approx(np.sqrt(cw[1, 1]), rel=1e-12),
    )
    # constant σ: SE(slope) = σ/√S_xx
    h = linear_fit(x, y, sigma=np.full(x.size, 0.3))
    assert h["slope_se"] == pytest.approx(0.3 / np.sqrt(np.sum((x - x.mean()) ** 2)), rel=1e-12)
    # through the origin: b = Σxy/Σx², SE² = SS_res/((n − 1) Σx²)
    o = linear_fit(x, y, through_origin=True)
    b = (x @ y) / (x @ x)
    assert o["slope"] == pytest.approx(b, rel=1e-12) and o["intercept"] == 0.0
    assert o["slope_se"] == pytest.approx(
        np.sqrt(np.sum((y - b * x) ** 2) / (x.size - 1) / (x @ x)), rel=1e-12
    )
    # non-finite pairs are left out; too few points are refused
    xn, yn = np.append(x, [np.nan, 5.0]), np.append(y, [1.0, np.inf])
    assert linear_fit(xn, yn)["slope"] == f["slope"]
    with pytest.raises(ParameterError):
        linear_fit([1.0, 2.0], [1.0, 2.0])


def test_bootstrap_of_a_mean_matches_the_analytic_standard_error():
    from layerwise.stats import bootstrap

    rng = np.random.default_rng(4)
    x = rng.normal(0.0, 1.0, 60)
    v, se = bootstrap(np.mean, [x], n_boot=4000, seed=1)
    # resampling the empirical law: SE* = σ̂/√n with the plug-in σ̂ (ddof = 0); its MC error ≈ 1/√(2
    # n_boot)
    assert v == x.mean() and se == pytest.approx(x.std() / np.sqrt(x.size), rel=0.05)
    assert np.array_equal(
        bootstrap(np.mean, [x], n_boot=50, seed=2)[1], bootstrap(np.mean, [x], n_boot=50, seed=2)[1]
    )
    # paired: the statistic of two arrays resampled together
    v2, se2 = bootstrap(lambda a, b: np.mean(a - b), [x, x], n_boot=200)
    assert v2 == 0.0 and se2 == 0.0
    with pytest.raises(ParameterError):
        bootstrap(np.mean, [x, x[:-1]])


def test_jackknife_of_a_mean_is_the_standard_error():
    from layerwise.stats import jackknife_se

    x = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    m, se = jackknife_se(np.mean, x)  # exact identity for the mean: jackknife SE = s/√n
    assert m == pytest.approx(x.mean()) and se == pytest.approx(
        x.std(ddof=1) / np.sqrt(x.size), rel=1e-12
    )
    with pytest.raises(ParameterError):
        jackknife_se(np.mean, x[:1])


def test_one_seed_derivation_for_chapters_and_package():
    from layerwise import seeds
    from layerwise.chapter import Chapter

    ch = Chapter("42_demo", scale="ci", seed=7, device="cpu", results="/tmp/layerwise-test-seeds")
    a = ch.rng("pairs", 3).standard_normal(5)
    assert np.array_equal(a, seeds.stream(7, "pairs", 3).standard_normal(5))
    assert ch.torch_seed("x") == seeds.torch_seed(7, "x")
    # distinct purposes give distinct streams; the same purpose the same one
    assert not np.array_equal(a, seeds.stream(7, "pairs", 4).standard_normal(5))
    # the derivation itself: default_rng of [seed, crc32(text) or int]
    import zlib

    assert np.array_equal(a, np.random.default_rng([7, zlib.crc32(b"pairs"), 3]).standard_normal(5))


def test_line_r2_rows_against_linregress_row_by_row():
    from scipy import stats as st

    from layerwise.stats import line_r2_rows

    rng = np.random.default_rng(3)
    x = np.linspace(1, 20, 12)
    Y = 0.3 * x + rng.normal(size=(5, 12)) * np.array([0.01, 0.1, 1, 3, 10])[:, None]
    np.testing.assert_allclose(
        line_r2_rows(x, Y), [st.linregress(x, y).rvalue ** 2 for y in Y], rtol=1e-10
    )
    assert line_r2_rows(x, 2 * x + 1)[0] == pytest.approx(1.0)


def test_estimate_forms_mean_interval_exact_and_their_bounds():
    from layerwise.stats import Estimate, estimate, exact, interval_estimate, t_interval

    e = estimate([1.0, 2.0, 3.0, 6.0])
    assert e.interval is None and e.bounds(0.95) == t_interval(e.mean, e.se, 3, 0.95)
    b = interval_estimate(0.5, 0.2, 0.9, n=7)
    assert b == Estimate(0.5, None, None, 7, (0.2, 0.9)) and b.bounds() == (0.2, 0.9)
    assert exact(2).bounds() == (2.0, 2.0) and exact(2).se is None
    with pytest.raises(ParameterError, match="lo <= hi"):
        interval_estimate(0.5, 0.9, 0.2)


def test_a_claim_takes_mean_se_dof_or_interval_from_one_estimate():
    from layerwise.claims import Ledger
    from layerwise.stats import exact, interval_estimate

    led = Ledger("ci")
    c = led.claim(
        "b",
        "s",
        kind="checks",
        measured=interval_estimate(0.5, 0.45, 0.55),
        reference=0.5,
        tol=0.1,
        why="w",
        source="s",
    )
    assert c.interval == (0.45, 0.55) and c.status == "pass"
    c = led.claim(
        "w",
        "s",
        kind="checks",
        measured=interval_estimate(0.5, 0.3, 0.7),
        reference=0.5,
        tol=0.1,
        why="w",
        source="s",
    )
    assert c.status == "inconclusive"
    assert (
        led.claim(
            "x",
            "s",
            kind="checks",
            measured=exact(0.75),
            reference=0.5,
            tol=0.1,
            why="w",
            source="s",
        ).status
        == "fail"
    )
    with pytest.raises(ParameterError, match="carries its own"):
        led.claim(
            "y",
            "s",
            kind="checks",
            measured=exact(0.5),
            reference=0.5,
            tol=0.1,
            se=0.1,
            why="w",
            source="s",
        )


# -- samples of networks (moved from tests/test_labatie.py and test_labatie_ch3.py) --
def test_mean_se_and_summary():
    rng = np.random.default_rng(0)
    a = rng.normal(2.0, 3.0, size=(4000, 3))
    m, se = mean_se(a)
    assert np.allclose(m, 2.0, atol=5 * 3 / math.sqrt(4000))
    assert np.allclose(se, 3 / math.sqrt(4000), rtol=0.05)
    s = stats.summary(a[:, 0])
    assert s["n"] == 4000 and abs(s["std"] - 3.0) < 0.15 and s["q05"] < s["mean"] < s["q95"]
    with pytest.raises(ParameterError):
        stats.summary([np.nan, np.inf])


def test_relative_spread_point_and_coverage():
    spread = stats.relative_spread([1.0, 1.1, 0.9], [1e-9] * 3)
    v, (lo, hi) = spread.mean, spread.interval
    assert (
        v == pytest.approx(0.2)
        and lo == pytest.approx(0.2, abs=1e-6)
        and hi == pytest.approx(0.2, abs=1e-6)
    )
    # coverage of the interval for well-separated true values (max/min do not swap)
    rng = np.random.default_rng(8)
    truth = np.array([1.0, 1.2, 1.5])
    true_spread = (truth.max() - truth.min()) / truth.mean()
    se = np.full(3, 0.02)
    hits = 0
    for k in range(200):
        lo, hi = stats.relative_spread(
            truth + se * rng.normal(size=3), se, confidence=0.9, n_draw=2000, seed=k
        ).interval
        hits += lo <= true_spread <= hi
    assert 0.82 <= hits / 200 <= 0.97
    with pytest.raises(ParameterError):
        stats.relative_spread([1.0], [0.1])


def test_spearman_by_column_is_pearson_of_ranks():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    y[:, 0] = x[:, 0] ** 3  # monotone: ρ = 1
    y[:, 1] = -np.exp(x[:, 1])  # anti-monotone: ρ = −1
    rho = stats.spearman_by_column(x, y)
    assert rho.shape == (4,) and rho[0] == pytest.approx(1.0) and rho[1] == pytest.approx(-1.0)
    rank = lambda v: np.argsort(np.argsort(v)).astype(float)  # noqa: E731 (no ties in continuous data)
    for j in (2, 3):
        assert rho[j] == pytest.approx(np.corrcoef(rank(x[:, j]), rank(y[:, j]))[0, 1])
    # invariant under monotone transforms of either variable
    assert np.allclose(stats.spearman_by_column(np.exp(x), y**3), rho)
    with pytest.raises(ParameterError):
        stats.spearman_by_column(x, y[:, :3])


def test_gauss_cdf_gap_closed_form_for_a_shift_and_a_scale():
    # N(0,1) vs N(-a,1): the largest gap is at u = -a/2, 2Φ(a/2) − 1
    for a in (0.1, 0.5, 2.0):
        assert float(stats._gauss_cdf_gap(a, 1.0)) == pytest.approx(
            2 * sps.norm.cdf(a / 2) - 1, abs=1e-5
        )
    # N(0,1) vs N(0,b²): gap at u² = 2 ln b · b²/(b² − 1)
    b = 1.5
    u = math.sqrt(2 * math.log(b) * b**2 / (b**2 - 1))
    assert float(stats._gauss_cdf_gap(0.0, b)) == pytest.approx(
        sps.norm.cdf(u) - sps.norm.cdf(u / b), abs=1e-5
    )


@pytest.mark.parametrize("n", [50, 400])
def test_ks_interval_covers_zero_for_gaussian_samples(n):
    rng = np.random.default_rng(n)
    res = [stats.ks_gaussian_interval(rng.normal(3.0, 2.0, n)) for _ in range(200)]
    assert np.mean([r["lo"] == 0.0 for r in res]) >= 0.99
    # the sample distance itself is biased upwards (≈ 0.6/√n): a plain interval around it would not
    # cover 0
    assert np.mean([r["ks"] for r in res]) * math.sqrt(n) == pytest.approx(0.62, abs=0.08)


def test_ks_interval_covers_the_true_distance_and_excludes_a_small_threshold_at_large_n():
    # exponential(1) vs N(1, 1): D = Φ(−1) ≈ 0.1587 (attained at x = 0)
    D = sps.norm.cdf(-1.0)
    rng = np.random.default_rng(7)
    res = [stats.ks_gaussian_interval(rng.exponential(1.0, 200)) for _ in range(150)]
    assert np.mean([r["lo"] <= D <= r["hi"] for r in res]) >= 0.99
    big = stats.ks_gaussian_interval(rng.exponential(1.0, 20000))
    assert big["lo"] > 0.05 and big["lo"] <= D <= big["hi"]
    # the half-width is DKW's √(ln(4/α)/2n) plus the fit term, and shrinks like 1/√n
    assert big["eps_dkw"] == pytest.approx(math.sqrt(math.log(400) / 40000))
    assert 0 < big["eps_fit"] < 0.05
    with pytest.raises(ParameterError):
        stats.ks_gaussian_interval([1.0, 2.0, 3.0])
    with pytest.raises(ParameterError):
        stats.ks_gaussian_interval(np.ones(10))


def test_ratio_of_means_closed_form_and_coverage():
    r, se = stats.ratio_of_means([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])[:2]
    assert r == pytest.approx(1.0) and se == pytest.approx((1 / math.sqrt(3)) / 2)
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(400):
        r, se = stats.ratio_of_means(rng.normal(10.0, 1.0, 30), rng.normal(2.0, 0.2, 30))[:2]
        hits += abs(r - 5.0) <= 2.576 * se
    assert hits / 400 >= 0.97
    with pytest.raises(ParameterError):
        stats.ratio_of_means([1.0, 2.0], [1.0, -1.0])


def test_skewness_se_is_scipys_skewness_with_at_least_the_gaussian_error():
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    skew, se = stats.skewness_se(x, seed=1)
    n = 60
    assert skew == pytest.approx(float(sps.skew(x)))
    assert se >= math.sqrt(6 * (n - 2) / ((n + 1) * (n + 3))) - 1e-15
    # an exponential sample has skewness 2, and a bootstrap error above the Gaussian floor
    e = rng.exponential(size=4000)
    skew, se = stats.skewness_se(e, seed=1)
    assert skew == pytest.approx(2.0, abs=5 * se)
    assert se > math.sqrt(6 * 3998 / (4001 * 4003))
    with pytest.raises(ParameterError):
        stats.skewness_se([1.0, 2.0, 3.0])
