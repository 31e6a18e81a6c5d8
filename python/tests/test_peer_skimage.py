"""flcc.match_template / flcc.normxcorr2 checked against scikit-image.

Peer: ``skimage.feature.match_template`` (and, for normxcorr2, the same
function applied to an image zero-padded by ``T-1`` on every side, which is
MATLAB's ``normxcorr2`` full-region definition).

Tests ported from scikit-image's own suite
(``tests/skimage/feature/test_template.py``) name their origin in a comment;
the rest compare flcc to the peer on random data or check the rules of the
flcc API (float32 results, TypeError/ValueError/flcc.Error handling, exact 0
on zero-variance panels, non-contiguous inputs).

Set FLCC_TEST_IMPL=peer_shim to run the suite against the reference shim.
"""

import importlib
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

skfeature = pytest.importorskip("skimage.feature")
from skimage import data as skdata  # noqa: E402
from skimage.morphology import diamond  # noqa: E402

flcc = importlib.import_module(os.environ.get("FLCC_TEST_IMPL", "flcc"))

LCC_ATOL = 1e-5
PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "mean"]
REAL_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
               np.uint32, np.int64, np.uint64, np.float16, np.float32,
               np.float64]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _rng(seed):
    return np.random.default_rng(seed)


def ref_match(image, template, **kw):
    """The peer evaluated in float64."""
    return skfeature.match_template(np.asarray(image, dtype=np.float64),
                                    np.asarray(template, dtype=np.float64),
                                    **kw)


def ref_normxcorr2(template, image):
    template = np.asarray(template, dtype=np.float64)
    image = np.asarray(image, dtype=np.float64)
    pad = [(t - 1, t - 1) for t in template.shape]
    return skfeature.match_template(np.pad(image, pad), template,
                                    pad_input=False)


def check_lcc(r, ref, atol=LCC_ATOL):
    """float32, same shape, finite, |r| <= 1 and within atol of ref."""
    assert isinstance(r, np.ndarray)
    assert r.dtype == np.float32
    assert r.shape == ref.shape
    assert np.all(np.isfinite(r)), "non-finite output"
    assert np.max(np.abs(r)) <= 1.0, f"|r| > 1: {np.max(np.abs(r))!r}"
    if r.size:
        err = np.max(np.abs(r.astype(np.float64) - ref))
        assert err <= atol, f"max |r - r_ref| = {err:.3e} > {atol:.0e}"


def check_bounded(r):
    assert r.dtype == np.float32
    assert np.all(np.isfinite(r)), "non-finite output"
    assert np.max(np.abs(r)) <= 1.0


def _uniform(rng, shape, kind):
    if kind == "u01":
        return rng.random(shape)
    if kind == "u8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if kind == "u16":
        return rng.integers(0, 65536, shape).astype(np.uint16)
    raise AssertionError(kind)


# --------------------------------------------------------------------------
# ported from scikit-image tests/skimage/feature/test_template.py
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_template(dtype):
    # ported: test_template (scaled from 400x400 / 100x100 to 128x128 / 32x32)
    size = 32
    image = np.full((128, 128), 0.5, dtype=dtype)
    target = (0.1 * (np.tri(size) + np.tri(size)[::-1])).astype(dtype)
    target_positions = [(16, 16), (72, 72)]
    for x, y in target_positions:
        image[x:x + size, y:y + size] = target
    rng = np.random.RandomState(971876736)
    image += (0.1 * rng.uniform(size=image.shape)).astype(dtype)

    result = flcc.match_template(image, target)
    assert result.dtype == np.float32  # flcc always returns float32
    check_lcc(result, ref_match(image, target))

    positions = skfeature.peak_local_max(result, min_distance=5)
    if len(positions) > 2:
        order = np.argsort(result[tuple(positions.T)])[::-1]
        positions = positions[order][:2]
    positions = positions[np.argsort(positions[:, 0])]
    assert len(positions) == 2
    for expected, found in zip(target_positions, positions):
        np.testing.assert_array_equal(found, expected)


