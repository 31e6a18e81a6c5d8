"""flcc.register_subregions and flcc.refine_peak: offsets of synthetic pairs with known shifts,
flat subregions, bad arguments, and the Dask form."""

import numpy as np
import pytest

import flcc

rng = np.random.default_rng(21)


def band_limited_spectrum(h, w, sigma=3.0):
    noise = rng.standard_normal((h, w))
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :]
    return np.fft.fft2(noise) * np.exp(-2 * (np.pi * sigma) ** 2 * (fy ** 2 + fx ** 2))


def shifted(spectrum, dy, dx):
    """The pattern moved by (dy, dx) (down / right), by the Fourier phase."""
    h, w = spectrum.shape
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :]
    return np.fft.ifft2(spectrum * np.exp(-2j * np.pi * (fy * dy + fx * dx))).real


def pair(dy, dx, size=240):
    """A reference and a frame moved by (dy, dx), counts 500-3500 with Poisson noise."""
    spec = band_limited_spectrum(size, size)
    r0 = shifted(spec, 0, 0)
    lo, hi = r0.min(), r0.max()
    scale = lambda p: (p - lo) / (hi - lo) * 3000 + 500  # noqa: E731
    ref = rng.poisson(scale(r0)).astype(np.float32)
    frame = rng.poisson(np.clip(scale(shifted(spec, dy, dx)), 0, None)).astype(np.float32)
    return ref, frame


ORIGINS = np.array([[y, x] for y in (40, 100, 140) for x in (40, 100, 140)])


@pytest.mark.parametrize("refine", ["parabolic", "gaussian", "quadratic"])
def test_search_form_recovers_subpixel_shifts(refine):
    errors = []
    for _ in range(4):
        dy, dx = rng.uniform(-8, 8, 2)
        ref, frame = pair(dy, dx)
        off, quality = flcc.register_subregions(frame, ref, ORIGINS, 64, template_size=40,
                                                refine=refine)
        assert off.shape == (9, 2) and quality.shape == (9,)
        assert (quality > 1).all()
        errors.append(off - (dy, dx))
    rms = np.sqrt(np.mean(np.square(errors)))
    # The 3-point fits carry their known bias on broad peaks (~0.1 px); the 5 x 5 surface less.
    assert rms <= (0.05 if refine == "quadratic" else 0.1), rms


def test_full_form_finds_the_integer_shift_and_stacks_match_single_frames():
    shifts = [(3, -5), (-6, 2), (0, 0)]
    spec = band_limited_spectrum(240, 240)
    ref = (shifted(spec, 0, 0) * 100 + 1000).astype(np.float32)
    frames = np.stack([(shifted(spec, dy, dx) * 100 + 1000).astype(np.float32) for dy, dx in shifts])
    off, quality, peak = flcc.register_subregions(frames, ref, ORIGINS, 64, refine="quadratic",
                                                  full_output=True)
    assert off.shape == (3, 9, 2) and quality.shape == peak.shape == (3, 9)
    for k, (dy, dx) in enumerate(shifts):
        assert np.abs(off[k] - (dy, dx)).max() < 0.5
        single, _ = flcc.register_subregions(frames[k], ref, ORIGINS, 64, refine="quadratic")
        np.testing.assert_array_equal(single, off[k])
    assert np.abs(off[2]).max() < 0.1 and (peak[2] > 0.999).all()


def test_flat_subregion_gives_zero_offset_and_quality():
    ref, frame = pair(1.5, -2.0)
    frame[40:104, 40:104] = 777.0
    off, quality = flcc.register_subregions(frame, ref, ORIGINS[:2], 64, template_size=40)
    assert quality[0] == 0 and (off[0] == 0).all()
    assert quality[1] > 1


def test_refine_peak_matches_float64_fits():
    y, x = np.mgrid[0:15, 0:15].astype(np.float64)
    cy, cx = 7.3, 6.6
    parabola = -((y - cy) ** 2) - 0.5 * (x - cx) ** 2
    py, px, _, _ = flcc.refine_peak(parabola, "parabolic")
    assert abs(py - cy) < 1e-9 and abs(px - cx) < 1e-9
    qy, qx, _, _ = flcc.refine_peak(parabola, "quadratic", fit_size=5)
    assert abs(qy - cy) < 1e-9 and abs(qx - cx) < 1e-9
    gauss = np.exp(-((y - cy) ** 2) / 4 - (x - cx) ** 2 / 6)
    gy, gx, _, q = flcc.refine_peak(gauss, "gaussian")
    assert abs(gy - cy) < 1e-9 and abs(gx - cx) < 1e-9
    assert q > 1


def test_bad_arguments():
    ref, frame = pair(0, 0, size=100)
    with pytest.raises(ValueError):
        flcc.register_subregions(frame, ref, [[50, 50]], 64)           # leaves the frame
    with pytest.raises(ValueError):
        flcc.register_subregions(frame, ref, [[-1, 0]], 16)
    with pytest.raises(ValueError):
        flcc.register_subregions(frame, ref, [[0, 0]], 16, refine="cubic")
    with pytest.raises(ValueError):
        flcc.register_subregions(frame, ref, [[0, 0]], 16, fit_size=4)
    with pytest.raises(ValueError):
        flcc.register_subregions(frame, ref, [[0, 0]], 16, template_size=20)
    with pytest.raises(ValueError):
        flcc.register_subregions(frame[:50], ref, [[0, 0]], 16)
    with pytest.raises(ValueError):
        flcc.register_subregions(frame, ref, [[0.5, 0]], 16)
    bad = frame.copy()
    bad[5, 5] = np.nan
    with pytest.raises(flcc.Error):
        flcc.register_subregions(bad, ref, [[0, 0]], 16)


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
