"""flcc.Plan, arrays, errors, threads and wisdom on the host (NumPy; PyTorch CPU tensors when
torch is installed)."""

import threading

import numpy as np
import pytest

import flcc
from flcc import _flcc
from support import gpu_usable


def reference_lcc_valid(image, templ):
    """Pearson correlation at every valid placement, in float64 (2D)."""
    image = image.astype(np.float64)
    t = templ.astype(np.float64) - templ.mean()
    th, tw = templ.shape
    out = np.zeros((image.shape[0] - th + 1, image.shape[1] - tw + 1))
    tn = np.sqrt((t * t).sum())
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            p = image[i:i + th, j:j + tw]
            p = p - p.mean()
            d = np.sqrt((p * p).sum()) * tn
            out[i, j] = (p * t).sum() / d if d > 0 else 0.0
    return out


rng = np.random.default_rng(7)


def test_plan_reports_method_candidates_and_shape():
    plan = flcc.Plan("lcorr", (40, 50), (5, 6), region="valid", rigor="measure", platform="host")
    assert plan.output_shape == (36, 45)
    names = [n for n, _ in plan.candidates]
    assert plan.method in names and len(names) >= 2
    assert all(n in flcc.solvers() for n in names)
    assert "Plan('lcorr'" in repr(plan)


@pytest.mark.parametrize("method", ["host.direct2.generic", "host.fourier2.t64"])
def test_forced_solver_against_float64(method):
    image = rng.random((30, 33), dtype=np.float32)
    templ = rng.random((5, 4), dtype=np.float32)
    plan = flcc.Plan("lcc", image.shape, templ.shape, region="valid", method=method)
    assert plan.method == method
    assert np.abs(plan(image, templ) - reference_lcc_valid(image, templ)).max() <= 1e-5


def test_unknown_and_inapplicable_methods_raise_error_codes():
    with pytest.raises(flcc.Error) as e:
        flcc.Plan("conv", (8, 8), (3, 3), method="no.such.solver")
    assert e.value.code == flcc.CODES["UNKNOWN_METHOD"] and e.value.name == "UNKNOWN_METHOD"
    with pytest.raises(flcc.Error) as e:
        flcc.Plan("conv", (8, 8, 8), (3, 3, 3), method="host.direct2.generic")
    assert e.value.code == flcc.CODES["METHOD_NOT_APPLICABLE"]


def test_stack_of_frames_equals_frame_by_frame_and_out_is_filled_in_place():
    frames = rng.random((4, 20, 24), dtype=np.float32)
    templ = rng.random((3, 5), dtype=np.float32)
    plan = flcc.Plan("conv", (20, 24), (3, 5), region="same", type="stream", rigor="estimate")
    out = np.full((4, 20, 24), np.nan, dtype=np.float32)
    res = plan(frames, templ, out=out)
    assert res is out
    for k in range(4):
        np.testing.assert_array_equal(out[k], plan(frames[k], templ))


