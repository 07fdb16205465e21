"""The landing page's totals and the dashboard's cells read in the words of the summary sentence
beside them (#46: a column must not need decoding against the sentence above it)."""

from __future__ import annotations

import re

from layerwise import dashboard
from layerwise.claims import Control, Ledger
from layerwise.scorecard import summary_of


def _claims() -> list[dict]:
    led = Ledger("ci")
    kw = dict(why="w", source="s")
    alt = (0.0, "zero")
    led.claim("ok", "a", kind="reproduces", measured=1.0, reference=1.0, tol=0.1,
              alternative=alt, **kw)
    led.claim("weak", "b", kind="reproduces", measured=1.0, reference=1.0, tol=0.1, **kw)
    led.claim("open", "c", kind="reproduces", measured=1.0, se=0.2, dof=4, reference=1.0,
              tol=0.1, alternative=alt, **kw)
    led.claim("later", "d", kind="reproduces", measured=1.0, reference=1.0, tol=0.1,
              min_scale="paper", alternative=alt, **kw)
    led.claim("carried", "e", kind="reproduces", measured=3.0, reference=1.0, tol=0.1,
              alternative=alt, controls=[Control("conditions", False, "input")], **kw)
    led.claim("p", "f", kind="predicts", measured=1.0, reference=0.0, comparison="ge",
              alternative=(-1.0, "negative"), **kw)
    return led.records()


def _totals(claims) -> dict[str, dict[str, str]]:
    text = dashboard.totals_table(claims)
    lines = [ln for ln in text.splitlines() if ln.startswith("| ")]
    head = [h.strip() for h in lines[0].split("|")[2:-1]]
    return {ln.split("|")[1].strip(): dict(zip(head, (x.strip() for x in ln.split("|")[2:-1])))
            for ln in lines[1:]}


def test_the_totals_add_up_and_match_the_summary_sentence():
    claims = _claims()
    row = _totals(claims)["Paper results"]
    n = {k: 0 if v == "—" else int(v) for k, v in row.items()}
    assert n["claims"] == sum(v for k, v in n.items() if k != "claims") == 5
    graded = n["claims"] - n["○ not run"]
    assert f"Reproduces {n['✓ counted']} of {graded} paper results" in summary_of(claims)
    assert (n["✓ counted"], n["✓ not counted"], n["✗ not findings"], n["? inconclusive"]) == (
        1, 1, 1, 1)


def test_every_totals_column_is_named_in_the_summary_s_own_words():
    claims = _claims()
    line = summary_of(claims)
    heads = list(dashboard.TOTAL_COLUMNS)
    # the outcome words of the sentence are the columns' words, not synonyms to decode
    for word in ("inconclusive", "not run"):
        assert word in line and any(h.endswith(word) for h in heads), word
    assert not any(re.search(r"\bnothing\b|\bweak\b|\bopen\b", h) for h in heads)
    assert "reproduces N of M" in dashboard.TOTAL_COLUMNS["✓ counted"]


def test_the_dashboard_cell_says_its_outcomes_as_the_summary_does():
    cell = dashboard._kind_cell(_claims())
    assert "1 failed (0 findings)" in cell and "1 not run" in cell and "1 inconclusive" in cell
    assert " fail " not in cell and "skipped" not in cell