def test_normalization():
    # ported: test_normalization (perfect match -> 1, inverted match -> -1)
    n, N = 5, 20
    ipos, jpos = 2, 3
    ineg, jneg = 12, 11
    image = np.full((N, N), 0.5)
    image[ipos:ipos + n, jpos:jpos + n] = 1
    image[ineg:ineg + n, jneg:jneg + n] = 0
    template = np.zeros((n + 2, n + 2))
    template[1:1 + n, 1:1 + n] = 1

    result = flcc.match_template(image, template)
    order = np.argsort(result.ravel())
    imin = np.unravel_index(order[0], result.shape)
    imax = np.unravel_index(order[-1], result.shape)
    assert (imin[0] + 1, imin[1] + 1) == (ineg, jneg)
    assert (imax[0] + 1, imax[1] + 1) == (ipos, jpos)
    assert abs(result.ravel()[order[0]] - (-1)) <= 1e-5
    assert abs(result.ravel()[order[-1]] - 1) <= 1e-5


def test_no_nans():
    # ported: test_no_nans (nearly constant image must not give NaN)
    rng = np.random.RandomState(2813589124)
    image = 0.5 + 1e-9 * rng.normal(size=(20, 20))
    template = np.ones((6, 6))
    template[:3, :] = 0
    result = flcc.match_template(image, template)
    check_bounded(result)


def test_switched_arguments():
    # ported: test_switched_arguments (template larger than image)
    image = np.ones((5, 5))
    template = np.ones((3, 3))
    with pytest.raises(ValueError):
        flcc.match_template(template, image)


def test_pad_input():
    # ported: test_pad_input (full and half templates at the image edges)
    template = 0.5 * diamond(2)
    image = 0.5 * np.ones((9, 19))
    mid = slice(2, 7)
    image[mid, :3] -= template[:, -3:]
    image[mid, 4:9] += template
    image[mid, -9:-4] -= template
    image[mid, -3:] += template[:, :3]

    result = flcc.match_template(image, template, pad_input=True,
                                 constant_values=image.mean())
    check_bounded(result)
    order = np.argsort(result.ravel())
    _, j = np.unravel_index(order[:2], result.shape)
    np.testing.assert_array_equal(j, (12, 0))
    _, j = np.unravel_index(order[-2:], result.shape)
    np.testing.assert_array_equal(j, (18, 6))


def test_3d():
    # ported: test_3d
    rng = np.random.RandomState(3113877123)
    template = rng.rand(3, 3, 3)
    image = np.zeros((12, 12, 12))
    image[3:6, 5:8, 4:7] = template
    result = flcc.match_template(image, template)
    assert result.shape == (10, 10, 10)
    assert np.unravel_index(result.argmax(), result.shape) == (3, 5, 4)
    check_lcc(result, ref_match(image, template))


def test_3d_pad_input():
    # ported: test_3d_pad_input
    rng = np.random.RandomState(3122599642)
    template = rng.rand(3, 3, 3)
    image = np.zeros((12, 12, 12))
    image[3:6, 5:8, 4:7] = template
    result = flcc.match_template(image, template, pad_input=True)
    assert result.shape == (12, 12, 12)
    assert np.unravel_index(result.argmax(), result.shape) == (4, 6, 5)
    check_lcc(result, ref_match(image, template, pad_input=True))


def test_padding_reflect():
    # ported: test_padding_reflect
    template = diamond(2)
    image = np.zeros((10, 10))
    image[2:7, :3] = template[:, -3:]
    result = flcc.match_template(image, template, pad_input=True,
                                 mode="reflect")
    assert np.unravel_index(result.argmax(), result.shape) == (4, 0)
    check_lcc(result, ref_match(image, template, pad_input=True,
                                mode="reflect"))


