"""The drop-in functions: scikit-image's match_template, SciPy's convolve and correlate, and
MATLAB's normxcorr2, with their peers' semantics, shapes and argument errors.

They compute in float32 and return float32 arrays of the input's framework, on its device.
They plan with ESTIMATE by default (or from wisdom), so one call costs about one execution;
rigor='measure' times the candidates instead, once per shape (plans are cached).
"""

from . import _arrays
from ._errors import CODES, Error
from ._plan import REGIONS, cached_plan

_MODE_ERROR = "Acceptable mode flags are 'valid', 'same', or 'full'."
# numpy.pad's modes: skimage passes `mode` to numpy.pad whatever pad_input says.
_PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
              "reflect", "symmetric", "wrap", "empty")


def _isfinite(x, framework):
    if framework == _arrays.TORCH:
        return _arrays._torch().isfinite(x).all()
    return abs(float(x)) != float("inf") and float(x) == float(x)


def _plan_options(device, platform, rigor, threads, method):
    if device != _arrays.HOST and platform == "any":
        platform = "device"
    return dict(platform=platform, rigor=rigor, threads=threads, method=method,
                device=None if device == _arrays.HOST else device,
                device_resident=device != _arrays.HOST)


def _run(op, image, template, region, fw, platform, rigor, threads, method):
    device = _arrays.device_of(image, fw)
    plan = cached_plan(op, tuple(image.shape), tuple(template.shape), region=region,
                       **_plan_options(device, platform, rigor, threads, method))
    out = plan(image, template)
    if device != _arrays.HOST:
        plan.synchronize()   # a one-shot call reports what the GPU work found
    return out


def _valid_swap_needed(shape1, shape2):
    """scipy's rule for the valid mode: one input at least as large as the other on every axis;
    True when the second is the larger."""
    ok1 = all(a >= b for a, b in zip(shape1, shape2))
    ok2 = all(b >= a for a, b in zip(shape1, shape2))
    if not (ok1 or ok2):
        raise ValueError("For 'valid' mode, one must be at least as large as the other in every "
                         "dimension")
    return not ok1


def _convolution(in1, in2, mode, reverse, platform, rigor, threads, method):
    if mode not in REGIONS:
        raise ValueError(_MODE_ERROR)
    fw = _arrays.framework_of(in1)
    a = _arrays.as_float32(in1, fw, "in1")
    b = _arrays.as_float32(in2, _arrays.framework_of(in2), "in2")
    if a.ndim == 0 and b.ndim == 0:
        product = a * b
        if not bool(_isfinite(a, fw)) or not bool(_isfinite(b, _arrays.framework_of(b))):
            raise Error(CODES["NONFINITE_INPUT"], "in1 or in2")
        return product
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if a.ndim > 3:
        raise ValueError(f"flcc convolves 1D, 2D and 3D arrays, not {a.ndim}D")
    if a.size == 0 or b.size == 0:
        # scipy's answer to empty inputs depends on the method it picks; flcc's is one rule.
        raise ValueError("in1 and in2 must not be empty")
    if reverse:
        # correlate(a, b) = convolve(a, b reversed on every axis), as scipy computes it.
        b = _arrays.flip(b, _arrays.framework_of(b))
    if mode == "valid" and _valid_swap_needed(a.shape, b.shape):
        a, b = b, a
    elif mode == "full" and b.size > a.size:
        # Convolution commutes; the larger operand as the image is the cheaper plan.
        a, b = b, a
    return _run("conv", a, b, mode, fw, platform, rigor, threads, method)


def convolve(in1, in2, mode="full", *, platform="any", rigor="estimate", threads=0, method=None):
    """scipy.signal.convolve(in1, in2, mode) of 1D, 2D or 3D real arrays, in float32.

    mode: 'full' (default), 'same' (the size of in1, centred as scipy centres it) or 'valid'
    (one input at least as large as the other on every axis). The keyword-only options choose
    where it runs ('host', 'device', 'any'), the planner's rigor ('estimate', 'measure',
    'wisdom_only'), CPU threads (0: all) and a solver forced by name.
    """
    return _convolution(in1, in2, mode, False, platform, rigor, threads, method)


