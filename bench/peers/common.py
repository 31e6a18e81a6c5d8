"""Shared helpers for the peer benchmarks (cpu_peers.py, gpu_peers.py).

Every peer measurement is printed as one JSON line in flcc-bench's schema, plus a "bench" field
naming the peer and a "versions" field, so that report.py can put FLCC and peers in one table:

  {"bench": "opencv.matchTemplate", "op": "lcorr", "dim": 2, "image": [2000, 2000],
   "template": [16, 16], "region": "valid", "type": "single", "frames": 1, "platform": "host",
   "requested": "...", "method": "...", "rigor": "n/a", "threads": 2, "plan_seconds": 0,
   "seconds": {"median": ..., "min": ..., "max": ...}, "repeats": 5,
   "machine": {"cpu": "...", "hardware_threads": 2}, "versions": {...}}

Inputs are bit-identical to flcc-bench's: std::mt19937(1) feeding
std::uniform_real_distribution<float>(0, 1), images first (all frames), then the template.
"""
import json
import os
import re
import statistics
import sys
import time

import numpy as np


# ---------------------------------------------------------------- problems and sizes

def parse_dims(text):
    """'2000x2000' -> (2000, 2000); '100x100x100' -> 3-tuple; '16' -> (16,) (a cube)."""
    parts = [p for p in text.split("x") if p]
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"bad size '{text}'")
    return tuple(int(p) for p in parts)


def parse_list(text):
    return [parse_dims(s) for s in text.split(",") if s]


def template_shape(image_shape, templ):
    """A one-number template is a square (2D) or cube (3D) of the image's dimension."""
    if len(templ) == 1:
        return templ * len(image_shape)
    if len(templ) != len(image_shape):
        raise ValueError(f"template {templ} and image {image_shape} differ in dimension")
    return templ


def output_shape(image, templ, region):
    """Output extent per axis (DESIGN.md section 1)."""
    if region == "full":
        return tuple(s + t - 1 for s, t in zip(image, templ))
    if region == "same":
        return tuple(image)
    return tuple(s - t + 1 for s, t in zip(image, templ))


