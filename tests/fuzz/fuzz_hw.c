/* fuzz_hw: the hardware loader and the model on a small graph (tests/data/tiny.json, forward or
 * training). Input: one byte of model options (fz_opts), then a hw JSON file. A file the loader
 * accepts must give results that satisfy fz_check_run: its ranges are what keeps the model
 * finite. */
#include <cjson/cJSON.h>

#include "../../src/io/jsonx.h"
#include "../../src/io/wl_json.h"
#include "../../src/opt/ilp.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static arena wa;
    static wl_graph tiny;
    static int loaded;
    if (!loaded) {
        char path[1024];
        const char *root = getenv("KITSUNE_HOME");
        snprintf(path, sizeof path, "%s/tests/data/tiny.json", root && root[0] ? root : ".");
        kt_err e;
        err_clear(&e);
        FZ_ASSERT(wl_load(path, NULL, 0, 0, &wa, &tiny, &e) == 0, "%s: %s", path, e.msg);
        loaded = 1;
    }
    if (size < 1)
        return 0;
    kt_opts o = fz_opts(data[0]);
    char *text = fz_text(data + 1, size - 1);
    kt_err e;
    err_clear(&e);
    cJSON *root = jsonx_parse_file(text, size - 1, "fuzz-hw.json", &e);
    hw_gpu hw;
    if (root && hw_from_json(root, "fuzz-hw.json", &hw, &e) == 0) {
        arena a = {0};
        kt_run_result rr;
        if (kt_run(&hw, &tiny, &o, &a, &rr, &e) == 0)
            fz_check_run(&hw, &rr, &o, &a);
        else
            FZ_ASSERT(e.code == KT_EINPUT, "model error on an accepted hw file: %s", e.msg);
        arena_free(&a);
    } else {
        FZ_ASSERT(e.code == KT_EINPUT, "loader error: %s: %s", e.path, e.msg);
    }
    cJSON_Delete(root);
    free(text);
    ilp_thread_release();
    return 0;
}