@pytest.mark.parametrize("image_shape, template_shape", [
    ((3, 3), (5, 5, 1)),        # image 2-D, template 3-D
    ((3, 3, 2), (5, 5)),        # image 3-D, template 2-D
    ((3, 3, 2), (5, 5, 3, 3)),  # template 4-D
])
def test_wrong_input(image_shape, template_shape):
    # ported: test_wrong_input (skimage calls match_template(template, image))
    with pytest.raises(ValueError):
        flcc.match_template(np.ones(image_shape), np.ones(template_shape))


def test_bounding_values():
    # ported: test_bounding_values (data.page() cropped to 128x128)
    image = skdata.page()[:128, :128].astype(np.float64) / 255.0
    template = np.zeros((3, 3))
    template[1, 1] = 1
    result = flcc.match_template(image, template)
    assert result.max() < 1 + 1e-7
    assert result.min() > -1 - 1e-7
    check_bounded(result)


@pytest.mark.parametrize("pad_input", [False, True])
def test_docstring_example(pad_input):
    # ported: the Examples section of skimage.feature.match_template
    template = np.zeros((3, 3))
    template[1, 1] = 1
    image = np.zeros((6, 6))
    image[1, 1] = 1
    image[4, 4] = -1
    result = flcc.match_template(image, template, pad_input=pad_input)
    e = 0.125
    if not pad_input:
        expected = [[1, -e, 0, 0], [-e, -e, 0, 0], [0, 0, e, e], [0, 0, e, -1]]
    else:
        expected = [[-e, -e, -e, 0, 0, 0], [-e, 1, -e, 0, 0, 0],
                    [-e, -e, -e, 0, 0, 0], [0, 0, 0, e, e, e],
                    [0, 0, 0, e, -1, e], [0, 0, 0, e, e, e]]
    check_lcc(result, np.array(expected, dtype=np.float64))


# --------------------------------------------------------------------------
# random data against the peer: 2-D
# --------------------------------------------------------------------------
TEMPLATES_2D = [(3, 3), (4, 4), (5, 8), (8, 5), (1, 9), (9, 1), (16, 16),
                (31, 17)]


@pytest.mark.parametrize("tshape", TEMPLATES_2D)
@pytest.mark.parametrize("ishape", [(64, 48), (128, 128)])
def test_random_2d_valid(ishape, tshape):
    rng = _rng(zlib.crc32(repr((ishape, tshape)).encode()))
    image, template = rng.random(ishape), rng.random(tshape)
    r = flcc.match_template(image, template)
    assert r.shape == tuple(i - t + 1 for i, t in zip(ishape, tshape))
    check_lcc(r, ref_match(image, template))


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("tshape", [(3, 3), (4, 4), (5, 8), (16, 16),
                                    (31, 17)])
def test_random_2d_pad_input(tshape, mode):
    rng = _rng(7 + len(mode) * 100 + tshape[0] * 10 + tshape[1])
    image, template = rng.random((64, 48)), rng.random(tshape)
    r = flcc.match_template(image, template, pad_input=True, mode=mode)
    assert r.shape == image.shape
    check_lcc(r, ref_match(image, template, pad_input=True, mode=mode))


@pytest.mark.parametrize("cval", [0.0, 0.5, 1.0, -3.0, 250.0])
@pytest.mark.parametrize("tshape", [(3, 3), (6, 5)])
def test_random_2d_constant_values(tshape, cval):
    rng = _rng(11)
    image, template = rng.random((40, 50)), rng.random(tshape)
    r = flcc.match_template(image, template, pad_input=True,
                            mode="constant", constant_values=cval)
    check_lcc(r, ref_match(image, template, pad_input=True, mode="constant",
                           constant_values=cval))


@pytest.mark.parametrize("mode", PAD_MODES)
def test_mode_ignored_without_padding(mode):
    # with pad_input=False skimage pads but crops the padded part away again
    rng = _rng(12)
    image, template = rng.random((30, 40)), rng.random((5, 6))
    r = flcc.match_template(image, template, pad_input=False, mode=mode,
                            constant_values=7.0)
    check_lcc(r, ref_match(image, template))


