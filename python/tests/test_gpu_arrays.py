"""CuPy and PyTorch CUDA arrays: zero copy by pointer identity, results of the caller's
framework on the caller's device, the caller's current stream, and agreement with the host.
Each test skips, saying so, where no GPU (or no CuPy / PyTorch) is present."""

import numpy as np
import pytest

import flcc
from support import gpu_usable

pytestmark = pytest.mark.skipif(not gpu_usable(), reason="no usable GPU (or a CPU-only build)")
rng = np.random.default_rng(5)


def _cupy():
    return pytest.importorskip("cupy", reason="CuPy is not installed here")


def _torch_cuda():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed here")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    return torch


def test_cupy_zero_copy_result_on_device_and_stream():
    cp = _cupy()
    image_h = rng.random((96, 80), dtype=np.float32)
    templ_h = rng.random((9, 7), dtype=np.float32)
    image, templ = cp.asarray(image_h), cp.asarray(templ_h)
    plan = flcc.Plan("lcorr", image.shape, templ.shape, region="same", platform="device",
                     device_resident=True, device=0, rigor="estimate")
    out = cp.empty(plan.output_shape, cp.float32)
    with cp.cuda.Stream(non_blocking=True) as s:
        res = plan(image, templ, out=out)
        assert res is out
        assert plan._stream == s.ptr
        s.synchronize()
    plan.synchronize()
    assert plan._plan.last_pointers == (image.data.ptr, templ.data.ptr, out.data.ptr)
    want = flcc.match_template(image_h, templ_h, pad_input=True, platform="host")
    assert np.abs(cp.asnumpy(out) - want).max() <= 1e-5
    got = flcc.match_template(image, templ, pad_input=True)
    assert isinstance(got, cp.ndarray) and got.device.id == 0 and got.dtype == cp.float32
    assert np.abs(cp.asnumpy(got) - want).max() <= 1e-5


def test_cupy_convolve_correlate_and_nonfinite():
    cp = _cupy()
    signal = pytest.importorskip("scipy.signal")
    a = rng.random((40, 33, 21), dtype=np.float32)
    b = rng.random((5, 4, 3), dtype=np.float32)
    for mode in ("full", "same", "valid"):
        for fn, ref in ((flcc.convolve, signal.convolve), (flcc.correlate, signal.correlate)):
            got = fn(cp.asarray(a), cp.asarray(b), mode)
            assert isinstance(got, cp.ndarray)
            want = ref(a.astype(np.float64), b.astype(np.float64), mode)
            assert np.abs(cp.asnumpy(got) - want).max() <= 1e-5 * max(np.abs(want).max(), 1)
    bad = cp.asarray(a[:, :, 0].copy())
    bad[3, 4] = cp.nan
    with pytest.raises(flcc.Error) as e:
        flcc.match_template(bad, cp.asarray(b[:, :, 0].copy()))
    assert e.value.code == flcc.CODES["NONFINITE_INPUT"]


def test_cupy_non_contiguous_and_integer_inputs():
    cp = _cupy()
    image = cp.asarray(rng.integers(0, 65535, (64, 128), dtype=np.uint16))
    templ = cp.asarray(rng.random((8, 8), dtype=np.float32))
    strided = image[:, ::2]
    got = flcc.match_template(strided, templ)
    want = flcc.match_template(cp.asnumpy(strided).astype(np.float32), cp.asnumpy(templ), platform="host")
    assert np.abs(cp.asnumpy(got) - want).max() <= 1e-5


def test_torch_cuda_zero_copy_and_current_stream():
    torch = _torch_cuda()
    image = torch.rand(100, 90, device="cuda")
    templ = torch.rand(11, 10, device="cuda")
    plan = flcc.Plan("lcorr", (100, 90), (11, 10), region="valid", platform="device",
                     device_resident=True, device=0, rigor="estimate")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        out = plan(image, templ)
        assert plan._stream == s.cuda_stream
    s.synchronize()
    plan.synchronize()
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == torch.float32
    assert plan._plan.last_pointers == (image.data_ptr(), templ.data_ptr(), out.data_ptr())
    want = flcc.match_template(image.cpu().numpy(), templ.cpu().numpy(), platform="host")
    assert np.abs(out.cpu().numpy() - want).max() <= 1e-5
    got = flcc.correlate(image, templ, "same")
    assert isinstance(got, torch.Tensor) and got.is_cuda
    ref = flcc.correlate(image.cpu().numpy(), templ.cpu().numpy(), "same", platform="host")
    assert np.abs(got.cpu().numpy() - ref).max() <= 1e-5 * max(np.abs(ref).max(), 1)


