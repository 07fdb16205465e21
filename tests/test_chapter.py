import pytest


def test_join_words_lists_for_prose():
    from layerwise.chapter import join_words

    assert [join_words(w) for w in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == [
        "",
        "a",
        "a and b",
        "a, b and c",
    ]


def test_small_tensor_chapters_run_torch_on_one_thread(tmp_path):
    import torch

    from layerwise.chapter import ONE_TORCH_THREAD, Chapter
    from layerwise.runner import chapters

    assert {nb.stem for nb in chapters().values()} >= ONE_TORCH_THREAD  # names of real chapters
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        Chapter("07_meanfield_chaos", scale="ci", seed=0, results=tmp_path)
        assert torch.get_num_threads() == 2  # other chapters keep torch's default
        Chapter("06_linear_regions", scale="ci", seed=0, results=tmp_path)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_tables_are_numbered_in_order_and_captioned(tmp_path):
    import pandas as pd

    from layerwise.chapter import Chapter
    from layerwise.params import ParameterError

    ch = Chapter("07_meanfield_chaos", scale="ci", seed=0, results=tmp_path)
    df = pd.DataFrame({"χ₁": [0.62, 1.61]}, index=pd.Index([1.3, 10.0], name="σ<sub>w</sub>"))
    first = ch.table(df, "χ₁ at two weight scales.", precision=2).data
    second = ch.table(df.assign(x=[None, 1.0]), "A second table.").data
    assert "<caption>Table 7.1: χ₁ at two weight scales.</caption>" in first
    assert "Table 7.2: A second table." in second and "–" in second  # missing value shown as –
    assert "0.62" in first and 'class="lw-table dataframe"' in first
    assert ">1.3<" in first and ">10<" in first and "1.300000" not in first  # labels as written
    assert "σ<sub>w</sub>" in first  # HTML in labels is kept (subscripts in headers)
    assert first.startswith('<div class="pst-scrollable-table-container">')
    with pytest.raises(ParameterError, match="DataFrame"):
        ch.table([[1, 2]], "not a frame")
    with pytest.raises(ParameterError, match="caption"):
        ch.table(df, " ")
    ch.table(df, "A third table.", name="tab_third")  # its label glued for the prose
    assert ch.glued["tab_third"] == "Table 7.3"
    with pytest.raises(ParameterError, match="glue name"):
        ch.table(df, "Named twice.", name="tab_third")
    assert len(ch.tables) == 3  # a refused table takes no number
    # the index's name sits in the corner of the header, not in a header row of its own
    head = first.split("<thead>")[1].split("</thead>")[0]
    assert head.count("<tr>") == 1 and 'class="index_name level0" >σ<sub>w</sub></th>' in head
    grouped = pd.DataFrame(
        [[1.0, 0.1]],
        index=pd.Index(["a"], name="quantity"),
        columns=pd.MultiIndex.from_tuples([("x", "mean"), ("x", "± s.e.")]),
    )
    head = ch.table(grouped, "Grouped.").data.split("<thead>")[1].split("</thead>")[0]
    assert head.count("<tr>") == 2 and ">quantity</th>" in head.split("</tr>")[1]


def test_a_reproduction_whose_conditions_control_failed_is_graded_as_a_prediction(tmp_path):
    """SPEC "Findings and their controls": where our conditions differ from the paper's in a way the
    run measured to matter, the claim is the paper's result carried to our conditions (predicts),
    not a failed reproduction; a passed or missing conditions control leaves it a reproduction."""
    from layerwise.chapter import Chapter
    from layerwise.claims import Control

    ch = Chapter("07_meanfield_chaos", scale="ci", seed=0, results=tmp_path)
    common = dict(kind="reproduces", measured=3.0, reference=1.0, tol=0.1, why="w",
                  source="paper, Fig. 1", alternative=(0.0, "zero"))
    ch.claim("carried", "x is 1", note="own note.",
             controls=[Control("reference", True), Control("conditions", False, "input")],
             **common)
    ch.claim("as_dict", "x is 1", controls=[{"kind": "conditions", "passed": False}], **common)
    ch.claim("same", "x is 1", controls=[("conditions", True, "same input")], **common)
    ch.claim("bare", "x is 1", **common)
    kinds = {c.id: c.kind for c in ch.ledger.claims}
    assert kinds == {"carried": "predicts", "as_dict": "predicts", "same": "reproduces",
                     "bare": "reproduces"}
    note = ch.ledger.claims[0].note
    assert note.startswith("Own note. Graded as a prediction: the paper's result carried")


def test_a_reproduction_in_conditions_unlike_the_papers_is_graded_as_a_prediction(tmp_path):
    """A reproduction counts only like for like: a claim whose recorded conditions differ from the
    paper's in some respect, with no conditions control showing the difference harmless, is the
    paper's result carried to our conditions (predicts, naming the respects); the same conditions,
    or a passed conditions control, leave it a reproduction. Tracked records written before the
    rule are read the same way (dashboard), and a graded record is read back unchanged."""
    import json

    from layerwise import dashboard
    from layerwise.chapter import Chapter
    from layerwise.claims import Control, regraded

    ch = Chapter("07_meanfield_chaos", scale="ci", seed=0, results=tmp_path)
    common = dict(kind="reproduces", measured=1.0, reference=1.0, tol=0.1, why="w",
                  source="paper, Fig. 1", alternative=(0.0, "zero"))
    differ = {"data": ("8×8 digits", "MNIST"), "width": (64, 64.0), "steps": (300, "long")}
    ch.claim("unlike", "x is 1", conditions=differ, **common)
    ch.claim("alike", "x is 1", conditions={"width": (128, 128.0)}, **common)
    ch.claim("shown", "x is 1", conditions=differ,
             controls=[Control("conditions", True, "the steps do not move it")], **common)
    ch.claim("a_check", "x is 1", conditions=differ, **{**common, "kind": "checks"})
    got = {c.id: c for c in ch.ledger.claims}
    assert {k: c.kind for k, c in got.items()} == {
        "unlike": "predicts", "alike": "reproduces", "shown": "reproduces", "a_check": "checks"}
    assert got["unlike"].status == "pass"  # the grade moves, not the outcome
    assert got["unlike"].note == ("Graded as a prediction: the paper's result carried to our "
                                  "conditions, which differ from the paper's (data, steps) in "
                                  "ways this run did not show harmless.")
    # a record from before the rule: as the ledger would write it today; graded records unchanged
    old = json.loads(json.dumps(dict(got["unlike"].to_json(), kind="reproduces", note="")))
    assert regraded(old)["kind"] == "predicts" and regraded(old)["note"] == got["unlike"].note
    for c in ch.ledger.records():
        assert regraded(c) == c
    folder = tmp_path / "evidence" / "paper-cpu-x"
    folder.mkdir(parents=True)
    (folder / "META.json").write_text(json.dumps({"scale": "paper", "date": "2026-11-29"}))
    (folder / "07_meanfield_chaos.json").write_text(json.dumps({"claims": [old]}))
    (_, rec), = dashboard.tracked_claims(tmp_path, "07_meanfield_chaos").values()
    assert rec["kind"] == "predicts"
    assert dashboard._ledgers(folder)["07_meanfield_chaos"]["claims"][0]["kind"] == "predicts"
