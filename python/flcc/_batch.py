"""flcc.BatchPlan: many small correlations per call and the peaks of their maps (the C
library's batch plans, flcc.h "Batched correlation and peaks")."""

import math
import threading

import numpy as np

from . import _arrays, _flcc
from ._errors import check
from ._plan import OP_ALIASES, OPS, PLATFORMS, REGIONS, RIGORS, _c_size, _choice, _shape

PAIRINGS = {"pairwise": 0, "all": 1, "all_pairs": 1}
DTYPES = {"float32": 0, "uint16": 1, "uint8": 2}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
REFINES = {"none": 0, "parabolic": 1, "gaussian": 2, "quadratic": 3, "upsampled": 4}
MAX_PEAKS = 64
MAX_UPSAMPLE = 1000


def _peak_dtype():
    size, fields = _flcc.peak_layout()
    kinds = {"f": np.float32, "i": np.intc}
    return np.dtype({"names": [f[0] for f in fields], "formats": [kinds[f[2]] for f in fields],
                     "offsets": [f[1] for f in fields], "itemsize": size})


#: The NumPy structured dtype of one peak (the C library's flcc_peak): value, the integer
#: position h, w, d, the refined position y, x, z, the refined displacement dy, dx, dz, quality,
#: psr and templ.
PEAK_DTYPE = _peak_dtype()


