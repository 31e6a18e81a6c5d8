/* Fuzz target: the planning entry points. flcc_plan_create (with options or NULL),
 * flcc_conv_plan and flcc_lcorr_plan, every argument drawn from the input: op, dim, both sizes,
 * every options field (enum fields as any int, as a C caller may pass them: this target is C,
 * where that is defined), the method string (NULL, a solver's name, a mangled name, raw bytes).
 * A plan that is made is then queried with good and hostile arguments, executed with wrong
 * arguments, and destroyed twice. Aborts when the library breaks its documented contract.
 *
 * Problems too large to plan quickly (and thread counts above kMaxThreads) are planned with
 * FLCC_WISDOM_ONLY and no method: every argument is still validated, nothing is timed or
 * allocated at their size. */
#include "flcc.h"
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_plan: %s:%d: CHECK(%s) failed; last detail: %s\n", __FILE__, \
                    __LINE__, #cond, flcc_last_error_detail());                               \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

enum { kMaxElems = 1 << 16, kMaxOut = 1 << 18, kMaxWork = 1 << 22, kMaxThreads = 16 };

static int is_solver_name(const char *s)
{
    for (int i = 0; i < flcc_solver_count(); ++i)
        if (strcmp(flcc_solver_name(i), s) == 0) return 1;
    return 0;
}

/* The method string: NULL, a solver's name, a mangled name, raw bytes or "". */
static const char *draw_method(fuzz_input *in, char *buf, size_t cap)
{
    const int n = flcc_solver_count();
    const uint8_t k = fuzz_u8(in) % 8;
    if (k < 3 || n == 0) return NULL;
    if (k == 7) return "";
    if (k == 6) {
        const size_t len = fuzz_bytes(in, buf, fuzz_u8(in) % (cap - 1));
        buf[len] = '\0';
        return buf;
    }
    snprintf(buf, cap, "%s", flcc_solver_name(fuzz_u8(in) % n));
    if (k == 5) {
        const size_t len = strlen(buf), at = fuzz_u8(in) % (len + 1);
        const uint8_t c = fuzz_u8(in);
        if (c % 2 == 0 || at + 1 >= cap)
            buf[at] = '\0';        /* truncated */
        else {
            buf[at] = (char)c;     /* one byte replaced or appended */
            if (at == len) buf[at + 1] = '\0';
        }
    }
    return buf;
}

static int in_set(int v, int lo, int hi) { return v >= lo && v <= hi; }

/* The expected output extent per axis (h, w, d; 2D: d = 1); 0 when the region is invalid. */
static void expected_out(int dim, int region, flcc_size s, flcc_size t, long long out[3])
{
    const long long sv[3] = {s.h, s.w, dim == 3 ? s.d : 1}, tv[3] = {t.h, t.w, dim == 3 ? t.d : 1};
    for (int a = 0; a < 3; ++a) {
        out[a] = region == FLCC_FULL ? sv[a] + tv[a] - 1
                 : region == FLCC_SAME ? sv[a]
                 : region == FLCC_VALID ? sv[a] - tv[a] + 1
                                        : 0;
    }
}

static long long elems3(const long long v[3])
{
    /* Saturates at 2^60: the callers only compare against far smaller bounds. */
    long long n = 1;
    for (int a = 0; a < 3; ++a) {
        if (v[a] <= 0) return 0;
        if (n > (1LL << 60) / v[a]) return 1LL << 60;
        n *= v[a];
    }
    return n;
}

/* The entry point: 0 flcc_plan_create, 1 the same with NULL options, 2 flcc_conv_plan,
 * 3 flcc_lcorr_plan, 4 flcc_plan_create with a NULL plan pointer. Entries 1-3 plan with
 * FLCC_MEASURE (their defaults), which times candidates: drawn less often. */
