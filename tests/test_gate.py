"""Bad input is stopped before any work (SPEC §4): chapter overrides are checked against
the notebook's parameters cell and scale presets before papermill starts, and the moments CLI checks
its data source and output before it simulates or draws a progress bar."""

from __future__ import annotations

import gzip
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from layerwise import book, runner
from layerwise.params import SCALES, ParameterError, check_like, spec_of

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = runner.chapters(ROOT)


@pytest.fixture
def no_papermill(monkeypatch, tmp_path):
    """Fail the test if a chapter would start: papermill's execute, the runner's child process and
    ``run_chapter`` as the command line calls it are all replaced by functions that raise."""
    import papermill

    def started(*args, **kwargs):
        raise AssertionError(f"work started: {args!r} {kwargs!r}")

    monkeypatch.setattr(papermill, "execute_notebook", started)
    monkeypatch.setattr(runner.subprocess, "Popen", started)
    monkeypatch.setattr(book, "run_chapter", started)
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    return tmp_path


# -------------------------------------------------------------------------------------------
# The type check itself
# -------------------------------------------------------------------------------------------
PRESETS = {"ci": 400, "default": 1000, "paper": 1000}


@pytest.mark.parametrize("bad", ["abc", 1.5, True, -3, 0, "", [400], "400,n_nets=4", float("nan")])
def test_an_int_parameter_rejects_what_is_not_a_positive_int(bad):
    with pytest.raises(
        ParameterError,
        match=r"width=.* is not allowed; expected a positive "
        r"integer like the scale "
        r"presets \(ci: 400, default: 1000, paper: 1000\)",
    ):
        check_like("width", bad, PRESETS)


def test_good_values_pass_and_are_normalised():
    assert check_like("width", 7, PRESETS) == 7
    assert check_like("width", None, PRESETS) is None  # None: the scale's value
    assert check_like("lr", 1, {"ci": 1e-2}) == 1.0 and isinstance(
        check_like("lr", 1, {"ci": 1e-2}), float
    )
    depths = {"ci": (4, 8), "paper": (8, 11, 16)}
    assert check_like("depths", [4, 5], depths) == (4, 5) and check_like(
        "depths", (3,), depths
    ) == (3,)
    assert check_like("fractions", [0, 0.5], {"ci": [0.0, 1.0]}) == [0.0, 0.5]
    assert check_like("prep", ["raw"], {"ci": ["raw", "centred"]}) == ["raw"]
    assert check_like("flag", False, {"default": True}, preset=False) is False
    assert check_like("name", "x", {"default": "ci"}, preset=False) == "x"


@pytest.mark.parametrize(
    "examples, bad, expected",
    [
        ({"ci": (4, 8)}, 4, "a non-empty list of positive integers"),
        ({"ci": (4, 8)}, (4, 1.5), "a non-empty list of positive integers"),
        ({"ci": (4, 8)}, (), "a non-empty list of positive integers"),
        ({"ci": (4, 8)}, "4,x", "a non-empty list of positive integers"),
        ({"ci": 1e-2}, -0.1, "a positive number"),
        ({"ci": 1e-2}, "x", "a positive number"),
        ({"ci": [0.0, 1.0]}, [-0.5], "a non-empty list of non-negative numbers"),
        ({"ci": ["raw"]}, "[raw]", "a list must be a Python literal, with its strings quoted"),
        ({"default": True}, 1, "True or False like its default True"),
        ({"default": "ci"}, 1, "a string like its default 'ci'"),
    ],
)
def test_other_kinds_reject_with_what_they_expect(examples, bad, expected):
    with pytest.raises(
        ParameterError, match=re.escape(f"p={bad!r} is not allowed; ") + ".*" + re.escape(expected)
    ):
        check_like("p", bad, examples, preset="default" not in examples)


def test_unknown_kinds_are_not_checked():
    assert spec_of([1, "a"]) == (None, "positive ")
    assert check_like("mixed", object, {"ci": 1, "paper": "a"}) is object


# -------------------------------------------------------------------------------------------
# Every chapter's parameters cell works with the gate
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(CHAPTERS))
def test_every_chapter_parameter_has_a_checked_type_and_its_presets_pass(key, no_papermill):
    nb = CHAPTERS[key]
    assert runner.check_overrides(nb, {}) == {}
    presets = runner.notebook_presets(nb)
    assert sorted(presets) == sorted(SCALES), nb.stem
    names = [n for n in runner.notebook_parameters(nb) if n not in runner.RESERVED]
    for name in names:
        assert spec_of(row[name] for row in presets.values())[0] is not None, (nb.stem, name)
    for scale in SCALES:  # every scale's own values are valid overrides
        got = runner.check_overrides(nb, {n: presets[scale][n] for n in names})
        assert got == {n: type(got[n])(presets[scale][n]) for n in names}, (nb.stem, scale)