def same_slice(templ):
    """Slice of the full output that is FLCC's / scipy's 'same' region: starts at floor((T-1)/2)."""
    return lambda shape: tuple(slice((t - 1) // 2, (t - 1) // 2 + s) for s, t in zip(shape, templ))


# ---------------------------------------------------------------- inputs

def flcc_random(count):
    """The first `count` floats of flcc-bench's generator, bit for bit.

    std::mt19937(1) is MT19937 seeded by init_genrand(1), as numpy's legacy RandomState(1);
    libstdc++'s generate_canonical<float> takes one 32-bit draw u and returns float(u) / 2^32,
    replaced by the float just below 1 when the rounding reaches 1.
    """
    u = np.random.RandomState(1).randint(0, 2**32, size=count, dtype=np.uint32)
    x = u.astype(np.float32)
    x *= np.float32(1.0 / 2**32)   # exact: a power of two
    x[x >= 1] = np.nextafter(np.float32(1), np.float32(0))
    return x


def make_inputs(image, templ, frames):
    """(frames images of shape `image`, template) as flcc-bench makes them, float32, C order."""
    n_img = int(np.prod(image))
    n_tpl = int(np.prod(templ))
    data = flcc_random(n_img * frames + n_tpl)
    imgs = data[: n_img * frames].reshape((frames,) + tuple(image))
    tpl = data[n_img * frames:].reshape(templ).copy()
    return imgs, tpl


def nudged(tpl, rep):
    """flcc-bench's SINGLE mode changes one template value per repeat so template work is timed;
    peers have no template cache, but we mirror it so the inputs stay identical."""
    t = tpl.copy()
    t.flat[0] = np.float32((rep % 7) * 0.125)
    return t


# ---------------------------------------------------------------- timing

def stats(samples):
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def time_single(run, tpl, repeats, warmup, clock=time.perf_counter, sync=None, upload=None):
    """SINGLE: one frame per call, a new template each call (as flcc-bench).
    run(template) does one frame. Returns per-frame seconds, one sample per repeat.
    upload(host template) -> what run takes (e.g. a device copy); done outside the timed region.
    clock() may be a CUDA-event clock (gpu_peers.py): its first call records the start and
    returns 0, the second records the end, waits for it and returns the elapsed seconds."""
    up = upload or (lambda t: t)
    for i in range(warmup):
        run(up(nudged(tpl, i + 1000)))
    if sync:
        sync()
    samples = []
    for i in range(repeats):
        t = up(nudged(tpl, i))   # made outside the timed region
        if sync:
            sync()
        t0 = clock()
        run(t)
        if sync:
            sync()
        samples.append(clock() - t0)
    return samples


def time_stream(run_frame, frames, repeats, warmup, clock=time.perf_counter, sync=None):
    """STREAM: the peers have no stream API and no template reuse, so a stream is a loop that
    calls the peer once per frame with the same template. run_frame(i) does frame i.
    Each repeat times the whole loop; the sample is that time divided by `frames`."""
    for i in range(warmup):
        run_frame(i % frames)
    if sync:
        sync()
    samples = []
    for _ in range(repeats):
        t0 = clock()
        for f in range(frames):
            run_frame(f)
        if sync:
            sync()
        samples.append((clock() - t0) / frames)
    return samples


# ---------------------------------------------------------------- machine, versions, output

def cpu_model():
    """The CPU's model name, with its family, model and widest vector ISA from /proc/cpuinfo
    (a VM's model name alone, "AMD EPYC", does not tell a Zen 3 from a Zen 4); the same text
    as flcc-bench's cpu_model (bench/bench_common.h)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break   # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    if "model name" not in fields:
        import platform
        return platform.processor() or "unknown"
    flags = fields.get("flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE2"
    return (f"{fields['model name']} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')}, {isa})")


def machine_info(**extra):
    """Same fields as flcc-bench's "machine" object, plus any extra (e.g. gpu)."""
    m = {"cpu": cpu_model(), "hardware_threads": os.cpu_count() or 1}
    m.update(extra)
    return m


def machine_tag():
    """Folder name for results: $FLCC_BENCH_TAG, else '<cpu model>-<threads>t' as a slug."""
    tag = os.environ.get("FLCC_BENCH_TAG")
    if tag:
        return tag
    slug = re.sub(r"[^a-z0-9]+", "-", cpu_model().lower()).strip("-") or "cpu"
    return f"{slug}-{os.cpu_count() or 1}t"


def module_versions(*names):
    out = {"python": sys.version.split()[0]}
    for name in names:
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "unknown")
        except ImportError:
            pass
    return out


def record(bench, op, image, templ, region, type_, frames, platform, method, threads, samples,
           machine, versions, requested=None, plan_seconds=0.0, **extra):
    """A JSON-ready dict in flcc-bench's schema."""
    r = {
        "bench": bench, "op": op, "dim": len(image), "image": list(image),
        "template": list(templ), "region": region, "type": type_, "frames": frames,
        "platform": platform, "requested": requested or bench, "method": method,
        "rigor": "n/a", "threads": threads, "plan_seconds": plan_seconds,
        "seconds": stats(samples), "repeats": len(samples), "machine": machine,
        "versions": versions,
    }
    r.update(extra)
    return r


def emit(rec, stream=sys.stdout):
    stream.write(json.dumps(rec, separators=(",", ":")) + "\n")
    stream.flush()


def die(msg, code=2):
    sys.stderr.write(f"{os.path.basename(sys.argv[0])}: {msg}\n")
    sys.exit(code)


# ---------------------------------------------------------------- FLCC through ctypes (checks)

class Flcc:
    """Minimal ctypes binding of libflcc, used only to check that a peer computes the same
    output region as FLCC (never for timing: flcc-bench times FLCC)."""

    _REGIONS = {"full": 0, "same": 1, "valid": 2}

    def __init__(self, path):
        import ctypes as C
        self.C = C
        self.lib = C.CDLL(path)

        class Size(C.Structure):
            _fields_ = [("h", C.c_int), ("w", C.c_int), ("d", C.c_int)]

        class Options(C.Structure):
            # The known leading fields of flcc_options; the padding leaves room for fields
            # appended later, which flcc_options_init() fills with their defaults.
            _fields_ = [("type", C.c_int), ("platform", C.c_int), ("region", C.c_int),
                        ("rigor", C.c_int), ("threads", C.c_int), ("method", C.c_char_p),
                        ("device", C.c_int), ("check_finite", C.c_int),
                        ("_reserved", C.c_char * 256)]

        self.Size, self.Options = Size, Options
        L = self.lib
        L.flcc_options_init.argtypes = [C.POINTER(Options)]
        L.flcc_plan_create.argtypes = [C.POINTER(C.c_void_p), C.c_int, C.c_int, Size, Size,
                                       C.POINTER(Options)]
        L.flcc_plan_output_size.argtypes = [C.c_void_p, C.POINTER(Size)]
        fp = C.POINTER(C.c_float)
        for name in ("flcc_conv_exec", "flcc_lcorr_exec"):
            getattr(L, name).argtypes = [C.c_void_p, fp, fp, fp, C.c_int]
        L.flcc_destroy.argtypes = [C.c_void_p]
        L.flcc_result_string.restype = C.c_char_p
        L.flcc_plan_method.restype = C.c_char_p
        L.flcc_plan_method.argtypes = [C.c_void_p]

    def _size(self, shape):
        s = list(shape) + [1] * (3 - len(shape))
        return self.Size(*s)

    def run(self, op, image, templ, region, platform=0):
        """FLCC's output for one frame (float32 array), planned with ESTIMATE on the host."""
        C, L = self.C, self.lib
        o = self.Options()
        L.flcc_options_init(C.byref(o))
        o.region = self._REGIONS[region]
        o.rigor = 1          # ESTIMATE: a check needs a correct answer, not the fastest solver
        o.platform = platform
        plan = C.c_void_p()
        r = L.flcc_plan_create(C.byref(plan), 0 if op == "conv" else 1, image.ndim,
                               self._size(image.shape), self._size(templ.shape), C.byref(o))
        if r != 0:
            raise RuntimeError(f"flcc_plan_create: {L.flcc_result_string(r).decode()}")
        try:
            os_ = self.Size()
            L.flcc_plan_output_size(plan, C.byref(os_))
            shape = (os_.h, os_.w) if image.ndim == 2 else (os_.h, os_.w, os_.d)
            out = np.empty(shape, np.float32)
            img = np.ascontiguousarray(image, np.float32)
            tpl = np.ascontiguousarray(templ, np.float32)
            fp = C.POINTER(C.c_float)
            ex = L.flcc_conv_exec if op == "conv" else L.flcc_lcorr_exec
            r = ex(plan, img.ctypes.data_as(fp), tpl.ctypes.data_as(fp), out.ctypes.data_as(fp), 1)
            if r != 0:
                raise RuntimeError(f"flcc exec: {L.flcc_result_string(r).decode()}")
            return out
        finally:
            L.flcc_destroy(plan)


def compare(op, got, ref):
    """Max abs difference, and whether it is within the check's tolerance. The tolerances
    catch a wrong region, offset or flip (errors of order 1), not float32 round-off: skimage's
    float32 running sums alone can be off by 1e-3 on large images (its issue #1712)."""
    if got.shape != ref.shape:
        return float("inf"), False
    err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) if got.size else 0.0
    tol = 2e-2 if op == "lcorr" else 1e-4 * max(float(np.max(np.abs(ref))), 1.0)
    return err, err <= tol