def test_torch_cuda_pad_input_modes():
    torch = _torch_cuda()
    pytest.importorskip("cupy", reason="CuPy pads PyTorch CUDA tensors")
    image = torch.rand(50, 60, device="cuda")
    templ = torch.rand(6, 5, device="cuda")
    got = flcc.match_template(image, templ, pad_input=True, mode="reflect")
    want = flcc.match_template(image.cpu().numpy(), templ.cpu().numpy(), pad_input=True,
                               mode="reflect", platform="host")
    assert got.is_cuda and np.abs(got.cpu().numpy() - want).max() <= 1e-5


def test_every_device_on_its_own_device():
    cp = _cupy()
    n = cp.cuda.runtime.getDeviceCount()
    image_h = rng.random((64, 64), dtype=np.float32)
    templ_h = rng.random((5, 5), dtype=np.float32)
    want = flcc.match_template(image_h, templ_h, platform="host")
    for d in range(n):
        with cp.cuda.Device(d):
            image, templ = cp.asarray(image_h), cp.asarray(templ_h)
        got = flcc.match_template(image, templ)
        assert got.device.id == d
        assert np.abs(cp.asnumpy(got) - want).max() <= 1e-5


def _batch_case():
    frames = rng.integers(0, 4000, (2, 96, 96)).astype(np.uint16)
    origins = np.array([[0, 0], [16, 24], [48, 40], [64, 64]])
    plan = flcc.BatchPlan("lcorr", (32, 32), (16, 16), image_origins=origins,
                          image_frame=(96, 96), template_origins=origins + 8,
                          template_frame=(96, 96), region="valid", keep_maps=True,
                          refine="quadratic")
    return frames, origins, plan


def test_cupy_batch_plan_and_register_subregions():
    # Batch plans run on the host: device frames are copied by the library after the caller's
    # stream is waited for; maps come back on the frames' device, peaks as NumPy.
    cp = _cupy()
    frames_h, origins, plan = _batch_case()
    want_peaks, want_maps = plan(frames_h, frames_h[0])
    with cp.cuda.Stream(non_blocking=True):
        frames = cp.asarray(frames_h)
        reference = frames[0].copy()
        peaks, maps = plan(frames, reference)
    assert isinstance(peaks, np.ndarray) and peaks.dtype == flcc.PEAK_DTYPE
    assert isinstance(maps, cp.ndarray) and maps.device.id == 0 and maps.dtype == cp.float32
    assert plan._plans[(1, 1)].last_pointers[:2] == (frames.data.ptr, reference.data.ptr)
    np.testing.assert_array_equal(peaks, want_peaks)
    np.testing.assert_array_equal(cp.asnumpy(maps), want_maps)
    off, quality = flcc.register_subregions(frames, reference, origins, 32, template_size=16)
    want_off, want_quality = flcc.register_subregions(frames_h, frames_h[0], origins, 32,
                                                      template_size=16)
    np.testing.assert_array_equal(off, want_off)
    np.testing.assert_array_equal(quality, want_quality)


def test_torch_cuda_batch_plan():
    torch = _torch_cuda()
    frames_h, origins, plan = _batch_case()
    frames_h = frames_h.astype(np.float32)
    want_peaks, want_maps = plan(frames_h, frames_h[0])
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        frames = torch.from_numpy(frames_h).cuda()
        peaks, maps = plan(frames, frames[0])
    assert isinstance(maps, torch.Tensor) and maps.is_cuda
    np.testing.assert_array_equal(peaks, want_peaks)
    np.testing.assert_array_equal(maps.cpu().numpy(), want_maps)
