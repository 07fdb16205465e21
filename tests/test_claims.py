"""The claims ledger: kinds, grading rules, the three outcomes under uncertainty, skips below the
claim's scale, tallies, the JSON record, glued numbers and numbered figures."""

import html
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from layerwise import claims, scorecard
from layerwise.chapter import GLUE_PREFIX, Chapter, first_sentence, format_value
from layerwise.claims import Ledger, accepted_set, grade, quantile
from layerwise.params import ParameterError


def _page(led, tracked=None):
    """The ledger's scorecard, as the chapter shows it."""
    return scorecard.scorecard_html(led.records(), led.scale, tracked=tracked)


def make(led=None, **kw):
    kw.setdefault("why", "because")
    kw.setdefault("source", "src")
    kw.setdefault("kind", "predicts")
    return (led or Ledger("ci")).claim(kw.pop("id", "c"), "s", **kw)


@pytest.mark.parametrize(
    "kw, status",
    [
        (dict(measured=1.05, reference=1.0, tol=0.1, comparison="abs"), "pass"),
        (dict(measured=1.2, reference=1.0, tol=0.1, comparison="abs"), "fail"),
        (dict(measured=105.0, reference=100.0, tol=0.06, comparison="rel"), "pass"),
        (dict(measured=107.0, reference=100.0, tol=0.06, comparison="rel"), "fail"),
        (dict(measured=3.0, reference=3.5, comparison="le"), "pass"),
        (dict(measured=3.6, reference=3.5, comparison="le"), "fail"),
        (dict(measured=3.6, reference=3.5, tol=0.2, comparison="le"), "pass"),
        (dict(measured=0.9, reference=1.0, tol=0.05, comparison="ge"), "fail"),
        (dict(measured=2.0, reference=(1.0, 3.0), comparison="between"), "pass"),
        (dict(measured=4.0, reference=(1.0, 3.0), comparison="between"), "fail"),
        (dict(measured=True, comparison="true"), "pass"),
        (dict(measured=False, comparison="true"), "fail"),
        (dict(measured=float("nan"), reference=1.0, tol=10.0, comparison="abs"), "fail"),
    ],
)
def test_grading_rules_without_uncertainty(kw, status):
    c = make(**kw)
    assert c.status == status and c.passed is (status == "pass")


# --- outcomes under uncertainty -------------------------------------------------------------
@pytest.mark.parametrize(
    "kw, status",
    [
        # interval 0.5 ± 2.576·0.1 = [0.242, 0.758] inside A = (−∞, 1]: pass
        (dict(measured=0.5, se=0.1, reference=1.0, comparison="le"), "pass"),
        # [0.742, 1.258] straddles 1: inconclusive, never a pass
        (dict(measured=1.0 - 0.1 * 2.5, se=0.1, reference=1.0, comparison="le"), "inconclusive"),
        # [1.142, 1.658] beyond 1: fail
        (dict(measured=1.4, se=0.1, reference=1.0, comparison="le"), "fail"),
        # a point estimate inside the threshold but an interval across it is inconclusive (the old
        # "not contradicted" pass); the whole interval above it is a fail
        (dict(measured=0.113, se=0.02, reference=0.05, tol=0.0, comparison="le"), "fail"),
        (dict(measured=0.113, se=0.05, reference=0.05, tol=0.0, comparison="le"), "inconclusive"),
        (dict(measured=0.04, se=0.05, reference=0.05, comparison="le"), "inconclusive"),
        # agreement with tol = 0 can only fail or be inconclusive
        (dict(measured=1.0, se=1e-9, reference=1.0, tol=0.0, comparison="abs"), "inconclusive"),
        (dict(measured=1.0, se=0.01, reference=1.0, tol=0.05, comparison="rel"), "pass"),
        (
            dict(measured=0.5, interval=(0.45, 0.55), reference=(0.4, 0.6), comparison="between"),
            "pass",
        ),
        (
            dict(measured=0.5, interval=(0.35, 0.55), reference=(0.4, 0.6), comparison="between"),
            "inconclusive",
        ),
        (
            dict(measured=0.2, interval=(0.1, 0.3), reference=(0.4, 0.6), comparison="between"),
            "fail",
        ),
    ],
)
def test_outcomes_follow_the_whole_interval(kw, status):
    assert make(**kw).status == status


def test_few_degrees_of_freedom_use_students_t():
    # 2 batch means (1 d.o.f.): t_{0.995, 1} = 63.66, not 2.58 — the normal quantile would call it
    # a pass
    normal = make(measured=0.9, se=0.01, reference=1.0, comparison="le")
    student = make(measured=0.9, se=0.01, dof=1, reference=1.0, comparison="le")
    assert normal.status == "pass" and student.status == "inconclusive"
    assert student.interval[1] == pytest.approx(0.9 + stats.t.ppf(0.995, 1) * 0.01)
    assert quantile(0.99) == pytest.approx(2.5758, abs=1e-4)
    assert quantile(0.95, 10) == pytest.approx(2.2281, abs=1e-4)


@given(
    m=st.floats(-10, 10),
    se=st.floats(0, 5),
    ref=st.floats(-10, 10),
    tol=st.floats(0, 5),
    comparison=st.sampled_from(["abs", "rel", "le", "ge"]),
)
def test_outcome_is_pass_iff_both_ends_pass_and_fail_iff_neither_can(m, se, ref, tol, comparison):
    """The interval outcome equals the point rule applied at every point of the interval: pass
    iff both ends pass (A is an interval), fail iff no point passes."""
    c = make(measured=m, se=se, reference=ref, tol=tol, comparison=comparison)
    lo, hi = c.interval
    a, b = accepted_set(comparison, ref, tol)
    ends_ok = [a <= x <= b for x in (lo, hi)]
    grid = np.linspace(lo, hi, 201)
    any_ok = bool(np.any((grid >= a) & (grid <= b))) or (lo <= a <= hi) or (lo <= b <= hi)
    if all(ends_ok):
        assert c.status == "pass"
    elif not any_ok:
        assert c.status == "fail"
    else:
        assert c.status == "inconclusive"


def test_grade_on_edges():
    assert grade((1.0, 2.0), (1.0, 2.0)) == "pass"
    assert grade((0.0, 1.0), (1.0, 2.0)) == "inconclusive"  # touches: one point satisfies the rule
    assert grade((0.0, 0.99), (1.0, 2.0)) == "fail"
    assert grade((-math.inf, 0.0), (-math.inf, 1.0)) == "pass"
    assert grade((float("nan"), 1.0), (0.0, 2.0)) == "fail"


# --- kinds, tallies, records ----------------------------------------------------------------
def test_claims_above_the_scale_are_skipped_visibly_and_tallied_by_kind():
    led = Ledger("default")
    a = make(
        led, id="a", kind="reproduces", measured=1.0, reference=9.0, tol=0.1, min_scale="paper"
    )
    b = make(
        led, id="b", kind="reproduces", measured=1.0, reference=9.0, tol=0.1, min_scale="default"
    )
    c = make(led, id="c", kind="predicts", measured=1.0, se=0.5, reference=1.2, tol=0.1)
    d = make(led, id="d", kind="checks", measured=1.0, reference=1.0, tol=0.1)
    assert a.status == "skipped" and a.passed is None
    assert b.status == "fail" and [x for x in led.claims if x.status == "fail"] == [b]
    assert c.status == "inconclusive" and c.passed is False
    assert d.status == "pass" and d.passed is True
    assert claims.tally_outcomes(led.records()) == {
        "pass": 1, "fail": 1, "inconclusive": 1, "skipped": 1}
    t = claims.tally(led.records())
    assert t["reproduces"] == {"pass": 0, "fail": 1, "inconclusive": 0, "skipped": 1}
    assert t["predicts"]["inconclusive"] == 1 and t["checks"]["pass"] == 1
    line = scorecard.summary_of(led.records(), led.scale)
    assert line.startswith(
        "Reproduces 0 of 1 paper results (1 failed: not a finding until its controls pass, "
        "1 not run at this scale)"
    )
    assert "confirms 0 of 1 predictions (1 inconclusive)" in line and "passes 1 of 1 checks" in line
    html = _page(led)
    for text in (
        'title="skipped">○',
        'title="fail">✗',
        'title="inconclusive">?',
        'title="pass">✓',
        'id="claim-a"',
        "<details>",
        "Paper results reproduced",
        '<span class="lw-word"> inconclusive</span>',
    ):
        assert text in html
    # reproductions are listed before predictions, predictions before checks
    assert html.index("claim-a") < html.index("claim-c") < html.index("claim-d")


