"""flcc.convolve / flcc.correlate checked against scipy.signal.

Peer: ``scipy.signal.convolve`` and ``scipy.signal.correlate`` (modes
'full', 'same', 'valid'), evaluated in float64.  flcc computes in float32,
so results are compared with
``max|y - y_ref| <= 1e-5 * max(max|y_ref|, 1)``.

Tests ported from SciPy's own suite (``scipy/signal/tests/test_signaltools.py``)
name their origin in a comment.  Complex input is not supported by flcc
(TypeError), so the complex-valued peer tests are ported as TypeError checks.

Set FLCC_TEST_IMPL=peer_shim to run the suite against the reference shim.
"""

import importlib
import itertools
import os
import sys
import warnings
import zlib

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

signal = pytest.importorskip("scipy.signal")

flcc = importlib.import_module(os.environ.get("FLCC_TEST_IMPL", "flcc"))

MODES = ["full", "same", "valid"]
REL_TOL = 1e-5
REAL_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
               "int64", "uint64", "float16", "float32", "float64"]
FUNCS = {
    "convolve": (lambda: flcc.convolve, signal.convolve),
    "correlate": (lambda: flcc.correlate, signal.correlate),
}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _sid(shape):
    """Readable test id for a shape: (4, 0, 2) -> '4x0x2', () -> '0d'."""
    return "x".join(map(str, shape)) if len(shape) else "0d"


def _pid(pair):
    return "-".join(_sid(np.shape(p)) if not isinstance(p, tuple) else _sid(p)
                    for p in pair)