def test_zero_copy_numpy():
    image = rng.random((32, 32), dtype=np.float32)
    templ = rng.random((4, 4), dtype=np.float32)
    out = np.empty((29, 29), dtype=np.float32)
    plan = flcc.Plan("lcorr", (32, 32), (4, 4), region="valid", rigor="estimate")
    plan(image, templ, out=out)
    ptrs = plan._plan.last_pointers
    assert ptrs == tuple(a.__array_interface__["data"][0] for a in (image, templ, out))
    # A non-contiguous or non-float32 input is converted once (a copy, same result).
    strided = np.ascontiguousarray(np.repeat(image, 2, axis=1))[:, ::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(plan(strided, templ), out)
    assert plan._plan.last_pointers[0] != strided.__array_interface__["data"][0]
    np.testing.assert_allclose(plan(image.astype(np.float64), templ), out, atol=0)


def test_zero_copy_torch_cpu():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed here")
    image = torch.rand(32, 32)
    templ = torch.rand(4, 4)
    plan = flcc.Plan("lcorr", (32, 32), (4, 4), region="valid", rigor="estimate")
    out = plan(image, templ)
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu" and out.dtype == torch.float32
    assert plan._plan.last_pointers == (image.data_ptr(), templ.data_ptr(), out.data_ptr())
    np.testing.assert_allclose(out.numpy(), plan(image.numpy(), templ.numpy()), atol=0)
    grad = torch.rand(32, 32, requires_grad=True)
    np.testing.assert_allclose(plan(grad, templ).numpy(), plan(grad.detach().numpy(), templ.numpy()), atol=0)


def test_bad_arguments_raise_value_and_type_errors():
    with pytest.raises(ValueError):
        flcc.Plan("fft", (8, 8), (3, 3))
    with pytest.raises(ValueError):
        flcc.Plan("conv", (8, 8), (3, 3), region="middle")
    with pytest.raises(ValueError):
        flcc.Plan("conv", (8, 8), (3, 3, 3))
    with pytest.raises(ValueError):
        flcc.Plan("conv", (8, 0), (3, 3))
    with pytest.raises(ValueError):
        flcc.Plan("conv", (2, 2, 2, 2), (1, 1, 1, 1))
    with pytest.raises(ValueError):
        flcc.Plan("conv", (8, 8), (3, 3), threads=-1)
    with pytest.raises(ValueError):
        flcc.Plan("conv", (8, 8), (3, 3), threads=_flcc.MAX_THREADS + 1)
    with pytest.raises(TypeError):
        flcc.Plan("conv", 8, (3, 3))
    with pytest.raises(flcc.Error) as e:
        flcc.Plan("lcorr", (8, 8), (9, 9), region="valid")
    assert e.value.code == flcc.CODES["INVALID_SIZE"]
    assert e.value.detail and e.value.detail in str(e.value)
    plan = flcc.Plan("conv", (8, 8), (3, 3), rigor="estimate")
    t = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError):
        plan(np.ones((8, 9), np.float32), t)
    with pytest.raises(ValueError):
        plan(np.ones((8, 8), np.float32), np.ones((3, 4), np.float32))
    with pytest.raises(TypeError):
        plan(np.ones((8, 8), np.complex64), t)
    with pytest.raises(TypeError):
        plan(np.ones((8, 8), np.float32), t, out=np.empty((10, 10), np.float64))
    with pytest.raises(ValueError):
        plan(np.ones((8, 8), np.float32), t, out=np.empty((20, 10), np.float32)[::2])
    with pytest.raises(ValueError):
        plan(np.ones((8, 8), np.float32), t, out=np.empty((9, 10), np.float32))


def test_nonfinite_input_raises_and_the_plan_keeps_working():
    plan = flcc.Plan("lcorr", (16, 16), (3, 3), rigor="estimate")
    t = rng.random((3, 3), dtype=np.float32)
    bad = rng.random((16, 16), dtype=np.float32)
    bad[5, 7] = np.inf
    with pytest.raises(flcc.Error) as e:
        plan(bad, t)
    assert e.value.code == flcc.CODES["NONFINITE_INPUT"]
    good = rng.random((16, 16), dtype=np.float32)
    assert np.isfinite(plan(good, t)).all()


def test_closed_plan_raises_invalid_plan():
    plan = flcc.Plan("conv", (8, 8), (3, 3), rigor="estimate")
    with plan:
        pass
    with pytest.raises(flcc.Error) as e:
        plan(np.ones((8, 8), np.float32), np.ones((3, 3), np.float32))
    assert e.value.code == flcc.CODES["INVALID_PLAN"]