def test_tally_of_json_records_matches_the_ledger():
    led = Ledger("ci")
    for i, (m, se) in enumerate([(0.1, None), (0.9, 0.2), (2.0, 0.1), (0.5, 0.01)]):
        make(
            led,
            id=f"c{i}",
            kind=["reproduces", "predicts"][i % 2],
            measured=m,
            se=se,
            reference=1.0,
            comparison="le",
        )
    records = json.loads(json.dumps([c.to_json() for c in led.claims]))
    assert claims.tally(records) == claims.tally(led.records())
    assert claims.tally_outcomes(records) == claims.tally_outcomes(led.records())


@pytest.mark.parametrize(
    "kw",
    [
        dict(measured=1.0, reference=1.0, comparison="abs"),  # no margin
        dict(
            measured=1.0, reference=1.0, tol=-1.0
        ),  # a negative margin is a noise allowance in disguise
        dict(measured=1.0, reference=1.0, comparison="between"),
        dict(measured=1.0, reference=(2.0, 1.0), comparison="between"),
        dict(measured=1.0, reference=1.0, tol=0.1, comparison="roughly"),
        dict(measured=1.0, reference=1.0, tol=0.1, min_scale="huge"),
        dict(measured=1.0, reference=1.0, tol=0.1, why="  "),
        dict(measured=1.0, reference=1.0, tol=0.1, source=" "),
        dict(measured=1.0, reference=1.0, tol=0.1, kind="shows"),
        dict(measured=1.0, reference=1.0, tol=0.1, se=-0.1),
        dict(measured=1.0, reference=1.0, tol=0.1, se=0.1, interval=(0.9, 1.1)),
        dict(measured=1.0, reference=1.0, tol=0.1, dof=3),  # dof without se
        dict(measured=1.0, reference=1.0, tol=0.1, se=0.1, dof=0),
        dict(measured=1.0, reference=1.0, tol=0.1, se=0.1, confidence=1.5),
        dict(measured=1.0, reference=1.0, tol=0.1, interval=(1.1, 0.9)),
        dict(measured=True, comparison="true", se=0.1),
        dict(measured=1.0, reference="one", tol=0.1),
    ],
)
def test_malformed_claims_are_refused(kw):
    with pytest.raises(ParameterError):
        make(**kw)


def test_kind_is_required():
    with pytest.raises(ParameterError, match="claim c: give kind="):
        Ledger("ci").claim("c", "s", measured=1.0, reference=1.0, tol=0.0, why="w", source="s")


def test_an_unknown_claim_keyword_is_refused_naming_it_and_the_allowed_ones():
    with pytest.raises(ParameterError, match="tolerance is not a claim keyword; choose from: "):
        make(measured=1.0, reference=1.0, tolerance=0.1)
    with pytest.raises(ParameterError, match="replicates\\['paper'\\]=0 must be a whole number"):
        make(measured=1.0, reference=1.0, tol=0.1, replicates={"paper": 0})
    with pytest.raises(ParameterError, match="scale"):
        make(measured=1.0, reference=1.0, tol=0.1, replicates={"huge": 3})


def test_duplicate_ids_are_refused():
    led = Ledger("ci")
    make(led, measured=1.0, reference=1.0, tol=0.0)
    with pytest.raises(ParameterError, match="twice"):
        make(led, measured=1.0, reference=1.0, tol=0.0)


# --- the chapter: results schema, glued numbers, figures ---------------------------------------
def test_chapter_writes_the_results_schema(tmp_path):
    import matplotlib.pyplot as plt

    ch = Chapter(
        "42_demo", scale="ci", seed=3, device="cpu", params={"width": 10}, results=tmp_path
    )
    ch.claim(
        "c",
        "s",
        kind="checks",
        measured=np.float64(1.0),
        reference=1.0,
        tol=np.float64(0.5),
        why="w",
        source="Eq. 1",
    )
    ch.claim(
        "d",
        "s",
        kind="reproduces",
        measured=1.0,
        se=0.1,
        dof=4,
        reference=1.0,
        tol=0.3,
        why="w",
        source="Fig. 1",
    )
    ch.glue("width_used", 10)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [1, 0])
    ch.figure(fig, "demo", "A line falls. More text.", arrays={"y": [1, 0]})
    ch.finish()
    data = json.loads(ch.results_path.read_text())
    assert {
        "chapter",
        "scale",
        "seed",
        "device",
        "wall_time_s",
        "versions",
        "claims",
        "figures",
        "glued",
        "figure_labels",
    } <= set(data)
    assert data["chapter"] == "42_demo" and data["scale"] == "ci" and data["seed"] == 3
    c, d = data["claims"]
    assert set(c) >= {
        "id",
        "kind",
        "statement",
        "measured",
        "se",
        "dof",
        "interval",
        "confidence",
        "reference",
        "tolerance",
        "rule",
        "status",
        "passed",
        "source",
        "min_scale",
        "justification",
    }
    assert c["status"] == "pass" and c["passed"] is True and c["interval"] is None
    q = stats.t.ppf(0.995, 4)
    assert (
        d["interval"] == pytest.approx([1.0 - q * 0.1, 1.0 + q * 0.1])
        and d["status"] == "inconclusive"
    )
    assert data["glued"] == {"width_used": "10"}
    assert (
        data["figure_labels"][0]["label"] == "fig-42-demo"
        and data["figure_labels"][0]["alt"] == "A line falls."
    )
    stem = tmp_path / data["figures"][0]
    assert stem.exists() and stem.with_suffix(".svg").exists() and stem.with_suffix(".npz").exists()


def test_figures_too_wide_for_the_column_are_refused(tmp_path):
    import matplotlib.pyplot as plt

    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    fig = plt.figure(figsize=(16, 4))
    with pytest.raises(ParameterError, match="2×2 grid"):
        ch.figure(fig, "wide", "c", arrays={"y": [1]})
    plt.close(fig)


def test_figures_with_text_too_small_to_read_are_refused(tmp_path):
    import matplotlib.pyplot as plt

    from layerwise.chapter import small_texts

    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], label="a line")
    assert small_texts(fig) == []  # the book's style: every text >= 10 pt
    ax.legend(fontsize=7)
    assert small_texts(fig) == ["'a line' at 7.0 pt"]
    with pytest.raises(ParameterError, match="below 9.9 pt"):
        ch.figure(fig, "small", "c", arrays={"y": [1]})
    plt.close(fig)


def test_figures_with_raw_notation_are_refused_and_mathtext_passes(tmp_path):
    import matplotlib.pyplot as plt

    from layerwise.chapter import raw_notation_texts

    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], label=r"$\|\theta\|_{\mathrm{fr}}$ and $\sigma_w^2$")
    ax.set_xlabel("ε = 1/L, 1e-3 and 10⁻³")  # no sub/superscript notation
    ax.legend()
    assert raw_notation_texts(fig) == []
    ax.set_ylabel("measured r_ij")
    ax.set_title("capacity κ^l(x)")
    assert sorted(raw_notation_texts(fig)) == ["capacity κ^l(x)", "measured r_ij"]
    with pytest.raises(ParameterError, match="raw outside mathtext"):
        ch.figure(fig, "raw", "c", arrays={"y": [1]})
    plt.close(fig)