def _rng(seed):
    return np.random.default_rng(seed)


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def peer(name, in1, in2, mode="full"):
    """The scipy peer evaluated in float64 (warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(FUNCS[name][1](_f64(in1), _f64(in2), mode=mode))


def ours(name):
    return FUNCS[name][0]()


def check_conv(y, ref, rel=REL_TOL):
    """float32, same shape, finite and within rel * max(max|ref|, 1)."""
    ref = np.asarray(ref, dtype=np.float64)
    y = np.asarray(y)
    assert y.dtype == np.float32, y.dtype
    assert y.shape == ref.shape, (y.shape, ref.shape)
    assert np.all(np.isfinite(y)), "non-finite output"
    if ref.size:
        tol = rel * max(np.max(np.abs(ref)), 1.0)
        err = np.max(np.abs(y.astype(np.float64) - ref))
        assert err <= tol, f"max|y - y_ref| = {err:.3e} > {tol:.3e}"


def direct_convolve(a, b, mode="full"):
    """Independent float64 oracle: shift-and-add N-d convolution."""
    a, b = _f64(a), _f64(b)
    if mode == "valid" and not all(x >= y for x, y in zip(a.shape, b.shape)):
        a, b = b, a                       # scipy swaps (convolution commutes)
    full_shape = tuple(x + y - 1 for x, y in zip(a.shape, b.shape))
    out = np.zeros(full_shape)
    for idx in np.ndindex(*b.shape):
        sl = tuple(slice(i, i + n) for i, n in zip(idx, a.shape))
        out[sl] += b[idx] * a
    if mode == "full":
        return out
    target = a.shape if mode == "same" else tuple(
        x - y + 1 for x, y in zip(a.shape, b.shape))
    start = [(f - t) // 2 for f, t in zip(full_shape, target)]
    return out[tuple(slice(s, s + t) for s, t in zip(start, target))]


def direct_correlate(a, b, mode="full"):
    a, b = _f64(a), _f64(b)
    if mode == "valid" and not all(x >= y for x, y in zip(a.shape, b.shape)):
        # correlate(b, a) is the reversed correlate(a, b) in valid mode
        return direct_correlate(b, a, mode)[(slice(None, None, -1),) * a.ndim]
    return direct_convolve(a, b[(slice(None, None, -1),) * b.ndim], mode)


# --------------------------------------------------------------------------
# ported: TestConvolve / TestConvolve2d
# --------------------------------------------------------------------------
def test_convolve_basic():
    # ported: TestConvolve::test_basic
    check_conv(flcc.convolve([3, 4, 5, 6, 5, 4], [1, 2, 3]),
               [3, 10, 22, 28, 32, 32, 23, 12])


def test_convolve_same():
    # ported: TestConvolve::test_same (kernel longer than input)
    check_conv(flcc.convolve([3, 4, 5], [1, 2, 3, 4], mode="same"),
               [10, 22, 34])


def test_convolve_same_eq():
    # ported: TestConvolve::test_same_eq
    check_conv(flcc.convolve([3, 4, 5], [1, 2, 3], mode="same"), [10, 22, 22])


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_complex_raises_typeerror(name):
    # ported: TestConvolve::test_complex, TestFFTConvolve::test_complex,
    # TestCorrelateComplex, TestCorrelate2d::test_complex_input (flcc: TypeError)
    f = ours(name)
    x = np.array([1 + 1j, 2 + 1j, 3 + 1j])
    y = np.array([1 + 1j, 2 + 1j])
    for a, b in [(x, y), (x.real, y), (x, y.real),
                 (x.astype(np.complex64), y.real.astype(np.float32)),
                 ([[1]], [[2j]]), ([[2j]], [[3j]]), ([[3j]], [[4]]),
                 (np.array(2j), np.array(3.0))]:
        for mode in MODES:
            with pytest.raises(TypeError):
                f(a, b, mode=mode)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_zero_rank(name):
    # ported: TestConvolve::test_zero_rank, TestFFTConvolve::test_zero_rank
    y = ours(name)(np.asarray(1289), np.asarray(4567))
    y = np.asarray(y)
    assert y.shape == ()
    assert y.dtype == np.float32
    assert y == 1289 * 4567


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_zero_rank_python_scalars(name):
    # ported: TestConvolve::test_zero_rank_python_scalars
    y = np.asarray(ours(name)(1289, 4567))
    assert y.shape == () and y.dtype == np.float32
    assert y == 1289 * 4567
    y = np.asarray(ours(name)(2.5, -4.0))
    assert y == -10.0


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_broadcastable(name, axis, mode):
    # ported: TestConvolve::test_broadcastable (kernel 3 long in one axis)
    a = np.arange(27).reshape(3, 3, 3)
    shape = [1, 1, 1]
    shape[axis] = 3
    b = np.arange(3).reshape(shape)
    check_conv(ours(name)(a, b, mode=mode), peer(name, a, b, mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_single_element(name):
    # ported: TestConvolve::test_single_element, TestFFTConvolve::test_single_element
    for mode in MODES:
        y = ours(name)(np.array([4967]), np.array([3920]), mode=mode)
        check_conv(y, [4967 * 3920])


def test_2d_arrays():
    # ported: TestConvolve::test_2d_arrays, TestConvolve2d::test_2d_arrays
    a = [[1, 2, 3], [3, 4, 5]]
    b = [[2, 3, 4], [4, 5, 6]]
    expected = [[2, 7, 16, 17, 12], [10, 30, 62, 58, 38], [12, 31, 58, 49, 30]]
    check_conv(flcc.convolve(a, b), expected)
    check_conv(flcc.convolve(np.array(a), np.array(b)), expected)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_input_swapping(name):
    # ported: TestConvolve::test_input_swapping (real-valued version)
    small = np.arange(8.0).reshape(2, 2, 2)
    big = np.arange(27.0)[::-1].reshape(3, 3, 3) + 0.5 * np.arange(27.0).reshape(3, 3, 3)
    f = ours(name)
    oracle = direct_convolve if name == "convolve" else direct_correlate
    for a, b in [(small, big), (big, small)]:
        for mode in MODES:
            ref = oracle(a, b, mode)
            check_conv(f(a, b, mode=mode), ref)
            check_conv(f(a, b, mode=mode), peer(name, a, b, mode))
    if name == "convolve":
        full = oracle(small, big, "full")
        check_conv(f(small, big, "same"), full[1:3, 1:3, 1:3])
        check_conv(f(big, small, "same"), full[0:3, 0:3, 0:3])
        check_conv(f(small, big, "valid"), full[1:3, 1:3, 1:3])
        check_conv(f(big, small, "valid"), full[1:3, 1:3, 1:3])


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["spam", "eggs", "ham", "FULL", "Same", "",
                                  "valid "])
def test_invalid_params(name, mode):
    # ported: TestConvolve::test_invalid_params, TestCorrelate::test_invalid_params,
    # TestAllFreqConvolves::test_invalid_flags (mode strings only)
    with pytest.raises(ValueError):
        peer(name, [3, 4, 5], [1, 2, 3], mode)
    with pytest.raises(ValueError):
        ours(name)([3, 4, 5], [1, 2, 3], mode=mode)
    with pytest.raises(ValueError):
        ours(name)(np.ones((4, 4)), np.ones((2, 2)), mode=mode)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", [None, 1, b"full"])
def test_non_string_mode(name, mode):
    # the peer raises ValueError for these; a TypeError is accepted as well
    with pytest.raises(ValueError):
        peer(name, [3, 4, 5], [1, 2, 3], mode)
    with pytest.raises((ValueError, TypeError)):
        ours(name)([3, 4, 5], [1, 2, 3], mode=mode)


def test_valid_mode2():
    # ported: TestConvolve::test_valid_mode2 (gh-5897, real part)
    a = [1, 2, 3, 6, 5, 3]
    b = [2, 3, 4, 5, 3, 4, 2, 2, 1]
    check_conv(flcc.convolve(a, b, "valid"), [70, 78, 73, 65])
    check_conv(flcc.convolve(b, a, "valid"), [70, 78, 73, 65])


def test_same_mode():
    # ported: TestConvolve::test_same_mode
    a = [1, 2, 3, 3, 1, 2]
    b = [1, 4, 3, 4, 5, 6, 7, 4, 3, 2, 1, 1, 3]
    check_conv(flcc.convolve(a, b, "same"), [57, 61, 63, 57, 45, 36])


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((5,), (5,)),
                                    ((2, 3, 4), (3, 3, 3)),
                                    ((4, 5, 6), (5, 4, 6))])
def test_invalid_shapes(name, shapes):
    # ported: TestConvolve/TestConvolve2d/TestCorrelate/TestCorrelate2d/
    # TestAllFreqConvolves::test_invalid_shapes (neither input dominates)
    s1, s2 = shapes
    a = np.arange(1, np.prod(s1) + 1, dtype=float).reshape(s1)
    b = np.arange(-np.prod(s2), 0, dtype=float).reshape(s2)
    if s1 == s2:           # equal shapes are fine: a single output value
        check_conv(ours(name)(a, b, mode="valid"), peer(name, a, b, "valid"))
        return
    for x, y in [(a, b), (b, a)]:
        with pytest.raises(ValueError):
            ours(name)(x, y, mode="valid")
        for mode in ("full", "same"):
            check_conv(ours(name)(x, y, mode=mode), peer(name, x, y, mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("t1", REAL_DTYPES)
@pytest.mark.parametrize("t2", ["bool", "uint8", "int16", "int64", "uint64",
                                "float16", "float32", "float64"])
def test_convolve_method_dtypes(name, t1, t2):
    # ported: TestConvolve::test_convolve_method (all real dtype pairs, n=100)
    rng = np.random.RandomState(42)
    pool = {"i": rng.choice([0, 1], size=100), "f": rng.randn(100)}
    pool["b"] = pool["u"] = pool["i"]
    x1 = pool[np.dtype(t1).kind].astype(t1)
    x2 = pool[np.dtype(t2).kind].astype(t2)
    for mode in MODES:
        check_conv(ours(name)(x1, x2, mode=mode), peer(name, x1, x2, mode))


@pytest.mark.parametrize("n", [10, 20, 50, 51, 52, 53, 54, 60, 62])
def test_convolve_method_large_input(n):
    # ported: TestConvolve::test_convolve_method_large_input (powers of two
    # are exact in float32, so the product must be exact too)
    z = np.array([2 ** n], dtype=np.int64)
    y = flcc.convolve(z, z)
    assert y.dtype == np.float32
    assert y.shape == (1,)
    assert float(y[0]) == 2.0 ** (2 * n)


MISMATCHED = [([1], 2), (1, [2]), ([1], [[2]]), ([3], 2),
              (np.ones((2, 2)), np.ones(2)),
              (np.ones((2, 2, 2)), np.ones((2, 2))),
              (np.ones(3), np.ones((1, 1, 3)))]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("a, b", MISMATCHED, ids=[_pid(c) for c in MISMATCHED])
def test_mismatched_dims(name, a, b):
    # ported: TestConvolve::test_mismatched_dims, TestCorrelate::test_mismatched_dims,
    # TestAllFreqConvolves::test_mismatched_dims
    for mode in MODES:
        with pytest.raises(ValueError):
            ours(name)(a, b, mode=mode)
        with pytest.raises(ValueError):
            ours(name)(b, a, mode=mode)


def test_valid_mode_2d():
    # ported: TestConvolve2d::test_valid_mode and ::test_valid_mode2 (gh-5897)
    e = [[2, 3, 4, 5, 6, 7, 8], [4, 5, 6, 7, 8, 9, 10]]
    f = [[1, 2, 3], [3, 4, 5]]
    check_conv(flcc.convolve(e, f, "valid"), [[62, 80, 98, 116, 134]])
    check_conv(flcc.convolve(f, e, "valid"), [[62, 80, 98, 116, 134]])


def test_same_mode_2d():
    # ported: TestConvolve2d::test_same_mode
    e = [[1, 2, 3], [3, 4, 5]]
    f = [[2, 3, 4, 5, 6, 7, 8], [4, 5, 6, 7, 8, 9, 10]]
    check_conv(flcc.convolve(e, f, "same"), [[22, 28, 34], [80, 98, 116]])


@pytest.mark.parametrize("mode", MODES)
def test_consistency_convolve_funcs(mode):
    # ported: TestConvolve2d::test_consistency_convolve_funcs
    a = np.arange(5)
    b = np.array([3.2, 1.4, 3])
    check_conv(flcc.convolve(a, b, mode=mode), np.convolve(a, b, mode=mode))
    check_conv(flcc.convolve(a[None, :], b[None, :], mode=mode)[0],
               np.convolve(a, b, mode=mode))
    check_conv(flcc.convolve(a[None, :, None], b[None, :, None], mode=mode)[0, :, 0],
               np.convolve(a, b, mode=mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("shape", [(2, 2, 2, 2), (3, 1, 1, 1), (1, 1, 1, 1, 1),
                                   (2, 1, 2, 1, 2, 1)])
def test_four_and_more_dims_raise(name, shape):
    # FLCC supports 1-D to 3-D; the peer would compute these
    for mode in MODES:
        with pytest.raises(ValueError):
            ours(name)(np.ones(shape), np.ones(shape), mode=mode)


# --------------------------------------------------------------------------
# ported: TestFFTConvolve / TestOAConvolve (real-valued, no ``axes``)
# --------------------------------------------------------------------------
def test_fft_real():
    # ported: TestFFTConvolve::test_real
    check_conv(flcc.convolve([1, 2, 3], [1, 2, 3]), [1, 4, 10, 12, 9])


def test_fft_2d_real_same():
    # ported: TestFFTConvolve::test_2d_real_same
    a = np.array([[1.0, 2, 3], [4, 5, 6]])
    check_conv(flcc.convolve(a, a),
               [[1, 4, 10, 12, 9], [8, 26, 56, 54, 36], [16, 40, 73, 60, 36]])


def test_fft_real_same_mode():
    # ported: TestFFTConvolve::test_real_same_mode
    a = [1, 2, 3]
    b = [3, 3, 5, 6, 8, 7, 9, 0, 1]
    check_conv(flcc.convolve(a, b, "same"), [35.0, 41.0, 47.0])
    check_conv(flcc.convolve(b, a, "same"),
               [9.0, 20.0, 25.0, 35.0, 41.0, 47.0, 39.0, 28.0, 2.0])


def test_fft_valid_mode_real():
    # ported: TestFFTConvolve::test_valid_mode_real (gh-5897)
    a = [3, 2, 1]
    b = [3, 3, 5, 6, 8, 7, 9, 0, 1]
    expected = [24.0, 31.0, 41.0, 43.0, 49.0, 25.0, 12.0]
    check_conv(flcc.convolve(a, b, "valid"), expected)
    check_conv(flcc.convolve(b, a, "valid"), expected)


def test_fft_valid_mode_ignore_nonaxes_as_2d():
    # ported: TestFFTConvolve::test_valid_mode_real_axes, as a (2, n) x (1, m)
    # valid convolution, which equals the row-wise 1-D result
    a = np.tile([3, 2, 1], (2, 1))
    b = np.tile([3, 3, 5, 6, 8, 7, 9, 0, 1], (1, 1))
    expected = np.tile([24.0, 31.0, 41.0, 43.0, 49.0, 25.0, 12.0], (1, 1))
    with pytest.raises(ValueError):       # neither input dominates
        flcc.convolve(a, b, "valid")
    a1 = a[:1]
    check_conv(flcc.convolve(a1, b, "valid"), expected)


EMPTY_CASES = [
    ((0,), (0,)), ((2,), (0,)), ((0,), (1,)), ((0,), (3,)), ((3,), (0,)),
    ((0, 3), (2, 2)), ((4, 4), (0, 2)), ((0, 0), (1, 1)), ((2, 2), (0, 0)),
    ((2, 0, 3), (1, 1, 1)), ((3, 3, 3), (1, 0, 1)), ((0, 0, 0), (0, 0, 0)),
]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("s1, s2", EMPTY_CASES, ids=[_pid(c) for c in EMPTY_CASES])
@pytest.mark.parametrize("mode", MODES)
def test_empty(name, s1, s2, mode):
    # ported: TestFFTConvolve::test_empty / TestOAConvolve::test_empty (#1745).
    # scipy's answer to an empty input depends on the method it picks: fftconvolve
    # returns [], convolve raises for some shapes and returns empty or zero arrays of
    # other shapes. flcc has one documented rule: an empty input raises ValueError.
    a, b = np.zeros(s1), np.zeros(s2)
    with pytest.raises(ValueError):
        ours(name)(a, b, mode=mode)


def test_fft_random_data():
    # ported: TestFFTConvolve::test_random_data (real part, 1233 x 1321)
    rng = np.random.default_rng(1234)
    a, b = rng.random(1233), rng.random(1321)
    check_conv(flcc.convolve(a, b, "full"), np.convolve(a, b, "full"))
    check_conv(flcc.correlate(a, b, "full"), np.correlate(a, b, "full"))


@pytest.mark.parametrize("n", list(range(1, 100, 3)) + [127, 128, 129, 255,
                                                        256, 257, 1000, 1031])
def test_fft_many_sizes(n):
    # ported: TestFFTConvolve::test_many_sizes (subset, real-valued)
    rng = _rng(n)
    a, b = rng.random(n), rng.random(n)
    check_conv(flcc.convolve(a, b, "full"), np.convolve(a, b, "full"))


def _oa_shapes(sizes):
    return [(p, q) for p, q in itertools.product(sizes, repeat=2)
            if abs(p - q) > 3]


@pytest.mark.parametrize("s1, s2", _oa_shapes([50, 47, 6, 4, 1]),
                         ids=["%d-%d" % c for c in _oa_shapes([50, 47, 6, 4, 1])])
@pytest.mark.parametrize("mode", MODES)
def test_oa_1d_noaxes(s1, s2, mode):
    # ported: TestOAConvolve::test_1d_noaxes (real-valued)
    rng = _rng(s1 * 100 + s2)
    a, b = rng.random(s1), rng.random(s2)
    check_conv(flcc.convolve(a, b, mode=mode), peer("convolve", a, b, mode))


def _oa_shapes_2d(sizes):
    pairs = _oa_shapes(sizes)
    out = []
    for (p0, q0), (p1, q1) in zip(pairs, pairs):
        for mode in MODES:
            if (mode != "valid" or (p0 > q0 and p1 > q1)
                    or (p0 < q0 and p1 < q1)):
                out.append((p0, q0, p1, q1, mode))
    return out


@pytest.mark.parametrize("p0, q0, p1, q1, mode", _oa_shapes_2d([50, 47, 6, 4]))
def test_oa_2d_noaxes(p0, q0, p1, q1, mode):
    # ported: TestOAConvolve::test_2d_noaxes (real-valued)
    rng = _rng(p0 * 1000 + q0 * 10 + p1)
    a, b = rng.random((p0, p1)), rng.random((q0, q1))
    check_conv(flcc.convolve(a, b, mode=mode), peer("convolve", a, b, mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("which", ["in1", "in2"])
def test_fft_nan(name, bad, ndim, which):
    # ported: TestFFTConvolve::test_fft_nan (the peer warns; flcc raises Error)
    rng = _rng(43876432987)
    a = rng.standard_normal((12,) * ndim)
    b = rng.standard_normal((4,) * ndim)
    (a if which == "in1" else b)[(1,) * ndim] = bad
    for mode in MODES:
        with pytest.raises(flcc.Error) as info:
            ours(name)(a, b, mode=mode)
        assert isinstance(info.value.code, int)


def test_fft_nan_long_signal():
    # ported: TestFFTConvolve::test_fft_nan (original sizes: 1000 and 200 taps)
    rng = np.random.default_rng(43876432987)
    sig = rng.standard_normal(1000)
    coeffs = signal.firwin(200, 0.2)
    for val in [np.nan, np.inf]:
        sig[100] = val
        with pytest.raises(flcc.Error):
            flcc.convolve(sig, coeffs, mode="same")
    with pytest.raises(flcc.Error):
        flcc.convolve(np.float32([1, np.nan, 2]), np.float32([1, 1]))


def test_convolve_longdtype_input():
    # ported: test_convolve_longdtype_input (real longdouble only)
    rng = _rng(5)
    x = rng.random((27, 27)).astype(np.longdouble)
    y = rng.random((4, 4)).astype(np.longdouble)
    check_conv(flcc.convolve(x, y), peer("convolve", x, y))


# --------------------------------------------------------------------------
# ported: TestCorrelateReal / TestCorrelate / TestCorrelate2d
# --------------------------------------------------------------------------
CORR_DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32",
               "uint64", "int64", "float32", "float64", "float16", "bool"]


def _rank1(dt):
    a = np.linspace(0, 3, 4).astype(dt)
    b = np.linspace(1, 2, 2).astype(dt)
    return a, b, direct_correlate(a, b, "full")


def _rank3(dt, order="F"):
    a = np.linspace(0, 39, 40).reshape((2, 4, 5), order=order).astype(dt)
    b = np.linspace(0, 23, 24).reshape((2, 3, 4), order=order).astype(dt)
    return a, b, direct_correlate(a, b, "full")


@pytest.mark.parametrize("dt", CORR_DTYPES)
def test_rank1_valid(dt):
    # ported: TestCorrelateReal::test_rank1_valid
    a, b, y_r = _rank1(dt)
    check_conv(flcc.correlate(a, b, "valid"), y_r[1:4])
    check_conv(flcc.correlate(b, a, "valid"), y_r[1:4][::-1])


@pytest.mark.parametrize("dt", CORR_DTYPES)
def test_rank1_same(dt):
    # ported: TestCorrelateReal::test_rank1_same
    a, b, y_r = _rank1(dt)
    check_conv(flcc.correlate(a, b, "same"), y_r[:-1])


@pytest.mark.parametrize("dt", CORR_DTYPES)
def test_rank1_full(dt):
    # ported: TestCorrelateReal::test_rank1_full
    a, b, y_r = _rank1(dt)
    if dt != "bool":
        np.testing.assert_array_equal(y_r, [0, 2, 5, 8, 3])
    check_conv(flcc.correlate(a, b, "full"), y_r)


@pytest.mark.parametrize("dt", CORR_DTYPES)
def test_rank3_valid(dt):
    # ported: TestCorrelateReal::test_rank3_valid
    a, b, y_r = _rank3(dt)
    check_conv(flcc.correlate(a, b, "valid"), y_r[1:2, 2:4, 3:5])
    check_conv(flcc.correlate(b, a, "valid"), y_r[1:2, 2:4, 3:5][::-1, ::-1, ::-1])


@pytest.mark.parametrize("dt", CORR_DTYPES)
def test_rank3_same(dt):
    # ported: TestCorrelateReal::test_rank3_same
    a, b, y_r = _rank3(dt)
    check_conv(flcc.correlate(a, b, "same"), y_r[0:-1, 1:-1, 1:-2])


@pytest.mark.parametrize("dt", CORR_DTYPES)
def test_rank3_all(dt):
    # ported: TestCorrelateReal::test_rank3_all
    a, b, y_r = _rank3(dt)
    if dt == "float64":
        assert y_r[0, 0, :4].tolist() == [0.0, 184.0, 504.0, 912.0]
    check_conv(flcc.correlate(a, b), y_r)


@pytest.mark.parametrize("dt", ["float32", "float64", "int16"])
def test_method_fortran_order(dt):
    # ported: TestCorrelateReal::test_method (Fortran-ordered rank-3 input)
    a, b, y_r = _rank3(dt, order="F")
    assert not a.flags.c_contiguous
    check_conv(flcc.correlate(a, b), y_r)
    check_conv(flcc.correlate(a, b), peer("correlate", a, b))


def test_numpy_fastpath():
    # ported: TestCorrelate::test_numpy_fastpath
    check_conv(flcc.correlate([1, 2, 3], [4, 5], mode="same"), [5, 14, 23])
    check_conv(flcc.correlate([1, 2, 3], [4, 5, 6], mode="same"), [17, 32, 23])
    check_conv(flcc.correlate([1, 2, 3], [4, 5, 6], mode="full"),
               [6, 17, 32, 23, 12])
    check_conv(flcc.correlate([1, 2, 3], [4, 5, 6], mode="valid"), [32])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("behind", [True, False])
@pytest.mark.parametrize("input_size", [100, 101, 1000, 1001])
def test_correlation_lags(mode, behind, input_size):
    # ported: test_correlation_lags (peak of flcc.correlate at the true lag)
    rng = np.random.RandomState(0)
    in1 = rng.standard_normal(input_size)
    offset = int(input_size / 10)
    if behind:
        in2 = np.concatenate([rng.standard_normal(offset), in1])
        expected = -offset
    else:
        in2 = in1[offset:]
        expected = offset
    corr = flcc.correlate(in1, in2, mode=mode)
    lags = signal.correlation_lags(in1.size, in2.size, mode=mode)
    assert lags.shape == corr.shape
    assert lags[np.argmax(corr)] == expected
    check_conv(corr, peer("correlate", in1, in2, mode))


@pytest.mark.parametrize("mode", MODES)
def test_consistency_correlate_funcs(mode):
    # ported: TestCorrelate2d::test_consistency_correlate_funcs and _2
    a = np.arange(5)
    b = np.array([3.2, 1.4, 3])
    check_conv(flcc.correlate(a, b, mode=mode), np.correlate(a, b, mode=mode))
    check_conv(flcc.correlate([a], [b], mode=mode)[0],
               signal.correlate2d([a], [b], mode=mode)[0])
    if mode == "valid":   # gh-5897
        check_conv(flcc.correlate(b, a, mode=mode),
                   np.correlate(b, a, mode=mode))
        check_conv(flcc.correlate([b], [a], mode=mode),
                   signal.correlate2d([b], [a], mode=mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_swap_full_same_real(name):
    # ported: TestCorrelateComplex::test_swap_full / test_swap_same (real part):
    # the second input longer than the first
    d = np.array([0.0, 1.0, 2.0])
    k = np.array([1.0, 2.0, 3.0, 4.0])
    for mode in MODES:
        check_conv(ours(name)(d, k, mode=mode), peer(name, d, k, mode))
    if name == "correlate":
        check_conv(flcc.correlate(d, k), [0, 4, 11, 8, 5, 2])
        check_conv(flcc.correlate(d, k, mode="same"), [4, 11, 8])


# --------------------------------------------------------------------------
# random data against the peer
# --------------------------------------------------------------------------
def _cases(shapes1, shapes2):
    return [(s1, s2) for s1 in shapes1 for s2 in shapes2]


CASES_1D = _cases([(1,), (2,), (7,), (64,), (1000,)],
                  [(1,), (2,), (3,), (8,), (9,), (33,), (1200,)])
CASES_2D = _cases([(1, 1), (5, 7), (32, 33), (128, 128)],
                  [(1, 1), (3, 3), (4, 4), (2, 5), (9, 8), (16, 16), (40, 30)])
CASES_3D = _cases([(1, 1, 1), (6, 7, 8), (24, 24, 24), (20, 16, 12)],
                  [(1, 1, 1), (3, 3, 3), (2, 4, 3), (5, 5, 5), (8, 8, 8),
                   (9, 10, 11)])


def _run_random(name, s1, s2, mode, seed, kind="normal"):
    rng = _rng(seed)
    if kind == "normal":
        a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    elif kind == "u01":
        a, b = rng.random(s1), rng.random(s2)
    elif kind == "u8":
        a = rng.integers(0, 256, s1).astype(np.uint8)
        b = rng.integers(0, 256, s2).astype(np.uint8)
    else:
        a = rng.integers(0, 65536, s1).astype(np.uint16)
        b = rng.integers(0, 65536, s2).astype(np.uint16)
    try:
        ref = peer(name, a, b, mode)
    except ValueError:
        # valid mode where neither input dominates
        with pytest.raises(ValueError):
            ours(name)(a, b, mode=mode)
        return
    check_conv(ours(name)(a, b, mode=mode), ref)


def _seed(*parts):
    # stable across processes (str hashing is randomised)
    return zlib.crc32(repr(parts).encode())


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1, s2", CASES_1D, ids=[_pid(c) for c in CASES_1D])
def test_random_1d(name, mode, s1, s2):
    _run_random(name, s1, s2, mode, _seed(s1, s2, 1))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1, s2", CASES_2D, ids=[_pid(c) for c in CASES_2D])
def test_random_2d(name, mode, s1, s2):
    _run_random(name, s1, s2, mode, _seed(s1, s2, 2))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1, s2", CASES_3D, ids=[_pid(c) for c in CASES_3D])
def test_random_3d(name, mode, s1, s2):
    _run_random(name, s1, s2, mode, _seed(s1, s2, 3))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1, s2", [((128, 128), (16, 16)), ((24, 24, 24), (5, 5, 5)),
                                    ((16, 16), (128, 128)), ((3000,), (64,))])
@pytest.mark.parametrize("kind", ["u01", "u8", "u16"])
def test_random_value_ranges(name, mode, s1, s2, kind):
    _run_random(name, s1, s2, mode, _seed(s1, s2, kind), kind)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1, s2", [((7,), (7,)), ((6, 5), (6, 5)),
                                    ((4, 5, 6), (4, 5, 6)), ((8,), (12,)),
                                    ((10, 3), (4, 9)), ((3, 12, 4), (5, 4, 4))])
def test_kernel_as_large_or_larger(name, mode, s1, s2):
    # template equal to / larger than the image (full/same), swap in valid
    _run_random(name, s1, s2, mode, _seed(s1, s2, 4))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
def test_oracle_agrees(name, mode):
    # independent shift-and-add oracle on 3-D data, odd and even kernels
    rng = _rng(6)
    oracle = direct_convolve if name == "convolve" else direct_correlate
    for s1, s2 in [((9, 8, 7), (3, 2, 4)), ((5, 6, 7), (5, 6, 7)),
                   ((4, 4, 4), (6, 5, 7))]:
        # the last pair has in1 smaller than in2 in every axis (valid swaps)
        a, b = rng.standard_normal(s1), rng.standard_normal(s2)
        ref = oracle(a, b, mode)
        check_conv(ours(name)(a, b, mode=mode), ref)
        check_conv(ours(name)(a, b, mode=mode), peer(name, a, b, mode))


def test_correlate_is_convolve_with_flipped_kernel():
    rng = _rng(7)
    a, b = rng.standard_normal((20, 17)), rng.standard_normal((5, 4))
    for mode in MODES:
        np.testing.assert_allclose(flcc.correlate(a, b, mode=mode),
                                   flcc.convolve(a, b[::-1, ::-1], mode=mode),
                                   rtol=0, atol=1e-4)


# --------------------------------------------------------------------------
# dtypes, layout, misc input handling
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("bad", ["object", "str", "complex64", "complex128"])
@pytest.mark.parametrize("which", ["in1", "in2"])
def test_bad_dtype_raises_typeerror(name, bad, which):
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 2))
    if which == "in1":
        a = a.astype(bad)
    else:
        b = b.astype(bad)
    with pytest.raises(TypeError):
        ours(name)(a, b)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_object_scalar_and_string_list_raise_typeerror(name):
    with pytest.raises(TypeError):
        ours(name)(np.array(2.0, dtype=object), np.array(3.0, dtype=object))
    with pytest.raises(TypeError):
        ours(name)(["a", "b"], [1.0])


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i4", "<f8", ">u2"])
def test_byte_order(name, dtype):
    rng = _rng(8)
    a = (100 * rng.random((17, 13))).astype(dtype)
    b = (100 * rng.random((4, 5))).astype(dtype)
    for mode in MODES:
        check_conv(ours(name)(a, b, mode=mode), peer(name, a, b, mode))


def _layouts(a):
    idx = tuple(slice(None, None, -1) for _ in range(a.ndim))
    rep = a
    for ax in range(a.ndim):
        rep = np.repeat(rep, 2, axis=ax)
    step = rep[tuple(slice(None, None, 2) for _ in range(a.ndim))]
    return {
        "step": step,
        "reverse": np.ascontiguousarray(a[idx])[idx],
        "fortran": np.asfortranarray(a),
        "transpose": np.ascontiguousarray(a.T).T,
        "offset": np.pad(a, 1)[tuple(slice(1, -1) for _ in range(a.ndim))],
    }


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("layout", ["step", "reverse", "fortran", "transpose",
                                    "offset"])
@pytest.mark.parametrize("shapes", [((50,), (7,)), ((20, 17), (5, 4)),
                                    ((9, 10, 11), (3, 2, 4))])
def test_noncontiguous(name, layout, shapes):
    rng = _rng(9)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    la, lb = _layouts(a)[layout], _layouts(b)[layout]
    np.testing.assert_array_equal(la, a)
    np.testing.assert_array_equal(lb, b)
    for mode in MODES:
        expected = np.asarray(ours(name)(a, b, mode=mode))
        for x, y in [(la, b), (a, lb), (la, lb)]:
            got = ours(name)(x, y, mode=mode)
            tol = 1e-6 * max(np.max(np.abs(expected)), 1.0)
            np.testing.assert_allclose(got, expected, rtol=0, atol=tol)
            check_conv(got, peer(name, a, b, mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_inputs_not_modified_and_readonly(name):
    rng = _rng(10)
    a, b = rng.standard_normal((30, 20)), rng.standard_normal((5, 6))
    a.setflags(write=False)
    b.setflags(write=False)
    a0, b0 = a.copy(), b.copy()
    for mode in MODES:
        y = ours(name)(a, b, mode=mode)
        assert not np.shares_memory(y, a) and not np.shares_memory(y, b)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_array_like_inputs(name):
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    b = ((1, 0), (0, -1))
    for mode in MODES:
        check_conv(ours(name)(a, b, mode=mode), peer(name, a, b, mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_mixed_dtypes(name):
    rng = _rng(11)
    a = rng.integers(-50, 50, (25, 25)).astype(np.int16)
    b = rng.random((4, 4)).astype(np.float32)
    for mode in MODES:
        check_conv(ours(name)(a, b, mode=mode), peer(name, a, b, mode))
        check_conv(ours(name)(b, a, mode=mode), peer(name, b, a, mode))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_zero_rank_with_nonzero_rank_raises(name):
    # ported: TestAllFreqConvolves::test_mismatched_dims (0-d vs 1-d)
    with pytest.raises(ValueError):
        ours(name)(np.array(2.0), np.ones(3))
    with pytest.raises(ValueError):
        ours(name)(np.ones((2, 2)), np.array(2.0))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("t1, t2", [("uint8", "bool"), ("float32", "float32"),
                                    ("float64", "int16")])
def test_zero_rank_dtypes(name, t1, t2):
    # 0-d inputs of any real dtype: the product, as a 0-d float32 result
    y = np.asarray(ours(name)(np.array(3, dtype=t1), np.array(True, dtype=t2)))
    assert y.shape == () and y.dtype == np.float32 and y == 3.0


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_zero_rank_nonfinite(name, dtype, bad):
    with pytest.raises(flcc.Error):
        ours(name)(np.array(bad, dtype=dtype), np.array(1.0, dtype=dtype))
    with pytest.raises(flcc.Error):
        ours(name)(np.array(1.0, dtype=dtype), np.array(bad, dtype=dtype))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_all_zero_and_impulse(name):
    z = np.zeros((8, 9))
    k = np.zeros((3, 3))
    k[1, 1] = 1.0
    for mode in MODES:
        y = ours(name)(z, k, mode=mode)
        np.testing.assert_array_equal(y, 0.0)
    rng = _rng(12)
    a = rng.standard_normal((8, 9))
    check_conv(ours(name)(a, k, mode="same"), a)
