"""flcc's functions over Dask arrays, for images and volumes beyond one machine's memory or one
GPU: match_template, convolve and correlate with the in-memory functions' semantics.

Each output chunk is computed from its input chunk and the T - 1 elements after it on every
axis (``dask.array.map_overlap``, depth (0, T - 1), after padding the image as the mode
needs), with the region 'valid' inside the block. That is exactly the in-memory computation
restricted to those positions, so the result equals the in-memory one at every chunk
boundary (to float32 rounding when the blocks' solvers differ). The template is an in-memory
array shipped to every task. Blocks run where the workers are: NumPy-backed arrays on the
workers' CPUs, CuPy-backed arrays on their GPUs (dask-cuda's LocalCUDACluster gives each worker
one GPU). Keyword options (platform, rigor, threads, method) pass to the in-memory function.

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")           # or LocalCluster(), LocalCUDACluster()
    image = dask.array.from_zarr("volume.zarr")
    scores = flcc.dask.match_template(image, template).compute()
"""

import dask.array as da
import numpy as np

from . import _functions
from ._functions import _MODE_ERROR, _valid_swap_needed


def _in_memory(template):
    if isinstance(template, da.Array):
        template = template.compute()
    return template


def _chunks_for(chunks, t):
    """Chunks along one axis such that each is at least T - 1 long (the depth) and the last
    at least T (it yields a non-empty output): short chunks merge into their neighbours."""
    need = max(t - 1, 1)
    merged = []
    for c in chunks:
        if merged and merged[-1] < need:
            merged[-1] += c
        else:
            merged.append(c)
    if len(merged) > 1 and merged[-1] < max(t, need):
        last = merged.pop()
        merged[-1] += last
    return tuple(merged)


def _valid_blocks(x, tshape, block_fn):
    """block_fn (a 'valid' computation with a template of shape tshape) over x, chunk by
    chunk, each block extended by T - 1 elements after it."""
    x = x.rechunk(tuple(_chunks_for(c, t) for c, t in zip(x.chunks, tshape)))
    out_chunks = tuple(c[:-1] + (c[-1] - (t - 1),) for c, t in zip(x.chunks, tshape))
    depth = {a: (0, t - 1) for a, t in enumerate(tshape)}
    return da.map_overlap(block_fn, x, depth=depth, boundary="none", trim=False,
                          chunks=out_chunks, dtype=np.float32, meta=x._meta.astype(np.float32))


def _pad(x, before, after, mode="constant", **kwargs):
    widths = tuple(zip(before, after))
    if not any(b or a for b, a in widths):
        return x
    return da.pad(x, widths, mode=mode, **kwargs)


def _as_float_dask(x):
    x = da.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("complex input is not supported (flcc computes real float32)")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"expected a real numeric array, got dtype {x.dtype}")
    return x


def match_template(image, template, pad_input=False, mode="constant", constant_values=0,
                   **options):
    """flcc.match_template (skimage.feature.match_template) of a Dask array image."""
    image = _as_float_dask(image)
    template = _in_memory(template)
    _functions._check_lcc_inputs(image, template, "image")
    tshape = tuple(template.shape)
    if pad_input:
        # As in memory: skimage's padding by T on every side, of which the kept positions see
        # ceil((T-1)/2) values before the image and floor((T-1)/2) after it.
        kwargs = {"constant_values": constant_values} if mode == "constant" else {}
        padded = da.pad(image, tuple((t, t) for t in tshape), mode=mode, **kwargs)
        image = padded[tuple(slice(t - (t - 1 - (t - 1) // 2), t + s + (t - 1) // 2)
                             for s, t in zip(image.shape, tshape))]

    def block(b):
        return _functions.match_template(b, template, **options)

    return _valid_blocks(image, tshape, block)


def _convolution(in1, in2, mode, reverse, options):
    if mode not in ("full", "same", "valid"):
        raise ValueError(_MODE_ERROR)
    x = _as_float_dask(in1)
    t = _in_memory(in2)
    if x.ndim != t.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if not 1 <= x.ndim <= 3:
        raise ValueError(f"flcc convolves 1D, 2D and 3D arrays, not {x.ndim}D")
    if x.size == 0 or t.size == 0:
        raise ValueError("in1 and in2 must not be empty")
    tshape = tuple(t.shape)
    if mode == "valid" and _valid_swap_needed(x.shape, tshape):
        raise ValueError("flcc.dask takes the larger operand as in1 (the Dask array)")
    if mode == "full":
        x = _pad(x, [t_ - 1 for t_ in tshape], [t_ - 1 for t_ in tshape])
    elif mode == "same":
        x = _pad(x, [t_ - 1 - (t_ - 1) // 2 for t_ in tshape], [(t_ - 1) // 2 for t_ in tshape])
    fn = _functions.correlate if reverse else _functions.convolve

    def block(b):
        return fn(b, t, "valid", **options)

    return _valid_blocks(x, tshape, block)


def convolve(in1, in2, mode="full", **options):
    """flcc.convolve (scipy.signal.convolve) of a Dask array in1 with an in-memory in2."""
    return _convolution(in1, in2, mode, False, options)


def correlate(in1, in2, mode="full", **options):
    """flcc.correlate (scipy.signal.correlate) of a Dask array in1 with an in-memory in2."""
    return _convolution(in1, in2, mode, True, options)


def register_subregions(frames, reference, origins, size, *, full_output=False, **options):
    """flcc.register_subregions over a Dask stack of frames (F, H, W), frame blocks in
    parallel (``map_blocks``; each block holds whole frames). Returns Dask arrays
    (offsets [F, R, 2], quality [F, R]) and, with full_output, the peak values [F, R]."""
    from . import _register

    frames = _as_float_dask(frames)
    if frames.ndim != 3:
        raise ValueError("frames must be a (F, H, W) stack")
    reference = _in_memory(reference)
    origins = np.asarray(origins)
    _register.check_arguments(tuple(frames.shape), tuple(reference.shape), origins, size,
                              options.get("template_size"), options.get("refine", "parabolic"),
                              options.get("fit_size", 5), options.get("upsample", 10))
    frames = frames.rechunk({1: -1, 2: -1})
    R = origins.shape[0]

    def block(b):
        off, q, v = _register.register_subregions(b, reference, origins, size, full_output=True,
                                                  **options)
        return np.concatenate([off, q[..., None], v[..., None]], axis=-1).astype(np.float32)

    packed = frames.map_blocks(block, chunks=(frames.chunks[0], (R,), (4,)), dtype=np.float32,
                               meta=np.empty((0, 0, 0), np.float32))
    result = (packed[..., :2], packed[..., 2])
    return result + (packed[..., 3],) if full_output else result
