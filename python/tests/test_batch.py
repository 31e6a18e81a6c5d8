"""flcc.BatchPlan against float64 references (tests/references.py): every operation, region and
pairing, subregions cut from frames of every element type, preprocessing, best over templates,
peaks and their fits, template reuse, and the errors of bad arguments."""

import numpy as np
import pytest

import flcc
import references as ref

rng = np.random.default_rng(28)

LCC_TOL = 1e-5   # absolute, as the library's contract for LCC
CONV_TOL = 1e-5  # relative to the largest output
GPU_ENGINES = ["device.batch.fourier", "device.batch.direct", "device.batch.blockfft"]


def check_map(op, got, want):
    scale = 1.0 if op == "lcorr" else max(np.abs(want).max(), 1.0)
    err = np.abs(np.asarray(got, np.float64) - want).max() / scale
    assert err <= (LCC_TOL if op == "lcorr" else CONV_TOL), err


def check_peak(op, peak, m, want):
    """The first peak lies on the map's value and on a maximum of the reference within the
    tolerance."""
    at = (peak["h"], peak["w"]) if m.ndim == 2 else (peak["h"], peak["w"], peak["d"])
    if m.ndim == 1:
        assert peak["h"] == 0
        at = (peak["w"],)
    assert peak["value"] == m[at]
    scale = 1.0 if op == "lcorr" else max(np.abs(want).max(), 1.0)
    assert want.max() - want[at] <= 2 * LCC_TOL * scale