def test_glue_formats_numbers_for_prose_and_refuses_reuse(tmp_path):
    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    for name, value, kw, text in [
        ("a", 0.123456, {}, "0.123"),
        ("b", 1.5e14, {}, "1.50×10¹⁴"),
        ("c", -0.0421, dict(se=0.0033), "−0.0421 ± 0.0033"),
        ("d", "at this scale the gap is resolved", {}, "at this scale the gap is resolved"),
        ("e", 2.0, dict(digits=2, unit="s"), "2.0 s"),
    ]:
        assert ch.glue(name, value, **kw) is None
        assert ch.glued[name] == text
    with pytest.raises(ParameterError, match="twice"):
        ch.glue("a", 1.0)
    with pytest.raises(ParameterError):
        ch.glue("Bad-Name", 1.0)
    assert format_value(12345678) == "12\u2009345\u2009678"
    assert [format_value(x, digits=2) for x in (4562.0, 99.6, 10.0, 0.5, -31.4)] == [
        "4600",
        "100",
        "10",
        "0.50",
        "−31",
    ]
    assert (
        format_value(4562.0) == "4560"
        and format_value(123.456) == "123"
        and format_value(1.23456) == "1.23"
    )
    assert first_sentence("The *map* of {math}`q`. Then more.") == "The map of q."
    assert (
        first_sentence("As in Poole et al. (2016) and Fig. 3, the curve grows. More.")
        == "As in Poole et al. (2016) and Fig. 3, the curve grows."
    )
    assert first_sentence("No full stop") == "No full stop"


def test_glue_all_glues_a_summary_and_estimates_with_their_error(tmp_path):
    from layerwise.stats import estimate

    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    ch.glue_all(
        {"n": 12, "r": estimate([1.0, 2.0, 3.0]), "s": "a sentence", "t": (-0.0421, 0.0033)},
        digits=2,
    )
    assert ch.glued == {"n": "12", "r": "2.0 ± 0.58", "s": "a sentence", "t": "−0.042 ± 0.0033"}
    with pytest.raises(ParameterError, match="twice"):
        ch.glue_all({"r": 1.0})


def test_chapter_validates_its_inputs(tmp_path):
    for kw in (
        dict(scale="huge", seed=0),
        dict(scale="ci", seed=-1),
        dict(scale="ci", seed=0, device="tpu"),
    ):
        with pytest.raises(ParameterError):
            Chapter("42_demo", results=tmp_path, **kw)
    with pytest.raises(ParameterError):
        Chapter("demo", scale="ci", seed=0, results=tmp_path)


def test_cached_call_keys_on_the_call_itself(tmp_path):
    calls = []

    def draw(n: int, x: np.ndarray, seed: int) -> dict:
        calls.append(n)
        return {"y": x[:n] * seed}

    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    x = np.arange(100.0)
    a = ch.cached_call(draw, n=3, x=x, seed=2)
    b = ch.cached_call(draw, n=3, x=x.copy(), seed=2)  # same content: read from the store
    assert (
        calls == [3] and np.array_equal(a["y"], [0.0, 2.0, 4.0]) and np.array_equal(b["y"], a["y"])
    )
    ch.cached_call(draw, n=3, x=x + 1, seed=2)  # other data, other entry
    ch.cached_call(draw, n=4, x=x, seed=2)
    assert calls == [3, 3, 4]
    # an argument called `seed` is part of the key, not replaced by the chapter's seed
    c = ch.cached_call(draw, n=3, x=x, seed=5)
    assert calls == [3, 3, 4, 3] and np.array_equal(c["y"], [0.0, 5.0, 10.0])


@given(
    m=st.floats(-3, 3),
    se=st.one_of(st.none(), st.floats(0, 2)),
    dof=st.one_of(st.none(), st.integers(1, 50)),
    ref=st.floats(-2, 2),
    tol=st.floats(0, 1),
    comparison=st.sampled_from(["abs", "rel", "le", "ge"]),
)
def test_outcome_is_the_status_the_ledger_records(m, se, dof, ref, tol, comparison):
    led = Ledger("ci")
    led.claim(
        "c",
        "s",
        kind="checks",
        measured=m,
        se=se,
        dof=None if se is None else dof,
        reference=ref,
        tol=tol,
        comparison=comparison,
        why="w",
        source="ours",
    )
    assert (
        claims.outcome(m, comparison, ref, tol, se=se, dof=None if se is None else dof)
        == led.claims[0].status
    )


def test_chapter_verdict_and_outcomes_follow_the_ledger(tmp_path):
    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    common = dict(reference=0.0, tol=1.0, comparison="abs", why="w", source="s")
    ch.claim("a_pass", "a", kind="reproduces", measured=0.5, **common)
    ch.claim("a_fail", "b", kind="reproduces", measured=3.0, **common)
    ch.claim("a_open", "c", kind="reproduces", measured=0.5, se=1.0, dof=5, **common)
    ch.claim("b_skip", "d", kind="reproduces", measured=0.5, min_scale="default", **common)
    ch.claim("c_check", "e", kind="checks", measured=0.5, **common)
    assert [ch.status(i) for i in ("a_pass", "a_fail", "a_open", "b_skip")] == [
        "pass",
        "fail",
        "inconclusive",
        "skipped",
    ]
    v = lambda ids: ch.verdict(ids, "yes", "no", "open")  # noqa: E731
    assert (
        v(["a_pass", "c_check"]),
        v(["a_pass", "a_fail", "a_open"]),
        v(["a_pass", "a_open"]),
        v(["b_skip"]),
    ) == ("yes", "no", "open", "open")
    assert ch.outcomes() == {
        "pass": ["a_pass"],
        "fail": ["a_fail"],
        "inconclusive": ["a_open"],
        "skipped": ["b_skip"],
    }
    assert ch.outcomes(prefix="b_")["skipped"] == ["b_skip"] and ch.outcomes(kind="checks")[
        "pass"
    ] == ["c_check"]
    assert ch.outcomes(kind=None)["pass"] == ["a_pass", "c_check"]
    with pytest.raises(ParameterError, match="id='nope'.*a_pass"):
        ch.status("nope")


def test_a_caveat_is_recorded_only_when_the_numbers_do_not_pass():
    led = Ledger("ci")
    base = dict(kind="predicts", reference=0.5, tol=0.1, comparison="abs", why="w", source="s")
    passing = led.claim("p", "x", measured=0.52, se=0.01, dof=9, caveat="too few nets", **base)
    unresolved = led.claim("u", "x", measured=0.52, se=0.2, dof=9, caveat="too few nets", **base)
    failing = led.claim(
        "f", "x", measured=0.9, caveat="too few nets", note="read off a figure;", **base
    )
    # skipped at ci: the caveat follows the numbers, as a note worded before the claim would
    skipped = led.claim("s", "x", measured=0.9, caveat="too few nets", min_scale="default", **base)
    assert [c.status for c in (passing, unresolved, failing, skipped)] == [
        "pass",
        "inconclusive",
        "fail",
        "skipped",
    ]
    assert [c.note for c in (passing, unresolved, failing, skipped)] == [
        "",
        "Too few nets.",
        "Read off a figure; too few nets.",
        "Too few nets.",
    ]


# --- alternatives: a pass must rule out what a careful reader could believe instead ---------
def test_an_alternative_outside_the_accepted_set_is_ruled_out_by_a_pass():
    led = Ledger("ci")
    c = led.claim(
        "peak",
        "s",
        kind="reproduces",
        measured=1.84,
        se=0.02,
        dof=3,
        reference=1.76,
        tol=0.38,
        alternative=(1.0, "the variance-preserving σ_w² = 1"),
        why="w",
        source="s",
    )
    assert c.status == "pass" and c.discriminates is True
    rec = c.to_json()
    assert rec["alternative"] == {"value": 1.0, "label": "the variance-preserving σ_w² = 1"}
    assert scorecard.rules_out(rec) == "rules out the variance-preserving σ_w² = 1 (1)"
    assert "Rules out the variance-preserving" in _page(led)
    summary = scorecard.summary_of(led.records(), led.scale)
    assert summary.startswith("Reproduces 1 of 1 paper results")


