"""The prose checks of tests/prose_checks.py can fail: each problem is found in a synthetic
paragraph, and well-written paragraphs pass."""

from prose_checks import page_problems, prose_problems


def test_doubled_phrases_dangling_counts_and_missing_full_stops_are_found():
    assert prose_problems(
        "Chapter 6: Linear regions of ReLU networks — linear regions of ReLU networks."
    ) == ["phrase said twice: 'Linear regions of ReLU networks'"]
    assert prose_problems("Reproduced: 18. Graded only from a larger scale: 4.") == [
        "dangling count: 'Reproduced: 18.'",
        "dangling count: 'Graded only from a larger scale: 4.'",
    ]
    assert prose_problems("The kurtosis stays moderate at every depth") == [
        "no full stop at the end: 'The kurtosis stays moderate at every depth'"
    ]
    assert prose_problems("The claim is graded from the `default` scale on.") == [
        "markdown left raw: '`default`'"
    ]
    assert prose_problems("Our gap to the authors' rank is -53 % at unit 5.") == [
        "hyphen for a minus sign: \"he authors' rank is -53 % at uni\""
    ]


def test_written_paragraphs_pass():
    for text in (
        "The exponent is 0.65 ± 0.02 (Table 5.1), against the authors' 0.66.",
        "At depth 200 the ratio is 1.26: the noise keeps more directions than the signal.",
        "Three inputs move it by a tenth of a decade, as Figure 5.3 shows:",
        'The book calls this "a finding."',
        "The regions grow, then shrink, then grow again; the interval decides (Table 6.3).",
        "Our gap is −53 % on 1-D nets of width-512, B = 64, slope −0.5 (log-log).",
    ):
        assert prose_problems(text) == [], text


def test_a_page_is_read_paragraph_by_paragraph_outside_code_and_tables():
    page = (
        "<html><body><nav><p>menu menu menu menu menu menu menu menu</p></nav><article>"
        "<p>A sentence that reads well and ends.</p>"
        "<p>This sentence never ends and has no stop</p>"
        "<table><tr><td><p>cells are not prose so no stop here</p></td></tr></table>"
        "<div class='cell_input'><p>code code code code code</p></div>"
        "<p>Ok.</p>"
        "<p>A paragraph that ends in a formula <span class=\"math\">\\(x^2.\\)</span></p>"
        "<p>Math <span class=\"math\">\\(x\\)</span> inside<br> a sentence that never stops</p>"
        "<p>A sentence that leads into a displayed equation,</p><div class=\"math\">y</div>"
        "<p>and goes on after it into a list:</p><ul><li><p>an item.</p></li></ul>"
        "<div class=\"lw-card\"><p>Scorecard labels (no stop)</p></div>"
        "</article></body></html>"
    )
    found = page_problems(page)
    assert len(found) == 2 and all(f.startswith("no full stop at the end") for f in found)
    assert "This sentence never ends" in found[0] and "Math inside a sentence" in found[1]