def correlate(in1, in2, mode="full", *, platform="any", rigor="estimate", threads=0, method=None):
    """scipy.signal.correlate(in1, in2, mode) of 1D, 2D or 3D real arrays, in float32
    (options as for convolve)."""
    return _convolution(in1, in2, mode, True, platform, rigor, threads, method)


def _check_lcc_inputs(image, template, name):
    if image.size == 0:
        raise ValueError(f"The parameter `{name}` cannot be an empty array")
    if image.ndim not in (2, 3):
        raise ValueError(f"The parameter `{name}` must be a 2-dimensional or 3-dimensional array")
    if image.ndim < template.ndim:
        raise ValueError("Dimensionality of template must be less than or equal to the "
                         "dimensionality of image.")
    if image.ndim != template.ndim:
        raise ValueError("flcc needs the template to have as many axes as the image")
    if any(s < t for s, t in zip(image.shape, template.shape)):
        raise ValueError("Image must be larger than template.")
    if template.size == 0:
        raise ValueError("The parameter `template` cannot be an empty array")


def match_template(image, template, pad_input=False, mode="constant", constant_values=0, *,
                   platform="any", rigor="estimate", threads=0, method=None):
    """skimage.feature.match_template: the zero-mean normalised cross-correlation of the
    template at every position, for 2D and 3D images, in float32.

    pad_input=False gives the positions where the template lies inside the image (shape
    image - template + 1); pad_input=True gives one value per image pixel, the template centred
    on it, over the image padded by numpy.pad(mode, constant_values). A zero-variance panel
    gives exactly 0. Options after the star as for convolve.
    """
    if mode not in _PAD_MODES:
        raise ValueError(f"mode {mode!r} is not supported: one of {', '.join(_PAD_MODES)}")
    fw = _arrays.framework_of(image)
    image = _arrays.as_float32(image, fw, "image")
    template = _arrays.as_float32(template, _arrays.framework_of(template), "template")
    _check_lcc_inputs(image, template, "image")
    if not pad_input:
        return _run("lcorr", image, template, "valid", fw, platform, rigor, threads, method)
    if mode == "constant" and float(constant_values) == 0.0:
        # The library's same region: the padded zeros are data.
        return _run("lcorr", image, template, "same", fw, platform, rigor, threads, method)
    # skimage pads by the template's size on every side; the positions it keeps see
    # ceil((T-1)/2) values before the image and floor((T-1)/2) after it.
    widths = tuple((t, t) for t in template.shape)
    kwargs = {"constant_values": constant_values} if mode == "constant" else {}
    padded = _arrays.pad(image, fw, widths, mode, **kwargs)
    keep = tuple(slice(t - (t - 1 - (t - 1) // 2), t + s + (t - 1) // 2)
                 for s, t in zip(image.shape, template.shape))
    padded = _arrays.as_float32(padded[keep], fw, "image")
    return _run("lcorr", padded, template, "valid", fw, platform, rigor, threads, method)


def normxcorr2(template, image, *, platform="any", rigor="estimate", threads=0, method=None):
    """MATLAB's normxcorr2(template, A): the normalised cross-correlation of a 2D template at
    every position where it overlaps the image, the image zero-padded (shape A + T - 1), in
    float32. As in MATLAB, the template may not be larger than the image, needs at least two
    elements, and may not be constant."""
    fw = _arrays.framework_of(image)
    image = _arrays.as_float32(image, fw, "A")
    template = _arrays.as_float32(template, _arrays.framework_of(template), "template")
    if image.ndim != 2 or template.ndim != 2:
        raise ValueError("normxcorr2 takes a 2D template and a 2D image")
    if template.size < 2:
        raise ValueError("template must have at least 2 elements")
    if any(s < t for s, t in zip(image.shape, template.shape)):
        raise ValueError("template must be no larger than the image in both dimensions")
    if bool((template == template.reshape(-1)[0]).all()):
        raise ValueError("The values of template cannot all be the same")
    return _run("lcorr", image, template, "full", fw, platform, rigor, threads, method)
