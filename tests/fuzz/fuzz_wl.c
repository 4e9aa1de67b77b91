/* fuzz_wl: the workload loader and the whole model. Input: one byte of model options (fz_opts)
 * and one choosing the GPU (low two bits), the vf and power policies (fz_opts2) and a --dtype
 * (high two bits), then a workload JSON file. Bad input must be refused (KT_EINPUT);
 * a run that succeeds must satisfy fz_check_run, and its JSON output must parse and be UTF-8,
 * its CSV output must have the header's field count on every line. */
#include <cjson/cJSON.h>

#include "../../src/io/csv.h"
#include "../../src/io/jsonx.h"
#include "../../src/io/out.h"
#include "../../src/io/wl_json.h"
#include "../../src/opt/ilp.h"
#include "fuzz.h"

static const char *const GPUS[] = {"a100", "v100", "h100"};

/* 1 when s (n bytes) is well-formed UTF-8 (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
static int utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
        if (k == 9 || i + k >= n)
            return 0;
        unsigned v = k == 0 ? c : k == 1 ? c & 0x1f : k == 2 ? c & 0x0f : c & 0x07;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
            v = (v << 6) | (s[i + j] & 0x3f);
        }
        if ((k == 1 && v < 0x80) || (k == 2 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
            (k == 3 && (v < 0x10000 || v > 0x10ffff)))
            return 0;
        i += k + 1;
    }
    return 1;
}

/* The writers on a successful run: JSON that parses and is UTF-8, CSV rows as wide as the
 * header, a table (no check but no crash). */
static void check_writers(const hw_gpu *hw, const kt_run_result *rr, int training)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    FZ_ASSERT(f != NULL, "out of memory");
    out_json_head(f, "fuzz", hw, rr->g, training);
    fputs(", \"results\": [", f);
    for (int i = 0; i < rr->nres; i++) {
        fputs(i ? ", " : "", f);
        out_json_result(f, &rr->res[i], rr->g, 1);
    }
    fputs("]}", f);
    fclose(f);
    FZ_ASSERT(utf8_ok((const unsigned char *)buf, len), "JSON output is not UTF-8");
    cJSON *j = cJSON_Parse(buf);
    FZ_ASSERT(j != NULL, "JSON output does not parse near: %.60s", cJSON_GetErrorPtr());
    cJSON_Delete(j);
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    FZ_ASSERT(f != NULL, "out of memory");
    out_csv_items_header(f);
    for (int i = 0; i < rr->nres; i++)
        out_csv_items(f, &rr->res[i], rr->g, hw, training);
    fclose(f);
    char *p = buf, *fld[64];
    int width = -1;
    while (*p) {
        int n = csv_record(&p, fld, 64, NULL);
        FZ_ASSERT(n > 0 && (width < 0 || n == width), "CSV row of %d fields, the header has %d", n,
                  width);
        if (width < 0)
            width = n;
    }
    free(buf);
    f = fopen("/dev/null", "w");
    FZ_ASSERT(f != NULL, "cannot open /dev/null");
    for (int i = 0; i < rr->nres; i++)
        out_table_result(f, &rr->res[i], rr->g, hw, 1);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hw_gpu hws[sizeof GPUS / sizeof GPUS[0]];
    static int loaded;
    if (!loaded) {
        for (size_t i = 0; i < sizeof GPUS / sizeof GPUS[0]; i++)
            hws[i] = fz_hw(GPUS[i]);
        loaded = 1;
    }
    if (size < 2)
        return 0;
    kt_opts o = fz_opts(data[0]);
    fz_opts2(&o, data[1]);
    const hw_gpu *hw = &hws[(data[1] & 3) % (sizeof GPUS / sizeof GPUS[0])];
    static const dtype DTS[4] = {DT_COUNT, DT_FP16, DT_FP8, DT_FP32}; /* DT_COUNT: as written */
    dtype dt = DTS[data[1] >> 6];
    char *text = fz_text(data + 2, size - 2);
    kt_err e;
    err_clear(&e);
    cJSON *root = jsonx_parse_file(text, size - 2, "fuzz.json", &e);
    if (root) {
        arena a = {0};
        wl_graph g;
        if (wl_from_json(root, "fuzz.json", NULL, 0, o.training, &a, &g, &e) == 0 &&
            (dt == DT_COUNT || wl_set_float_dtype(&g, dt, &e) == 0)) {
            kt_run_result rr;
            kt_summary s;
            if (kt_run(hw, &g, &o, &a, &rr, &e) == 0) {
                fz_check_run(hw, &rr, &o, &a);
                check_writers(hw, &rr, o.training);
            } else {
                FZ_ASSERT(e.code == KT_EINPUT, "model error: %s: %s", e.path, e.msg);
            }
            if (kt_summarize(&g, &a, &s, &e))
                FZ_ASSERT(e.code == KT_EINPUT, "summary error: %s", e.msg);
        } else {
            FZ_ASSERT(e.code == KT_EINPUT, "loader error: %s: %s", e.path, e.msg);
        }
        arena_free(&a);
        cJSON_Delete(root);
    }
    free(text);
    ilp_thread_release();
    return 0;
}
