"""flcc.Plan: a reusable plan for one problem shape, and the drop-in functions' plan cache."""

import threading

import numpy as np

from . import _arrays, _flcc
from ._errors import check

OPS = {"conv": 0, "lcorr": 1, "xcorr": 2}
OP_ALIASES = {"convolve": "conv", "lcc": "lcorr", "correlate": "xcorr"}
TYPES = {"single": 0, "stream": 1}
PLATFORMS = {"host": 0, "device": 1, "any": 2}
REGIONS = {"full": 0, "same": 1, "valid": 2}
_F32 = np.dtype(np.float32)
RIGORS = {"measure": 0, "estimate": 1, "wisdom_only": 2}


def _choice(table, value, what):
    if not isinstance(value, str) or value.lower() not in table:
        raise ValueError(f"{what} must be one of {', '.join(repr(k) for k in table)}, not {value!r}")
    return table[value.lower()]


def _shape(shape, what):
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of ints, not {shape!r}") from None
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"{what} must have 1, 2 or 3 axes, not {len(shape)}")
    if any(s < 1 for s in shape):
        raise ValueError(f"{what} must be positive in every axis, got {shape}")
    return shape


def _c_size(shape):
    """The library's (h, w, d) and dim for a 1D, 2D or 3D shape (1D runs as one row)."""
    if len(shape) == 1:
        return 2, (1, shape[0], 1)
    if len(shape) == 2:
        return 2, (shape[0], shape[1], 1)
    return 3, shape


