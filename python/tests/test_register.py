"""flcc.register_subregions: offsets of synthetic pairs with known shifts, against the float64
fits of the same maps, integer frames, flat subregions, bad arguments, and the Dask form."""

import numpy as np
import pytest

import flcc
import references

rng = np.random.default_rng(21)


def band_limited_spectrum(h, w, sigma=3.0, generator=None):
    noise = (generator or rng).standard_normal((h, w))
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :]
    return np.fft.fft2(noise) * np.exp(-2 * (np.pi * sigma) ** 2 * (fy ** 2 + fx ** 2))


def shifted(spectrum, dy, dx):
    """The pattern moved by (dy, dx) (down / right), by the Fourier phase."""
    h, w = spectrum.shape
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :]
    return np.fft.ifft2(spectrum * np.exp(-2j * np.pi * (fy * dy + fx * dx))).real


def pair(dy, dx, size=240, generator=None):
    """A reference and a frame moved by (dy, dx), counts 500-3500 with Poisson noise."""
    generator = generator or rng
    spec = band_limited_spectrum(size, size, generator=generator)
    r0 = shifted(spec, 0, 0)
    lo, hi = r0.min(), r0.max()
    scale = lambda p: (p - lo) / (hi - lo) * 3000 + 500  # noqa: E731
    ref = generator.poisson(scale(r0)).astype(np.float32)
    frame = generator.poisson(np.clip(scale(shifted(spec, dy, dx)), 0, None)).astype(np.float32)
    return ref, frame


ORIGINS = np.array([[y, x] for y in (40, 100, 140) for x in (40, 100, 140)])
# 128 x 128 subregions of 384 x 384 frames, at least 32 pixels from the edges.
ORIGINS_128 = np.array([[y, x] for y in (32, 128, 224) for x in (32, 128, 224)])


@pytest.mark.parametrize("refine, tol", [("quadratic", 0.03), ("upsampled", 0.03),
                                         ("parabolic", 0.1), ("gaussian", 0.1)])
def test_search_form_recovers_subpixel_shifts(refine, tol):
    # The centre 64 x 64 of each reference subregion searched in the frame's 128 x 128,
    # shifts within +-8 px, uint16 Poisson counts.
    local = np.random.default_rng(2026)
    errors = []
    for _ in range(4):
        dy, dx = local.uniform(-8, 8, 2)
        ref, frame = pair(dy, dx, size=384, generator=local)
        off, quality = flcc.register_subregions(frame.astype(np.uint16), ref.astype(np.uint16),
                                                ORIGINS_128, 128, template_size=64,
                                                refine=refine)
        assert off.shape == (9, 2) and quality.shape == (9,)
        assert (quality > 1).all()
        errors.append(off - (dy, dx))
    rms = np.sqrt(np.mean(np.square(errors), axis=(0, 1)))
    # The 3-point fits carry their known bias on broad peaks; the 5 x 5 surface and the DFT
    # interpolation less.
    assert (rms <= tol).all(), rms


def test_offsets_are_the_float64_fit_less_the_template_offset():
    # Offsets against the float64 LCC map of each cut pair and the same parabolic fit:
    # (y, x) of the template's origin in the subregion, less its origin in the reference's.
    ref_frame, frame = pair(2.6, -3.3)
    size, tsize = (48, 52), (30, 24)
    cy, cx = (48 - 30) // 2, (52 - 24) // 2
    off, quality = flcc.register_subregions(frame, ref_frame, ORIGINS, size, template_size=tsize)
    for r, (y, x) in enumerate(ORIGINS):
        m = references.correlation("lcorr", frame[y:y + 48, x:x + 52],
                                   ref_frame[y + cy:y + cy + 30, x + cx:x + cx + 24], "valid")
        py, px, _, q = references.refine_peak(m, "parabolic")
        assert abs(off[r, 0] - (py - cy)) <= 0.01 and abs(off[r, 1] - (px - cx)) <= 0.01
        assert quality[r] == pytest.approx(q, rel=1e-4)


def test_full_form_finds_the_integer_shift_and_stacks_match_single_frames():
    shifts = [(3, -5), (-6, 2), (0, 0)]
    spec = band_limited_spectrum(240, 240)
    ref = (shifted(spec, 0, 0) * 100 + 1000).astype(np.float32)
    frames = np.stack([(shifted(spec, dy, dx) * 100 + 1000).astype(np.float32) for dy, dx in shifts])
    for refine in ("quadratic", "upsampled"):
        off, quality, peak = flcc.register_subregions(frames, ref, ORIGINS, 64, refine=refine,
                                                      full_output=True)
        assert off.shape == (3, 9, 2) and quality.shape == peak.shape == (3, 9)
        for k, (dy, dx) in enumerate(shifts):
            assert np.abs(off[k] - (dy, dx)).max() < 0.5
            single, _ = flcc.register_subregions(frames[k], ref, ORIGINS, 64, refine=refine)
            np.testing.assert_array_equal(single, off[k])
        assert np.abs(off[2]).max() < 0.1 and (peak[2] > 0.999).all()


