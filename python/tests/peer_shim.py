"""Reference stand-in for ``flcc`` built on scikit-image and SciPy.

It exposes the same five names as the real package and follows the same
rules (float32 results, TypeError for complex/object/string input,
ValueError for bad shapes/modes, ``Error`` for non-finite input, exactly 0
on zero-variance panels).  The peer test files run against it with
``FLCC_TEST_IMPL=peer_shim`` to show that the tests themselves are right.
"""

import warnings

import numpy as np
import scipy.signal
import skimage.feature
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["match_template", "convolve", "correlate", "normxcorr2", "Error"]

_MODES = ("full", "same", "valid")


class Error(Exception):
    """Library failure; ``code`` is an integer status."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = int(code)


NONFINITE_INPUT = 3


def _real(x, name):
    a = np.asarray(x)
    kind = a.dtype.kind
    if kind == "c":
        raise TypeError(f"{name}: complex input is not supported")
    if kind not in "biuf":
        raise TypeError(f"{name}: dtype {a.dtype} is not a real numeric type")
    return a


def _finite(a, name):
    if a.size and not np.isfinite(a).all():
        raise Error(f"{name}: input contains NaN or Inf", NONFINITE_INPUT)


def _f32_as_f64(a):
    # FLCC computes in float32: quantise the inputs exactly like it does,
    # then let the peer evaluate in float64.
    return np.asarray(a, dtype=np.float32).astype(np.float64)


# --------------------------------------------------------------------------
# convolve / correlate  (scipy.signal)
# --------------------------------------------------------------------------
def _conv_common(peer, in1, in2, mode):
    a = _real(in1, "in1")
    b = _real(in2, "in2")
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError("mode must be 'full', 'same' or 'valid'")
    if a.ndim == b.ndim == 0:
        _finite(a, "in1")
        _finite(b, "in2")
        return np.asarray(np.float32(a) * np.float32(b), dtype=np.float32)
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if a.ndim > 3:
        raise ValueError("only 1-D, 2-D and 3-D inputs are supported")
    if a.size == 0 or b.size == 0:
        raise ValueError("in1 and in2 must not be empty")
    _finite(a, "in1")
    _finite(b, "in2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = peer(_f32_as_f64(a), _f32_as_f64(b), mode=mode)
        except ValueError:
            raise
        except Exception as exc:  # peer crashed on a degenerate shape
            raise ValueError(str(exc)) from exc
    return np.asarray(out, dtype=np.float32)


def convolve(in1, in2, mode="full"):
    return _conv_common(scipy.signal.convolve, in1, in2, mode)


def correlate(in1, in2, mode="full"):
    return _conv_common(scipy.signal.correlate, in1, in2, mode)


# --------------------------------------------------------------------------
# match_template  (skimage.feature)
# --------------------------------------------------------------------------
def _flat_windows(padded, tshape):
    """True where a template-sized window of ``padded`` is constant."""
    win = sliding_window_view(padded, tshape)
    axes = tuple(range(padded.ndim, 2 * padded.ndim))
    return win.max(axis=axes) == win.min(axis=axes)


def match_template(image, template, pad_input=False, mode="constant",
                   constant_values=0):
    image = _real(image, "image")
    template = _real(template, "template")
    if image.ndim not in (2, 3):
        raise ValueError("image must be 2-D or 3-D")
    if template.ndim != image.ndim:
        raise ValueError("template must have the same dimensionality as image")
    if image.size == 0 or template.size == 0:
        raise ValueError("empty input")
    if any(t > i for t, i in zip(template.shape, image.shape)):
        raise ValueError("Image must be larger than template.")
    if not isinstance(mode, str):
        raise ValueError("mode must be a string")
    _finite(image, "image")
    _finite(template, "template")

    img = _f32_as_f64(image)
    tpl = _f32_as_f64(template)
    res = skimage.feature.match_template(img, tpl, pad_input=pad_input,
                                         mode=mode,
                                         constant_values=constant_values)
    res = np.clip(np.asarray(res, dtype=np.float64), -1.0, 1.0)

    # Zero-variance panels (and a flat template) give exactly 0.
    if tpl.max() == tpl.min():
        res[...] = 0.0
    else:
        tshape = tpl.shape
        pad = tuple((t, t) for t in tshape)
        if mode == "constant":
            padded = np.pad(img, pad, mode=mode,
                            constant_values=constant_values)
        else:
            padded = np.pad(img, pad, mode=mode)
        flat = _flat_windows(padded, tshape)
        # skimage's response index k covers padded[k+1 : k+1+T]; its output
        # starts at d0 = (T-1)//2 (pad_input) or T-1 (no padding).
        sl = []
        for i, t in enumerate(tshape):
            d0 = (t - 1) // 2 if pad_input else t - 1
            start = d0 + 1
            sl.append(slice(start, start + res.shape[i]))
        res[flat[tuple(sl)]] = 0.0
    return res.astype(np.float32)


# --------------------------------------------------------------------------
# normxcorr2  (MATLAB semantics via skimage on a zero-padded image)
# --------------------------------------------------------------------------
def normxcorr2(template, image):
    template = _real(template, "template")
    image = _real(image, "image")
    if image.ndim not in (2, 3):
        raise ValueError("image must be 2-D or 3-D")
    if template.ndim != image.ndim:
        raise ValueError("template must have the same dimensionality as image")
    if image.size == 0 or template.size == 0:
        raise ValueError("empty input")
    _finite(image, "image")
    _finite(template, "template")
    pad = tuple((t - 1, t - 1) for t in template.shape)
    padded = np.pad(np.asarray(image, dtype=np.float32), pad)
    return match_template(padded, template, pad_input=False)