@pytest.mark.parametrize("pad_input", [False, True])
@pytest.mark.parametrize("mode", PAD_MODES)
def test_template_same_size_as_image(pad_input, mode):
    rng = _rng(13)
    image, template = rng.random((12, 9)), rng.random((12, 9))
    r = flcc.match_template(image, template, pad_input=pad_input, mode=mode)
    assert r.shape == ((12, 9) if pad_input else (1, 1))
    check_lcc(r, ref_match(image, template, pad_input=pad_input, mode=mode))


def test_self_match_is_one():
    rng = _rng(14)
    image = rng.random((50, 60))
    template = image[10:25, 30:41].copy()
    r = flcc.match_template(image, template)
    assert np.unravel_index(np.argmax(r), r.shape) == (10, 30)
    assert abs(r[10, 30] - 1.0) <= 1e-5


@pytest.mark.parametrize("pad_input", [False, True])
@pytest.mark.parametrize("ishape, tshape", [((1, 64), (1, 9)),
                                            ((64, 1), (9, 1)),
                                            ((2, 64), (2, 9))])
def test_thin_images_2d(ishape, tshape, pad_input):
    rng = _rng(15)
    image, template = rng.random(ishape), rng.random(tshape)
    r = flcc.match_template(image, template, pad_input=pad_input)
    check_lcc(r, ref_match(image, template, pad_input=pad_input))


@pytest.mark.parametrize("kind", ["u01", "u8", "u16"])
@pytest.mark.parametrize("pad_input", [False, True])
def test_value_ranges_2d(kind, pad_input):
    rng = _rng({"u01": 1, "u8": 2, "u16": 3}[kind])
    image = _uniform(rng, (128, 128), kind)
    template = _uniform(rng, (11, 13), kind)
    r = flcc.match_template(image, template, pad_input=pad_input)
    check_lcc(r, ref_match(image, template, pad_input=pad_input))


@pytest.mark.parametrize("kind", ["u8", "u16"])
def test_value_ranges_as_float(kind):
    # the same integer ranges, stored as float64
    rng = _rng(4)
    image = _uniform(rng, (96, 80), kind).astype(np.float64)
    template = _uniform(rng, (9, 9), kind).astype(np.float64)
    check_lcc(flcc.match_template(image, template),
              ref_match(image, template))


# --------------------------------------------------------------------------
# random data against the peer: 3-D
# --------------------------------------------------------------------------
TEMPLATES_3D = [(3, 3, 3), (2, 3, 4), (4, 4, 4), (5, 2, 7), (8, 8, 8),
                (1, 5, 5)]


@pytest.mark.parametrize("tshape", TEMPLATES_3D)
@pytest.mark.parametrize("ishape", [(24, 24, 24), (20, 16, 12)])
def test_random_3d_valid(ishape, tshape):
    rng = _rng(zlib.crc32(repr((ishape, tshape)).encode()))
    image, template = rng.random(ishape), rng.random(tshape)
    r = flcc.match_template(image, template)
    assert r.shape == tuple(i - t + 1 for i, t in zip(ishape, tshape))
    check_lcc(r, ref_match(image, template))


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("tshape", [(3, 3, 3), (2, 3, 4), (6, 5, 4)])
def test_random_3d_pad_input(tshape, mode):
    rng = _rng(21 + len(mode))
    image, template = rng.random((16, 14, 12)), rng.random(tshape)
    r = flcc.match_template(image, template, pad_input=True, mode=mode)
    assert r.shape == image.shape
    check_lcc(r, ref_match(image, template, pad_input=True, mode=mode))


def test_random_3d_constant_values():
    rng = _rng(22)
    image, template = rng.random((12, 13, 14)), rng.random((3, 4, 5))
    r = flcc.match_template(image, template, pad_input=True,
                            constant_values=0.75)
    check_lcc(r, ref_match(image, template, pad_input=True,
                           constant_values=0.75))


