"""Data sets built from installed packages, and loaders for local CIFAR-10 / MNIST copies.

SPEC §1 "Data": with no internet, the book's images come from what installed packages ship:

* natural-image patches: 32×32×3 crops cut deterministically from the colour photographs that
  ship with scikit-learn (``load_sample_images``: ``china.jpg``, ``flower.jpg``) and matplotlib
  (``grace_hopper.jpg``), standing in for CIFAR-10;
* handwritten digits: ``sklearn.datasets.load_digits`` (8×8), standing in for MNIST;
* i.i.d. Gaussian "images", the data-free baseline.

Real CIFAR-10 (python pickle batches) and MNIST (IDX) copies are read from a local folder.
All images are returned as float32 arrays of shape ``(n, channels, height, width)``.
"""

from __future__ import annotations

import gzip
import pickle
from functools import lru_cache
from pathlib import Path

import numpy as np

from .params import ParameterError, check_positive_int


class DataFormatError(ValueError):
    """A local data file exists but is not in the expected format."""


DATASETS = ("patches", "digits", "gaussian", "cifar10:DIR", "mnist:DIR")


# --------------------------------------------------------------------------------------------
# Built-in data
# --------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def photographs() -> tuple[tuple[str, np.ndarray], ...]:
    """Every colour photograph the installed packages ship, as (name, uint8 H×W×3) pairs."""
    from sklearn.datasets import load_sample_images

    imgs = load_sample_images()
    out = [(Path(f).name, np.asarray(im)) for f, im in zip(imgs.filenames, imgs.images)]
    try:
        import matplotlib.cbook as cbook
        import matplotlib.image as mpimg

        with cbook.get_sample_data("grace_hopper.jpg") as f:
            im = np.asarray(mpimg.imread(f, format="jpg"))
        if im.ndim == 3 and im.shape[2] >= 3:
            if im.dtype != np.uint8:
                im = (np.clip(im, 0, 1) * 255).astype(np.uint8)
            out.append(("grace_hopper.jpg", im[..., :3]))
    except (OSError, ValueError, ImportError):  # pragma: no cover - depends on matplotlib build
        pass
    return tuple(out)


def natural_patches(n: int, seed: int = 0, size: int = 32) -> np.ndarray:
    """``n`` crops of ``size``×``size``×3 from the shipped photographs, values in [0, 1].

    Crops cycle through the photographs (so every photograph contributes about equally) at
    positions drawn from ``numpy.random.default_rng(seed)``: deterministic for a given seed.
    """
    n = check_positive_int("n", n)
    size = check_positive_int("size", size)
    photos = photographs()
    hw = np.array([im.shape[:2] for _, im in photos])
    if (hw < size).any():
        raise ParameterError(
            f"size={size} exceeds the photographs' size {'/'.join(f'{h}×{w}' for h, w in hw)}"
        )
    which = np.arange(n) % len(photos)
    # crop i's row and column: the draws rng.integers(0, h − size + 1), rng.integers(0, w − size +
    # 1) for i = 0, 1, … in turn — one call with the bounds as an array draws the same stream
    rc = np.random.default_rng(seed).integers(0, (hw[which] - size + 1).reshape(-1)).reshape(n, 2)
    out = np.empty((n, 3, size, size), dtype=np.float32)
    for p, (_, im) in enumerate(photos):
        sel = np.flatnonzero(which == p)
        windows = np.lib.stride_tricks.sliding_window_view(
            im, (size, size), axis=(0, 1)
        )  # (r, c, 3, size, size)
        out[sel] = windows[rc[sel, 0], rc[sel, 1]] / 255.0
    return out


