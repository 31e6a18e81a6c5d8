"""flcc.register_subregions: sub-pixel offsets of subregions between frames and a reference
(EBSD pattern registration, PIV, digital image correlation).

Each subregion of a frame (the image) is correlated with the same subregion of the reference
(the template) by local correlation coefficients, the peak of each map is located and refined
to sub-pixel precision. This version runs one correlation per subregion through a cached plan;
the batched engine of DESIGN §7 takes its place under the same interface.
"""

import numpy as np

from . import _arrays
from ._plan import cached_plan

REFINES = ("none", "parabolic", "gaussian", "quadratic")


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
    the map's edges), clamped to that neighbourhood."""
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
    if det <= 0 or d >= 0:          # not a maximum: keep the integer peak
        return 0.0, 0.0
    dx = (e * c - 2.0 * f * b) / det
    dy = (e * b - 2.0 * d * c) / det
    return float(np.clip(dy, -r, r)), float(np.clip(dx, -r, r))


def refine_peak(m, refine="parabolic", fit_size=5, exclusion=2):
    """Peak of a 2D correlation map: (y, x) refined, value, quality. quality is the peak over
    the highest value outside a (2 exclusion + 1)^2 box around it; 0 for a flat map."""
    m = np.asarray(m, dtype=np.float64)
    k = int(np.argmax(m))
    i, j = divmod(k, m.shape[1])
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
    second = rest.max() if np.isfinite(rest.max()) else -np.inf
    if value <= 0 or m.min() == m.max():
        quality = 0.0
    elif second <= 0:
        quality = np.inf
    else:
        quality = value / second
    return i + dy, j + dx, value, quality


def _size2(size, what):
    if np.isscalar(size):
        size = (int(size), int(size))
    size = tuple(int(s) for s in size)
    if len(size) != 2 or min(size) < 1:
        raise ValueError(f"{what} must be a positive int or a pair of them, not {size!r}")
    return size


def check_arguments(frames_shape, reference_shape, origins, size, template_size, refine,
                    fit_size):
    """Validates register_subregions' arguments; returns (origins, size, template size)."""
    if refine not in REFINES:
        raise ValueError(f"refine must be one of {REFINES}, not {refine!r}")
    if fit_size not in (3, 5, 7):
        raise ValueError("fit_size must be 3, 5 or 7")
    if len(frames_shape) != 3 or len(reference_shape) != 2 or frames_shape[1:] != reference_shape:
        raise ValueError("frames must be (H, W) or (F, H, W) and the reference (H, W)")
    origins = np.asarray(origins)
    if origins.ndim != 2 or origins.shape[1] != 2 or origins.dtype.kind not in "iu":
        raise ValueError("origins must be an (R, 2) integer array of (y, x)")
    sh, sw = _size2(size, "size")
    th, tw = _size2(template_size, "template_size") if template_size is not None else (sh, sw)
    if th > sh or tw > sw:
        raise ValueError("template_size must not exceed size")
    H, W = reference_shape
    if (origins < 0).any() or (origins[:, 0] + sh > H).any() or (origins[:, 1] + sw > W).any():
        raise ValueError(f"every subregion of size {(sh, sw)} must lie inside the {H}x{W} frame")
    return origins, (sh, sw), (th, tw)


def register_subregions(frames, reference, origins, size, *, template_size=None,
                        refine="parabolic", fit_size=5, exclusion=2, full_output=False,
                        platform="any", rigor="estimate", threads=0, method=None):
    """Sub-pixel offsets of subregions of each frame relative to the reference.

    frames: one 2D frame (H, W) or a stack (F, H, W); reference: (H, W). origins: (R, 2)
    top-left corners (y, x) of the subregions, each `size` (an int or (h, w)) in extent and
    inside the frame. With template_size None (or equal to size), every frame subregion is
    correlated with the whole reference subregion in the full region (the EBSD seed's form);
    each frame subregion has its mean subtracted first, so that the region's padded zeros carry
    no step. With a smaller template_size, the centre of the reference subregion is searched
    inside the frame subregion (the valid region, OpenCV's form).

    refine: 'parabolic' or 'gaussian' (3 points per axis), 'quadratic' (least-squares
    quadratic surface over fit_size x fit_size, fit_size 3, 5 or 7) or 'none'.

    Returns (offsets, quality): offsets [..., R, 2] as (dy, dx), the displacement of the
    frame's content relative to the reference (positive: moved down / right), and quality
    [..., R], the peak over the second peak outside `exclusion` pixels (inf when no other
    value is positive). A flat map (a constant subregion) gives offset (0, 0) and quality 0.
    The full form's map is normalised over the padded zeros too, so a shift of s pixels in a
    subregion of n is pulled towards 0 by a bias that grows with s / n; the search form
    (template_size < size) has none.
    full_output=True adds the peak values [..., R].
    """
    fw = _arrays.framework_of(frames)
    frames = _arrays.as_float32(frames, fw, "frames")
    reference = _arrays.as_float32(reference, _arrays.framework_of(reference), "reference")
    single = frames.ndim == 2
    if single:
        frames = frames[None]
    origins, (sh, sw), (th, tw) = check_arguments(tuple(frames.shape), tuple(reference.shape),
                                                  origins, size, template_size, refine, fit_size)
    full = (th, tw) == (sh, sw)
    cy, cx = (sh - th) // 2, (sw - tw) // 2
    device = _arrays.device_of(frames, fw)
    options = dict(platform="device" if device != _arrays.HOST and platform == "any" else platform,
                   rigor=rigor, threads=threads, method=method,
                   device=None if device == _arrays.HOST else device,
                   device_resident=device != _arrays.HOST)
    plan = cached_plan("lcorr", (sh, sw), (th, tw), region="full" if full else "valid", **options)
    F, R = frames.shape[0], origins.shape[0]
    offsets = np.zeros((F, R, 2), np.float32)
    quality = np.zeros((F, R), np.float32)
    peak = np.zeros((F, R), np.float32)
    for r, (oy, ox) in enumerate(origins.tolist()):
        templ = reference[oy + cy:oy + cy + th, ox + cx:ox + cx + tw]
        for f in range(F):
            sub = frames[f, oy:oy + sh, ox:ox + sw]
            if full:
                # Zero-mean subregions, as the seed pipeline correlates them: the padded zeros
                # of the full region then continue the subregion's mean, not a step to 0.
                sub = sub - sub.mean()
            m = plan(sub, templ)
            if device != _arrays.HOST:
                plan.synchronize()
                m = m.get() if fw == _arrays.CUPY else m.cpu().numpy()
            elif fw == _arrays.TORCH:
                m = m.numpy()
            y, x, v, q = refine_peak(m, refine, fit_size, exclusion)
            zero_y, zero_x = (th - 1, tw - 1) if full else (cy, cx)
            if q == 0 and float(np.min(m)) == float(np.max(m)):
                y, x = zero_y, zero_x   # a flat map: no displacement, quality 0
            offsets[f, r] = (y - zero_y, x - zero_x)
            quality[f, r], peak[f, r] = q, v
    if single:
        offsets, quality, peak = offsets[0], quality[0], peak[0]
    return (offsets, quality, peak) if full_output else (offsets, quality)
