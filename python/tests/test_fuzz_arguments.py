"""Property tests of the Python entry points: arguments drawn at random (shapes with zeros,
templates larger than images, every dtype, bad modes, NaN and Inf) end in a correct result or
in ValueError, TypeError or flcc.Error, never in a crash; results agree with the peers."""

import numpy as np
import pytest

import flcc

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed here")
signal = pytest.importorskip("scipy.signal", reason="SciPy is not installed here")
feature = pytest.importorskip("skimage.feature", reason="scikit-image is not installed here")
from hypothesis import given, settings, strategies as st  # noqa: E402

DTYPES = [np.float32, np.float64, np.float16, np.uint8, np.uint16, np.int32, np.bool_,
          np.complex64]
SPECIAL = [0.0, np.nan, np.inf, -np.inf, 1e-40, 3e38, -3e38]


@st.composite
def arrays(draw, ndim, max_side=9, allow_zero=True):
    shape = tuple(draw(st.integers(0 if allow_zero else 1, max_side)) for _ in range(ndim))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2 ** 16))
    a = np.random.default_rng(seed).random(shape) * draw(st.sampled_from([1.0, 255.0, 1e4]))
    if a.size and draw(st.booleans()) and np.dtype(dtype).kind in "fc":
        a.flat[draw(st.integers(0, a.size - 1))] = draw(st.sampled_from(SPECIAL))
    with np.errstate(all="ignore"):
        return a.astype(dtype)


@st.composite
def pairs(draw):
    ndim = draw(st.integers(1, 4))
    return draw(arrays(ndim)), draw(arrays(ndim if draw(st.integers(0, 9)) else ndim - 1))


def _finite(*xs):
    return all(np.isfinite(np.asarray(x, dtype=np.complex128)).all() for x in xs)


@settings(max_examples=300, deadline=None)
@given(pairs(), st.sampled_from(["full", "same", "valid", "bogus"]), st.booleans())
def test_convolve_and_correlate_never_crash(pair, mode, reverse):
    a, b = pair
    fn = flcc.correlate if reverse else flcc.convolve
    try:
        got = fn(a, b, mode)
    except (ValueError, TypeError, flcc.Error) as e:
        if isinstance(e, flcc.Error):
            assert e.name == "NONFINITE_INPUT" and not _finite(a, b)
        return
    assert a.dtype.kind != "c" and b.dtype.kind != "c" and mode != "bogus"
    peer = signal.correlate if reverse else signal.convolve
    want = peer(a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64), mode)
    assert np.shape(got) == np.shape(want)
    if np.size(want) and np.max(np.abs(want)) > 1e37:
        return   # sums past float32's range: the float32 result overflows, as it must
    scale = max(float(np.max(np.abs(want))) if np.size(want) else 0.0, 1.0)
    assert np.max(np.abs(np.asarray(got, np.float64) - want), initial=0.0) <= 1e-4 * scale


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 3).flatmap(lambda n: st.tuples(arrays(n, 12), arrays(n, 6))),
       st.booleans(), st.sampled_from(["constant", "edge", "reflect", "wrap", "bogus"]))
def test_match_template_never_crashes(pair, pad_input, mode):
    image, templ = pair
    try:
        got = flcc.match_template(image, templ, pad_input=pad_input, mode=mode)
    except (ValueError, TypeError, flcc.Error) as e:
        if isinstance(e, flcc.Error):
            assert e.name == "NONFINITE_INPUT" and not _finite(image, templ)
        return
    assert got.dtype == np.float32 and np.isfinite(got).all() and np.abs(got).max() <= 1
    want_shape = image.shape if pad_input else tuple(s - t + 1 for s, t in zip(image.shape, templ.shape))
    assert got.shape == want_shape


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["conv", "lcorr", "xcorr", "fft", ""]),
       st.lists(st.integers(-2, 10), min_size=0, max_size=4),
       st.lists(st.integers(-2, 10), min_size=0, max_size=4),
       st.sampled_from(["full", "same", "valid", "x"]),
       st.sampled_from(["host", "any", "gpu"]),
       st.sampled_from([None, "host.direct2.generic", "host.fourier3.t64", "nope"]),
       st.integers(-1, 3))
def test_plan_arguments_never_crash(op, ishape, tshape, region, platform, method, threads):
    try:
        plan = flcc.Plan(op, ishape, tshape, region=region, platform=platform, method=method,
                         threads=threads, rigor="estimate")
    except (ValueError, TypeError, flcc.Error):
        return
    image = np.ones(plan.image_shape, np.float32)
    templ = np.arange(np.prod(plan.template_shape), dtype=np.float32).reshape(plan.template_shape)
    out = plan(image, templ)
    assert out.shape == plan.output_shape and np.isfinite(out).all()