def digits(n: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Handwritten digits (8×8, values in [0, 1]) and labels; ``n`` drawn without replacement.

    With ``n=None`` all 1 797 digits are returned in their original order.
    """
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    if n is None:
        return x, y
    n = check_positive_int("n", n)
    if n > len(x):
        raise ParameterError(f"n={n} exceeds the {len(x)} digits available")
    idx = np.random.default_rng(seed).choice(len(x), size=n, replace=False)
    return x[idx], y[idx]


def gaussian_images(n: int, shape: tuple[int, int, int] = (3, 32, 32), seed: int = 0) -> np.ndarray:
    """I.i.d. N(0, 1) "images" of the given (channels, height, width) shape."""
    n = check_positive_int("n", n)
    return np.random.default_rng(seed).standard_normal((n, *shape)).astype(np.float32)


def standardize_per_channel(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Zero mean, unit variance per channel over batch and spatial positions (Labatie, App. A)."""
    axes = (0,) + tuple(range(2, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    s = x.std(axis=axes, keepdims=True)
    if np.any(s + eps == 0):
        raise ParameterError("cannot standardise: a channel is constant over the batch")
    return ((x - m) / (s + eps)).astype(x.dtype)


# --------------------------------------------------------------------------------------------
# Local copies of the real data sets
# --------------------------------------------------------------------------------------------
CIFAR_FORMAT = (
    "the CIFAR-10 'python version': pickled dicts with b'data' (N×3072 uint8, channel-major) "
    "and b'labels', in files data_batch_1..5 and test_batch"
)
MNIST_FORMAT = (
    "MNIST IDX files train-images-idx3-ubyte / train-labels-idx1-ubyte (or t10k-…), "
    "optionally gzipped (.gz)"
)


def load_cifar10(directory: str | Path, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Read CIFAR-10 python batches from ``directory``: images (N, 3, 32, 32) in [0, 1], labels."""
    if split not in ("train", "test"):
        raise ParameterError(f"split={split!r} is not allowed; choose 'train' or 'test'")
    d = Path(directory)
    if (d / "cifar-10-batches-py").is_dir():
        d = d / "cifar-10-batches-py"
    if not d.is_dir():
        raise FileNotFoundError(f"CIFAR-10 folder {d} does not exist; expected {CIFAR_FORMAT}")
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    files = [d / f for f in names if (d / f).exists()]
    if not files:
        raise FileNotFoundError(f"no CIFAR-10 {split} batch in {d}; expected {CIFAR_FORMAT}")
    xs, ys = [], []
    for f in files:
        try:
            with open(f, "rb") as fh:
                batch = pickle.load(fh, encoding="bytes")
            data = np.asarray(batch[b"data"], dtype=np.uint8)
            labels = np.asarray(batch[b"labels"], dtype=np.int64)
        except (
            pickle.UnpicklingError,
            EOFError,
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
        ) as exc:
            raise DataFormatError(
                f"{f} is not a CIFAR-10 batch ({exc}); expected {CIFAR_FORMAT}"
            ) from None
        if data.ndim != 2 or data.shape[1] != 3072 or len(labels) != len(data):
            raise DataFormatError(
                f"{f} has data of shape {data.shape} and {len(labels)} labels; expected "
                f"{CIFAR_FORMAT}"
            )
        xs.append(data.reshape(-1, 3, 32, 32).astype(np.float32) / 255.0)
        ys.append(labels)
    return np.concatenate(xs), np.concatenate(ys)


def _read_idx(path: Path, magic: int) -> np.ndarray:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise DataFormatError(f"{path} cannot be read ({exc}); expected {MNIST_FORMAT}") from None
    if len(raw) < 8 or int.from_bytes(raw[:4], "big") != magic:
        raise DataFormatError(
            f"{path} does not start with IDX magic number {magic}; expected {MNIST_FORMAT}"
        )
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    body = raw[4 + 4 * ndim :]
    if len(body) != int(np.prod(dims)):
        raise DataFormatError(
            f"{path} holds {len(body)} bytes of data for dimensions {dims}; expected {MNIST_FORMAT}"
        )
    return np.frombuffer(body, dtype=np.uint8).reshape(dims)


def _mnist_file(d: Path, split: str, kind: str) -> Path:
    """The MNIST ``kind`` (``images`` or ``labels``) file of ``split`` in folder ``d``."""
    prefix = "train" if split == "train" else "t10k"
    for suffix in ("", ".gz"):
        for sep in ("-", "."):
            p = d / f"{prefix}-{kind}{sep}idx{'3' if kind == 'images' else '1'}-ubyte{suffix}"
            if p.exists():
                return p
    raise FileNotFoundError(f"no MNIST {split} {kind} file in {d}; expected {MNIST_FORMAT}")


def load_mnist(directory: str | Path, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Read MNIST IDX files from ``directory``: images (N, 1, 28, 28) in [0, 1], labels."""
    if split not in ("train", "test"):
        raise ParameterError(f"split={split!r} is not allowed; choose 'train' or 'test'")
    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"MNIST folder {d} does not exist; expected {MNIST_FORMAT}")
    x = _read_idx(_mnist_file(d, split, "images"), 2051)
    y = _read_idx(_mnist_file(d, split, "labels"), 2049)
    if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
        raise DataFormatError(f"MNIST images {x.shape} and labels {y.shape} in {d} do not match")
    return (x[:, None].astype(np.float32) / 255.0), y.astype(np.int64)


def load_images(dataset: str, n: int, seed: int = 0) -> np.ndarray:
    """``n`` images from a data-set spec: ``patches``, ``digits``, ``gaussian`` (32×32×3),
    ``cifar10:DIR`` or ``mnist:DIR`` (``n`` drawn without replacement with ``seed``)."""
    n = check_positive_int("n", n)
    kind, _, arg = dataset.partition(":")
    if kind == "patches" and not arg:
        return natural_patches(n, seed)
    if kind == "digits" and not arg:
        return digits(n, seed)[0]
    if kind == "gaussian" and not arg:
        return gaussian_images(n, seed=seed)
    if kind in ("cifar10", "mnist") and arg:
        x = (load_cifar10 if kind == "cifar10" else load_mnist)(arg)[0]
        if n > len(x):
            raise ParameterError(f"n={n} exceeds the {len(x)} images in {arg}")
        return x[np.random.default_rng(seed).choice(len(x), size=n, replace=False)]
    raise ParameterError(
        f"dataset={dataset!r} is not allowed; choose one of: {', '.join(DATASETS)}"
    )


def check_source(dataset: str, n: int | None = None) -> str:
    """Validate a data-set spec before any work and return it: a built-in name (``n`` images must
    fit the 1 797 digits), or ``cifar10:DIR`` / ``mnist:DIR`` naming an existing folder that holds
    the expected training files (CIFAR-10 batches; MNIST IDX files with their magic numbers).  The
    files are read later; a :class:`ParameterError` names the path and the expected format."""
    kind, sep, arg = dataset.partition(":") if isinstance(dataset, str) else ("", "", "")
    if kind in ("patches", "gaussian") and not sep:
        return dataset
    if kind == "digits" and not sep:
        if n is not None and n > 1797:
            raise ParameterError(
                f"dataset='digits' holds 1797 images; {n} per network were asked for"
            )
        return dataset
    if kind not in ("cifar10", "mnist") or not arg:
        raise ParameterError(
            f"dataset={dataset!r} is not allowed; choose one of: {', '.join(DATASETS)}"
        )
    d = Path(arg).expanduser()
    if kind == "cifar10":
        d = d / "cifar-10-batches-py" if (d / "cifar-10-batches-py").is_dir() else d
        if not d.is_dir():
            raise ParameterError(
                f"dataset={dataset!r}: the CIFAR-10 folder {d} does not exist; "
                f"expected a folder with {CIFAR_FORMAT}"
            )
        if not any((d / f"data_batch_{i}").is_file() for i in range(1, 6)):
            raise ParameterError(
                f"dataset={dataset!r}: no CIFAR-10 training batch "
                f"(data_batch_1..5) in {d}; "
                f"expected {CIFAR_FORMAT}"
            )
        return dataset
    if not d.is_dir():
        raise ParameterError(
            f"dataset={dataset!r}: the MNIST folder {d} does not exist; "
            f"expected a folder with {MNIST_FORMAT}"
        )
    for what, magic in (("images", 2051), ("labels", 2049)):
        try:
            f = _mnist_file(d, "train", what)
            with (gzip.open if f.suffix == ".gz" else open)(f, "rb") as fh:
                head = fh.read(4)
        except (FileNotFoundError, OSError) as exc:
            raise ParameterError(f"dataset={dataset!r}: {exc}") from None
        if len(head) < 4 or int.from_bytes(head, "big") != magic:
            raise ParameterError(
                f"dataset={dataset!r}: {f} does not start with IDX magic number "
                f"{magic}; "
                f"expected {MNIST_FORMAT}"
            )
    return dataset