@pytest.mark.parametrize("kind", ["u8", "u16"])
def test_value_ranges_3d(kind):
    rng = _rng(23)
    image = _uniform(rng, (24, 24, 24), kind)
    template = _uniform(rng, (4, 3, 5), kind)
    check_lcc(flcc.match_template(image, template),
              ref_match(image, template))


@pytest.mark.parametrize("pad_input", [False, True])
def test_thin_image_3d(pad_input):
    rng = _rng(24)
    image, template = rng.random((1, 20, 18)), rng.random((1, 4, 3))
    r = flcc.match_template(image, template, pad_input=pad_input)
    check_lcc(r, ref_match(image, template, pad_input=pad_input))


# --------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------
def _sample(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return rng.integers(lo, hi + 1, shape).astype(dtype)
    return rng.random(shape).astype(dtype)


@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_image_dtypes(dtype):
    rng = _rng(31)
    image = _sample(rng, (40, 36), dtype)
    template = rng.random((5, 4))
    r = flcc.match_template(image, template)
    check_lcc(r, ref_match(image, template))


@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_template_dtypes(dtype):
    rng = _rng(32)
    image = rng.random((40, 36))
    template = _sample(rng, (6, 5), dtype)
    r = flcc.match_template(image, template, pad_input=True)
    check_lcc(r, ref_match(image, template, pad_input=True))


def test_bool_image_and_template_3d():
    rng = _rng(33)
    image = rng.random((16, 16, 16)) < 0.5
    template = rng.random((3, 4, 3)) < 0.5
    check_lcc(flcc.match_template(image, template),
              ref_match(image, template))


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i2", "<f8"])
def test_byte_order(dtype):
    rng = _rng(34)
    scale = 1000.0 if np.dtype(dtype).kind == "i" else 1.0
    image = (scale * rng.random((30, 30))).astype(dtype)
    template = (scale * rng.random((5, 5))).astype(dtype)
    assert image.dtype.byteorder in "<>=|"
    check_lcc(flcc.match_template(image, template),
              ref_match(image, template))


def test_longdouble():
    rng = _rng(35)
    image = rng.random((30, 30)).astype(np.longdouble)
    template = rng.random((5, 5)).astype(np.longdouble)
    check_lcc(flcc.match_template(image, template),
              ref_match(image, template))


@pytest.mark.parametrize("which", ["image", "template"])
@pytest.mark.parametrize("bad", ["complex64", "complex128", "object", "str"])
def test_bad_dtype_raises_typeerror(which, bad):
    image, template = np.ones((8, 8)), np.ones((3, 3))
    image[0, 0] = template[0, 0] = 2.0
    arr = image if which == "image" else template
    if bad == "str":
        arr = arr.astype(str)
    else:
        arr = arr.astype(bad)
    if which == "image":
        image = arr
    else:
        template = arr
    with pytest.raises(TypeError):
        flcc.match_template(image, template)


# --------------------------------------------------------------------------
# zero-variance panels and numerical robustness
# --------------------------------------------------------------------------
@pytest.mark.parametrize("value, dtype", [(0.3, np.float64), (0.0, np.float64),
                                          (7, np.uint8), (1e4, np.float32)])
@pytest.mark.parametrize("pad_input", [False, True])
def test_flat_image(value, dtype, pad_input):
    image = np.full((20, 24), value, dtype=dtype)
    template = _rng(41).random((4, 5))
    r = flcc.match_template(image, template, pad_input=pad_input,
                            mode="edge")
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, 0.0)


@pytest.mark.parametrize("value", [0.3, 1.0, 0.0, -2.5])
@pytest.mark.parametrize("ndim", [2, 3])
def test_flat_template(value, ndim):
    rng = _rng(42)
    image = rng.random((16,) * ndim)
    template = np.full((3,) * ndim, value)
    r = flcc.match_template(image, template)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, 0.0)
    r = flcc.match_template(image, template, pad_input=True)
    np.testing.assert_array_equal(r, 0.0)


