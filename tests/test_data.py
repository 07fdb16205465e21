"""Data sets: determinism of built-in data, and the CIFAR-10 / MNIST loaders on files written
here."""

import gzip
import pickle
import struct

import numpy as np
import pytest

from layerwise import data
from layerwise.params import ParameterError


def test_patches_are_deterministic_in_range_and_use_every_photograph():
    a, b = data.natural_patches(12, seed=5), data.natural_patches(12, seed=5)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (12, 3, 32, 32) and a.dtype == np.float32 and a.min() >= 0 and a.max() <= 1
    assert not np.array_equal(a, data.natural_patches(12, seed=6))
    photos = data.photographs()
    assert len(photos) >= 2  # sklearn ships two; matplotlib adds grace_hopper.jpg
    # patch i comes from photograph i mod P: check one crop of each photograph is really inside it
    for i, (_, im) in enumerate(photos):
        crop = (a[i].transpose(1, 2, 0) * 255).round().astype(np.uint8)
        windows = np.lib.stride_tricks.sliding_window_view(im, (32, 32, 3))[..., 0, :, :, :]
        assert (windows == crop).all(axis=(-1, -2, -3)).any()


@pytest.mark.parametrize("n, seed, size", [(1, 0, 32), (7, 3, 8), (500, 11, 32), (64, 2, 17)])
def test_patches_equal_the_crop_by_crop_definition(n: int, seed: int, size: int) -> None:
    """The vectorised crops are the ones of the documented draw order, bit for bit: for i = 0, 1, …
    row then column of crop i by ``rng.integers`` from photograph i mod P (so published results keep
    their inputs)."""
    photos = data.photographs()
    rng = np.random.default_rng(seed)
    want = np.empty((n, 3, size, size), np.float32)
    for i in range(n):
        im = photos[i % len(photos)][1]
        r, c = rng.integers(0, im.shape[0] - size + 1), rng.integers(0, im.shape[1] - size + 1)
        want[i] = im[r : r + size, c : c + size].transpose(2, 0, 1) / 255.0
    np.testing.assert_array_equal(data.natural_patches(n, seed=seed, size=size), want)
    with pytest.raises(ParameterError, match="size"):
        data.natural_patches(2, size=10_000)


def test_digits():
    x, y = data.digits()
    assert x.shape == (1797, 1, 8, 8) and y.shape == (1797,) and x.max() == 1.0
    xs, ys = data.digits(100, seed=1)
    assert xs.shape == (100, 1, 8, 8) and len(set(ys.tolist())) == 10
    with pytest.raises(ParameterError):
        data.digits(5000)


def test_standardize_per_channel():
    x = data.natural_patches(16)
    z = data.standardize_per_channel(x)
    np.testing.assert_allclose(z.mean(axis=(0, 2, 3)), 0, atol=1e-5)
    np.testing.assert_allclose(z.std(axis=(0, 2, 3)), 1, atol=1e-5)
    with pytest.raises(ParameterError):
        data.standardize_per_channel(np.ones((4, 3, 2, 2), np.float32))


def write_cifar(d, n=7):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
    y = rng.integers(0, 10, n).tolist()
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "data_batch_1", "wb") as f:
        pickle.dump({b"data": x, b"labels": y, b"batch_label": b"x"}, f)
    return x, y


def test_cifar10_loader_reads_python_batches(tmp_path):
    x, y = write_cifar(tmp_path / "cifar-10-batches-py")
    imgs, labels = data.load_cifar10(tmp_path)
    assert imgs.shape == (7, 3, 32, 32)
    np.testing.assert_array_equal(labels, y)
    # channel-major layout: the first 1024 bytes are the red plane, row by row
    np.testing.assert_allclose(imgs[2, 0, 1, 5], x[2, 32 + 5] / 255.0)
    np.testing.assert_allclose(imgs[2, 2, 31, 31], x[2, 3071] / 255.0)
    assert data.load_images(f"cifar10:{tmp_path}", 3).shape == (3, 3, 32, 32)


def test_cifar10_errors_name_the_path_and_format(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist.*data_batch"):
        data.load_cifar10(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no CIFAR-10 train batch"):
        data.load_cifar10(tmp_path)
    (tmp_path / "data_batch_1").write_bytes(b"garbage")
    with pytest.raises(data.DataFormatError, match="data_batch_1 is not a CIFAR-10 batch"):
        data.load_cifar10(tmp_path)
    with open(tmp_path / "data_batch_1", "wb") as f:
        pickle.dump({b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]}, f)
    with pytest.raises(data.DataFormatError, match="shape"):
        data.load_cifar10(tmp_path)


def write_idx(path, arr, magic, gz=False):
    header = struct.pack(">I", magic) + b"".join(struct.pack(">I", s) for s in arr.shape)
    (gzip.open if gz else open)(path, "wb").write(header + arr.astype(np.uint8).tobytes())


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_loader_reads_idx(tmp_path, gz):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (5, 28, 28))
    y = rng.integers(0, 10, 5)
    sfx = ".gz" if gz else ""
    write_idx(tmp_path / f"train-images-idx3-ubyte{sfx}", x, 2051, gz)
    write_idx(tmp_path / f"train-labels-idx1-ubyte{sfx}", y, 2049, gz)
    imgs, labels = data.load_mnist(tmp_path)
    assert imgs.shape == (5, 1, 28, 28)
    np.testing.assert_allclose(imgs[:, 0] * 255, x)
    np.testing.assert_array_equal(labels, y)


def test_mnist_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no MNIST train images"):
        data.load_mnist(tmp_path)
    write_idx(tmp_path / "train-images-idx3-ubyte", np.zeros((2, 28, 28)), 2049)  # wrong magic
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(2), 2049)
    with pytest.raises(data.DataFormatError, match="magic number 2051"):
        data.load_mnist(tmp_path)
    p = tmp_path / "train-images-idx3-ubyte"
    p.write_bytes(struct.pack(">IIII", 2051, 2, 28, 28) + b"\0" * 100)  # truncated body
    with pytest.raises(data.DataFormatError, match="holds 100 bytes"):
        data.load_mnist(tmp_path)


def test_dataset_specs():
    assert data.load_images("patches", 4).shape == (4, 3, 32, 32)
    assert data.load_images("digits", 4).shape == (4, 1, 8, 8)
    assert data.load_images("gaussian", 4).shape == (4, 3, 32, 32)
    for bad in ("imagenet", "cifar10:", "patches:x", "mnist5k:x", None):
        with pytest.raises(ParameterError, match="dataset="):
            data.load_images(bad, 4)