@pytest.mark.parametrize("alternative", [None, (1.7, "a value inside the margin")])
def test_a_pass_that_cannot_exclude_its_alternative_is_not_counted(alternative):
    led = Ledger("ci")
    c = led.claim(
        "weak",
        "s",
        kind="reproduces",
        measured=1.76,
        reference=1.76,
        tol=0.38,
        alternative=alternative,
        why="w",
        source="s",
    )
    assert c.status == "pass" and c.discriminates is False
    assert scorecard.rules_out(c.to_json()) == ""
    assert claims.undiscriminated([c.to_json()]) == {"reproduces": 1, "predicts": 0, "checks": 0}
    assert scorecard.summary_of(led.records(), led.scale).startswith(
        "Reproduces 0 of 1 paper results (1 passes without ruling out an alternative"
    )
    assert "Not discriminating" in _page(led)


def test_directional_claims_rule_out_no_effect_at_their_boundary_and_checks_need_none():
    led = Ledger("ci")
    grows = led.claim(
        "g",
        "s",
        kind="predicts",
        measured=0.3,
        se=0.05,
        reference=0.0,
        comparison="ge",
        alternative=(0.0, "no growth"),
        why="w",
        source="s",
    )
    assert grows.status == "pass" and grows.discriminates is True
    inside = led.claim(
        "g2",
        "s",
        kind="predicts",
        measured=0.3,
        se=0.05,
        reference=0.0,
        comparison="ge",
        alternative=(0.1, "a growth of 0.1"),
        why="w",
        source="s",
    )
    assert inside.discriminates is False  # 0.1 is inside x ≥ 0: a pass cannot exclude it
    chk = led.claim(
        "c", "s", kind="checks", measured=1.0, reference=1.0, tol=0.1, why="w", source="s"
    )
    assert chk.discriminates is None and claims.undiscriminated([chk.to_json()])["checks"] == 0
    flag = led.claim(
        "t",
        "s",
        kind="reproduces",
        measured=True,
        comparison="true",
        alternative=(None, "a convex region"),
        why="w",
        source="s",
    )
    assert (
        flag.discriminates is True
        and scorecard.rules_out(flag.to_json()) == "rules out a convex region"
    )


@pytest.mark.parametrize("bad", [(1.0,), (1.0, ""), ("x", "a string value"), 1.0])
def test_a_malformed_alternative_is_refused_naming_the_claim(bad):
    with pytest.raises(ParameterError, match="claim a: alternative"):
        Ledger("ci").claim(
            "a",
            "s",
            kind="reproduces",
            measured=1.0,
            reference=1.0,
            tol=0.1,
            alternative=bad,
            why="w",
            source="s",
        )


def test_a_value_declared_not_identified_is_inconclusive_not_failed():
    led = Ledger("ci")
    c = led.claim(
        "n",
        "s",
        kind="reproduces",
        measured=float("nan"),
        interval=(-math.inf, math.inf),
        reference=1.0,
        tol=0.2,
        why="w",
        source="s",
    )
    assert c.status == "inconclusive"
    assert (
        led.claim(
            "m",
            "s",
            kind="reproduces",
            measured=float("nan"),
            reference=1.0,
            tol=0.2,
            why="w",
            source="s",
        ).status
        == "fail"
    )  # a NaN without that declaration is a broken measurement


def test_an_estimate_is_a_claims_measurement_with_its_own_standard_error():
    from layerwise.stats import estimate

    e = estimate([1.0, 1.2, 0.9, 1.1])
    led = Ledger("ci")
    c = led.claim(
        "e", "s", kind="predicts", measured=e, reference=1.0, tol=0.5, why="w", source="s"
    )
    assert (c.measured, c.se, c.dof) == (e.mean, e.se, e.dof)
    assert c.interval == pytest.approx(
        (e.mean - stats.t.ppf(0.995, 3) * e.se, e.mean + stats.t.ppf(0.995, 3) * e.se)
    )
    with pytest.raises(ParameterError, match="carries its own se"):
        led.claim(
            "f",
            "s",
            kind="predicts",
            measured=e,
            se=0.1,
            reference=1.0,
            tol=0.5,
            why="w",
            source="s",
        )


def test_an_inconclusive_mean_reports_the_replicates_that_would_decide_it():
    led = Ledger("ci")
    # mean 1.3 of 4 replicates (sd 0.2), rule x ≥ 1: gap 0.3; decided once t(n−1)·0.2/√n < 0.3
    c = led.claim(
        "d",
        "s",
        kind="predicts",
        measured=1.3,
        se=0.1,
        dof=3,
        reference=1.0,
        comparison="ge",
        why="w",
        source="s",
    )
    assert c.status == "inconclusive"
    n = c.replicates_to_decide()
    assert (
        stats.t.ppf(0.995, n - 1) * 0.2 / math.sqrt(n)
        < 0.3
        <= stats.t.ppf(0.995, n - 2) * 0.2 / math.sqrt(n - 1)
    )
    assert (
        c.to_json()["replicates_to_decide"] == n
        and f"≈ {n} replicates would decide it (now 4)" in _page(led)
    )
    done = led.claim(
        "e",
        "s",
        kind="predicts",
        measured=1.3,
        se=0.01,
        dof=3,
        reference=1.0,
        comparison="ge",
        why="w",
        source="s",
    )
    assert done.status == "pass" and done.replicates_to_decide() is None


@given(st.floats(0.05, 2.0), st.integers(2, 60), st.floats(0.01, 1.0))
def test_replicates_to_decide_is_the_smallest_sample_that_decides(gap, n, se):
    led = Ledger("ci")
    c = led.claim(
        "h",
        "s",
        kind="predicts",
        measured=1.0 + gap,
        se=se,
        dof=n - 1,
        reference=1.0,
        comparison="ge",
        why="w",
        source="s",
    )
    k = c.replicates_to_decide()
    if c.status != "inconclusive":
        assert k is None
        return
    sd = se * math.sqrt(n)
    assert k > n and quantile(0.99, k - 1) * sd / math.sqrt(k) < gap <= quantile(
        0.99, k - 2
    ) * sd / math.sqrt(k - 1)


def test_a_claim_graded_from_a_larger_scale_shows_what_this_scale_would_need():
    def claim(scale: str, min_scale: str):
        return Ledger(scale).claim(
            "p",
            "s",
            kind="predicts",
            measured=1.05,
            se=0.04,
            dof=3,
            reference=1.0,
            comparison="ge",
            why="w",
            source="s",
            min_scale=min_scale,
        )

    skipped, graded = claim("default", "paper"), claim("default", "default")
    assert skipped.status == "skipped" and graded.status == "inconclusive"
    assert skipped.replicates_to_decide() == graded.replicates_to_decide() > 4
    passing = Ledger("default").claim(
        "q",
        "s",
        kind="predicts",
        measured=2.0,
        se=0.04,
        dof=3,
        reference=1.0,
        comparison="ge",
        why="w",
        source="s",
        min_scale="paper",
    )
    assert passing.status == "skipped" and passing.replicates_to_decide() is None