class Plan:
    """A plan for one operation on images of one shape with templates of one shape.

    ``op`` is ``'conv'`` (scipy.signal.convolve), ``'xcorr'`` (scipy.signal.correlate) or
    ``'lcorr'`` (local correlation coefficients, skimage's match_template); ``region`` is
    ``'full'``, ``'same'`` or ``'valid'`` per axis; ``platform`` ``'host'``, ``'device'`` or
    ``'any'``; ``rigor`` ``'measure'`` (times every applicable solver), ``'estimate'`` (cost
    model) or ``'wisdom_only'``; ``type`` ``'single'`` (a new template per call is expected) or
    ``'stream'`` (many frames share one template). ``method`` forces a solver by name
    (``flcc.solvers()``). ``device`` is the CUDA device (None: the current one) and
    ``device_resident`` says whether the frames will be GPU arrays, so that the planner times
    that case.

    Call it per frame: ``plan(image, template, out=None)``. ``image`` is one frame of
    ``image_shape`` or a stack of frames with one more leading axis; the result has the same
    leading axis. NumPy, CuPy and PyTorch arrays are taken without a copy when they are
    float32 and C-contiguous, and the result is an array of the image's framework on its
    device. GPU arrays run on the caller's current stream and the call returns without waiting,
    as CuPy's and PyTorch's operations do; ``synchronize()`` waits and raises the errors the
    work found (non-finite input).
    """

    def __init__(self, op, image_shape, template_shape, *, region="full", platform="any",
                 type="single", rigor="measure", threads=0, method=None, device=None,
                 check_finite=True, device_resident=False):
        op = OP_ALIASES.get(op, op) if isinstance(op, str) else op
        self.op = op
        op_code = _choice(OPS, op, "op")
        self.image_shape = _shape(image_shape, "image_shape")
        self.template_shape = _shape(template_shape, "template_shape")
        if len(self.image_shape) != len(self.template_shape):
            raise ValueError("image and template must have the same number of axes")
        self.region = region
        codes = (_choice(TYPES, type, "type"), _choice(PLATFORMS, platform, "platform"),
                 _choice(REGIONS, region, "region"), _choice(RIGORS, rigor, "rigor"))
        if (isinstance(threads, bool) or not isinstance(threads, int) or
                not 0 <= threads <= _flcc.MAX_THREADS):
            raise ValueError(f"threads must be an int from 0 to {_flcc.MAX_THREADS}, not {threads!r}")
        if device is None:
            device = -1
        if isinstance(device, bool) or not isinstance(device, int) or device < -1:
            raise ValueError(f"device must be None or a device ordinal, not {device!r}")
        if method is not None and not isinstance(method, str):
            raise TypeError("method must be a solver name or None")
        if op == "xcorr" and codes[2] == REGIONS["valid"] and any(
                t > s for s, t in zip(self.image_shape, self.template_shape)):
            raise ValueError("the valid region needs the template no larger than the image")
        dim, img = _c_size(self.image_shape)
        _, tpl = _c_size(self.template_shape)
        # Cross-correlation is convolution with the template reversed on every axis.
        code, plan = _flcc.plan_create(0 if op_code == 2 else op_code, dim, img, tpl, *codes,
                                       threads, method, device, bool(check_finite),
                                       bool(device_resident))
        check(code, f"planning {op} of {self.image_shape} with {self.template_shape}")
        self._plan = plan
        self._flip = op_code == 2
        rc, h, w, d = plan.output_size
        check(rc)
        self.output_shape = {1: (w,), 2: (h, w), 3: (h, w, d)}[len(self.image_shape)]
        self._stream = 0
        self._lock = threading.Lock()

    @property
    def method(self):
        """The solver the planner chose (or the one forced)."""
        return self._plan.method

    @property
    def candidates(self):
        """[(solver name, seconds per frame)] for every candidate the planner considered
        (measured with 'measure', estimated with 'estimate'; negative: skipped by the budget)."""
        return list(self._plan.candidates)

    def __repr__(self):
        return (f"flcc.Plan({self.op!r}, {self.image_shape}, {self.template_shape}, "
                f"region={self.region!r}, method={self.method!r})")

    def __call__(self, image, template, out=None):
        fw = _arrays.framework_of(image)
        image = _arrays.as_float32(image, fw, "image")
        tfw = _arrays.framework_of(template)
        template = _arrays.as_float32(template, tfw, "template")
        shape = tuple(image.shape)
        n = len(self.image_shape)
        if shape == self.image_shape:
            count, out_shape = 1, self.output_shape
        elif len(shape) == n + 1 and shape[1:] == self.image_shape and shape[0] >= 1:
            count, out_shape = shape[0], (shape[0],) + self.output_shape
        else:
            raise ValueError(f"image shape {shape} is neither the plan's {self.image_shape} nor a "
                             f"stack of it")
        if tuple(template.shape) != self.template_shape:
            raise ValueError(f"template shape {tuple(template.shape)} is not the plan's "
                             f"{self.template_shape}")
        if self._flip:
            template = _arrays.flip(template, tfw)
        device = _arrays.device_of(image, fw)
        if out is None:
            out = _arrays.empty(fw, out_shape, device)
        else:
            self._check_out(out, out_shape)
        if device == _arrays.HOST:
            if fw == _arrays.NUMPY:
                check(self._plan.execute(image, template, out, count))
            else:
                check(self._execute_raw(image, fw, template, tfw, out, count))
            return out
        stream = _arrays.current_stream(fw, device)
        with self._lock:
            if stream != self._stream:
                check(self._plan.set_stream(stream))
                self._stream = stream
            check(self._execute_raw(image, fw, template, tfw, out, count))
        return out

    def _execute_raw(self, image, fw, template, tfw, out, count):
        # CuPy and PyTorch arrays by address: their DLPack export costs microseconds a call;
        # dtype, layout and shapes are checked above.
        ptr = _arrays.data_pointer
        return self._plan.execute_raw(ptr(image, fw), ptr(template, tfw),
                                      ptr(out, _arrays.framework_of(out)), count)

    @staticmethod
    def _check_out(out, out_shape):
        if _arrays.framework_of(out) == _arrays.TORCH:
            dtype_ok = out.dtype == _arrays._torch().float32
            contiguous = out.is_contiguous()
        else:
            dtype_ok = out.dtype == _F32
            contiguous = out.flags.c_contiguous
        if not dtype_ok:
            raise TypeError(f"out must be float32, not {out.dtype}")
        if not contiguous:
            raise ValueError("out must be C-contiguous")
        if tuple(out.shape) != out_shape:
            raise ValueError(f"out has shape {tuple(out.shape)}, the result needs {out_shape}")

    def synchronize(self):
        """Waits for the work queued on GPU arrays and raises flcc.Error for what it found."""
        check(self._plan.synchronize())

    def close(self):
        """Destroys the plan now (it is destroyed when garbage-collected otherwise)."""
        self._plan.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_CACHE_SIZE = 32
_cache = {}
_cache_lock = threading.Lock()


def cached(factory, *args, **kwargs):
    """factory(*args, **kwargs) from the drop-in functions' cache (the most recent 32 plans of
    any kind), so that a function called again on the same problem plans nothing. The arguments
    are the key: they must be hashable."""
    key = (factory, args, tuple(sorted(kwargs.items())))
    with _cache_lock:
        plan = _cache.pop(key, None)
        if plan is not None:
            _cache[key] = plan
            return plan
    plan = factory(*args, **kwargs)
    with _cache_lock:
        _cache[key] = plan
        while len(_cache) > _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
    return plan


def cached_plan(*args, **kwargs):
    """A Plan from the drop-in functions' cache."""
    return cached(Plan, *args, **kwargs)


def clear_cache():
    """Forgets the drop-in functions' cached plans."""
    with _cache_lock:
        _cache.clear()