@pytest.mark.parametrize(
    "key, overrides",
    [
        ("07", {"width": 500, "train_depths": (4, 8), "n_nets": None}),
        ("07", {"train_depths": [4]}),
        ("03", {"depth": 100, "widths": [16, 32]}),
        ("02", {"tau": 3, "drift_layers": [50, 100]}),
        ("06", {"preprocessings": ["raw"], "lrs": [1e-3], "label_noise": [0, 1]}),
        ("08", {"lr": 1, "alphas": [0.5, 1, 2], "rand_fractions": [0, 1]}),
    ],
)
def test_valid_overrides_pass_the_gate(key, overrides, no_papermill):
    got = runner.check_overrides(CHAPTERS[key], overrides)
    assert set(got) == set(overrides)


@pytest.mark.parametrize(
    "key, item, message",
    [
        (
            "07",
            "width=abc",
            "chapter 07_meanfield_chaos: width='abc' is not allowed; expected a positive integer",
        ),
        (
            "07",
            "width=1.5",
            "width=1.5 is not allowed; expected a positive integer like the scale presets (ci: 400",
        ),
        (
            "07",
            "width=-5",
            "chapter 07_meanfield_chaos: width=-5 is not allowed; expected a positive integer",
        ),
        (
            "07",
            "train_depths=abc",
            "train_depths='abc' is not allowed; expected a non-empty list of positive integers",
        ),
        (
            "07",
            "width=400,n_nets=4",
            "give each override as its own NAME=VALUE, separated by spaces",
        ),
        (
            "03",
            "depth=-3",
            "chapter 03_vanilla_pathologies: depth=-3 is not allowed; expected a positive integer",
        ),
        (
            "08",
            "lr=-0.1",
            "chapter 08_information_geometry: lr=-0.1 is not allowed; expected a positive number",
        ),
        (
            "06",
            "label_noise=[0,-1]",
            "label_noise=[0, -1] is not allowed; expected a non-empty list of non-negative",
        ),
        (
            "07",
            "scale=paper",
            "chapter 07_meanfield_chaos: scale is not a chapter parameter; set it with --scale",
        ),
        ("07", "seed=3", "seed is not a chapter parameter; set it with --seed"),
        ("07", "widht=3", "chapter 07_meanfield_chaos: unknown parameter(s) ['widht']"),
    ],
)
def test_bad_overrides_stop_before_papermill(key, item, message, no_papermill, capsys):
    rc = book.main(["run", "--scale", "ci", "--chapters", key, "-p", item])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err, err
    with pytest.raises(ParameterError, match=item.split("=")[0]):  # run_chapter has the same gate
        runner.run_chapter(
            CHAPTERS[key],
            scale="ci",
            overrides=runner.parse_overrides([item]),
            root=ROOT,
            executed_dir=no_papermill / "executed",
        )
    assert not (no_papermill / "executed").exists() or not any(
        (no_papermill / "executed").iterdir()
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--seed", "x"],
            "argument --seed: seed='x' is not allowed; expected a non-negative integer",
        ),
        (["--seed", "-2"], "seed='-2' is not allowed"),
        (
            ["--timeout", "-5"],
            "argument --timeout: timeout='-5' is not allowed; expected a positive "
            "number of seconds",
        ),
        (["--device", "tpu"], "device='tpu' is not allowed; choose one of: 'auto', 'cpu', 'cuda'"),
        (
            ["--scale", "huge"],
            "scale='huge' is not allowed; choose one of: 'ci', 'default', 'paper'",
        ),
        (
            ["--chapters", "99"],
            "chapter='99' is not allowed; choose one of: 01 (01_layer_decoupling)",
        ),
        (
            ["-p", "width=1", "-p", "width=2"],
            "override 'width' is given twice (width=1 and width=2)",
        ),
        (["-p", "width"], "override 'width' is malformed; expected NAME=VALUE"),
    ],
)
def test_bad_command_line_options_stop_before_papermill(args, message, no_papermill, capsys):
    argv = ["run", "--scale", "ci", "--chapters", "07", *args]
    try:
        rc = book.main(argv)
    except SystemExit as exc:  # argparse's own errors
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err, err


