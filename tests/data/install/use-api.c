/* use-api: a program outside the project, built against the installed header and library
 * (pkg-config kitsune). usage: use-api HW.json WORKLOAD.json - prints the time of bsp and
 * kitsune, as `kitsune compare --format csv` prints time_s. */
#include <stdio.h>

#include <kitsune/kitsune.h>

int main(int argc, char **argv)
{
    hw_gpu hw;
    wl_graph g;
    arena a = {0};
    kt_err e;
    kt_opts o;
    kt_run_result r;
    if (argc != 3)
        return 2;
    err_clear(&e);
    if (hw_load(argv[1], &hw, &e) || wl_load(argv[2], NULL, 0, 0, &a, &g, &e)) {
        fprintf(stderr, "use-api: %s: %s: %s\n", e.file, e.path, e.msg);
        return 2;
    }
    kt_opts_default(&o);
    if (kt_run(&hw, &g, &o, &a, &r, &e)) {
        fprintf(stderr, "use-api: %s\n", e.msg);
        return 1;
    }
    printf("bsp %.9g\nkitsune %.9g\n", r.by[EX_BSP]->time_s, r.by[EX_KITSUNE]->time_s);
    arena_free(&a);
    return 0;
}
