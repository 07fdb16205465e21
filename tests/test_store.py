"""The results store: caching, invalidation, corruption detection, resumable blocks, drop-in."""

import json
import shutil

import numpy as np
import pytest

from layerwise.params import ParameterError
from layerwise.store import ResultsStore, block_config, config_key


def folder(store, entry):
    """The folder an entry was read from or written to."""
    return store.entry_dir(entry.meta["name"], entry.meta["key"])


def last_was_a_hit(store):
    return store.events[-1][0] == "hit"


def counting(value=1.0):
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.full(3, value), "n": np.array(len(calls))}

    return compute, calls


def test_second_call_is_a_hit_with_identical_arrays(tmp_path):
    store = ResultsStore(tmp_path)
    compute, calls = counting()
    a = store.get_or_compute("sim", {"w": 3}, compute, code_version="1")
    b = store.get_or_compute("sim", {"w": 3}, compute, code_version="1")
    assert len(calls) == 1
    np.testing.assert_array_equal(a.arrays["x"], b.arrays["x"])
    assert [e[0] for e in store.events] == ["miss", "hit"]


def test_metadata_records_config_device_versions_and_checksum(tmp_path):
    store = ResultsStore(tmp_path)
    e = store.get_or_compute(
        "sim", {"w": 3, "seed": 7}, counting()[0], code_version="v9", device="cpu"
    )
    meta = json.loads((folder(store, e) / "meta.json").read_text())
    assert (
        meta["config"] == {"seed": 7, "w": 3}
        and meta["code_version"] == "v9"
        and meta["device"] == "cpu"
    )
    assert meta["wall_time_s"] >= 0 and {"layerwise", "torch", "numpy", "python"} <= set(
        meta["versions"]
    )
    assert len(meta["sha256"]) == 64


def test_key_depends_on_config_and_code_version_not_on_dict_order():
    k = config_key("a", {"x": 1, "y": [1, 2]}, "1")
    assert k == config_key("a", {"y": [1, 2], "x": 1}, "1")
    assert k != config_key("a", {"x": 2, "y": [1, 2]}, "1")
    assert k != config_key("a", {"x": 1, "y": [1, 2]}, "2")
    assert k != config_key("b", {"x": 1, "y": [1, 2]}, "1")
    assert config_key("a", {"x": 1}, "1") != config_key("a", {"x": 1.5}, "1")


def test_changed_config_recomputes(tmp_path):
    store = ResultsStore(tmp_path)
    compute, calls = counting()
    store.get_or_compute("sim", {"w": 3}, compute, code_version="1")
    store.get_or_compute("sim", {"w": 4}, compute, code_version="1")
    store.get_or_compute("sim", {"w": 3}, compute, code_version="2")
    assert len(calls) == 3