def test_cuda_without_a_gpu_stops_before_papermill(no_papermill, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert book.main(["run", "--scale", "ci", "--chapters", "07", "--device", "cuda"]) == 2
    assert "device='cuda' was requested but no CUDA device is available" in capsys.readouterr().err


def test_the_command_line_exits_2_without_a_traceback(tmp_path):
    """``make chapter CH=07 P=width=abc`` as a process (``--timeout 5``: were the gate open,
    the chapter would be stopped at once and the test would fail on its exit status)."""
    env = {**os.environ, "LAYERWISE_RESULTS": str(tmp_path / "results")}
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "layerwise",
            "book",
            "run",
            "--scale",
            "ci",
            "--chapters",
            "07",
            "--timeout",
            "5",
            "-p",
            "width=abc",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert (
        "chapter 07_meanfield_chaos: width='abc' is not allowed; expected a positive integer"
        in p.stderr
    )


# -------------------------------------------------------------------------------------------
# The moments CLI
# -------------------------------------------------------------------------------------------
@pytest.fixture
def moments(monkeypatch, tmp_path):
    """``python -m layerwise moments`` in-process with ``simulate`` replaced by a function that
    raises."""
    from layerwise import moments_cli

    def started(*args, **kwargs):
        raise AssertionError("simulate was called")

    monkeypatch.setattr(moments_cli, "simulate", started)
    base = ["--arch", "bn_ff", "--kernel-size", "1", "--width", "8", "--batch", "4", "--depth", "2"]
    return lambda *args: moments_cli.main([*base, *args])


def _idx(path: Path, magic: int, gz: bool = False) -> None:
    (gzip.open if gz else open)(path, "wb").write(struct.pack(">II", magic, 0))


def test_moments_rejects_bad_data_sources_before_any_work(moments, tmp_path, capsys):
    out = tmp_path / "m.npz"
    missing = tmp_path / "nowhere"
    assert moments("--dataset", f"cifar10:{missing}", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"the CIFAR-10 folder {missing} does not exist" in err and "data_batch_1..5" in err
    assert "moments bn_ff" not in err and "Traceback" not in err  # no progress bar
    (tmp_path / "empty").mkdir()
    assert moments("--dataset", f"cifar10:{tmp_path / 'empty'}", "--out", str(out)) == 2
    assert "no CIFAR-10 training batch (data_batch_1..5) in" in capsys.readouterr().err
    assert moments("--dataset", f"mnist:{missing}", "--out", str(out)) == 2
    assert f"the MNIST folder {missing} does not exist" in capsys.readouterr().err
    assert moments("--dataset", f"mnist:{tmp_path / 'empty'}", "--out", str(out)) == 2
    assert "no MNIST train images file in" in capsys.readouterr().err
    _idx(tmp_path / "empty" / "train-images-idx3-ubyte", 2049)
    _idx(tmp_path / "empty" / "train-labels-idx1-ubyte", 2049)
    assert moments("--dataset", f"mnist:{tmp_path / 'empty'}", "--out", str(out)) == 2
    assert "does not start with IDX magic number 2051" in capsys.readouterr().err
    for bad in ("cifar10:", "imagenet", "patches:x"):
        assert moments("--dataset", bad, "--out", str(out)) == 2
        assert (
            f"dataset={bad!r} is not allowed; choose one of: patches, digits"
            in capsys.readouterr().err
        )
    assert moments("--dataset", "digits", "--batch", "5000", "--out", str(out)) == 2
    assert "dataset='digits' holds 1797 images; 5000 per network" in capsys.readouterr().err
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "data_batch_1").write_text("junk")  # there, but not a CIFAR-10 batch
    assert moments("--dataset", f"cifar10:{tmp_path / 'junk'}", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"dataset='cifar10:{tmp_path / 'junk'}': " in err and "is not a CIFAR-10 batch" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_moments_rejects_other_bad_arguments_before_any_work(moments, tmp_path, capsys):
    out = tmp_path / "m.npz"
    (tmp_path / "file").write_text("")
    for args, message in [
        (["--width", "-3"], "width=-3 must be a positive integer"),
        (["--seed", "-1"], "seed=-1 must be a non-negative integer"),
        (["--device", "tpu"], "device='tpu' is not allowed"),
        (["--block", "0"], "block=0 must be a positive integer"),
        (["--epsilon", "-1"], "epsilon=-1.0 must be a positive"),
    ]:
        assert moments(*args, "--out", str(out)) == 2
        assert message in capsys.readouterr().err
    assert moments("--out", str(tmp_path / "file" / "m.npz")) == 2
    assert f"out='{tmp_path / 'file' / 'm.npz'}' cannot be written" in capsys.readouterr().err
    assert moments("--seed", "x", "--out", str(out)) == 2
    assert "argument --seed: invalid int value: 'x'" in capsys.readouterr().err
    assert not out.exists()


def test_good_local_data_folders_pass_the_check(tmp_path):
    from layerwise.data import check_source

    (tmp_path / "cifar-10-batches-py").mkdir()
    (tmp_path / "cifar-10-batches-py" / "data_batch_1").write_bytes(b"")
    assert check_source(f"cifar10:{tmp_path}") == f"cifar10:{tmp_path}"
    _idx(tmp_path / "train-images-idx3-ubyte.gz", 2051, gz=True)
    _idx(tmp_path / "train-labels-idx1-ubyte.gz", 2049, gz=True)
    assert check_source(f"mnist:{tmp_path}") == f"mnist:{tmp_path}"
    assert check_source("digits", 64) == "digits" and check_source("patches", 10**6) == "patches"