@pytest.mark.parametrize("dtype", [np.uint16, np.uint8])
def test_integer_frames_go_in_without_conversion(dtype):
    ref, frame = pair(1.2, -0.7)
    if dtype == np.uint8:
        ref, frame = ref // 16, frame // 16
    ref, frame = ref.astype(dtype), frame.astype(dtype)
    flcc.clear_cache()
    off, quality = flcc.register_subregions(frame, ref, ORIGINS, 64, template_size=40)
    plans = [p for p in flcc._plan._cache.values() if isinstance(p, flcc.BatchPlan)]
    assert len(plans) == 1
    code = {np.uint16: 1, np.uint8: 2}[dtype]
    # The library read the caller's integer arrays themselves.
    assert plans[0]._plans[(code, code)].last_pointers[:2] == (frame.ctypes.data, ref.ctypes.data)
    as_float = flcc.register_subregions(frame.astype(np.float32), ref.astype(np.float32), ORIGINS,
                                        64, template_size=40)
    np.testing.assert_array_equal(off, as_float[0])
    np.testing.assert_array_equal(quality, as_float[1])


def test_flat_subregion_gives_zero_offset_and_quality():
    ref, frame = pair(1.5, -2.0)
    frame[40:104, 40:104] = 777.0
    for template_size in (40, None):
        off, quality = flcc.register_subregions(frame, ref, ORIGINS[:2], 64,
                                                template_size=template_size)
        assert quality[0] == 0 and (off[0] == 0).all()
        assert quality[1] > 1 and np.abs(off[1] - (1.5, -2.0)).max() < 0.5


def test_bad_arguments():
    ref, frame = pair(0, 0, size=100)
    with pytest.raises(ValueError, match=r"origins\[0\] = \(50, 50\).*leaves the 100x100 frame"):
        flcc.register_subregions(frame, ref, [[50, 50]], 64)
    with pytest.raises(ValueError, match="leaves"):
        flcc.register_subregions(frame, ref, [[0, 0], [-1, 0]], 16)
    with pytest.raises(ValueError, match="refine must be one of"):
        flcc.register_subregions(frame, ref, [[0, 0]], 16, refine="cubic")
    with pytest.raises(ValueError, match="fit_size"):
        flcc.register_subregions(frame, ref, [[0, 0]], 16, fit_size=4)
    with pytest.raises(ValueError, match="upsample"):
        flcc.register_subregions(frame, ref, [[0, 0]], 16, refine="upsampled", upsample=1)
    with pytest.raises(ValueError, match="template_size"):
        flcc.register_subregions(frame, ref, [[0, 0]], 16, template_size=20)
    with pytest.raises(ValueError, match="reference"):
        flcc.register_subregions(frame[:50], ref, [[0, 0]], 16)
    with pytest.raises(ValueError, match="integer"):
        flcc.register_subregions(frame, ref, [[0.5, 0]], 16)
    with pytest.raises(TypeError, match="complex"):
        flcc.register_subregions(frame.astype(np.complex64), ref, [[0, 0]], 16)
    bad = frame.copy()
    bad[5, 5] = np.nan
    with pytest.raises(flcc.Error) as e:
        flcc.register_subregions(bad, ref, [[0, 0]], 16)
    assert e.value.name == "NONFINITE_INPUT"


def test_dask_register_subregions_equals_in_memory():
    da = pytest.importorskip("dask.array", reason="dask is not installed here")
    import flcc.dask as fd
    ref, f0 = pair(2.2, -1.4)
    _, f1 = pair(-3.1, 0.7)
    frames = np.stack([f0, f1, f0, f1, f0])
    lazy_off, lazy_q = fd.register_subregions(da.from_array(frames, chunks=(2, 120, 240)), ref,
                                              ORIGINS, 64, template_size=40, refine="quadratic")
    off, q = flcc.register_subregions(frames, ref, ORIGINS, 64, template_size=40, refine="quadratic")
    np.testing.assert_array_equal(lazy_off.compute(scheduler="threads"), off)
    np.testing.assert_array_equal(lazy_q.compute(scheduler="threads"), q)
    with pytest.raises(ValueError):
        fd.register_subregions(da.from_array(frames), ref, [[200, 200]], 64)
