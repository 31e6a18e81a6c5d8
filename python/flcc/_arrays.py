"""Arrays of NumPy, CuPy and PyTorch: where they live, and float32 C-contiguous views of them.

The library takes float32, C-contiguous buffers in host or CUDA memory. An input that already
is one is passed as it is (zero copy: the library reads the caller's buffer); any other real
array is converted once, in its own framework and on its own device. Results are allocated in
the caller's framework, on the caller's device.
"""

import numpy as np

NUMPY, CUPY, TORCH = "numpy", "cupy", "torch"
HOST = -1   # the device of host memory


def framework_of(x):
    """The framework of an array: 'cupy', 'torch', or 'numpy' for anything else."""
    root = type(x).__module__.partition(".")[0]
    if root == "cupy":
        return CUPY
    if root == "torch":
        return TORCH
    return NUMPY


def device_of(x, framework):
    """The CUDA device ordinal of an array, or HOST."""
    if framework == CUPY:
        return int(x.device.id)
    if framework == TORCH:
        if x.is_cuda:
            return x.get_device()
        if x.device.type != "cpu":
            raise TypeError(f"flcc takes CPU or CUDA tensors, not {x.device.type} tensors")
        return HOST
    return HOST


_modules = {}


def _torch():
    torch = _modules.get(TORCH)
    if torch is None:
        import torch
        _modules[TORCH] = torch
    return torch


def _cupy():
    cupy = _modules.get(CUPY)
    if cupy is None:
        import cupy
        _modules[CUPY] = cupy
    return cupy


def _check_real(kind, what):
    if kind == "c":
        raise TypeError(f"{what}: complex input is not supported (flcc computes real float32)")
    if kind not in "biuf":
        raise TypeError(f"{what}: expected a real numeric array, got dtype kind {kind!r}")


def as_float32(x, framework, what="input"):
    """x as a C-contiguous float32 array of its framework, on its device (x itself when it is
    one already)."""
    if framework == CUPY:
        cp = _cupy()
        _check_real(x.dtype.kind, what)
        if x.dtype == cp.float32 and x.flags.c_contiguous:
            return x
        with cp.cuda.Device(x.device.id):
            return cp.ascontiguousarray(x, dtype=cp.float32)
    if framework == TORCH:
        torch = _torch()
        if x.dtype is torch.float32 and not x.requires_grad and x.is_contiguous():
            return x
        if x.dtype.is_complex:
            raise TypeError(f"{what}: complex input is not supported (flcc computes real float32)")
        if x.requires_grad:
            x = x.detach()
        if x.dtype != torch.float32:
            x = x.to(torch.float32)
        return x.contiguous()
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    _check_real(x.dtype.kind, what)
    if x.dtype == np.float32 and x.flags.c_contiguous and x.dtype.isnative:
        return x
    return np.asarray(x, dtype=np.float32, order="C")   # keeps 0-d arrays 0-d


def dtype_name(x, framework):
    """The name of an array's element type as NumPy spells it ('float32', 'uint16', ...)."""
    if framework == TORCH:
        return str(x.dtype).rpartition(".")[2]
    return x.dtype.name


def as_contiguous(x, framework):
    """x as a C-contiguous array of its framework, dtype and device, in native byte order (x
    itself when it is one already)."""
    if framework == CUPY:
        cp = _cupy()
        if x.flags.c_contiguous:
            return x
        with cp.cuda.Device(x.device.id):
            return cp.ascontiguousarray(x)
    if framework == TORCH:
        if x.requires_grad:
            x = x.detach()
        return x.contiguous()
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if x.flags.c_contiguous and x.dtype.isnative:
        return x
    return np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("="))


def synchronize(framework, device):
    """Waits for the work queued on the caller's current stream of the device, so that a copy the
    library makes on the legacy default stream reads finished data."""
    if framework == CUPY:
        cp = _cupy()
        with cp.cuda.Device(device):
            cp.cuda.get_current_stream().synchronize()
    elif framework == TORCH:
        _torch().cuda.current_stream(device).synchronize()


def empty(framework, shape, device):
    """An uninitialised float32 array of the framework on the device."""
    shape = tuple(int(s) for s in shape)
    if framework == CUPY:
        cp = _cupy()
        with cp.cuda.Device(device):
            return cp.empty(shape, dtype=cp.float32)
    if framework == TORCH:
        torch = _torch()
        dev = torch.device("cpu") if device == HOST else torch.device("cuda", device)
        return torch.empty(shape, dtype=torch.float32, device=dev)
    return np.empty(shape, dtype=np.float32)


def flip(x, framework):
    """x reversed along every axis, C-contiguous (templates are small: one copy)."""
    if framework == TORCH:
        return _torch().flip(x, dims=tuple(range(x.ndim))).contiguous()
    if framework == CUPY:
        cp = _cupy()
        return cp.ascontiguousarray(x[(slice(None, None, -1),) * x.ndim])
    return np.ascontiguousarray(x[(slice(None, None, -1),) * x.ndim])


def pad(x, framework, widths, mode, **kwargs):
    """numpy.pad semantics in the array's framework (result float32, C-contiguous)."""
    if framework == TORCH:
        # torch has no numpy.pad: through CuPy on the GPU or NumPy on the host, by DLPack.
        torch = _torch()
        if x.device.type == "cuda":
            cp = _cupy()
            y = cp.pad(cp.from_dlpack(x), widths, mode=mode, **kwargs)
            return torch.from_dlpack(cp.ascontiguousarray(y, dtype=cp.float32))
        y = np.pad(x.numpy(), widths, mode=mode, **kwargs)
        return torch.from_numpy(np.ascontiguousarray(y, dtype=np.float32))
    if framework == CUPY:
        cp = _cupy()
        return cp.ascontiguousarray(cp.pad(x, widths, mode=mode, **kwargs), dtype=cp.float32)
    return np.ascontiguousarray(np.pad(x, widths, mode=mode, **kwargs), dtype=np.float32)


def _cupy_stream(device):
    cp = _cupy()
    try:
        return cp.cuda.get_current_stream(device).ptr
    except TypeError:   # CuPy before 13 takes no device
        with cp.cuda.Device(device):
            return cp.cuda.get_current_stream().ptr


def _torch_stream(device):
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device)
    return torch.cuda.current_stream(device).cuda_stream


def current_stream(framework, device):
    """The caller's current CUDA stream on the device, as an integer handle. The legacy default
    stream (0 in CuPy and PyTorch) is given as cudaStreamLegacy (1), since 0 tells the library
    to use a plan's own stream."""
    if framework == CUPY:
        ptr = _cupy_stream(device)
    elif framework == TORCH:
        ptr = _torch_stream(device)
    else:
        return 0
    return int(ptr) or 1


def data_pointer(x, framework):
    """The address of an array's first element, as its framework reports it."""
    if framework == CUPY:
        return int(x.data.ptr)
    if framework == TORCH:
        return int(x.data_ptr())
    return int(x.__array_interface__["data"][0])