def test_single_pixel_template():
    # a 1x1 template has zero variance: skimage returns 0 everywhere
    rng = _rng(43)
    image = rng.random((20, 20))
    r = flcc.match_template(image, np.array([[0.7]]))
    np.testing.assert_array_equal(r, 0.0)
    np.testing.assert_array_equal(ref_match(image, [[0.7]]), 0.0)


@pytest.mark.parametrize("value", [0.5, 0.3, 200.0])
def test_flat_patch_gives_exact_zero(value):
    rng = _rng(44)
    image = rng.random((64, 64))
    image[10:40, 20:50] = value                      # 30x30 flat panel
    template = rng.random((5, 7))
    r = flcc.match_template(image, template)
    check_bounded(r)
    # windows fully inside the panel start at rows 10..35, cols 20..43
    np.testing.assert_array_equal(r[10:36, 20:44], 0.0)
    assert np.count_nonzero(r[:5]) > 0


def test_flat_patch_3d():
    rng = _rng(45)
    image = rng.random((20, 20, 20))
    image[2:12, 4:14, 6:16] = 0.25
    template = rng.random((3, 4, 5))
    r = flcc.match_template(image, template)
    check_bounded(r)
    np.testing.assert_array_equal(r[2:10, 4:11, 6:12], 0.0)


def test_flat_bool_windows_match_peer():
    # integer-valued data: the peer's own eps mask gives exact zeros too
    rng = _rng(46)
    image = rng.random((48, 48)) < 0.8
    template = rng.random((3, 3)) < 0.5
    template[0, 0], template[0, 1] = True, False
    ref = ref_match(image, template)
    r = flcc.match_template(image, template)
    check_lcc(r, ref)
    np.testing.assert_array_equal(r[ref == 0], 0.0)


@pytest.mark.parametrize("offset", [1e2, 1e4, 1e6])
def test_large_offset_stays_bounded(offset):
    # like test_no_nans: large mean / small variance must not give NaN/Inf
    rng = _rng(47)
    image = offset + rng.random((64, 64))
    template = rng.random((7, 7))
    check_bounded(flcc.match_template(image, template))
    check_bounded(flcc.match_template(image, template, pad_input=True,
                                      mode="reflect"))


@pytest.mark.parametrize("scale", [2.0 ** 20, 2.0 ** -8])
def test_scale_invariance(scale):
    rng = _rng(48)
    image, template = rng.random((64, 64)), rng.random((9, 9))
    ref = ref_match(image, template)
    check_lcc(flcc.match_template(image * scale, template), ref)
    check_lcc(flcc.match_template(image, template * scale), ref)


def test_negative_values():
    rng = _rng(49)
    image = rng.standard_normal((64, 64))
    template = rng.standard_normal((8, 8))
    check_lcc(flcc.match_template(image, template),
              ref_match(image, template))


# --------------------------------------------------------------------------
# memory layout
# --------------------------------------------------------------------------
def _layouts_2d(a):
    return {
        "step": np.ascontiguousarray(np.repeat(np.repeat(a, 2, 0), 3, 1))[::2, ::3],
        "reverse": np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1],
        "fortran": np.asfortranarray(a),
        "transpose": np.ascontiguousarray(a.T).T,
        "offset": np.pad(a, 1)[1:-1, 1:-1],
    }


@pytest.mark.parametrize("layout", ["step", "reverse", "fortran",
                                    "transpose", "offset"])
@pytest.mark.parametrize("which", ["image", "template", "both"])
def test_noncontiguous_2d(layout, which):
    rng = _rng(51)
    image, template = rng.random((40, 33)), rng.random((6, 5))
    expected = flcc.match_template(image, template, pad_input=True)
    im = _layouts_2d(image)[layout] if which != "template" else image
    tp = _layouts_2d(template)[layout] if which != "image" else template
    np.testing.assert_array_equal(im, image)
    np.testing.assert_array_equal(tp, template)
    r = flcc.match_template(im, tp, pad_input=True)
    np.testing.assert_allclose(r, expected, rtol=0, atol=1e-6)
    check_lcc(r, ref_match(image, template, pad_input=True))


