"""flcc.dask on a dask.distributed LocalCluster of 2 worker processes: equal to the in-memory
functions everywhere, chunk boundaries included."""

import numpy as np
import pytest

import flcc

da = pytest.importorskip("dask.array", reason="dask is not installed here")
distributed = pytest.importorskip("distributed", reason="distributed is not installed here")
import flcc.dask as fd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


rng = np.random.default_rng(11)


def _close(a, b, op):
    if op == "lcorr":
        return np.abs(a - b).max() <= 1e-5
    return np.abs(a - b).max() <= 1e-5 * max(np.abs(b).max(), 1)


@pytest.mark.parametrize("shape,chunks,tshape", [
    ((70, 53), (20, 9), (5, 8)),       # T - 1 larger than a chunk on one axis
    ((64, 64), (16, 16), (4, 4)),
    ((23, 21, 19), (8, 7, 10), (3, 4, 2)),
])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_equal_in_memory(client, shape, chunks, tshape, mode):
    image = rng.random(shape, dtype=np.float32)
    templ = rng.random(tshape, dtype=np.float32)
    x = da.from_array(image, chunks=chunks)
    assert x.numblocks != (1,) * len(shape)
    for dask_fn, fn in ((fd.convolve, flcc.convolve), (fd.correlate, flcc.correlate)):
        lazy = dask_fn(x, templ, mode)
        got = client.compute(lazy).result()
        want = fn(image, templ, mode)
        assert got.shape == want.shape == lazy.shape and got.dtype == np.float32
        assert _close(got, want, "conv"), (dask_fn.__name__, mode)


@pytest.mark.parametrize("pad_input,mode", [(False, "constant"), (True, "constant"),
                                            (True, "reflect"), (True, "edge")])
@pytest.mark.parametrize("shape,chunks,tshape", [((70, 53), (20, 9), (5, 8)),
                                                 ((22, 20, 18), (9, 7, 6), (4, 3, 5))])
def test_match_template_equals_in_memory(client, shape, chunks, tshape, pad_input, mode):
    image = rng.random(shape, dtype=np.float32) * 100
    templ = rng.random(tshape, dtype=np.float32)
    x = da.from_array(image, chunks=chunks)
    got = client.compute(fd.match_template(x, templ, pad_input=pad_input, mode=mode,
                                           constant_values=3)).result()
    want = flcc.match_template(image, templ, pad_input=pad_input, mode=mode, constant_values=3)
    assert got.shape == want.shape
    assert _close(got, want, "lcorr")


def test_dask_template_and_argument_errors(client):
    image = rng.random((40, 40), dtype=np.float32)
    templ = rng.random((6, 6), dtype=np.float32)
    x = da.from_array(image, chunks=15)
    got = client.compute(fd.match_template(x, da.from_array(templ))).result()
    assert _close(got, flcc.match_template(image, templ), "lcorr")
    with pytest.raises(ValueError):
        fd.convolve(x, templ, "middle")
    with pytest.raises(ValueError):
        fd.match_template(x, rng.random((41, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        fd.convolve(x, rng.random((3, 3, 3), dtype=np.float32))
    with pytest.raises(TypeError):
        fd.convolve(x.astype(np.complex64), templ)


def test_nonfinite_block_raises_flcc_error(client):
    image = rng.random((40, 40), dtype=np.float32)
    image[33, 2] = np.nan
    x = da.from_array(image, chunks=15)
    with pytest.raises(flcc.Error):
        client.compute(fd.match_template(x, rng.random((4, 4), dtype=np.float32))).result()