@pytest.mark.parametrize(
    "damage",
    ["truncate_arrays", "flip_byte", "drop_meta", "garble_meta", "foreign_meta", "drop_arrays"],
)
def test_corrupt_or_partial_entries_are_detected_and_recomputed(tmp_path, damage):
    store = ResultsStore(tmp_path)
    compute, calls = counting(2.0)
    e = store.get_or_compute("sim", {"w": 3}, compute, code_version="1")
    arr, meta = folder(store, e) / "arrays.npz", folder(store, e) / "meta.json"
    if damage == "truncate_arrays":
        arr.write_bytes(arr.read_bytes()[:40])
    elif damage == "flip_byte":
        b = bytearray(arr.read_bytes())
        b[len(b) // 2] ^= 0xFF
        arr.write_bytes(bytes(b))
    elif damage == "drop_meta":
        meta.unlink()
    elif damage == "garble_meta":
        meta.write_text("{not json")
    elif damage == "foreign_meta":
        m = json.loads(meta.read_text())
        m["key"] = "0" * 64
        meta.write_text(json.dumps(m))
    else:
        arr.unlink()
    with pytest.warns(UserWarning, match="corrupt or partial"):
        again = store.get_or_compute("sim", {"w": 3}, compute, code_version="1")
    assert len(calls) == 2 and not last_was_a_hit(store)
    np.testing.assert_array_equal(again.arrays["x"], np.full(3, 2.0))
    store.get_or_compute("sim", {"w": 3}, compute, code_version="1")
    assert len(calls) == 2 and last_was_a_hit(store)


def test_interrupted_block_run_resumes_losing_only_the_unfinished_block(tmp_path):
    store = ResultsStore(tmp_path)
    done = []

    def block(i, fail_at=None):
        if i == fail_at:
            raise KeyboardInterrupt
        done.append(i)
        return {"rows": np.full((2, 3), float(i))}

    with pytest.raises(KeyboardInterrupt):
        store.get_or_compute_blocks(
            "mc", {"n": 5}, 5, lambda i: block(i, fail_at=3), code_version="1"
        )
    assert done == [0, 1, 2]
    e = store.get_or_compute_blocks("mc", {"n": 5}, 5, block, code_version="1")
    assert done == [0, 1, 2, 3, 4]  # blocks 0-2 came from disk
    np.testing.assert_array_equal(e.arrays["rows"][:, 0], np.repeat(np.arange(5.0), 2))
    store.get_or_compute_blocks("mc", {"n": 5}, 5, block, code_version="1")
    assert done == [0, 1, 2, 3, 4] and last_was_a_hit(store)


def test_a_different_split_never_reads_another_splits_blocks(tmp_path):
    """Block i of a split into 2 is not block i of a split into 4, even with a ``block`` field of
    the caller's own in the key (Chapter.simulate_moments keeps its block size there)."""
    store = ResultsStore(tmp_path)
    total = 8

    def split(n_blocks):
        size = total // n_blocks
        return lambda i: {"rows": np.arange(i * size, (i + 1) * size, dtype=float)}

    for n_blocks in (2, 4, 2):
        e = store.get_or_compute_blocks(
            "mc", {"n": total, "block": 99}, n_blocks, split(n_blocks), code_version="1"
        )
        np.testing.assert_array_equal(e.arrays["rows"], np.arange(total, dtype=float))
    assert store.get_or_compute_blocks("mc", {"n": total}, 4, split(4), code_version="1").arrays[
        "rows"
    ].shape == (total,)
    with pytest.raises(ParameterError, match="block_index"):
        block_config({"block_index": 1}, 2, 0)


def test_shared_block_arrays_are_kept_once_and_must_agree(tmp_path):
    store = ResultsStore(tmp_path)
    block = lambda i: {"rows": np.full((2, 3), float(i)), "depth": np.arange(3)}  # noqa: E731
    e = store.get_or_compute_blocks("mc", {"n": 3}, 3, block, code_version="1", shared=("depth",))
    assert e.arrays["rows"].shape == (6, 3)
    np.testing.assert_array_equal(e.arrays["depth"], np.arange(3))
    bad = lambda i: {"rows": np.zeros((1, 3)), "depth": np.arange(3) + i}  # noqa: E731
    with pytest.raises(ValueError, match="differs between blocks"):
        store.get_or_compute_blocks("mc2", {"n": 3}, 3, bad, code_version="1", shared=("depth",))
    with pytest.raises(ParameterError, match="shared"):
        store.get_or_compute_blocks("mc3", {"n": 3}, 3, block, code_version="1", shared=("nope",))


def test_entries_computed_elsewhere_can_be_dropped_in(tmp_path):
    gpu = ResultsStore(tmp_path / "gpu")
    e = gpu.get_or_compute("sim", {"w": 3}, counting(5.0)[0], code_version="1", device="cuda")
    local = ResultsStore(tmp_path / "local")
    shutil.copytree(folder(gpu, e), local.root / "sim" / e.meta["key"])
    compute, calls = counting()
    hit = local.get_or_compute("sim", {"w": 3}, compute, code_version="1", device="cpu")
    assert last_was_a_hit(local) and not calls and hit.meta["device"] == "cuda"


def test_bad_names_and_configs_are_refused(tmp_path):
    store = ResultsStore(tmp_path)
    with pytest.raises(ParameterError):
        store.get_or_compute("../x", {}, counting()[0], code_version="1")
    with pytest.raises(TypeError):
        store.get_or_compute("sim", {"f": object()}, counting()[0], code_version="1")
    with pytest.raises(ParameterError):
        store.get_or_compute_blocks("sim", {}, 0, lambda i: {}, code_version="1")


def test_store_cli_imports_only_verified_entries_and_verify_flags_corruption(
    tmp_path, monkeypatch, capsys
):
    from layerwise import store_cli

    elsewhere = ResultsStore(tmp_path / "gpu" / "store")
    good = elsewhere.get_or_compute(
        "sim", {"w": 1}, counting(1.0)[0], code_version="1", device="cuda"
    )
    bad = elsewhere.get_or_compute(
        "sim", {"w": 2}, counting(2.0)[0], code_version="1", device="cuda"
    )
    (folder(elsewhere, bad) / "arrays.npz").write_bytes(b"truncated")
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "local"))
    assert store_cli.main(["import", str(elsewhere.root)]) == 1  # one corrupt entry reported
    local = ResultsStore(tmp_path / "local" / "store")
    assert local.load("sim", {"w": 1}, "1") is not None and local.load("sim", {"w": 2}, "1") is None
    assert store_cli.main(["verify"]) == 0
    arr = tmp_path / "local" / "store" / "sim" / good.meta["key"] / "arrays.npz"
    arr.write_bytes(arr.read_bytes()[:-10])
    assert store_cli.main(["verify"]) == 1
    assert "corrupt" in capsys.readouterr().err
    assert store_cli.main(["import", str(tmp_path / "nope")]) == 2