@pytest.mark.parametrize("layout", ["step", "fortran", "transpose"])
def test_noncontiguous_3d(layout):
    rng = _rng(52)
    image, template = rng.random((14, 12, 10)), rng.random((3, 4, 2))
    if layout == "step":
        im = np.repeat(image, 2, axis=1)[:, ::2, :]
    elif layout == "fortran":
        im = np.asfortranarray(image)
    else:
        im = np.ascontiguousarray(image.transpose(2, 0, 1)).transpose(1, 2, 0)
    np.testing.assert_array_equal(im, image)
    tp = np.asfortranarray(template)
    r = flcc.match_template(im, tp)
    np.testing.assert_allclose(r, flcc.match_template(image, template),
                               rtol=0, atol=1e-6)
    check_lcc(r, ref_match(image, template))


def test_inputs_not_modified_and_readonly():
    rng = _rng(53)
    image, template = rng.random((30, 30)), rng.random((4, 4))
    image.setflags(write=False)
    template.setflags(write=False)
    i0, t0 = image.copy(), template.copy()
    r = flcc.match_template(image, template, pad_input=True, mode="wrap")
    np.testing.assert_array_equal(image, i0)
    np.testing.assert_array_equal(template, t0)
    assert not np.shares_memory(r, image)


# --------------------------------------------------------------------------
# invalid arguments
# --------------------------------------------------------------------------
@pytest.mark.parametrize("ishape, tshape", [
    ((5, 5), (3, 3, 1)),
    ((5, 5, 3), (3, 3)),
    ((5, 5), (3,)),             # skimage crashes (IndexError); flcc must not
    ((5,), (3,)),               # 1-D image
    ((5, 5, 3, 3), (3, 3, 2, 2)),  # 4-D
    ((4, 4, 4, 4, 4), (2, 2, 2, 2, 2)),  # 5-D
    ((), ()),                   # 0-d
])
def test_bad_ndim_raises_valueerror(ishape, tshape):
    with pytest.raises(ValueError):
        flcc.match_template(np.ones(ishape), np.ones(tshape))


@pytest.mark.parametrize("ishape, tshape", [
    ((5, 5), (6, 3)), ((5, 5), (3, 6)), ((5, 5), (6, 6)),
    ((5, 5, 5), (5, 5, 6)), ((5, 6, 7), (6, 6, 6)),
])
@pytest.mark.parametrize("pad_input", [False, True])
def test_template_larger_than_image(ishape, tshape, pad_input):
    # same rule as test_switched_arguments, one axis at a time
    with pytest.raises(ValueError):
        flcc.match_template(np.ones(ishape), np.ones(tshape),
                            pad_input=pad_input)


@pytest.mark.parametrize("ishape, tshape", [((0, 5), (1, 1)), ((5, 5), (0, 3)),
                                            ((0, 0), (0, 0)),
                                            ((4, 0, 4), (1, 1, 1)),
                                            ((4, 4, 4), (2, 0, 2))])
def test_empty_inputs_raise_valueerror(ishape, tshape):
    # skimage rejects an empty image (check_nD) and crashes on an empty template
    with pytest.raises(ValueError):
        flcc.match_template(np.ones(ishape), np.ones(tshape))


@pytest.mark.parametrize("mode", ["bogus", "", "CONSTANT", "Reflect"])
@pytest.mark.parametrize("pad_input", [False, True])
def test_unknown_mode_raises_valueerror(mode, pad_input):
    # numpy.pad (used by the peer for any pad_input) rejects these
    with pytest.raises(ValueError):
        ref_match(np.ones((6, 6)), np.eye(3), pad_input=pad_input, mode=mode)
    with pytest.raises(ValueError):
        flcc.match_template(np.ones((6, 6)), np.eye(3), pad_input=pad_input,
                            mode=mode)