static int draw_entry(fuzz_input *in)
{
    static const int entries[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 0};
    return entries[fuzz_u8(in) % 16];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Wisdom (the planner's decisions and FFTW's) carries over from input to input, as in a
     * long-running program: it spares FFTW_MEASURE's timing of the same transforms again. */
    fuzz_input in = fuzz_begin(data, size);
    const int entry = draw_entry(&in);
    int op = fuzz_int(&in, 2);
    const int dim = fuzz_int(&in, 4);
    flcc_size image, templ;
    image.h = fuzz_int(&in, 24);
    image.w = fuzz_int(&in, 24);
    image.d = fuzz_int(&in, 24);
    templ.h = fuzz_int(&in, 24);
    templ.w = fuzz_int(&in, 24);
    templ.d = fuzz_int(&in, 24);

    flcc_options o;
    flcc_options_init(&o);
    o.type = (flcc_type)fuzz_int(&in, 2);
    o.platform = (flcc_platform)fuzz_int(&in, 3);
    o.region = (flcc_region)fuzz_int(&in, 3);
    o.rigor = (flcc_rigor)(fuzz_u8(&in) % 8 == 0 ? fuzz_int(&in, 3) : FLCC_ESTIMATE);
    o.threads = fuzz_int(&in, 3);
    const int device = fuzz_int(&in, 1);
    o.device = device == INT_MIN ? device : device - 1;
    o.check_finite = fuzz_int(&in, 2);
    o.device_resident = fuzz_int(&in, 2);
    char method_buf[48];
    o.method = draw_method(&in, method_buf, sizeof method_buf);

    /* The 1.3 planners: FULL, MEASURE, all threads, defaults otherwise. */
    const int old_style = entry == 2 || entry == 3;
    if (old_style) {
        op = entry == 2 ? FLCC_CONV : FLCC_LCORR;
        const flcc_type type = o.type;
        const flcc_platform platform = o.platform;
        flcc_options_init(&o);
        o.type = type;
        o.platform = platform;
    } else if (entry == 1) {
        flcc_options_init(&o);   /* what NULL options stand for */
    }

    /* Whether the arguments are valid, by the rules flcc.h documents. */
    const int region = (int)o.region;
    long long sv[3] = {image.h, image.w, dim == 3 ? image.d : 1};
    long long tv[3] = {templ.h, templ.w, dim == 3 ? templ.d : 1};
    long long ov[3];
    expected_out(dim, region, image, templ, ov);
    int sizes_ok = 1;
    for (int a = 0; a < 3; ++a) {
        if (sv[a] < 1 || tv[a] < 1 || ov[a] < 1 || ov[a] > INT_MAX) sizes_ok = 0;
    }
    const long long ni = elems3(sv), nt = elems3(tv), no = elems3(ov);
    if (sizes_ok && (ni + nt + no) > (1LL << 45)) sizes_ok = 0;   /* over 2^47 bytes */
    const int valid = in_set(op, 0, 2) && in_set(dim, 2, 3) && in_set((int)o.type, 0, 1) &&
                      in_set((int)o.platform, 0, 2) && in_set(region, 0, 2) &&
                      in_set((int)o.rigor, 0, 2) && o.threads >= 0 && o.device >= -1 &&
                      in_set(o.check_finite, 0, 1) && in_set(o.device_resident, 0, 1) && sizes_ok;
    const int heavy = !sizes_ok || ni > kMaxElems || nt > kMaxElems || no > kMaxOut ||
                      (double)no * (double)nt > kMaxWork || o.threads > kMaxThreads;

    flcc_plan plan = (flcc_plan)&in;   /* must be overwritten */
    flcc_result r;
    int call_entry = entry;
    if (heavy && valid && entry != 4) {
        /* Validation only, through flcc_plan_create. */
        o.rigor = FLCC_WISDOM_ONLY;
        o.method = NULL;
        call_entry = 0;
    }
    switch (call_entry) {
    case 1: r = flcc_plan_create(&plan, (flcc_op)op, dim, image, templ, NULL); break;
    case 2: r = flcc_conv_plan(&plan, dim, image, templ, o.type, o.platform); break;
    case 3: r = flcc_lcorr_plan(&plan, dim, image, templ, o.type, o.platform); break;
    case 4:
        r = flcc_plan_create(NULL, (flcc_op)op, dim, image, templ, &o);
        CHECK(r == FLCC_NULL_POINTER);
        CHECK(flcc_last_error_detail()[0] != '\0');
        return 0;
    default: r = flcc_plan_create(&plan, (flcc_op)op, dim, image, templ, &o); break;
    }

    CHECK(in_set((int)r, FLCC_SUCCESS, FLCC_INTERNAL_ERROR));
    CHECK(r != FLCC_INTERNAL_ERROR);
    CHECK(strcmp(flcc_result_string(r), "unknown result code") != 0);
    CHECK(flcc_last_error_detail() != NULL);
    CHECK((r == FLCC_SUCCESS) == (flcc_last_error_detail()[0] == '\0'));
    CHECK((r == FLCC_SUCCESS) == (plan != NULL));

    if (!valid) {
        CHECK(r == FLCC_INVALID_VALUE || r == FLCC_INVALID_DIMENSION || r == FLCC_INVALID_TYPE ||
              r == FLCC_INVALID_PLATFORM || r == FLCC_INVALID_SIZE);
    } else {
        const int named = o.method != NULL;
        const int known = named && is_solver_name(o.method);
        int ok = r == FLCC_SUCCESS;
        if (o.platform == FLCC_DEVICE || (known && strncmp(o.method, "device.", 7) == 0))
            ok = ok || r == FLCC_NO_DEVICE || r == FLCC_DEVICE_ERROR;
        if (named && !known) ok = ok || r == FLCC_UNKNOWN_METHOD;
        if (known) ok = ok || r == FLCC_METHOD_NOT_APPLICABLE;
        /* a solver forced on a platform that is not its own, once a GPU is usable */
        if (known && o.platform != FLCC_ANY) ok = ok || r == FLCC_INVALID_PLATFORM;
        if (o.rigor == FLCC_WISDOM_ONLY) ok = ok || r == FLCC_WISDOM_MISS;
        if (o.platform != FLCC_HOST) ok = ok || r == FLCC_METHOD_NOT_APPLICABLE;
        if (o.threads > 64) ok = ok || r == FLCC_INVALID_VALUE;   /* a bound on threads */
        CHECK(ok);
        if (named && !known && o.platform != FLCC_DEVICE) CHECK(r == FLCC_UNKNOWN_METHOD);
    }
    if (r != FLCC_SUCCESS) return 0;

    /* The plan's queries. */
    const char *method = flcc_plan_method(plan);
    CHECK(method != NULL && is_solver_name(method));
    if (o.method != NULL) CHECK(strcmp(method, o.method) == 0);
    flcc_size os;
    CHECK(flcc_plan_output_size(plan, &os) == FLCC_SUCCESS);
    CHECK(os.h == ov[0] && os.w == ov[1] && os.d == ov[2]);
    CHECK(flcc_plan_output_size(plan, NULL) == FLCC_NULL_POINTER);
    flcc_type type;
    CHECK(flcc_plan_type(plan, &type) == FLCC_SUCCESS && (int)type == (int)o.type);
    const int nc = flcc_plan_candidate_count(plan);
    CHECK(nc >= 1);
    for (int i = -1; i <= nc; ++i) {
        const char *name = NULL;
        double seconds = 0;
        const flcc_result c = flcc_plan_candidate(plan, i, &name, &seconds);
        if (i < 0 || i == nc)
            CHECK(c == FLCC_INVALID_VALUE);
        else
            CHECK(c == FLCC_SUCCESS && name != NULL && is_solver_name(name));
    }
    CHECK(flcc_plan_candidate(plan, 0, NULL, NULL) == FLCC_NULL_POINTER);
    if (strncmp(method, "host.", 5) == 0) CHECK(flcc_plan_set_stream(plan, NULL) == FLCC_INVALID_PLATFORM);
    CHECK(flcc_plan_synchronize(plan) == FLCC_SUCCESS);

    /* Execution with wrong arguments: refused before any buffer is read. */
    float dummy = 0;
    typedef flcc_result (*exec_fn)(flcc_plan, const float *, const float *, float *, int);
    const exec_fn execs[3] = {flcc_conv_exec, flcc_lcorr_exec, flcc_xcorr_exec};
    CHECK(execs[(op + 1) % 3](plan, &dummy, &dummy, &dummy, 1) == FLCC_OPERATION_MISMATCH);
    CHECK(execs[(op + 2) % 3](plan, &dummy, &dummy, &dummy, 1) == FLCC_OPERATION_MISMATCH);
    const exec_fn exec = execs[op];
    CHECK(exec(plan, NULL, &dummy, &dummy, 1) == FLCC_NULL_POINTER);
    CHECK(exec(plan, &dummy, NULL, &dummy, 1) == FLCC_NULL_POINTER);
    CHECK(exec(plan, &dummy, &dummy, NULL, 1) == FLCC_NULL_POINTER);
    const int bad_count = fuzz_u8(&in) % 2 ? 0 : INT_MIN + fuzz_u8(&in);
    CHECK(exec(plan, &dummy, &dummy, &dummy, bad_count) == FLCC_INVALID_VALUE);

    CHECK(flcc_destroy(plan) == FLCC_SUCCESS);
    CHECK(flcc_destroy(plan) == FLCC_INVALID_PLAN);
    CHECK(flcc_plan_method(plan) == NULL);
    CHECK(flcc_plan_candidate_count(plan) == 0);
    CHECK(flcc_destroy(NULL) == FLCC_SUCCESS);
    return 0;
}