def test_a_combined_standard_error_is_shown_with_its_two_parts():
    """A claim measured against a published mean with its SE (stats.versus_reference): the
    scorecard and the uncertainty words give the combined ± and say which part is whose, so a
    page that glues our own ± beside it is not contradicted."""
    from layerwise.stats import estimate, versus_reference

    ours = [90.0, 95.0, 100.0, 85.0]
    e = versus_reference(ours, (123.0, 2.4))
    led = Ledger("ci")
    c = led.claim(
        "k",
        "kurtosis agrees",
        kind="reproduces",
        measured=e,
        reference=123.0,
        tol=30.0,
        why="w",
        source="s",
    )
    own = estimate(ours).se
    record = c.to_json()
    assert record["reference_se"] == 2.4 and record["se"] == pytest.approx(math.hypot(own, 2.4))
    split = scorecard.se_split(record)
    assert split == f"ours {claims.fmt_se(own)} and the authors' 2.4, combined"
    assert html.escape(split) in _page(led)
    plain = led.claim(
        "p",
        "plain",
        kind="checks",
        measured=estimate(ours),
        reference=90.0,
        tol=30.0,
        why="w",
        source="s",
    )
    assert plain.to_json()["reference_se"] is None and scorecard.se_split(plain.to_json()) == ""
    with pytest.raises(ParameterError, match="reference_se"):
        claims.Claim(
            "x", "s", "checks", 1.0, 1.0, 0.5, "abs", "w", "s", "ci", "ci", se=0.1, reference_se=0.2
        )


def test_a_scorecard_row_keeps_the_source_on_the_line_that_opens_the_rule():
    """One line per row less: the source is the summary of the folded rule and margin, the claim
    id inside it (the book's readers cite a claim by its anchor, not by its id)."""
    led = Ledger("ci")
    led.claim(
        "my_claim",
        "a statement",
        kind="checks",
        measured=1.0,
        reference=1.0,
        tol=0.1,
        why="because",
        source="Paper 2019, Eq. 3",
    )
    page = _page(led)
    summary = page.split("<summary>")[1].split("</summary>")[0]
    assert "Paper 2019, Eq. 3" in summary and "my_claim" not in summary
    assert "Claim <code>my_claim</code>. Rule:" in page.split("</summary>")[1]
    assert page.count("Paper 2019, Eq. 3") == 1 and 'id="claim-my_claim"' in page


def test_the_ledger_records_data_under_a_figure_legend(tmp_path):
    """Each figure's record counts the plotted points its legends cover (plotting.legend_overlap),
    so a legend over the data shows in the ledger; a legend in free space counts 0."""
    import matplotlib.pyplot as plt

    ch = Chapter("42_demo", scale="ci", seed=3, device="cpu", results=tmp_path)
    x = np.linspace(0, 1, 101)
    for name, loc in (("covered", "center"), ("clear", "upper right")):
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.plot(x, 1.5 + 0 * x, label="flat at one and a half")  # runs through the middle
        ax.set_ylim(0, 3)  # free space above and below it
        ax.legend(loc=loc)
        ch.figure(fig, name, "A flat line.", arrays={"x": x})
    ch.finish()
    data = json.loads(ch.results_path.read_text())
    counts = {f["name"]: f["legend_over_data"] for f in data["figure_labels"]}
    assert counts["covered"] > 0 and counts["clear"] == 0


def test_glue_math_records_markdown_with_balanced_math(tmp_path):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()  # display() needs a shell to publish to
    ch = Chapter("42_demo", scale="ci", seed=3, device="cpu", results=tmp_path)
    with capture_output() as out:
        ch.glue_math("peak", r"peaks at $\sigma_w^2$ = 1.75")
    bundle = out.outputs[0].data
    assert bundle[GLUE_PREFIX + "text/markdown"] == r"peaks at $\sigma_w^2$ = 1.75"
    assert bundle[GLUE_PREFIX + "text/plain"] == r"peaks at \sigma_w^2 = 1.75"
    assert ch.glued["peak"] == r"peaks at $\sigma_w^2$ = 1.75"
    with pytest.raises(ParameterError, match="balanced"):
        ch.glue_math("odd", r"a lone $\xi_c")
    with pytest.raises(ParameterError, match="used twice"):
        ch.glue_math("peak", "again")


def test_claims_that_state_one_thing_of_several_cases_share_one_statement_row():
    """ "Depth 1: regions grow like N²", "Depth 2: regions grow like N²" … print the shared claim
    once and one short row per case; every claim keeps its own row, anchor, outcome and value;
    a statement whose claim part no other claim shares stays a row of its own."""
    led = Ledger("ci")
    for d, x in ((1, 2.0), (2, 2.9), (6, 1.95)):
        led.claim(
            f"growth_d{d}",
            "regions grow like N² (log–log slope)",
            case=f"Depth {d}",
            kind="reproduces",
            measured=x,
            reference=2.0,
            tol=0.5,
            why="w",
            source="Hanin 2019, Thm. 5",
        )
    led.claim(
        "alone",
        "it holds",
        case="the one case",
        kind="checks",
        measured=1.0,
        reference=1.0,
        tol=0.1,
        why="w",
        source="s",
    )
    led.claim(
        "lonely",
        "Random D: the drift is small",
        kind="reproduces",
        measured=0.1,
        reference=0.0,
        tol=0.5,
        why="w",
        source="other",
    )
    groups = scorecard.claim_families([c.to_json() for c in led.claims])
    page = _page(led)
    assert [(s, [lab for lab, _ in m]) for s, m in groups] == [
        ("regions grow like N² (log–log slope)", ["Depth 1", "Depth 2", "Depth 6"]),
        (None, [""]),
        (None, [""]),
    ]
    assert led.claims[1].statement == "Depth 2: regions grow like N² (log–log slope)"
    assert led.claims[1].to_json()["case"] == "Depth 2"
    assert "The one case: it holds" not in page and "the one case: it holds" in page
    assert page.lower().count("regions grow like n²") == 1 and "Regions grow like N²" in page
    assert page.count("Hanin 2019, Thm. 5") == 1  # one source, said once for the family
    for d in (1, 2, 6):
        assert f'id="claim-growth_d{d}"' in page and f'class="lw-case">Depth {d}<' in page
    assert page.count('class="lw-pass lw-member"') == 2
    assert page.count('class="lw-fail lw-member"') == 1
    assert "2.9" in page and 'id="claim-lonely" class="lw-pass"' in page
    assert "Random D: the drift is small" in page


def test_a_family_with_several_sources_names_each_case_source():
    led = Ledger("ci")
    for i, src in enumerate(("Paper A", "Paper B")):
        led.claim(
            f"c{i}",
            "the same thing holds",
            case=f"case {i}",
            kind="checks",
            measured=1.0,
            reference=1.0,
            tol=0.1,
            why="w",
            source=src,
        )
    page = _page(led)
    assert "· Paper A" in page and "· Paper B" in page and page.count("The same thing") == 1
    with pytest.raises(ParameterError, match="case="):
        led.claim(
            "c9",
            "x",
            case="a: b",
            kind="checks",
            measured=1.0,
            reference=1.0,
            tol=0.1,
            why="w",
            source="s",
        )


def test_a_family_says_a_shared_note_once_and_keeps_a_formula_as_written():
    led = Ledger("ci")
    for name, note in (
        ("signal ν₂", "graded from the paper scale"),
        ("noise μ₂", "graded from the paper scale"),
    ):
        led.claim(
            f"k_{name[:5]}",
            "log(mˡ/m⁰) is nearly Gaussian",
            case=name,
            kind="reproduces",
            measured=0.1,
            reference=0.05,
            tol=0.0,
            comparison="le",
            why="w",
            source="s",
            note=note,
        )
    page = _page(led)
    assert page.count("Graded from the paper scale.") == 1  # said once, as a sentence
    assert "log(mˡ/m⁰) is nearly Gaussian" in page and "Log(mˡ" not in page
    assert scorecard.sentence_case("regions grow") == "Regions grow"
    assert scorecard.sentence_case("δχ ≥ 1") == "δχ ≥ 1"
    assert scorecard.sentence_case("q* at") == "q* at"


# -- findings and their controls (SPEC §1 "Findings and their controls") --------------------------
def _failing(led, id, controls=(), conditions=None):
    return led.claim(id, "x is 1", kind="reproduces", measured=3.0, reference=1.0, tol=0.1,
                     why="w", source="paper, Fig. 1", alternative=(0.0, "zero"),
                     controls=controls, conditions=conditions)


