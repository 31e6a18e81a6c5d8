"""flcc.register_subregions: sub-pixel offsets of subregions between frames and a reference
(EBSD pattern registration, PIV, digital image correlation).

Each subregion of a frame (the image) is correlated with the same subregion of the reference
(the template) by local correlation coefficients, and the peak of each map is located and
refined to sub-pixel precision: one batch plan per problem (cached), which cuts the subregions
from the frames and the reference, correlates every pair and refines the peaks in one call.
"""

import numpy as np

from . import _arrays
from ._batch import DTYPE_NAMES, REFINES, BatchPlan, _input
from ._plan import cached


def _size2(size, what):
    if np.isscalar(size):
        size = (int(size), int(size))
    size = tuple(int(s) for s in size)
    if len(size) != 2 or min(size) < 1:
        raise ValueError(f"{what} must be a positive int or a pair of them, not {size!r}")
    return size


def check_arguments(frames_shape, reference_shape, origins, size, template_size, refine,
                    fit_size, upsample=10):
    """Validates register_subregions' arguments; returns (origins, size, template size)."""
    if refine not in REFINES:
        raise ValueError(f"refine must be one of {', '.join(repr(r) for r in REFINES)}, "
                         f"not {refine!r}")
    if fit_size not in (3, 5, 7):
        raise ValueError(f"fit_size must be 3, 5 or 7, not {fit_size!r}")
    if isinstance(upsample, bool) or not isinstance(upsample, (int, np.integer)) or \
            not 2 <= upsample <= 1000:
        raise ValueError(f"upsample must be an int from 2 to 1000, not {upsample!r}")
    if len(frames_shape) != 3 or len(reference_shape) != 2 or frames_shape[1:] != reference_shape:
        raise ValueError(f"frames must be (H, W) or (F, H, W) and the reference (H, W), got "
                         f"frames {frames_shape[1:] if len(frames_shape) == 3 else frames_shape} "
                         f"and reference {reference_shape}")
    origins = np.asarray(origins)
    if origins.ndim != 2 or origins.shape[1] != 2 or origins.dtype.kind not in "iu":
        raise ValueError("origins must be an (R, 2) integer array of (y, x)")
    if origins.shape[0] < 1:
        raise ValueError("origins must hold at least one subregion")
    sh, sw = _size2(size, "size")
    th, tw = _size2(template_size, "template_size") if template_size is not None else (sh, sw)
    if th > sh or tw > sw:
        raise ValueError(f"template_size {(th, tw)} must not exceed size {(sh, sw)}")
    H, W = reference_shape
    outside = ((origins < 0).any(axis=1) | (origins[:, 0] + sh > H) | (origins[:, 1] + sw > W))
    if outside.any():
        r = int(np.flatnonzero(outside)[0])
        raise ValueError(f"origins[{r}] = {tuple(origins[r].tolist())}: the {sh}x{sw} subregion "
                         f"leaves the {H}x{W} frame")
    return origins, (sh, sw), (th, tw)


def register_subregions(frames, reference, origins, size, *, template_size=None,
                        refine="parabolic", fit_size=5, upsample=10, exclusion=2,
                        full_output=False, platform="any", rigor="estimate", threads=0,
                        method=None):
    """Sub-pixel offsets of subregions of each frame relative to the reference.

    frames: one 2D frame (H, W) or a stack (F, H, W); reference: (H, W). float32, uint16 and
    uint8 arrays go to the library as they are (it converts where it cuts the subregions);
    other real types are converted to float32. origins: (R, 2) top-left corners (y, x) of the
    subregions, each `size` (an int or (h, w)) in extent and inside the frame. With
    template_size None (or equal to size), every frame subregion is correlated with the whole
    reference subregion in the full region (the EBSD seed's form), both with their means
    subtracted first, so that the region's padded zeros carry no step. With a smaller
    template_size, the centre of the reference subregion (offset (size - template_size) // 2)
    is searched inside the frame subregion (the valid region, OpenCV's form).

    refine: 'parabolic' or 'gaussian' (3 points per axis), 'quadratic' (least-squares
    quadratic surface over fit_size x fit_size, fit_size 3, 5 or 7), 'upsampled' (the maximum
    of the correlation's DFT interpolation on a grid of 1/upsample pixel, upsample 2 to 1000)
    or 'none'.

    Returns (offsets, quality): offsets [..., R, 2] as (dy, dx), the displacement of the
    frame's content relative to the reference (positive: moved down / right), and quality
    [..., R], the peak over the second peak outside `exclusion` pixels (inf when no other
    value is positive). A flat map (a constant subregion) gives offset (0, 0) and quality 0.
    The full form's map is normalised over the padded zeros too, so a shift of s pixels in a
    subregion of n is pulled towards 0 by a bias that grows with s / n; the search form
    (template_size < size) has none.
    full_output=True adds the peak values [..., R].
    The results are NumPy arrays whatever the frames' framework (batch plans run on the host).
    """
    frames, image_type = _input(frames, None, "frames")
    reference, templ_type = _input(reference, None, "reference")
    frames_shape = tuple(frames.shape)
    single = len(frames_shape) == 2
    origins, (sh, sw), (th, tw) = check_arguments(
        (1,) + frames_shape if single else frames_shape, tuple(reference.shape), origins, size,
        template_size, refine, fit_size, upsample)
    full = (th, tw) == (sh, sw)
    cy, cx = (sh - th) // 2, (sw - tw) // 2
    frame = tuple(reference.shape)
    image_origins = tuple(map(tuple, origins.tolist()))
    templ_origins = tuple((y + cy, x + cx) for y, x in image_origins)
    plan = cached(BatchPlan, "lcorr", (sh, sw), (th, tw), images=len(image_origins),
                  templates=len(image_origins), image_dtype=DTYPE_NAMES[image_type],
                  template_dtype=DTYPE_NAMES[templ_type], image_origins=image_origins,
                  image_frame=frame, template_origins=templ_origins, template_frame=frame,
                  zero_mean=full, exclusion=exclusion, refine=refine, fit_size=fit_size,
                  upsample=upsample, region="full" if full else "valid", platform=platform,
                  rigor=rigor, threads=threads, method=method)
    peak = plan(frames, reference)[..., 0]
    # flcc_peak.dy/dx is where the template's origin lies in the image; the template starts
    # (cy, cx) into its subregion, so the content moved by dy - cy, dx - cx.
    offsets = np.stack([peak["dy"] - cy, peak["dx"] - cx], axis=-1)
    quality = peak["quality"].copy()
    # A flat map has no displacement: the library puts its peak at the region's zero
    # displacement, which for the search form is the subregion's corner, not its centre.
    offsets[quality == 0] = 0
    values = peak["value"].copy()
    return (offsets, quality, values) if full_output else (offsets, quality)
