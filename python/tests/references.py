"""Float64 references of the batch plans, written from their documented formulas (flcc.h,
"Batched correlation and peaks") independently of the library: correlation maps of every
operation and region, the preprocessing, and the peak fits."""

import numpy as np
from scipy import signal


def crop(full, image_shape, templ_shape, region):
    """The region of a full-region map: full = S + T - 1; same = S starting at floor((T-1)/2);
    valid = S - T + 1 starting at T - 1."""
    if region == "full":
        return full
    if region == "same":
        cut = tuple(slice((t - 1) // 2, (t - 1) // 2 + s) for s, t in zip(image_shape, templ_shape))
    else:
        cut = tuple(slice(t - 1, s) for s, t in zip(image_shape, templ_shape))
    return full[cut]


def _pads(image_shape, templ_shape, region):
    """The zeros before and after the image per axis whose valid windows are the region's
    placements."""
    if region == "full":
        return [(t - 1, t - 1) for t in templ_shape]
    if region == "same":
        return [(t - 1 - (t - 1) // 2, (t - 1) // 2) for t in templ_shape]
    return [(0, 0) for _ in templ_shape]


def lcc(image, templ, region):
    """Pearson correlation of the template with the panel under it at every placement of the
    region (the image zero-padded, the zeros being data); 0 where the panel or the template has
    no variance. Window sums in float64: the numerator is the panel's correlation with the
    zero-mean template, the panel's variance its sum of squares less its squared sum over n."""
    image = np.asarray(image, np.float64)
    t = np.asarray(templ, np.float64)
    t = t - t.mean()
    x = np.pad(image, _pads(image.shape, t.shape, region))
    ones = np.ones(t.shape)
    num = signal.correlate(x, t, "valid")
    s1 = signal.correlate(x, ones, "valid")
    s2 = signal.correlate(x * x, ones, "valid")
    var = s2 - s1 * s1 / t.size
    tt = (t * t).sum()
    # Below float64 rounding of the sums the panel is constant.
    flat = var <= 1e-11 * np.maximum(s2, np.finfo(float).tiny)
    den = np.sqrt(np.where(flat, 1.0, var) * tt)
    return np.where(flat | (tt == 0), 0.0, num / den)


def correlation(op, image, templ, region):
    """The float64 map of op ('conv', 'xcorr', 'lcorr') in region."""
    image = np.asarray(image, np.float64)
    templ = np.asarray(templ, np.float64)
    if op == "lcorr":
        return lcc(image, templ, region)
    if op == "conv":
        full = signal.convolve(image, templ, "full", method="direct")
    else:
        full = signal.correlate(image, templ, "full", method="direct")
    return crop(full, image.shape, templ.shape, region)


def preprocess(x, zero_mean=False, hann=False, bandpass=(0, 0)):
    """Mean subtraction, then numpy.hanning along every axis, then the Gaussian band-pass
    exp(-2 pi^2 low^2 |f|^2) (1 - exp(-2 pi^2 high^2 |f|^2)) on the periodic DFT."""
    x = np.asarray(x, np.float64)
    if zero_mean:
        x = x - x.mean()
    if hann:
        for axis, n in enumerate(x.shape):
            shape = [1] * x.ndim
            shape[axis] = n
            x = x * np.hanning(n).reshape(shape)
    low, high = bandpass
    if low or high:
        f2 = sum(np.square(np.fft.fftfreq(n)).reshape([-1 if a == axis else 1
                                                        for a in range(x.ndim)])
                 for axis, n in enumerate(x.shape))
        gain = np.ones_like(f2)
        if low:
            gain = gain * np.exp(-2 * np.pi ** 2 * low ** 2 * f2)
        if high:
            gain = gain * (1 - np.exp(-2 * np.pi ** 2 * high ** 2 * f2))
        x = np.fft.ifftn(np.fft.fftn(x) * gain).real
    return x


def _vertex(a, b, c):
    """Offset of the vertex of the parabola through (-1, a), (0, b), (1, c); 0 unless b is a
    maximum of it."""
    den = a - 2.0 * b + c
    return 0.0 if den >= 0 else 0.5 * (a - c) / den


def _three_point(m, i, j, axis_fit):
    """axis_fit applied to the peak and its two neighbours along each axis (0 at an edge)."""
    h, w = m.shape
    dy = axis_fit(m[i - 1, j], m[i, j], m[i + 1, j]) if 0 < i < h - 1 else 0.0
    dx = axis_fit(m[i, j - 1], m[i, j], m[i, j + 1]) if 0 < j < w - 1 else 0.0
    return dy, dx


def _gaussian_vertex(a, b, c):
    """The Gaussian through the three points (the parabola of their logs); the parabola itself
    where a value is not positive."""
    if min(a, b, c) <= 0:
        return _vertex(a, b, c)
    return _vertex(np.log(a), np.log(b), np.log(c))


def _quadratic(m, i, j, fit):
    """Stationary point of the least-squares quadratic surface
    a + b x + c y + d x^2 + e x y + f y^2 over the fit x fit neighbourhood of the peak (cut at
    the map's edges), clamped to that neighbourhood; the integer peak when it is not a
    maximum."""
    r = fit // 2
    h, w = m.shape
    y0, y1 = max(i - r, 0), min(i + r + 1, h)
    x0, x1 = max(j - r, 0), min(j + r + 1, w)
    yy, xx = np.mgrid[y0 - i:y1 - i, x0 - j:x1 - j]
    x, y = xx.ravel().astype(np.float64), yy.ravel().astype(np.float64)
    if len(np.unique(x)) < 3 or len(np.unique(y)) < 3:
        return _three_point(m, i, j, _vertex)
    A = np.stack([np.ones_like(x), x, y, x * x, x * y, y * y], axis=1)
    coef, *_ = np.linalg.lstsq(A, m[y0:y1, x0:x1].ravel().astype(np.float64), rcond=None)
    _, b, c, d, e, f = coef
    det = 4.0 * d * f - e * e
    if det <= 0 or d >= 0:
        return 0.0, 0.0
    dx = (e * c - 2.0 * f * b) / det
    dy = (e * b - 2.0 * d * c) / det
    return float(np.clip(dy, -r, r)), float(np.clip(dx, -r, r))


def refine_peak(m, refine="parabolic", fit_size=5, exclusion=2):
    """The highest peak of a 2D map: (y, x) refined, value, quality. quality is the peak over
    the highest value at Chebyshev distance more than `exclusion` (inf when that is not
    positive); 0 for a flat map."""
    m = np.asarray(m, dtype=np.float64)
    i, j = np.unravel_index(int(np.argmax(m)), m.shape)
    value = m[i, j]
    if refine == "parabolic":
        dy, dx = _three_point(m, i, j, _vertex)
    elif refine == "gaussian":
        dy, dx = _three_point(m, i, j, _gaussian_vertex)
    elif refine == "quadratic":
        dy, dx = _quadratic(m, i, j, fit_size)
    else:
        dy, dx = 0.0, 0.0
    rest = m.copy()
    rest[max(i - exclusion, 0):i + exclusion + 1, max(j - exclusion, 0):j + exclusion + 1] = -np.inf
    second = rest.max()
    if m.min() == m.max():
        quality = 0.0
    elif second <= 0:
        quality = np.inf
    else:
        quality = value / second
    return i + dy, j + dx, value, quality