# --------------------------------------------------------------------------
# non-finite input
# --------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["image", "template"])
@pytest.mark.parametrize("ndim", [2, 3])
@pytest.mark.parametrize("pad_input", [False, True])
def test_nonfinite_raises_error(bad, where, ndim, pad_input):
    rng = _rng(61)
    image, template = rng.random((10,) * ndim), rng.random((3,) * ndim)
    target = image if where == "image" else template
    target[(1,) * ndim] = bad
    with pytest.raises(flcc.Error) as info:
        flcc.match_template(image, template, pad_input=pad_input)
    assert isinstance(info.value.code, int)


def test_nonfinite_float32_input_raises_error():
    image = np.ones((10, 10), dtype=np.float32)
    image[3, 4] = np.nan
    with pytest.raises(flcc.Error):
        flcc.match_template(image, np.eye(3, dtype=np.float32))


def test_error_is_exception_class():
    assert isinstance(flcc.Error, type) and issubclass(flcc.Error, Exception)


# --------------------------------------------------------------------------
# normxcorr2 (MATLAB full-region LCC)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("ishape, tshape", [
    ((64, 48), (3, 3)), ((64, 48), (8, 5)), ((64, 48), (16, 16)),
    ((128, 128), (31, 17)), ((20, 30), (20, 30)), ((40, 40), (1, 9)),
])
def test_normxcorr2_random(ishape, tshape):
    rng = _rng(71)
    image, template = rng.random(ishape), rng.random(tshape)
    r = flcc.normxcorr2(template, image)
    assert r.shape == tuple(i + t - 1 for i, t in zip(ishape, tshape))
    check_lcc(r, ref_normxcorr2(template, image))


@pytest.mark.parametrize("kind", ["u8", "u16"])
def test_normxcorr2_value_ranges(kind):
    rng = _rng(72)
    image = _uniform(rng, (96, 96), kind)
    template = _uniform(rng, (12, 10), kind)
    check_lcc(flcc.normxcorr2(template, image),
              ref_normxcorr2(template, image))


def test_normxcorr2_self_match():
    # the MATLAB documentation example: peak of 1 at (y + th - 1, x + tw - 1)
    rng = _rng(73)
    image = rng.random((60, 70))
    template = image[20:32, 41:50].copy()
    r = flcc.normxcorr2(template, image)
    peak = np.unravel_index(np.argmax(r), r.shape)
    assert peak == (20 + 12 - 1, 41 + 9 - 1)
    assert abs(r[peak] - 1.0) <= 1e-5


def test_normxcorr2_matches_padded_match_template():
    rng = _rng(74)
    image, template = rng.random((30, 25)), rng.random((7, 4))
    padded = np.pad(image, [(6, 6), (3, 3)])
    np.testing.assert_allclose(flcc.normxcorr2(template, image),
                               flcc.match_template(padded, template),
                               rtol=0, atol=1e-5)


def test_normxcorr2_noncontiguous_and_dtypes():
    rng = _rng(75)
    image = rng.integers(0, 256, (50, 40)).astype(np.uint8)
    template = rng.random((6, 6)).astype(np.float32)
    ref = ref_normxcorr2(template, image)
    check_lcc(flcc.normxcorr2(np.asfortranarray(template), image.T.copy().T),
              ref)
    big = np.repeat(image, 2, axis=0)[::2]
    check_lcc(flcc.normxcorr2(template, big), ref)


def test_normxcorr2_bad_input():
    with pytest.raises(ValueError):
        flcc.normxcorr2(np.ones((2, 2, 2, 2)), np.ones((5, 5, 5, 5)))
    with pytest.raises(ValueError):
        flcc.normxcorr2(np.ones((3, 3)), np.ones((5, 5, 5)))
    with pytest.raises(TypeError):
        flcc.normxcorr2(np.ones((3, 3)) + 0j, np.ones((5, 5)))
    with pytest.raises(TypeError):
        flcc.normxcorr2(np.ones((3, 3)), np.ones((5, 5), dtype=object))