def test_a_fail_is_a_finding_only_after_all_three_controls_pass():
    from layerwise.claims import Control, is_finding
    from layerwise.scorecard import unconfirmed_reason

    led = Ledger("default")
    bare = _failing(led, "bare").to_json()
    two = _failing(led, "two", [Control("reference", True, "authors' data pass"),
                                Control("estimator", True, "slope 1 recovered")]).to_json()
    bad = _failing(led, "bad", [Control("reference", False, "authors' arrays fail it too"),
                                Control("estimator", True), Control("conditions", True)]).to_json()
    full = _failing(led, "full", [{"kind": "conditions", "passed": True, "note": "same"},
                                  ("estimator", True, ""), Control("reference", True)]).to_json()
    assert [c["finding"] for c in (bare, two, bad, full)] == [False, False, False, True]
    assert [is_finding(c) for c in (bare, two, bad, full)] == [False, False, False, True]
    assert [x["kind"] for x in full["controls"]] == ["reference", "estimator", "conditions"]
    assert unconfirmed_reason(bare) == "no reference, estimator or conditions control"
    assert unconfirmed_reason(two) == "no conditions control"
    assert unconfirmed_reason(bad) == "the reference control failed"
    assert unconfirmed_reason(full) == ""
    line = scorecard.summary_of(led.records(), led.scale)
    assert "4 failed: 1 is a finding, 3 are not findings until their controls pass" in line
    page = _page(led)
    assert page.count("Not a finding:") == 3 and page.count("A finding: it survived") == 1
    assert "✗ reference control: authors&#x27; arrays fail it too" in page
    assert page.count("a suspected artefact of our own set-up until its controls pass") == 3
    # a failed conditions control: the paper's result carried to our conditions
    cond = _failing(led, "cond", [Control("reference", True), Control("estimator", True),
                                  Control("conditions", False, "input differs")]).to_json()
    from layerwise.scorecard import not_a_finding_means

    assert not_a_finding_means(cond).startswith("the paper's result carried to our conditions")
    # a passing claim carries its controls too, and is never a finding
    ok = led.claim("ok", "x is 1", kind="reproduces", measured=1.0, reference=1.0, tol=0.1,
                   why="w", source="s", alternative=(0.0, "zero"),
                   controls=[Control("reference", True)]).to_json()
    assert ok["finding"] is False and ok["controls"][0]["passed"] is True


def test_controls_and_conditions_are_validated_before_grading():
    from layerwise.claims import Control

    led = Ledger("ci")
    with pytest.raises(ParameterError, match="control kind='bogus' is not allowed; choose one"):
        _failing(led, "a", [Control("bogus", True)])
    with pytest.raises(ParameterError, match="passed=True or False"):
        _failing(led, "b", [Control("reference", "yes")])
    with pytest.raises(ParameterError, match="'estimator' is given twice"):
        _failing(led, "c", [Control("estimator", True), Control("estimator", False)])
    with pytest.raises(ParameterError, match=r"conditions\['width'\] must be \(ours, paper's\)"):
        _failing(led, "d", conditions={"width": 128})


def test_conditions_that_differ_are_named_on_the_scorecard():
    led = Ledger("default")
    c = _failing(led, "x", conditions={"input": ("photo patches", "CIFAR-10"),
                                       "width": (128, 128)}).to_json()
    assert c["conditions"] == {"input": ["photo patches", "CIFAR-10"], "width": [128.0, 128.0]}
    page = _page(led)
    assert "Our conditions differ: input photo patches (paper: CIFAR-10)." in page
    assert "width 128" not in page


def test_a_claim_graded_at_a_larger_scale_says_it_was_not_run_and_how_it_leans():
    led = Ledger("default")
    c = led.claim("later", "x is 1", kind="reproduces", measured=3.0, se=0.1, dof=9,
                  reference=1.0, tol=0.1, why="w", source="s", alternative=(0.0, "zero"),
                  min_scale="paper").to_json()
    assert c["status"] == "skipped" and c["lean"] == "fail"
    page = _page(led)
    assert "not run at <code>paper</code>" in page and "At this scale it leans to fail." in page
    tracked = {"later": ("paper-cpu-2026-11-28", {"status": "pass"})}
    page = _page(led, tracked)
    assert "not run at <code>" not in page
    assert "at <code>paper</code> (evidence/paper-cpu-2026-11-28): ✓" in page


def test_a_row_decided_by_tracked_evidence_shows_the_evidence_not_this_scale():
    led = Ledger("default")
    led.claim("later", "x is 1", kind="reproduces", measured=3.0, se=0.1, dof=9, n=10,
              reference=1.0, tol=0.1, why="w", source="s", alternative=(0.0, "zero"),
              min_scale="paper", note="graded at paper", replicates={"paper": 20})
    rec = {"id": "later", "status": "pass", "measured": 1.02, "se": 0.01, "dof": 19,
           "statement": "x is 1 (the paper run's own settings)",
           "interval": [0.99, 1.05], "confidence": 0.99, "note": "the paper run's note",
           "controls": [{"kind": "conditions", "passed": True, "note": "same data"}]}
    page = _page(led, {"later": ("paper-x", rec)})
    assert "Decided at paper by the tracked evidence in evidence/paper-x: ✓ pass" in page
    assert "1.02" in page and "[0.99, 1.05]" in page and "at this scale: 3" in page
    assert "The paper run&#x27;s note." in page and "✓ conditions control: same data" in page
    assert "leans" not in page and "replicates" not in page  # no projection once decided
    assert "x is 1 (the paper run&#x27;s own settings)" in page  # its statement, not this run's
    bare = _page(led)
    assert "leans to fail" in bare and "Decided at" not in bare
    undecided = _page(led, {"later": ("paper-x", {**rec, "status": "inconclusive"})})
    assert "Decided at" not in undecided
    assert "Run at paper in the tracked evidence in evidence/paper-x and undecided there too" in (
        undecided)

    # the evidence's margin and its justification (its rule), not this scale's
    wider = {**rec, "tolerance": 0.3, "rule": "|x − 1| ≤ 0.3", "justification": "200 runs"}
    page = _page(led, {"later": ("paper-x", wider)})
    assert "|x − 1| ≤ 0.3" in page and "200 runs" in page and "≤ 0.1" not in page



def test_a_row_shown_from_evidence_of_a_larger_scale_names_that_scale():
    """At ci, a claim graded from default that paper evidence decides says "at paper", not "at
    default" (the evidence's scale, which tracked_claims records with each claim)."""
    led = Ledger("ci")
    led.claim("mid", "x is 1", kind="predicts", measured=3.0, se=0.1, dof=9, reference=1.0,
              tol=0.1, why="w", source="s", min_scale="default")
    rec = {"id": "mid", "status": "pass", "measured": 1.0, "se": 0.01, "dof": 9,
           "interval": [0.97, 1.03], "confidence": 0.99, "scale": "paper"}
    page = _page(led, {"mid": ("paper-x", rec)})
    assert "at <code>paper</code> (evidence/paper-x)" in page
    assert "Decided at paper by the tracked evidence" in page
    assert "at <code>default</code>" not in page and "Decided at default" not in page

def test_the_carried_note_is_a_sentence_of_its_own(tmp_path):
    from layerwise.chapter import Chapter
    from layerwise.claims import Control

    ch = Chapter("42_demo", scale="ci", seed=0, results=tmp_path / "r")
    ch.claim("c", "x is 1", kind="reproduces", measured=1.0, se=0.1, dof=9, reference=1.0,
             tol=0.5, why="w", source="s", alternative=(3.0, "three"), note="graded at paper",
             controls=[Control("conditions", False, "inputs differ")])
    note = ch.ledger.claims[0].to_json()["note"]
    assert note.startswith("Graded at paper. Graded as a prediction:"), note