def test_threads_share_one_plan_and_run_distinct_plans():
    """Execution releases the GIL; results from 16 threads equal the serial ones bit for bit."""
    frames = rng.random((16, 64, 64), dtype=np.float32)
    templ = rng.random((7, 7), dtype=np.float32)
    shared = flcc.Plan("lcorr", (64, 64), (7, 7), rigor="estimate", threads=1)
    serial = [shared(f, templ) for f in frames]
    results = [None] * len(frames)

    def work(k):
        own = flcc.Plan("lcorr", (64, 64), (7, 7), rigor="estimate", threads=1)
        for _ in range(5):
            a = shared(frames[k], templ)
            b = own(frames[k], templ)
        results[k] = (a, b)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(frames))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, (a, b) in enumerate(results):
        np.testing.assert_array_equal(a, serial[k])
        np.testing.assert_array_equal(b, serial[k])


def test_wisdom_round_trip(tmp_path):
    flcc.forget_wisdom()
    plan = flcc.Plan("conv", (48, 40), (5, 5), rigor="measure", platform="host")
    text = flcc.export_wisdom()
    assert "48x40" in text
    flcc.forget_wisdom()
    with pytest.raises(flcc.Error) as e:
        flcc.Plan("conv", (48, 40), (5, 5), rigor="wisdom_only", platform="host")
    assert e.value.code == flcc.CODES["WISDOM_MISS"]
    flcc.import_wisdom(text)
    assert flcc.Plan("conv", (48, 40), (5, 5), rigor="wisdom_only", platform="host").method == plan.method
    path = tmp_path / "wisdom.txt"
    flcc.export_wisdom_file(path)
    flcc.forget_wisdom()
    flcc.import_wisdom_file(path)
    assert flcc.Plan("conv", (48, 40), (5, 5), rigor="wisdom_only", platform="host").method == plan.method
    with pytest.raises(flcc.Error) as e:
        flcc.import_wisdom("not wisdom")
    assert e.value.code == flcc.CODES["INVALID_WISDOM"]
    with pytest.raises(TypeError):
        flcc.import_wisdom(b"bytes")


def test_device_platform_without_gpu_raises_no_device():
    if gpu_usable():
        pytest.skip("a GPU is present: the GPU tests cover the device platform")
    with pytest.raises(flcc.Error) as e:
        flcc.Plan("conv", (8, 8), (3, 3), platform="device")
    assert e.value.code == flcc.CODES["NO_DEVICE"]


def test_xcorr_plan_equals_scipy_correlate():
    signal = pytest.importorskip("scipy.signal")
    image = rng.random((12, 10, 9), dtype=np.float32)
    templ = rng.random((3, 4, 2), dtype=np.float32)
    for region in ("full", "same", "valid"):
        plan = flcc.Plan("xcorr", image.shape, templ.shape, region=region, rigor="estimate")
        ref = signal.correlate(image.astype(np.float64), templ.astype(np.float64), region)
        assert np.abs(plan(image, templ) - ref).max() <= 1e-5 * max(np.abs(ref).max(), 1)


def test_package_wisdom_file_serves_the_next_process(tmp_path):
    """A MEASURE decision saved to the package's wisdom file is loaded when the package is
    imported, and serves later processes' plans (WISDOM_ONLY succeeds there)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    env.pop("FLCC_WISDOM_FILE", None)
    first = ("import flcc; p = flcc.Plan('lcorr', (40, 36), (5, 5), rigor='measure', "
             "platform='host'); print(flcc.save_wisdom()); print(p.method)")
    out = subprocess.run([sys.executable, "-c", first], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == str(tmp_path / "flcc" / "wisdom.txt") and os.path.isfile(out[0])
    second = ("import flcc; print(flcc.Plan('lcorr', (40, 36), (5, 5), rigor='wisdom_only', "
              "platform='host').method)")
    again = subprocess.run([sys.executable, "-c", second], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    assert again == [out[1]]
    (tmp_path / "flcc" / "wisdom.txt").write_text("not wisdom\n")
    warned = subprocess.run([sys.executable, "-W", "always", "-c", "import flcc"], env=env,
                            capture_output=True, text=True, check=True)
    assert "was not loaded" in warned.stderr