def _int(value, what, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, not {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        bound = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{what} must be {bound}, not {value}")
    return value


def _dtype_code(value, what):
    """The flcc_dtype of a dtype argument (None stays None: inferred from the arrays)."""
    if value is None:
        return None
    try:
        name = value if isinstance(value, str) else np.dtype(value).name
    except TypeError:
        raise TypeError(f"{what} must be a dtype or its name, not {value!r}") from None
    return _choice(DTYPES, name, what)


def _origins(origins, count, frame, shape, what):
    """(count, dim) int32 origins for the library (1D origins gain the row 0), each subregion of
    `shape` checked to lie inside `frame`."""
    a = np.asarray(origins)
    n = len(shape)
    if a.dtype.kind not in "iu" or a.ndim != 2 or a.shape[1] != n:
        raise ValueError(f"{what} must be a (count, {n}) integer array, got "
                         f"{a.dtype} of shape {a.shape}")
    if a.shape[0] != count:
        raise ValueError(f"{what} holds {a.shape[0]} origins for {count} subregions")
    low = (a < 0).any(axis=1)
    high = (a + np.asarray(shape) > np.asarray(frame)).any(axis=1)
    bad = np.flatnonzero(low | high)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{what}[{i}] = {tuple(a[i].tolist())}: the {shape} subregion leaves the "
                         f"{frame} frame")
    if n == 1:
        a = np.concatenate([np.zeros_like(a), a], axis=1)
    return np.ascontiguousarray(a, dtype=np.intc)


class _Side:
    """One side of the pairs (images or templates): the shape of one frame's input and the
    element type the plan was given, if any."""

    def __init__(self, what, shape, count, dtype, origins, frame):
        self.what = what
        self.count = count
        self.dtype = _dtype_code(dtype, f"{what[:-1]}_dtype")
        if origins is None:
            if frame is not None:
                raise ValueError(f"{what[:-1]}_frame is given without {what[:-1]}_origins")
            self.origins = None
            self.frame = (0,) * len(shape)
            self.input_shape = (count,) + shape
        else:
            if frame is None:
                raise ValueError(f"{what[:-1]}_origins need {what[:-1]}_frame, the frame's shape")
            self.frame = _shape(frame, f"{what[:-1]}_frame")
            if len(self.frame) != len(shape):
                raise ValueError(f"{what[:-1]}_frame {self.frame} and the {what[:-1]} shape "
                                 f"{shape} differ in axes")
            self.origins = _origins(origins, count, self.frame, shape, f"{what[:-1]}_origins")
            self.input_shape = self.frame

    def c_frame(self):
        """The frame as the library's (h, w, d); zeros when the arrays come as a stack."""
        return _c_size(self.frame)[1] if self.origins is not None else (0, 0, 0)


def _count(value, origins, what):
    """The images (or templates) per frame: given, else one per origin, else 1."""
    if value is None:
        if origins is None:
            return 1
        a = np.asarray(origins)
        return a.shape[0] if a.ndim == 2 else 1
    return _int(value, what, 1)


def _input(x, fixed, what):
    """An input array as the library takes it (C-contiguous, float32, uint16 or uint8, in its
    framework and on its device) and its flcc_dtype. fixed: the plan's dtype, or None to take
    float32, uint16 and uint8 as they are; other real types become float32."""
    fw = _arrays.framework_of(x)
    if fw == _arrays.NUMPY and not isinstance(x, np.ndarray):
        x = np.asarray(x)
    name = _arrays.dtype_name(x, fw)
    if fixed in (DTYPES["uint16"], DTYPES["uint8"]):
        if DTYPES.get(name) != fixed:
            raise TypeError(f"{what}: the plan takes {DTYPE_NAMES[fixed]} arrays, not {name}")
        return _arrays.as_contiguous(x, fw), fixed
    if fixed is None and name in ("uint16", "uint8"):
        return _arrays.as_contiguous(x, fw), DTYPES[name]
    return _arrays.as_float32(x, fw, what), DTYPES["float32"]


class BatchPlan:
    """A batch plan: per frame, many image/template pairs correlated by one operation in one
    region, each map's peaks found and refined where the map is computed; maps are returned
    only when asked for.

    ``op`` is ``'conv'``, ``'xcorr'`` or ``'lcorr'`` (as for flcc.Plan) of images of
    ``image_shape`` with templates of ``template_shape`` (1D, 2D or 3D; the subregion sizes
    when they are cut from frames), in ``region`` ``'full'``, ``'same'`` or ``'valid'``.

    Pairs. ``pairing='pairwise'``: ``images`` and ``templates`` are equal or one is a multiple
    of the other; pair p is image ``p * images // pairs`` with template
    ``p * templates // pairs``. ``pairing='all'``: every image with every template, pair p is
    image ``p // templates`` with template ``p % templates``.

    Inputs. Without origins, one frame's images are a stack ``(images, *image_shape)``. With
    ``image_origins`` (an (images, ndim) integer array of top-left corners) each image is cut
    from a frame of shape ``image_frame`` (subregions may overlap). Templates likewise. The
    element types are float32, uint16 and uint8, converted where the library cuts the
    subregions: ``image_dtype``/``template_dtype`` fix one, None (default) takes arrays of
    those types as they are and converts other real types to float32.

    Preprocessing of every image and template, in this order: ``zero_mean`` subtracts its
    mean; ``hann`` multiplies by numpy.hanning along every axis; ``bandpass=(low, high)``
    multiplies its periodic DFT by exp(-2 pi^2 low^2 |f|^2) (1 - exp(-2 pi^2 high^2 |f|^2)),
    f in cycles per pixel (0 leaves that factor out).

    Peaks. ``peaks`` (0 to 64) highest maxima per map at Chebyshev distance more than
    ``exclusion`` from each other, refined by ``refine``: ``'parabolic'`` or ``'gaussian'``
    (3 points per axis), ``'quadratic'`` (least squares over fit_size^ndim, fit_size 3, 5 or
    7), ``'upsampled'`` (the DFT interpolation on a grid of 1/upsample pixel) or ``'none'``.
    ``best_over_templates`` (pairing 'all') keeps per image the best value over templates at
    every position and finds the peaks on that map. ``templates_per_frame``: the templates come
    with every frame instead of once per call.

    Call it with one frame's input or a stack of frames (a leading axis):
    ``plan(images, templates=None)``. ``templates=None`` uses the templates given last again
    (with images of the same element type); templates equal by value to the last ones are not
    prepared again. Returns the peaks, a NumPy array of PEAK_DTYPE of shape
    ``[frames, maps, peaks]`` (no frames axis for a single frame), maps = pairs, or images with
    best_over_templates; with ``keep_maps``, ``(peaks, maps)``, maps float32
    ``[frames, pairs, *map_shape]`` (best_over_templates: ``[frames, images, 2, *map_shape]``,
    the best value then the template index) of the images' framework and device. 1D problems
    run as one row: positions are in w, x and dx.

    ``rigor``, ``method`` and ``threads`` (pairs run in parallel over them) as for flcc.Plan;
    ``check_finite=False`` skips the check for NaN and Inf in float32 inputs. ``platform``:
    'host' runs the pairs on the host; 'device' on the fastest GPU engine ("device.batch.fourier",
    "device.batch.direct" for small pairs or "device.batch.blockfft" for pairs whose linear
    correlation fits 64 x 64; any by ``method``: 2D, no band-pass, no
    'upsampled'); 'any' on the fastest of the host and the engines that run the plan (rigor
    'estimate': the engine estimated faster, wherever one runs; 'measure': timed on one frame at
    plan time). CuPy and PyTorch CUDA arrays go to the library as they are, after the caller's
    current stream is waited for (a host plan copies them through host memory).
    """

    def __init__(self, op, image_shape, template_shape, *, images=None, templates=None,
                 pairing="pairwise", image_dtype=None, template_dtype=None, image_origins=None,
                 image_frame=None, template_origins=None, template_frame=None, zero_mean=False,
                 hann=False, bandpass=(0, 0), peaks=1, exclusion=2, refine="parabolic",
                 fit_size=5, upsample=10, keep_maps=False, best_over_templates=False,
                 templates_per_frame=False, region="full", platform="any", rigor="estimate",
                 threads=0, method=None, check_finite=True):
        op = OP_ALIASES.get(op, op) if isinstance(op, str) else op
        self.op = op
        op_code = _choice(OPS, op, "op")
        self.image_shape = _shape(image_shape, "image_shape")
        self.template_shape = _shape(template_shape, "template_shape")
        if len(self.image_shape) != len(self.template_shape):
            raise ValueError("image and template must have the same number of axes")
        self.region = region
        self.pairing = pairing
        pairing_code = _choice(PAIRINGS, pairing, "pairing")
        images = _count(images, image_origins, "images")
        templates = _count(templates, template_origins, "templates")
        if pairing_code == PAIRINGS["pairwise"] and max(images, templates) % min(images, templates):
            raise ValueError(f"pairing 'pairwise' needs images ({images}) and templates "
                             f"({templates}) equal or one a multiple of the other")
        self._images = _Side("images", self.image_shape, images, image_dtype, image_origins,
                             image_frame)
        self._templates = _Side("templates", self.template_shape, templates, template_dtype,
                                template_origins, template_frame)
        try:
            low, high = (float(v) for v in bandpass)
        except (TypeError, ValueError):
            raise TypeError(f"bandpass must be a pair of sigmas (low, high), not "
                            f"{bandpass!r}") from None
        if not (math.isfinite(low) and math.isfinite(high) and low >= 0 and high >= 0):
            raise ValueError(f"bandpass sigmas must be finite and >= 0, not {bandpass!r}")
        self.peaks = _int(peaks, "peaks", 0, MAX_PEAKS)
        if self.peaks == 0 and not keep_maps:
            raise ValueError("peaks=0 without keep_maps: the plan would output nothing")
        if best_over_templates and pairing_code != PAIRINGS["all"]:
            raise ValueError("best_over_templates needs pairing='all'")
        if fit_size not in (3, 5, 7) or isinstance(fit_size, bool):
            raise ValueError(f"fit_size must be 3, 5 or 7, not {fit_size!r}")
        self.keep_maps = bool(keep_maps)
        self.best_over_templates = bool(best_over_templates)
        self.templates_per_frame = bool(templates_per_frame)
        if method is not None and not isinstance(method, str):
            raise TypeError("method must be a solver name or None")
        dim, img = _c_size(self.image_shape)
        _, tpl = _c_size(self.template_shape)
        self._args = dict(
            op=op_code, dim=dim, image=img, templ=tpl, pairing=pairing_code, images=images,
            templates=templates, image_origins=self._images.origins,
            image_frame=self._images.c_frame(), templ_origins=self._templates.origins,
            templ_frame=self._templates.c_frame(),
            zero_mean=bool(zero_mean), hann=bool(hann), bandpass_low=low, bandpass_high=high,
            peaks=self.peaks, exclusion=_int(exclusion, "exclusion", 0),
            refine=_choice(REFINES, refine, "refine"), fit_size=int(fit_size),
            upsample=_int(upsample, "upsample", 2, MAX_UPSAMPLE), keep_maps=self.keep_maps,
            best_over_templates=self.best_over_templates,
            templ_per_frame=self.templates_per_frame, region=_choice(REGIONS, region, "region"),
            platform=_choice(PLATFORMS, platform, "platform"),
            rigor=_choice(RIGORS, rigor, "rigor"),
            threads=_int(threads, "threads", 0, _flcc.MAX_THREADS), method=method,
            check_finite=bool(check_finite))
        self._plans = {}
        self._lock = threading.Lock()
        first = self._plan(DTYPES["float32"] if self._images.dtype is None else self._images.dtype,
                           DTYPES["float32"] if self._templates.dtype is None
                           else self._templates.dtype)
        self.pairs = first.pairs
        # The element type of the templates given last: templates=None reuses them.
        self._last_templ_type = (DTYPES["float32"] if self._templates.dtype is None
                                 else self._templates.dtype)
        rc, h, w, d = first.output_size
        check(rc)
        self.map_shape = {1: (w,), 2: (h, w), 3: (h, w, d)}[len(self.image_shape)]

    def _plan(self, image_type, templ_type):
        """The library's plan for these element types. The first is planned as asked; the others
        force its solver, so that every element type runs the same computation."""
        key = (image_type, templ_type)
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                return plan
            args = dict(self._args, image_type=image_type, templ_type=templ_type)
            if self._plans:
                args["method"] = next(iter(self._plans.values())).method
            code, plan = _flcc.batch_plan_create(**args)
            check(code, f"planning a batch of {self.op} of {self.image_shape} with "
                        f"{self.template_shape}")
            self._plans[key] = plan
            return plan

    @property
    def method(self):
        """The per-pair solver the planner chose (or the one forced)."""
        return next(iter(self._plans.values())).method

    @property
    def image_input_shape(self):
        """The shape of one frame's images input: (images, *image_shape), or image_frame when
        the images are cut from it."""
        return self._images.input_shape

    @property
    def template_input_shape(self):
        """The shape of one template set: (templates, *template_shape), or template_frame."""
        return self._templates.input_shape

    @property
    def maps_per_frame(self):
        """Maps (and peak lists) per frame: pairs, or images with best_over_templates."""
        return self._images.count if self.best_over_templates else self.pairs

    def __repr__(self):
        return (f"flcc.BatchPlan({self.op!r}, {self.image_shape}, {self.template_shape}, "
                f"pairs={self.pairs}, region={self.region!r}, method={self.method!r})")

    def _frames(self, shape, side, what):
        """(frames, stacked) of an input of this shape."""
        one = side.input_shape
        if shape == one:
            return 1, False
        if len(shape) == len(one) + 1 and shape[1:] == one and shape[0] >= 1:
            return shape[0], True
        raise ValueError(f"{what} shape {shape} is neither one frame's {one} nor a stack of it")

    def __call__(self, images, templates=None):
        fw = _arrays.framework_of(images)
        images, image_type = _input(images, self._images.dtype, "images")
        frames, stacked = self._frames(tuple(images.shape), self._images, "images")
        device = _arrays.device_of(images, fw)
        tfw, tdevice = _arrays.NUMPY, _arrays.HOST
        if templates is not None:
            tfw = _arrays.framework_of(templates)
            templates, templ_type = _input(templates, self._templates.dtype, "templates")
            tdevice = _arrays.device_of(templates, tfw)
            shape = tuple(templates.shape)
            if self.templates_per_frame:
                sets, tstacked = self._frames(shape, self._templates, "templates")
                if tstacked != stacked or sets != frames:
                    raise ValueError(f"templates_per_frame: templates shape {shape} must hold one "
                                     f"set {self._templates.input_shape} per frame of the images")
            elif shape != self._templates.input_shape:
                raise ValueError(f"templates shape {shape} is not the plan's "
                                 f"{self._templates.input_shape}")
        else:
            templ_type = self._last_templ_type
        plan = self._plan(image_type, templ_type)
        maps_n = self.maps_per_frame
        peaks = np.empty((frames, maps_n, self.peaks), PEAK_DTYPE)
        maps = None
        if self.keep_maps:
            per = (maps_n, 2) if self.best_over_templates else (maps_n,)
            maps = _arrays.empty(fw, (frames,) + per + self.map_shape, device)
        if device != _arrays.HOST:
            _arrays.synchronize(fw, device)
        if tdevice != _arrays.HOST:
            _arrays.synchronize(tfw, tdevice)
        code = plan.execute(images, templates, maps,
                            peaks.reshape(-1).view(np.uint8) if self.peaks else None, frames)
        check(code, f"batch {self.op} of {frames} frame(s)")
        if templates is not None:
            self._last_templ_type = templ_type
        if not stacked:
            peaks = peaks[0]
            maps = None if maps is None else maps[0]
        return (peaks, maps) if self.keep_maps else peaks

    def close(self):
        """Destroys the plan now (it is destroyed when garbage-collected otherwise)."""
        with self._lock:
            for plan in self._plans.values():
                plan.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
