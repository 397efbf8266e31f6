"""The data loaders against the published facts about the data sets."""

import gzip
import hashlib
import shutil

import numpy as np
import pytest

from probdr_lite import data
from probdr_lite.data import DataIntegrityError, load_mnist, load_shakespeare, toy_manifold


@pytest.fixture(scope="module")
def mnist():
    return load_mnist()


def test_mnist_shapes_and_types(mnist):
    images, labels = mnist
    assert images.shape == (10_000, 784) and images.dtype == np.float32
    assert labels.shape == (10_000,) and labels.dtype == np.int64
    assert images.min() == 0.0 and images.max() == 1.0


def test_mnist_published_statistics(mnist):
    images, labels = mnist
    assert images.mean(dtype=np.float64) == pytest.approx(0.13251, abs=5e-6)
    assert images.std(dtype=np.float64) == pytest.approx(0.31048, abs=5e-6)
    assert np.bincount(labels).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert labels[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]


def test_mnist_first_n_is_a_prefix(mnist):
    images, labels = load_mnist(n=123)
    assert images.shape == (123, 784)
    np.testing.assert_array_equal(images, mnist[0][:123])
    np.testing.assert_array_equal(labels, mnist[1][:123])


def test_mnist_stratified_subset_is_balanced_and_deterministic(mnist):
    images, labels = load_mnist(n=1000, stratified=True)
    assert np.bincount(labels, minlength=10).tolist() == [100] * 10
    again, _ = load_mnist(n=1000, stratified=True)
    np.testing.assert_array_equal(images, again)
    # every chosen image is a real row of the full set, in file order
    full = mnist[0]
    rows = {full[i].tobytes(): i for i in range(len(full))}
    idx = [rows[im.tobytes()] for im in images]
    assert idx == sorted(idx)


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (10_001, ValueError), (2.5, TypeError), ("5", TypeError)])
def test_mnist_bad_n(bad, exc):
    with pytest.raises(exc, match="n"):
        load_mnist(n=bad)


def test_mnist_bad_split():
    with pytest.raises(ValueError, match="split must be one of 'test', 'train'"):
        load_mnist(split="validation")


def _copy_vendored(tmp_path, monkeypatch):
    for sub in ("mnist", "tinyshakespeare"):
        shutil.copytree(data.DATA_DIR / sub, tmp_path / sub)
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)


def test_truncated_file_is_refused_with_its_name(tmp_path, monkeypatch):
    _copy_vendored(tmp_path, monkeypatch)
    path = tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[: 100_000])
    with pytest.raises(DataIntegrityError, match="t10k-images-idx3-ubyte.gz.*corrupted or truncated"):
        load_mnist()


def test_corrupted_file_is_refused_with_its_name(tmp_path, monkeypatch):
    _copy_vendored(tmp_path, monkeypatch)
    path = tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz"
    raw = bytearray(gzip.decompress(path.read_bytes()))
    raw[100] = (raw[100] + 1) % 10  # one label changed: still a valid IDX file
    path.write_bytes(gzip.compress(bytes(raw)))
    with pytest.raises(DataIntegrityError, match="t10k-labels-idx1-ubyte.gz does not match its published SHA-256"):
        load_mnist()


def test_missing_file_is_refused(tmp_path, monkeypatch):
    _copy_vendored(tmp_path, monkeypatch)
    (tmp_path / "tinyshakespeare" / "input.txt.gz").unlink()
    with pytest.raises(DataIntegrityError, match="input.txt.gz is missing"):
        load_shakespeare()


def _write_idx(path, array):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def test_read_idx_round_trip_and_bad_header(tmp_path):
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 256, size=(5, 28, 28))
    _write_idx(tmp_path / "x", arr)
    np.testing.assert_array_equal(data.read_idx((tmp_path / "x").read_bytes()), arr)
    with pytest.raises(DataIntegrityError, match="header promises"):
        data.read_idx((tmp_path / "x").read_bytes()[:-1])
    with pytest.raises(DataIntegrityError, match="not an unsigned-byte IDX"):
        data.read_idx(b"\x00\x00\x0d\x01")


def test_torchvision_path_reads_an_idx_fixture(tmp_path):
    """The real (torchvision) loading path on a small fixture: no network is touched
    because the raw files are already where torchvision looks for them."""
    rng = np.random.default_rng(1)
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    images = rng.integers(0, 256, size=(12, 28, 28))
    labels = rng.integers(0, 10, size=12)
    for split in ("train", "t10k"):
        _write_idx(raw / f"{split}-images-idx3-ubyte", images)
        _write_idx(raw / f"{split}-labels-idx1-ubyte", labels)
    X, y = load_mnist(split="train", root=tmp_path)
    np.testing.assert_allclose(X, images.reshape(12, -1) / 255.0, atol=1e-7)
    np.testing.assert_array_equal(y, labels)
    X, y = load_mnist(split="test", root=tmp_path, download=True, n=5)
    assert X.shape == (5, 784) and X.dtype == np.float32


def test_offline_download_fails_fast_with_a_clear_message(tmp_path, monkeypatch):
    import socket
    import time

    def no_network(*args, **kwargs):
        raise OSError("network is unreachable (blocked by the test)")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"offline.*load_mnist\(split='test'\)"):
        load_mnist(split="train", root=tmp_path)
    # "fast": a generous bound that only a hanging network call would break
    assert time.perf_counter() - start < 60


def test_shakespeare_facts():
    corpus = load_shakespeare()
    assert len(corpus.text) == 1_115_394
    assert len(corpus.vocab) == 65 and corpus.vocab == sorted(set(corpus.text))
    assert len(corpus.train) == 1_003_854 and len(corpus.val) == 111_540
    assert corpus.train + corpus.val == corpus.text
    assert hashlib.sha256(corpus.text.encode()).hexdigest() == data.SHAKESPEARE_SHA256
    text, vocab, (train, val) = corpus
    assert corpus.decode(corpus.encode(val[:500])) == val[:500]
    with pytest.raises(ValueError, match="train_fraction must be in"):
        load_shakespeare(train_fraction=1.0)


@pytest.mark.parametrize("name, dim", [("swiss_roll", 3), ("s_curve", 3), ("moons", 2), ("circles", 2)])
def test_toy_manifolds_are_seeded(name, dim):
    Y, t = toy_manifold(name, n=200, seed=3)
    Y2, t2 = toy_manifold(name, n=200, seed=3)
    Y3, _ = toy_manifold(name, n=200, seed=4, noise=0.1)
    assert Y.shape == (200, dim) and t.shape == (200,)
    np.testing.assert_array_equal(Y, Y2)
    assert not np.allclose(Y, Y3)


def test_toy_manifold_bad_input():
    with pytest.raises(ValueError, match="name must be one of"):
        toy_manifold("torus")
    with pytest.raises(ValueError, match="noise must be in"):
        toy_manifold(noise=-1)
    with pytest.raises(ValueError, match="n must be in"):
        toy_manifold(n=3)
