"""The papers' data sets, downloaded once, verified by SHA-256 and kept in the user's cache.

``fetch("cifar10")`` / ``fetch("mnist")`` return the paths of verified copies of the files of
:data:`REMOTE`, downloading what is missing with `pooch <https://www.fatiando.org/pooch>`_
(the optional extra ``pip install -e '.[data]'``).  Files live in ``data_home()/<name>/``:
``$LAYERWISE_DATA`` if set, else the user's cache folder (``platformdirs.user_cache_dir``, e.g.
``~/.cache/layerwise`` on Linux).  A file whose SHA-256 is not the known one is removed, reported
and never used; downloads are tried from each mirror in turn (``$LAYERWISE_DATA_URL``, or the
``base_url`` argument, replaces the mirrors by one base URL under which the files lie by name).
Every failure raises :class:`DataUnavailable` naming the URL, the file, its SHA-256 and the folder
to put it in, so a user without a network can place the file by hand.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from .params import ParameterError

TIMEOUT_S = 60.0
"""Seconds a download may wait for the server (connect or between bytes) before it fails."""


class DataUnavailable(ParameterError):
    """A fetched data set is neither in the cache (verified) nor downloadable; the message says
    how to put it in place by hand."""


@dataclass(frozen=True)
class RemoteFile:
    """One file of a data set: its name, SHA-256, size in bytes and the MD5 its authors publish."""

    name: str
    sha256: str
    size: int
    md5: str


@dataclass(frozen=True)
class Remote:
    """A downloadable data set: its files per split, mirrors (base URLs) and provenance."""

    files: dict[str, tuple[RemoteFile, ...]]
    mirrors: tuple[str, ...]
    title: str
    page: str
    licence: str
    local: str  # what dataset='NAME:DIR' expects in DIR


_MNIST = "https://storage.googleapis.com/cvdf-datasets/mnist/"  # TensorFlow Datasets' mirror
REMOTE: dict[str, Remote] = {
    # SHA-256: keras.datasets.cifar10 (file_hash); MD5: the authors' page
    "cifar10": Remote(
        files={
            split: (
                RemoteFile(
                    "cifar-10-python.tar.gz",
                    "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce",
                    170_498_071,
                    "c58f30108f718f92721af3b95e74349a",
                ),
            )
            for split in ("train", "test")
        },
        mirrors=("https://www.cs.toronto.edu/~kriz/",),
        title="CIFAR-10, python version (Krizhevsky 2009)",
        page="https://www.cs.toronto.edu/~kriz/cifar.html",
        licence="as distributed by its authors (A. Krizhevsky, V. Nair, G. Hinton), who ask that "
        "it be cited as Krizhevsky (2009), Learning Multiple Layers of Features from Tiny Images",
        local="the archive's extracted folder cifar-10-batches-py",
    ),
    # SHA-256 and sizes: tensorflow_datasets/url_checksums/mnist.txt; MD5: torchvision's MNIST
    "mnist": Remote(
        files={
            "train": (
                RemoteFile(
                    "train-images-idx3-ubyte.gz",
                    "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
                    9_912_422,
                    "f68b3c2dcbeaaa9fbdd348bbdeb94873",
                ),
                RemoteFile(
                    "train-labels-idx1-ubyte.gz",
                    "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
                    28_881,
                    "d53e105ee54ea40749a09fcbcd1e9432",
                ),
            ),
            "test": (
                RemoteFile(
                    "t10k-images-idx3-ubyte.gz",
                    "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                    1_648_877,
                    "9fb629c4189551a2d022fa330f9573f3",
                ),
                RemoteFile(
                    "t10k-labels-idx1-ubyte.gz",
                    "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
                    4_542,
                    "ec29112dd5afa0611ce80d1b7f02629c",
                ),
            ),
        },
        mirrors=(
            "https://yann.lecun.com/exdb/mnist/",
            "https://ossci-datasets.s3.amazonaws.com/mnist/",
            _MNIST,
        ),
        title="MNIST (LeCun, Cortes & Burges)",
        page="https://yann.lecun.com/exdb/mnist/",
        licence="CC BY-SA 3.0 (Y. LeCun and C. Cortes)",
        local="the IDX files, gzipped or not",
    ),
}


def data_home() -> Path:
    """The folder holding the fetched data sets: ``$LAYERWISE_DATA``, else the user's cache folder
    for ``layerwise`` (``platformdirs.user_cache_dir``; ``~/.cache/layerwise`` without it)."""
    env = os.environ.get("LAYERWISE_DATA")
    if env:
        return Path(env).expanduser()
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # pragma: no cover - platformdirs comes with pooch
        return Path.home() / ".cache" / "layerwise"
    return Path(user_cache_dir("layerwise"))


def urls(name: str, file: RemoteFile, base_url: str | None = None) -> list[str]:
    """Where ``file`` of data set ``name`` is downloaded from, in order of trial."""
    base = base_url or os.environ.get("LAYERWISE_DATA_URL")
    bases = (base,) if base else REMOTE[name].mirrors
    return [b.rstrip("/") + "/" + file.name for b in bases]


_SHA: dict[tuple, str] = {}


def stat_key(path: Path) -> tuple:
    """A file's path and stat signature (size, mtime, ctime, inode): the key of in-process caches
    of what was computed from its contents."""
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def sha256(path: Path) -> str:
    """SHA-256 of a file (memoised per :func:`stat_key`)."""
    key = stat_key(path)
    if key not in _SHA:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _SHA[key] = h.hexdigest()
    return _SHA[key]


def _manual(name: str, files: list[RemoteFile], folder: Path) -> str:
    each = "; ".join(
        f"{f.name} from {' or '.join(b + f.name for b in REMOTE[name].mirrors)} "
        f"(SHA-256 {f.sha256}, {f.size:,} bytes, MD5 {f.md5})"
        for f in files
    )
    return (
        f"To do without this download, put {'these files' if len(files) > 1 else 'this file'}, "
        f"unchanged, in {folder}: {each}. Or set LAYERWISE_DATA to a folder holding "
        f"{name}/ with them, or pass dataset='{name}:DIR' with DIR holding {REMOTE[name].local}"
    )


def fetch(name: str, split: str = "train", *, base_url: str | None = None) -> list[Path]:
    """Verified local copies of the files of data set ``name`` (``"cifar10"`` or ``"mnist"``)
    needed for ``split`` (``"train"`` or ``"test"``), downloaded into ``data_home()/name`` when
    missing.  A cached file whose SHA-256 differs (truncated, corrupted) is deleted with a warning
    and fetched again; a download whose SHA-256 differs is discarded (never moved into the
    cache).  Raises :class:`DataUnavailable` with the manual fix when a file cannot be had."""
    if name not in REMOTE:
        raise ParameterError(
            f"data set {name!r} is not downloadable; choose one of: {', '.join(REMOTE)}"
        )
    if split not in REMOTE[name].files:
        raise ParameterError(f"split={split!r} is not allowed; choose 'train' or 'test'")
    folder = data_home() / name
    notes: list[str] = []
    missing = []
    for file in REMOTE[name].files[split]:
        target = folder / file.name
        if target.is_file():
            got = sha256(target)
            if got == file.sha256:
                continue
            target.unlink()
            notes.append(
                f"the cached {target} had SHA-256 {got}, not {file.sha256} (truncated or "
                "corrupted): removed"
            )
            warnings.warn(f"{name}: {notes[-1]}; downloading it again", stacklevel=2)
        if not _download(name, file, target, base_url, notes):
            missing.append(file)
    if missing:
        raise DataUnavailable(
            f"dataset={name!r}: could not get {', '.join(f.name for f in missing)} "
            f"({'; '.join(notes)}). {_manual(name, missing, folder)}."
        )
    return [folder / f.name for f in REMOTE[name].files[split]]


def _download(
    name: str, file: RemoteFile, target: Path, base_url: str | None, notes: list[str]
) -> bool:
    """Download ``file`` to ``target`` from each URL in turn until one gives the known SHA-256;
    what went wrong is appended to ``notes``.  Whether it succeeded."""
    try:
        import pooch
        import requests
    except ImportError:
        notes.append(f"{file.name}: downloading needs pooch (pip install -e '.[data]')")
        return False
    for url in urls(name, file, base_url):
        try:
            pooch.retrieve(
                url,
                known_hash=f"sha256:{file.sha256}",
                fname=file.name,
                path=target.parent,
                downloader=pooch.HTTPDownloader(timeout=TIMEOUT_S),
            )
            return True
        except ValueError as exc:  # pooch: the downloaded file's hash differs; it was discarded
            notes.append(f"{url}: the download's SHA-256 differs, discarded ({exc})")
        except requests.ConnectionError:
            notes.append(f"{url}: no connection")
        except requests.Timeout:
            notes.append(f"{url}: no answer within {TIMEOUT_S:g} s")
        except requests.exceptions.ChunkedEncodingError:
            notes.append(f"{url}: the download was cut short; discarded")
        except requests.HTTPError as exc:
            notes.append(f"{url}: HTTP {exc.response.status_code}")
        except (requests.RequestException, OSError) as exc:
            notes.append(f"{url}: {type(exc).__name__}: {str(exc)[:160]}")
    return False


def main(argv: list[str]) -> int:
    """``python -m layerwise.fetch [NAME ...] [--split train|test]``: download (or verify the
    cached copies of) the named data sets, by default both, and print where they are."""
    import argparse
    import sys

    p = argparse.ArgumentParser(
        prog="python -m layerwise.fetch",
        description="Download the papers' data sets once, verify them by SHA-256 and print "
        f"where they are (the cache: {data_home()}; LAYERWISE_DATA moves it).",
    )
    p.add_argument("names", nargs="*", default=list(REMOTE), help=" | ".join(REMOTE))
    p.add_argument("--split", action="append", choices=("train", "test"), help="default: train")
    a = p.parse_args(argv)
    try:
        for name in a.names:
            for split in a.split or ["train"]:
                for path in fetch(name, split):
                    print(f"{name} {split}: {path} (SHA-256 {sha256(path)}, verified)")
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