def test_tracked_claims_reads_the_newest_evidence_at_a_scale(tmp_path):
    import json

    from layerwise.dashboard import tracked_claims

    for name, date, status in (("paper-a", "2026-11-01", "fail"), ("paper-b", "2026-11-20", "pass"),
                               ("default-c", "2026-11-25", "inconclusive")):
        d = tmp_path / "evidence" / name
        d.mkdir(parents=True)
        scale = name.split("-")[0]
        (d / "META.json").write_text(json.dumps({"scale": scale, "date": date}))
        (d / "05_x.json").write_text(json.dumps({"claims": [{"id": "k", "status": status}]}))
    # each record with the scale its run was made at (a row names it)
    assert tracked_claims(tmp_path, "05_x") == {
        "k": ("paper-b", {"id": "k", "status": "pass", "scale": "paper"})}
    assert tracked_claims(tmp_path, "06_y") == {}


def test_part_evidence_keeps_only_the_claims_it_was_run_for(tmp_path, monkeypatch):
    import json
    import shutil

    from layerwise.dashboard import save_evidence, tracked_claims
    from layerwise.params import ParameterError

    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    run = tmp_path / "results" / "paper"
    run.mkdir(parents=True)
    claims = [{"id": "ladder", "status": "pass"}, {"id": "small", "status": "fail"},
              {"id": "later", "status": "skipped"}]
    (run / "06_x.json").write_text(json.dumps({"device": "cpu", "claims": claims}))
    (run / "07_y.json").write_text(json.dumps({"device": "cpu", "claims": claims}))
    with pytest.raises(ParameterError, match=r"claims=\['later'\].*allowed: ladder, small"):
        save_evidence("paper", "p", tmp_path, chapters=["06"], claims=["later"])
    dest = save_evidence("paper", "p", tmp_path, chapters=["06"], claims=["ladder"],
                         note="the ladder at paper, the rest at default sizes")
    assert sorted(f.name for f in dest.glob("*.json")) == ["06_x.json", "META.json"]
    meta = json.loads((dest / "META.json").read_text())
    assert meta["claims"] == ["ladder"] and meta["part"].startswith("the ladder")
    assert meta["git_commit"] != "abc1234"  # the ledger records no commit: the checkout's
    (run / "06_x.json").write_text(json.dumps({"device": "cpu", "claims": claims,
                                               "git_commit": "abc1234"}))
    dest = save_evidence("paper", "p", tmp_path, chapters=["06"], claims=["ladder"])
    assert json.loads((dest / "META.json").read_text())["git_commit"] == "abc1234"
    figs = run / "figures" / "06_x"
    figs.mkdir(parents=True)
    for name in ("ladder", "other"):
        (figs / f"{name}.png").write_bytes(b"png")
    (run / "06_x.json").write_text(json.dumps({"device": "cpu", "claims": claims, "figures": [
        "paper/figures/06_x/ladder.png", "paper/figures/06_x/other.png"]}))
    shown = {(): [], ("ladder",): ["06_x__ladder.png"]}
    for names, kept in shown.items():
        dest = save_evidence("paper", "p", tmp_path, claims=["ladder"], figures=list(names))
        assert sorted(p.name for p in (dest / "figures").iterdir()) == kept
    dest = save_evidence("paper", "p", tmp_path, claims=["ladder"])  # a part: named figures only
    assert not list((dest / "figures").iterdir())
    (run / "07_y.json").write_text("{ half-written")  # another chapter's ledger is not read
    dest = save_evidence("paper", "whole", tmp_path, chapters=["06"])  # a whole run: every figure
    assert len(list((dest / "figures").iterdir())) == 2
    shutil.rmtree(dest)
    assert list(tracked_claims(tmp_path, "06_x")) == ["ladder"]  # "small" is not evidence


def test_the_landing_says_which_claims_not_run_here_tracked_evidence_decides(tmp_path):
    import json

    from layerwise.dashboard import decided_elsewhere

    d = tmp_path / "evidence" / "paper-x"
    d.mkdir(parents=True)
    (d / "META.json").write_text(json.dumps({"scale": "paper", "date": "2026-11-28"}))
    (d / "06_x.json").write_text(json.dumps({"claims": [{"id": "a", "status": "pass"},
                                                        {"id": "c", "status": "fail"}]}))
    rec = [("06_x", "T", {"id": i, "status": s, "statement": f"claim {i}"})
           for i, s in (("a", "skipped"), ("b", "skipped"), ("c", "pass"))]
    text = decided_elsewhere(tmp_path, rec)
    assert text.startswith("Of the 2 claims not run at this scale, 1 is decided")
    assert "(1 ✓ pass)" in text and "claim a</a> (`evidence/paper-x/`: ✓ pass)" in text
    assert "claim b" not in text and "claim c" not in text  # c ran here: its own outcome counts
    assert decided_elsewhere(tmp_path, rec[1:]) == ""
    # evidence that ran the claim but did not decide it is not counted as deciding it
    (d / "06_x.json").write_text(json.dumps({"claims": [{"id": "a", "status": "pass"},
                                                        {"id": "b", "status": "inconclusive"}]}))
    text = decided_elsewhere(tmp_path, rec)
    assert "1 is decided by tracked evidence of the larger scale (1 ✓ pass)" in text
    assert "1 was run at the larger scale and is undecided there too" in text
    assert "claim b</a> (`evidence/paper-x/`: ? inconclusive)" in text


def test_estimate_side_and_sign_follow_the_interval_rule():
    from layerwise.stats import Estimate, exact

    e = Estimate(1.0, 0.1, 9, 10)
    lo, hi = e.bounds()
    assert e.sign() == 1 and e.side(lo - 1e-9) == 1 and e.side(hi + 1e-9) == -1
    assert e.side(1.0) == 0 and Estimate(-1.0, 0.1, 9, 10).sign() == -1
    assert Estimate(0.2, 0.1, 9, 10).sign() == 0  # 0.2 − t(0.995, 9)·0.1 < 0
    assert exact(0.0).sign() == 0 and exact(1e-12).sign() == 1


def test_the_outcomes_sentence_names_every_claim_that_does_not_pass():
    from layerwise.claims import Control
    from layerwise.scorecard import outcomes_sentence

    led = Ledger("default")
    _failing(led, "f1")
    _failing(led, "f2", [Control(k, True) for k in ("reference", "estimator", "conditions")])
    led.claim("i", "y is 2.", kind="predicts", measured=2.0, se=1.0, dof=9, reference=2.0,
              tol=0.1, why="w", source="s", alternative=(0.0, "zero"))
    led.claim("s", "z is 3", kind="reproduces", measured=9.0, se=0.1, dof=9, reference=3.0,
              tol=0.1, why="w", source="s", alternative=(0.0, "zero"), min_scale="paper")
    led.claim("p", "w holds", kind="checks", measured=True, comparison="true", why="w", source="s")
    text = outcomes_sentence([c.to_json() for c in led.claims], "default")
    assert text.startswith(scorecard.summary_of(led.records(), led.scale))
    assert ("Failed: x is 1 (not a finding: no reference, estimator or conditions control); "
            "x is 1 (a finding).") in text
    assert "Inconclusive: y is 2." in text
    assert "Not run at this scale: z is 3 (graded at paper; here it leans to fail)." in text
    assert "w holds" not in text
    # the cases of one family share their statement
    for d in (2, 6):
        led.claim(f"g{d}", "regions grow like N²", case=f"Depth {d}", kind="reproduces",
                  measured=2.0, se=1.0, dof=9, reference=2.0, tol=0.1, why="w", source="s",
                  alternative=(0.0, "zero"))
    text = outcomes_sentence([c.to_json() for c in led.claims], "default")
    assert "Inconclusive: y is 2; regions grow like N² (Depth 2, Depth 6)." in text