def pair_indices(pairing, images, templates):
    pairs = max(images, templates) if pairing == "pairwise" else images * templates
    if pairing == "all":
        return [(p // templates, p % templates) for p in range(pairs)]
    return [(p * images // pairs, p * templates // pairs) for p in range(pairs)]


def test_peak_dtype_is_the_c_struct():
    assert flcc.PEAK_DTYPE.names == ("value", "h", "w", "d", "y", "x", "z", "dy", "dx", "dz",
                                     "quality", "psr", "templ")
    assert flcc.PEAK_DTYPE.itemsize == 52


@pytest.mark.parametrize("op", ["conv", "xcorr", "lcorr"])
@pytest.mark.parametrize("pairing, images, templates, region", [
    ("pairwise", 3, 3, "full"), ("pairwise", 2, 4, "same"), ("pairwise", 4, 2, "valid"),
    ("all", 2, 3, "full"), ("all", 3, 2, "valid")])
def test_maps_and_peaks_against_float64(op, pairing, images, templates, region):
    ims = rng.random((images, 19, 23), dtype=np.float32)
    tps = rng.random((templates, 5, 4), dtype=np.float32) - 0.25
    plan = flcc.BatchPlan(op, (19, 23), (5, 4), images=images, templates=templates,
                          pairing=pairing, region=region, keep_maps=True, refine="none")
    pairs = pair_indices(pairing, images, templates)
    # platform "any" runs on a GPU engine where it is faster, else on a host pair solver.
    assert plan.pairs == len(pairs) and plan.method in flcc.solvers() + GPU_ENGINES
    peaks, maps = plan(ims, tps)
    assert peaks.shape == (len(pairs), 1) and peaks.dtype == flcc.PEAK_DTYPE
    assert maps.shape == (len(pairs),) + plan.map_shape and maps.dtype == np.float32
    for p, (i, t) in enumerate(pairs):
        want = ref.correlation(op, ims[i], tps[t], region)
        assert want.shape == plan.map_shape
        check_map(op, maps[p], want)
        check_peak(op, peaks[p, 0], maps[p], want)
        assert peaks[p, 0]["templ"] == t


def test_one_and_three_dimensional_batches():
    sig = rng.random((3, 40), dtype=np.float32)
    taps = rng.random((3, 7), dtype=np.float32)
    plan = flcc.BatchPlan("xcorr", (40,), (7,), images=3, templates=3, region="same",
                          keep_maps=True)
    peaks, maps = plan(sig, taps)
    assert plan.map_shape == (40,) and maps.shape == (3, 40)
    for p in range(3):
        want = ref.correlation("xcorr", sig[p], taps[p], "same")
        check_map("xcorr", maps[p], want)
        check_peak("xcorr", peaks[p, 0], maps[p], want)
    vol = rng.random((2, 9, 8, 10), dtype=np.float32)
    tpl = rng.random((1, 3, 4, 3), dtype=np.float32)
    plan = flcc.BatchPlan("lcorr", (9, 8, 10), (3, 4, 3), images=2, region="valid",
                          keep_maps=True, peaks=2)
    peaks, maps = plan(vol, tpl)
    assert maps.shape == (2, 7, 5, 8) and peaks.shape == (2, 2)
    for p in range(2):
        want = ref.correlation("lcorr", vol[p], tpl[0], "valid")
        check_map("lcorr", maps[p], want)
        check_peak("lcorr", peaks[p, 0], maps[p], want)


@pytest.mark.parametrize("dtype", [np.float32, np.uint16, np.uint8])
def test_subregions_cut_from_frames_of_every_type(dtype):
    high = 256 if dtype == np.uint8 else 65536
    frames = rng.integers(0, high, (2, 40, 50)).astype(dtype)
    reference = rng.integers(0, high, (40, 50)).astype(dtype)
    # Overlapping subregions, one touching the frame's far corner.
    origins = np.array([[0, 0], [10, 12], [24, 32], [5, 3]])
    torigins = origins + 2
    plan = flcc.BatchPlan("lcorr", (16, 18), (12, 14), image_origins=origins,
                          image_frame=(40, 50), template_origins=torigins,
                          template_frame=(40, 50), region="valid", keep_maps=True)
    assert plan.pairs == 4 and plan.image_input_shape == (40, 50)
    peaks, maps = plan(frames, reference)
    assert peaks.shape == (2, 4, 1) and maps.shape == (2, 4, 5, 5)
    # Integer frames reach the library as they are: no conversion in Python.
    assert plan._plans[(1, 1) if dtype == np.uint16 else (2, 2) if dtype == np.uint8
                       else (0, 0)].last_pointers[:2] == (frames.ctypes.data, reference.ctypes.data)
    for f in range(2):
        for r, ((y, x), (ty, tx)) in enumerate(zip(origins, torigins)):
            want = ref.correlation("lcorr", frames[f, y:y + 16, x:x + 18],
                                   reference[ty:ty + 12, tx:tx + 14], "valid")
            check_map("lcorr", maps[f, r], want)
            check_peak("lcorr", peaks[f, r, 0], maps[f, r], want)


def test_element_types_give_the_same_peaks_as_float32():
    frame = rng.integers(0, 4000, (64, 64)).astype(np.uint16)
    tpl = frame[10:30, 20:40].copy()
    plan = flcc.BatchPlan("lcorr", (64, 64), (20, 20), region="valid", refine="quadratic")
    as_int = plan(frame[None], tpl[None])
    as_float = plan(frame[None].astype(np.float32), tpl[None].astype(np.float32))
    np.testing.assert_array_equal(as_int, as_float)
    assert (as_int[0, 0]["h"], as_int[0, 0]["w"]) == (10, 20)
    fixed = flcc.BatchPlan("lcorr", (64, 64), (20, 20), region="valid", refine="quadratic",
                           image_dtype=np.uint16, template_dtype="float32")
    np.testing.assert_array_equal(fixed(frame[None], tpl[None].astype(np.float64)), as_int)
    assert fixed.method == plan.method


@pytest.mark.parametrize("bandpass", [(0, 0), (1.5, 6.0)])
@pytest.mark.parametrize("op", ["xcorr", "lcorr"])
def test_preprocessing_follows_its_formulas(op, bandpass):
    ims = rng.uniform(100, 200, (2, 24, 20)).astype(np.float32)
    tps = rng.uniform(100, 200, (2, 24, 20)).astype(np.float32)
    plan = flcc.BatchPlan(op, (24, 20), (24, 20), images=2, templates=2, zero_mean=True,
                          hann=True, bandpass=bandpass, keep_maps=True)
    _, maps = plan(ims, tps)
    for p in range(2):
        want = ref.correlation(op, ref.preprocess(ims[p], True, True, bandpass),
                               ref.preprocess(tps[p], True, True, bandpass), "full")
        check_map(op, maps[p], want)


def test_best_over_templates_keeps_the_best_value_and_its_template():
    ims = rng.random((2, 30, 26), dtype=np.float32)
    tps = rng.random((4, 7, 6), dtype=np.float32)
    plan = flcc.BatchPlan("lcorr", (30, 26), (7, 6), images=2, templates=4, pairing="all",
                          best_over_templates=True, keep_maps=True, peaks=3, region="valid")
    assert plan.maps_per_frame == 2
    peaks, maps = plan(ims, tps)
    assert peaks.shape == (2, 3) and maps.shape == (2, 2, 24, 21)
    for i in range(2):
        refs = np.stack([ref.correlation("lcorr", ims[i], t, "valid") for t in tps])
        best, index = maps[i, 0], maps[i, 1].astype(int)
        assert np.abs(best - refs.max(axis=0)).max() <= LCC_TOL
        chosen = np.take_along_axis(refs, index[None], axis=0)[0]
        assert np.abs(chosen - refs.max(axis=0)).max() <= 2 * LCC_TOL
        for k in range(3):
            assert peaks[i, k]["templ"] == index[peaks[i, k]["h"], peaks[i, k]["w"]]
        assert peaks[i, 0]["value"] == best.max()


def test_peaks_are_separated_and_refined_as_the_float64_fits():
    # A template cut from each image: a clear peak well inside the map.
    ims = rng.random((3, 48, 48), dtype=np.float32)
    ims = (ims + np.roll(ims, 1, axis=1) + np.roll(ims, 1, axis=2)).astype(np.float32)
    tps = np.stack([ims[p, 10 + 3 * p:26 + 3 * p, 12:28] for p in range(3)])
    for refine in ("parabolic", "gaussian", "quadratic", "none"):
        plan = flcc.BatchPlan("lcorr", (48, 48), (16, 16), images=3, templates=3,
                              region="valid", peaks=4, exclusion=3, refine=refine,
                              fit_size=5, keep_maps=True)
        peaks, maps = plan(ims, tps)
        for p in range(3):
            want = ref.correlation("lcorr", ims[p], tps[p], "valid")
            y, x, value, quality = ref.refine_peak(want, refine, 5, 3)
            first = peaks[p, 0]
            assert (first["h"], first["w"]) == (10 + 3 * p, 12)
            assert abs(first["y"] - y) <= 0.01 and abs(first["x"] - x) <= 0.01
            assert first["dy"] == first["y"] and first["dx"] == first["x"]   # valid: no pad
            assert abs(first["quality"] - quality) <= 1e-4 * quality
            rest = want.copy()
            i, j = first["h"], first["w"]
            rest[max(i - 3, 0):i + 4, max(j - 3, 0):j + 4] = np.nan
            sidelobe = rest[np.isfinite(rest)]
            psr = (value - sidelobe.mean()) / sidelobe.std()
            assert abs(first["psr"] - psr) <= 1e-3 * psr
            values = peaks[p]["value"]
            assert (np.diff(values) <= 0).all()
            at = np.stack([peaks[p]["h"], peaks[p]["w"]], axis=1)
            for a in range(4):
                for b in range(a):
                    assert np.abs(at[a] - at[b]).max() > 3


def test_reference_fits_recover_analytic_peaks():
    y, x = np.mgrid[0:15, 0:15].astype(np.float64)
    cy, cx = 7.3, 6.6
    parabola = -((y - cy) ** 2) - 0.5 * (x - cx) ** 2
    for refine in ("parabolic", "quadratic"):
        py, px, _, _ = ref.refine_peak(parabola, refine)
        assert abs(py - cy) < 1e-9 and abs(px - cx) < 1e-9
    gauss = np.exp(-((y - cy) ** 2) / 4 - (x - cx) ** 2 / 6)
    gy, gx, _, q = ref.refine_peak(gauss, "gaussian")
    assert abs(gy - cy) < 1e-9 and abs(gx - cx) < 1e-9 and q > 1


def test_full_region_displacement_and_upsampled_refinement():
    # A smooth pattern moved by a known sub-pixel shift, without noise: the full region's
    # displacement is where the template's origin lies in the image, and the DFT interpolation
    # finds it to a small fraction of a pixel (the 5 x 5 quadratic carries its model's bias).
    local = np.random.default_rng(5)
    h = w = 64
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :]
    spec = np.fft.fft2(local.standard_normal((h, w))) * np.exp(
        -2 * (np.pi * 2.5) ** 2 * (fy ** 2 + fx ** 2))
    base = np.fft.ifft2(spec).real
    moved = np.fft.ifft2(spec * np.exp(-2j * np.pi * (fy * 2.4 + fx * -1.7))).real
    ims = (moved[None] * 100 + 500).astype(np.float32)
    tps = (base[None, 16:48, 16:48] * 100 + 500).astype(np.float32)
    for refine, tol in (("upsampled", 0.01), ("quadratic", 0.1)):
        plan = flcc.BatchPlan("lcorr", (64, 64), (32, 32), refine=refine, upsample=20)
        peak = plan(ims, tps)[0, 0]
        err = (peak["dy"] - (16 + 2.4), peak["dx"] - (16 - 1.7))
        assert max(abs(e) for e in err) <= tol, (refine, err)
        assert peak["y"] - peak["dy"] == pytest.approx(31)   # full region: y = dy + (T - 1)


def test_stacks_reuse_and_per_frame_templates():
    frames = rng.random((3, 2, 20, 20), dtype=np.float32)
    t1, t2 = rng.random((2, 2, 6, 6), dtype=np.float32)
    plan = flcc.BatchPlan("lcorr", (20, 20), (6, 6), images=2, templates=2, keep_maps=True)
    with pytest.raises(flcc.Error) as e:
        plan(frames[0])   # no templates given yet
    assert e.value.name == "NULL_POINTER" and "templs" in e.value.detail
    peaks, maps = plan(frames, t1)
    assert peaks.shape == (3, 2, 1) and maps.shape == (3, 2, 25, 25)
    for f in range(3):
        single_peaks, single_maps = plan(frames[f], t1)
        np.testing.assert_array_equal(single_maps, maps[f])
        np.testing.assert_array_equal(single_peaks, peaks[f])
    again = plan(frames, None)[1]
    np.testing.assert_array_equal(again, maps)
    t = t1.copy()
    plan(frames[0], t)
    t[:] = t2   # the same buffer with new values is noticed
    np.testing.assert_array_equal(plan(frames[0], t)[1], plan(frames[0], t2.copy())[1])
    check_map("lcorr", plan(frames[0], t)[1][1],
              ref.correlation("lcorr", frames[0, 1], t2[1], "full"))

    per = flcc.BatchPlan("lcorr", (20, 20), (6, 6), images=2, templates=2, keep_maps=True,
                         templates_per_frame=True)
    sets = np.stack([t1, t2, t1])
    _, maps = per(frames, sets)
    for f in range(3):
        check_map("lcorr", maps[f, 0], ref.correlation("lcorr", frames[f, 0], sets[f, 0], "full"))
    with pytest.raises(ValueError, match="one set"):
        per(frames, t1)


def test_bad_arguments_raise_clear_errors():
    def make(**kw):
        args = dict(images=2, templates=2)
        args.update(kw)
        return flcc.BatchPlan("lcorr", (32, 32), (8, 8), **args)

    with pytest.raises(ValueError, match="op must be one of"):
        flcc.BatchPlan("corr", (32, 32), (8, 8))
    with pytest.raises(ValueError, match="refine must be one of"):
        make(refine="cubic")
    with pytest.raises(ValueError, match="pairing must be one of"):
        make(pairing="some")
    with pytest.raises(ValueError, match="region must be one of"):
        make(region="middle")
    with pytest.raises(ValueError, match="image_dtype must be one of"):
        make(image_dtype=np.int16)
    with pytest.raises(ValueError, match="multiple"):
        make(images=2, templates=3)
    with pytest.raises(ValueError, match="best_over_templates needs pairing='all'"):
        make(best_over_templates=True)
    with pytest.raises(ValueError, match="fit_size"):
        make(fit_size=4)
    with pytest.raises(ValueError, match="upsample"):
        make(upsample=1)
    with pytest.raises(ValueError, match="peaks"):
        make(peaks=65)
    with pytest.raises(ValueError, match="nothing"):
        make(peaks=0)
    with pytest.raises(ValueError, match="bandpass"):
        make(bandpass=(float("nan"), 0))
    with pytest.raises(TypeError, match="bandpass"):
        make(bandpass=1.0)
    with pytest.raises(TypeError, match="exclusion"):
        make(exclusion=1.5)
    with pytest.raises(ValueError, match="same number of axes"):
        flcc.BatchPlan("lcorr", (32, 32), (8, 8, 8))
    with pytest.raises(ValueError, match=r"image_origins\[1\] = \(30, 0\).*leaves"):
        make(image_origins=[[0, 0], [30, 0]], image_frame=(40, 40))
    with pytest.raises(ValueError, match="image_origins"):
        make(image_origins=[[0.5, 0], [1, 1]], image_frame=(40, 40))
    with pytest.raises(ValueError, match="3 origins for 2"):
        make(image_origins=[[0, 0], [1, 1], [2, 2]], image_frame=(40, 40))
    with pytest.raises(ValueError, match="image_frame"):
        make(image_origins=[[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="without template_origins"):
        make(template_frame=(40, 40))
    # What the library checks comes back as flcc.Error with its code and detail.
    with pytest.raises(flcc.Error) as e:
        flcc.BatchPlan("lcorr", (8, 8), (12, 12), region="valid")
    assert e.value.name == "INVALID_SIZE" and "larger" in e.value.detail
    with pytest.raises(flcc.Error) as e:   # the upsampled refinement runs on the host only
        make(platform="device", refine="upsampled")
    assert e.value.name == "METHOD_NOT_APPLICABLE" and e.value.detail
    with pytest.raises(flcc.Error) as e:
        make(method="no.such.solver")
    assert e.value.name == "UNKNOWN_METHOD"

    plan = make(image_dtype="uint16")
    ims = np.ones((2, 32, 32), np.uint16)
    tps = rng.random((2, 8, 8), dtype=np.float32)
    with pytest.raises(TypeError, match="uint16 arrays, not float32"):
        plan(ims.astype(np.float32), tps)
    with pytest.raises(ValueError, match=r"images shape \(2, 32, 31\)"):
        plan(ims[:, :, :31], tps)
    with pytest.raises(ValueError, match="templates shape"):
        plan(ims, tps[:1])
    with pytest.raises(TypeError, match="complex"):
        make()(ims.astype(np.complex64), tps)
    bad = tps.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(flcc.Error) as e:
        plan(ims, bad)
    assert e.value.name == "NONFINITE_INPUT" and "template 1" in e.value.detail
    assert plan(ims, tps).shape == (2, 1)   # the plan is usable after a failed call
    # The binding itself refuses buffers smaller than the frames need.
    peaks = np.empty(2, flcc.PEAK_DTYPE).view(np.uint8)
    inner = plan._plans[(1, 0)]
    assert inner.execute(ims, tps, None, peaks, 1) == 0
    with pytest.raises(ValueError, match="smaller"):
        inner.execute(ims[:1], tps, None, peaks, 1)
    with pytest.raises(ValueError, match="smaller"):
        inner.execute(ims, tps, None, peaks, 2)


def test_threads_share_one_plan():
    import concurrent.futures as cf
    ims = rng.random((8, 2, 24, 24), dtype=np.float32)
    tps = rng.random((2, 6, 6), dtype=np.float32)
    plan = flcc.BatchPlan("lcorr", (24, 24), (6, 6), images=2, templates=2, refine="quadratic")
    serial = [plan(ims[k], tps) for k in range(8)]
    with cf.ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda k: plan(ims[k], tps), range(8)))
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a, b)


def test_batch_plans_on_the_gpu_match_the_host():
    """platform="device": the GPU engine's maps and peaks against the host's on the same frames;
    without a GPU, FLCC_NO_DEVICE."""
    from support import gpu_usable
    if not gpu_usable():
        with pytest.raises(flcc.Error) as e:
            flcc.BatchPlan("lcorr", (32, 32), (8, 8), images=2, templates=2, platform="device")
        assert e.value.name in ("NO_DEVICE", "METHOD_NOT_APPLICABLE")
        pytest.skip("no usable GPU: the GPU batch engine is not run")
    rng = np.random.default_rng(5)
    frame = rng.integers(0, 4000, (2, 96, 96)).astype(np.uint16)
    origins = [[0, 0], [10, 20], [40, 33], [64, 64]]
    kw = dict(image_origins=origins, image_frame=(96, 96), template_origins=origins,
              template_frame=(96, 96), image_dtype="uint16", template_dtype="uint16",
              zero_mean=True, peaks=2, refine="quadratic", keep_maps=True, region="full")
    host = flcc.BatchPlan("lcorr", (32, 32), (32, 32), platform="host", **kw)
    hp, hm = host(frame[1], frame[0])
    # The faster engine, then each by name.
    for method in [None] + GPU_ENGINES:
        gpu = flcc.BatchPlan("lcorr", (32, 32), (32, 32), platform="device", method=method, **kw)
        assert gpu.method in GPU_ENGINES and method in (None, gpu.method)
        gp, gm = gpu(frame[1], frame[0])
        np.testing.assert_allclose(gm, hm, atol=1e-5)
        first = (slice(None), 0)
        assert (gp["h"][first] == hp["h"][first]).all() and (gp["w"][first] == hp["w"][first]).all()
        np.testing.assert_allclose(gp["dy"][first], hp["dy"][first], atol=1e-3)
        np.testing.assert_allclose(gp["dx"][first], hp["dx"][first], atol=1e-3)
