/* replay: run a fuzz harness over corpus files without libFuzzer (make check, any compiler):
 * every argument is a file or a directory of files, each fed once to LLVMFuzzerTestOneInput. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        FZ_ASSERT(buf != NULL, "out of memory");
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *de;
            char **names = NULL;
            int n = 0;
            while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                    continue;
                names = realloc(names, (size_t)(n + 1) * sizeof *names);
                FZ_ASSERT(names != NULL, "out of memory");
                size_t len = strlen(argv[i]) + strlen(de->d_name) + 2;
                names[n] = malloc(len);
                FZ_ASSERT(names[n] != NULL, "out of memory");
                snprintf(names[n++], len, "%s/%s", argv[i], de->d_name);
            }
            if (d)
                closedir(d);
            qsort(names, (size_t)n, sizeof *names, by_name);
            for (int k = 0; k < n; k++) {
                files += run_file(names[k]) == 0;
                free(names[k]);
            }
            free(names);
        } else if (run_file(argv[i]) == 0) {
            files++;
        } else {
            return 1;
        }
    }
    printf("%d inputs\n", files);
    return 0;
}