# --- the scorecard row: interval, rule in words, what the next scale can do (#46) -------------
def _cells(page: str, claim_id: str) -> str:
    """The row of ``claim_id`` on a scorecard, without its folded details."""
    import re

    row = re.search(rf'<tr id="claim-{claim_id}"[^>]*>(.*?)</tr>', page, re.S).group(1)
    return re.sub(r"<details>.*?</details>", "", row, flags=re.S)


def test_the_interval_is_in_the_row_itself_not_only_in_the_folded_details():
    from layerwise.stats import estimate, interval_estimate

    led = Ledger("ci")
    e = estimate([1.0, 1.2, 0.9, 1.1, 1.0])
    lo, hi = e.bounds(0.99)
    make(led, id="se", measured=e, reference=1.0, tol=0.5)
    make(led, id="boot", measured=interval_estimate(0.5, 0.25, 0.75), reference=0.0,
         comparison="ge")
    make(led, id="exact", measured=0.5, reference=0.0, comparison="ge")
    page = _page(led)
    num = _cells(page, "se").split('class="lw-num"')[1]
    assert f'<span class="lw-ci">99\u00a0% [{claims.fmt(lo)}, {claims.fmt(hi)}]</span>' in num
    assert '<span class="lw-ci">99\u00a0% [0.25, 0.75]</span>' in _cells(page, "boot")
    assert "lw-ci" not in _cells(page, "exact")  # a value without uncertainty has no interval


#: Every comparison the ledger has, a rule of it and the words the scorecard says it in.
RULES_IN_WORDS = {
    "abs": (dict(reference=-1.0, tol=0.5), "within 0.5 of −1", "|x − (−1)| ≤ 0.5"),
    "rel": (dict(reference=2.0, tol=0.05), "within 5 % of 2", "|x − 2| ≤ 0.05·|2|"),
    "le": (dict(reference=0.0, tol=0.1), "at most 0.1", "x ≤ 0.1"),
    "ge": (dict(reference=1.0), "at least 1", "x ≥ 1"),
    "between": (dict(reference=(0.5, 3.0)), "between 0.5 and 3", "0.5 ≤ x ≤ 3"),
    "true": (dict(), "true", "x is true"),
}


def test_rules_are_said_in_words_for_every_comparison():
    from layerwise.scorecard import rule_words

    assert set(RULES_IN_WORDS) == set(claims.COMPARISONS)  # a new kind of rule needs its words
    led = Ledger("ci")
    for comparison, (kw, words, formula) in RULES_IN_WORDS.items():
        measured = True if comparison == "true" else 0.0
        c = make(led, id=comparison, measured=measured, comparison=comparison, **kw).to_json()
        assert (rule_words(c), c["rule"]) == (words, formula)
        page = _page(led)
        assert f'<span class="lw-rule">expected {html.escape(words)}</span>' in _cells(
            page, comparison)
        assert f"Rule: {html.escape(words)}" in page
    assert rule_words({"rule": "x ≤ 3"}) == "x ≤ 3"  # a record from before comparisons
    eq = make(led, id="eq", measured=1.0, reference=1.0, tol=0.0).to_json()
    assert rule_words(eq) == "equal to 1"


def test_a_deferred_claim_says_whether_its_scale_can_decide_it_from_the_row_s_own_count():
    from layerwise.stats import estimate

    values = [0.9, 1.4, 0.7, 1.3, 1.1, 0.6]  # mean 1.0 against "at least 0.6": undecided at ci
    e = estimate(values)
    need = claims.replicates_to_decide(e.mean, e.se, e.n, (0.6, math.inf))
    assert need is not None and need > e.n
    rows, found = {}, {}
    for name, runs in (("enough", need), ("short", need - 1), ("unknown", None)):
        led = Ledger("ci")
        rep = {"paper": runs} if runs else None
        c = make(led, id=name, measured=e, reference=0.6, comparison="ge", min_scale="paper",
                 replicates=rep).to_json()
        assert c["status"] == "skipped" and c["replicates_to_decide"] == need
        rows[name] = _cells(_page(led), name)
        found[name] = scorecard.outcomes_sentence(led.records(), "ci")
    # "What we found" says the same as the row, from the same count
    assert (f"(graded at paper; here it is undecided; may stay undecided at paper: needs ≈ {need} "
            f"replicates, paper runs {need - 1})" in found["short"])
    assert "decided at paper if this mean and spread hold" in found["enough"]
    assert found["unknown"].endswith("(graded at paper; here it is undecided).")
    assert (f"Decided at <code>paper</code> if this mean and spread hold: needs ≈ {need} "
            f"replicates, <code>paper</code> runs {need}." in rows["enough"])
    assert (f"May stay undecided at <code>paper</code>: needs ≈ {need} replicates, "
            f"<code>paper</code> runs {need - 1}." in rows["short"])
    assert f"≈ {need} replicates would decide it (now {e.n})." in rows["unknown"]
    assert "Decided at" not in rows["short"] and "May stay" not in rows["enough"]


def test_the_count_of_replicates_is_the_estimate_s_own_n():
    """An estimate whose degrees of freedom are not n − 1 (a Welch difference) still says how many
    replicates it has: the scorecard's "(now n)" and the search start from its n."""
    from layerwise.stats import Estimate

    e = Estimate(mean=1.0, se=0.3, dof=4.5, n=8)
    c = make(measured=e, reference=0.8, comparison="ge").to_json()
    assert c["n"] == 8 and c["status"] == "inconclusive"
    need = claims.replicates_to_decide(1.0, 0.3, 8, (0.8, math.inf), start=9)
    assert c["replicates_to_decide"] == need > 8
    from layerwise.scorecard import deciding_words

    assert deciding_words(c) == f"≈ {need} replicates would decide it (now 8)."
    # a t with fewer degrees of freedom than n − 1 (a Welch difference of 4 networks) can be
    # undecided at n where a mean's t would decide: the count said is still above the one now
    welch = make(id="welch", measured=Estimate(mean=1.0, se=0.02, dof=1.0, n=4),
                 reference=0.8, comparison="ge").to_json()
    assert welch["status"] == "inconclusive" and welch["replicates_to_decide"] == 5


def test_the_summary_words_each_kind_of_failure_for_what_it_is():
    from layerwise.claims import Control
    from layerwise.scorecard import summary_of

    three = [Control(k, True) for k in ("reference", "estimator", "conditions")]
    carried = [Control("reference", True), Control("conditions", False, "input differs")]
    led = Ledger("default")
    _failing(led, "found", three)
    _failing(led, "carried", carried)
    _failing(led, "open", [Control("reference", True)])
    line = summary_of(led.records())
    assert ("3 failed: 1 is a finding, 1 is a result carried from the paper to our conditions, 1 "
            "is not a finding until its controls pass" in line)
    only = Ledger("default")
    _failing(only, "c1", carried)
    _failing(only, "c2", carried)
    line = summary_of(only.records())
    assert "2 failed: results carried from the paper to our conditions" in line
    assert "until their controls pass" not in line and "finding" not in line


def test_a_caveat_is_a_sentence_of_its_own_after_the_note():
    """A note and the caveat added when the numbers do not pass read as two sentences (not
    "… can decide it 12 runs per setting leave the interval …")."""
    kw = dict(measured=1.0, se=0.5, dof=3, reference=1.0, tol=0.1, min_scale="paper")
    c = make(note="graded from the paper scale, which can decide it",
             caveat="12 runs per setting leave the interval wider than the window", **kw)
    assert c.note == ("Graded from the paper scale, which can decide it. 12 runs per setting leave "
                      "the interval wider than the window.")
    c = make(note="Runs are few (see §6.5).", caveat="the mean ratio is 0.86", **kw)
    assert c.note == "Runs are few (see §6.5). The mean ratio is 0.86."
    assert make(caveat="q* is small", **kw).note == "q* is small."
    passing = make(note="a note", caveat="never said", measured=1.0, reference=1.0, tol=0.1)
    assert passing.note == "a note"  # a pass records the note as written, without the caveat
