"""The moments engine's faster reductions return torch's own numbers bit for bit (a speed-up of
the engine must not move any number of the book: same seed, same scale, same values)."""

from __future__ import annotations

import pytest
import torch

from layerwise.moments.layers import column_norms


@pytest.mark.parametrize(
    "shape", [(1, 4096, 64), (3, 2000, 64), (2, 64, 512), (1, 777, 33), (4, 5, 8), (2, 300, 3)]
)
def test_column_norms_equal_torch_bit_for_bit(shape):
    # torch reduces over the non-contiguous axis with its generic float32 kernel (one sample after
    # another); the NumPy path must give exactly those floats, not merely close ones
    g = torch.Generator().manual_seed(sum(shape))
    for scale, offset in ((1.0, 0.0), (3.0, 0.5), (1e-3, 1e3)):
        z = torch.randn(shape, generator=g) * scale + offset
        zc = z - z.mean(dim=1, keepdim=True)
        got = column_norms(zc)
        want = torch.linalg.vector_norm(zc, 2, dim=1, keepdim=True)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert torch.equal(got, want)
        # a sequential sum differs from a pairwise one: the comparison can fail
        pairwise = (zc.double() ** 2).sum(dim=1, keepdim=True).sqrt().float()
        if shape[1] >= 2000 and scale == 1.0:
            assert not torch.equal(got, pairwise)


def test_column_norms_on_views_and_other_dtypes():
    # the engine passes a fresh tensor, but a strided view (the signal half of the state) and
    # float64 must give torch's numbers too
    t = torch.randn(2, 600, 40, generator=torch.Generator().manual_seed(1))
    view = t[:, :300]
    assert torch.equal(column_norms(view), torch.linalg.vector_norm(view, 2, dim=1, keepdim=True))
    d = t.double()
    assert torch.equal(column_norms(d), torch.linalg.vector_norm(d, 2, dim=1, keepdim=True))
