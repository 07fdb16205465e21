"""The inputs, configurations and controls of a claim graded against a published reference
(layerwise.controls), shared by Chapters 4 and 5."""

from __future__ import annotations

import numpy as np
import pytest

from layerwise import controls
from layerwise.params import ParameterError
from layerwise.stats import Estimate


def test_input_words_and_compared_inputs():
    assert controls.input_words("cifar10:/data/x") == "CIFAR-10"
    assert controls.compared_inputs("patches") == ["patches", "digits", "gaussian"]
    assert controls.compared_inputs("gaussian") == ["gaussian", "patches", "digits"]
    assert controls.compared_inputs("cifar10") == ["cifar10", "patches", "digits", "gaussian"]
    with pytest.raises(ParameterError, match="dataset='imagenet'"):
        controls.input_words("imagenet")


def test_authors_configuration_of_the_conv_reference_and_the_fc_resnets():
    c = controls.authors_configuration("bn_ff_mnist", epsilon=True)
    assert c == {
        "architecture": "BN feedforward, conv 3×3 periodic",
        "width": 512,
        "batch": 64,
        "depth": 200,
        "input": "MNIST",
        "BN ε": 0.001,
    }
    assert controls.authors_configuration("bn_res_fc")["depth"] == "500 units of 2 layers"
    ours = controls.configuration("bn_ff", 3, 512, 64, 200, "patches", epsilon=1e-3)
    pairs = controls.side_by_side(ours, c)
    assert [k for k, (a, b) in pairs.items() if a != b] == ["input"]


def test_reference_control_applies_the_rule_to_the_authors_data():
    assert controls.reference_control((10.0, 0.1), "rel", 10.0, 0.1, "x").passed
    # a margin tighter than the authors' own error cannot pass on their own data
    assert not controls.reference_control((10.0, 0.5), "rel", 10.0, 0.01, "x").passed
    assert not controls.reference_control((3.2, 0.0), "between", (13.0, 18.0), None, "x").passed


def test_reference_control_takes_the_authors_estimate_as_their_pair():
    for pair in [(10.0, 0.1), (10.0, 0.5), (3.2, 0.0)]:
        for rule in [("rel", 10.0, 0.01), ("between", (13.0, 18.0), None)]:
            assert controls.reference_control(Estimate(*pair), *rule, "x") == (
                controls.reference_control(pair, *rule, "x")
            )


def test_estimator_control_catches_a_rule_that_cannot_fail():
    rng = np.random.default_rng(1)
    values = 10 + rng.standard_normal(24)
    good = controls.estimator_control(values, "rel", 10.0, 0.1, 10.0, 13.0, reference_se=0.05)
    assert good.kind == "estimator" and good.passed
    # a margin so wide that a 30 % shift still passes: the control fails
    wide = controls.estimator_control(values, "rel", 10.0, 1.0, 10.0, 13.0, reference_se=0.05)
    assert not wide.passed and "13: pass" in wide.note


def test_conditions_control_passes_only_when_every_difference_is_measured_harmless():
    ours, theirs = {"input": "photo patches", "width": 512}, {"input": "CIFAR-10", "width": 512}
    small = Estimate(0.01, 0.005, 20, 21)
    big = Estimate(1.0, 0.1, 20, 21)
    assert controls.conditions_control(ours, theirs, {"input": small}, 0.1).passed
    assert not controls.conditions_control(ours, theirs, {"input": big}, 0.1).passed
    assert not controls.conditions_control(ours, theirs, {"input": None}, 0.1).passed
    assert controls.conditions_control(theirs, theirs, {}, 0.1).passed


def test_input_difference_needs_two_networks_each():
    e = controls.input_difference([1.0, 2.0, 3.0], [0.0, 1.0])
    assert e.mean == pytest.approx(1.5) and e.dof == 1
    assert controls.input_difference([1.0], [0.0, 1.0]) is None
