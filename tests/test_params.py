"""Scales and parameter validation: clear errors naming the parameter and the allowed values."""

import numpy as np
import pytest

from layerwise.params import (
    ParameterError,
    check_divisible,
    check_positive,
    check_positive_int,
    resolve,
    resolve_device,
    scale_rank,
)

TABLE = {
    "ci": {"width": 10, "n": 2},
    "default": {"width": 100, "n": 20},
    "paper": {"width": 1000, "n": 200},
}


def test_resolve_takes_the_scale_row_and_applies_overrides():
    assert resolve(TABLE, "default") == {"width": 100, "n": 20}
    assert resolve(TABLE, "ci", width=33, n=None) == {"width": 33, "n": 2}


def test_unknown_scale_and_unknown_override_name_the_allowed_values():
    with pytest.raises(ParameterError, match="scale='huge'.*'ci', 'default', 'paper'"):
        resolve(TABLE, "huge")
    with pytest.raises(
        ParameterError,
        match=r"unknown parameter\(s\) \['depth'\]; allowed: n, "
        r"width",
    ):
        resolve(TABLE, "ci", depth=3)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "3", True, None])
def test_positive_int_rejects(bad):
    with pytest.raises(ParameterError, match="width"):
        check_positive_int("width", bad)


def test_positive_int_accepts_numpy_ints():
    assert check_positive_int("width", np.int64(4)) == 4


def test_other_checks():
    with pytest.raises(ParameterError):
        check_positive("eps", 0.0)
    with pytest.raises(ParameterError):
        check_positive("eps", float("inf"))
    with pytest.raises(ParameterError, match="depth=10 must be divisible by records=3"):
        check_divisible("depth", 10, "records", 3)
    assert scale_rank("ci") < scale_rank("default") < scale_rank("paper")
    assert resolve_device("cpu") == "cpu" and resolve_device("auto") in ("cpu", "cuda")
    with pytest.raises(ParameterError, match="device='tpu'"):
        resolve_device("tpu")


def test_resolve_from_reads_overrides_from_a_namespace():
    from layerwise.params import resolve_from

    table = {s: dict(width=w, n=2) for s, w in (("ci", 10), ("default", 20), ("paper", 30))}
    assert resolve_from(table, "default", {"width": None, "n": 5, "other": 1}) == {
        "width": 20,
        "n": 5,
    }
    bad = {**table, "paper": dict(width=30)}
    with pytest.raises(ParameterError, match="different parameters"):
        resolve_from(bad, "ci", {})
