/* check_io: the input/output layer - CSV records, whole-file reads, JSON members, JSON string
 * and number writers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/io/csv.h"
#include "../src/io/file.h"
#include "../src/io/jsonx.h"
#include "../src/io/out.h"
#include "../src/io/outfile.h"
#include "ktest.h"

START_TEST(test_csv_record)
{
    char text[] = "a,\"b,c\",\"say \"\"hi\"\"\",,\r\nnext,1\nlast";
    char *p = text, *f[8];
    int nl = -1;
    ck_assert_int_eq(csv_record(&p, f, 8, &nl), 5);
    ck_assert_int_eq(nl, 1);
    ck_assert_str_eq(f[0], "a");
    ck_assert_str_eq(f[1], "b,c");
    ck_assert_str_eq(f[2], "say \"hi\"");
    ck_assert_str_eq(f[3], "");
    ck_assert_str_eq(f[4], "");
    ck_assert_int_eq(csv_record(&p, f, 8, NULL), 2);
    ck_assert_str_eq(f[0], "next");
    ck_assert_str_eq(f[1], "1");
    ck_assert_int_eq(csv_record(&p, f, 8, &nl), 1);
    ck_assert_str_eq(f[0], "last");
    ck_assert_int_eq(nl, 0); /* end of input, no terminator */
    char bad[] = "x,\"open";
    p = bad;
    ck_assert_int_eq(csv_record(&p, f, 8, NULL), -1);
    char many[] = "1,2,3,4";
    p = many;
    ck_assert_int_eq(csv_record(&p, f, 2, NULL), 4); /* counts every field, stores two */
    char multi[] = "a,\"two\nlines\nhere\"\nb\n"; /* a quoted field spanning three lines */
    p = multi;
    ck_assert_int_eq(csv_record(&p, f, 8, &nl), 2);
    ck_assert_str_eq(f[1], "two\nlines\nhere");
    ck_assert_int_eq(nl, 3);
    ck_assert_int_eq(csv_record(&p, f, 8, &nl), 1);
    ck_assert_str_eq(f[0], "b");
}
END_TEST

/* Run a writer into a memory stream and return what it wrote (static buffer). */
static const char *captured(void (*fn)(FILE *, const void *), const void *arg)
{
    static char out[256];
    FILE *f = fmemopen(out, sizeof out, "w");
    fn(f, arg);
    fclose(f);
    return out;
}

static void w_field(FILE *f, const void *a)
{
    csv_field(f, a);
}
static void w_num(FILE *f, const void *a)
{
    csv_num(f, *(const double *)a);
}
static void w_jstr(FILE *f, const void *a)
{
    out_json_str(f, a);
}
static void w_jnum(FILE *f, const void *a)
{
    out_json_num(f, *(const double *)a);
}

START_TEST(test_writers)
{
    ck_assert_str_eq(captured(w_field, "plain"), "plain");
    ck_assert_str_eq(captured(w_field, "a,\"b\""), "\"a,\"\"b\"\"\"");
    double v = 0.1, n = NAN, z = 0;
    ck_assert_str_eq(captured(w_num, &v), ",0.1");
    ck_assert_str_eq(captured(w_num, &n), ",");
    ck_assert_str_eq(captured(w_jstr, "q\"\\\n\x01"), "\"q\\\"\\\\\\n\\u0001\"");
    ck_assert_str_eq(captured(w_jnum, &n), "null");
    ck_assert_str_eq(captured(w_jnum, &z), "0");
    double big = 123456789012.0;
    ck_assert_str_eq(captured(w_jnum, &big), "1.23456789e+11");
    /* JSON strings stay UTF-8: well-formed sequences pass, anything else becomes U+FFFD */
    ck_assert_str_eq(captured(w_jstr, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    ck_assert_str_eq(captured(w_jstr, "caf\xe9"), "\"caf\\ufffd\"");            /* Latin-1 */
    ck_assert_str_eq(captured(w_jstr, "\xc0\xaf"), "\"\\ufffd\\ufffd\"");       /* overlong */
    ck_assert_str_eq(captured(w_jstr, "\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
    ck_assert_str_eq(captured(w_jstr, "\xe2\x82"), "\"\\ufffd\\ufffd\"");       /* truncated */
    ck_assert_str_eq(captured(w_field, "a,b\n9,x"), "\"a,b\n9,x\"");
}
END_TEST

START_TEST(test_read_file)
{
    char path[] = "/tmp/kt-io-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 100000; i++) /* 700 kB: several doublings of the buffer */
        fputs("012345\n", f);
    fclose(f);
    kt_err e;
    err_clear(&e);
    size_t len = 0;
    char *b = io_read_file(path, (size_t)1 << 20, &len, &e);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(len, 700000);
    ck_assert_int_eq(b[len], 0);
    free(b);
    ck_assert_ptr_null(io_read_file(path, (size_t)1 << 18, &len, &e)); /* over the limit */
    ck_assert_str_eq(e.msg, "file larger than 0 MiB");
    unlink(path);
    ck_assert_ptr_null(io_read_file(path, (size_t)1 << 20, &len, &e));
    ck_assert_str_eq(e.file, path);
    ck_assert(strstr(e.msg, "cannot open") == e.msg);
    /* a FIFO is refused at once (opening it for reading used to wait for a writer) */
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_ptr_null(io_read_file(path, (size_t)1 << 20, &len, &e));
    ck_assert_str_eq(e.msg, "cannot read: not a regular file");
    unlink(path);
}
END_TEST

START_TEST(test_json_member)
{
    kt_err e;
    err_clear(&e);
    cJSON *root = jsonx_parse("{\"ops\": {\"x\": 1}, \"t\": [1]}", "m.json", &e);
    ck_assert_ptr_nonnull(root);
    char p[64];
    ck_assert_ptr_nonnull(jsonx_member(root, "t", cJSON_Array, "an array", "m.json", "", p, sizeof p, &e));
    ck_assert_str_eq(p, "t");
    ck_assert_ptr_null(jsonx_member(root, "ops", cJSON_Array, "an array", "m.json", "", p, sizeof p, &e));
    ck_assert_str_eq(e.path, "ops");
    ck_assert_str_eq(e.msg, "must be an array");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    ck_assert_ptr_null(jsonx_member(ops, "y", cJSON_Number, "a number", "m.json", "ops", p, sizeof p, &e));
    ck_assert_str_eq(e.path, "ops.y");
    ck_assert_str_eq(e.msg, "missing field");
    cJSON_Delete(root);
    ck_assert_ptr_null(jsonx_parse("{\n  \"a\": ,\n}", "bad.json", &e));
    ck_assert_str_eq(e.msg, "invalid JSON at line 2, column 8");
    /* a repeated key: cJSON would keep both and every lookup would see the first */
    ck_assert_ptr_null(jsonx_parse("{\"ops\": [{\"n\": 1}, {\"attrs\": {\"k\": 1, \"k\": 2}}]}",
                                   "d.json", &e));
    ck_assert_str_eq(e.path, "ops[1].attrs.k");
    ck_assert_str_eq(e.msg, "duplicate key");
    char big[4096] = "{"; /* many members: the hashed search */
    for (int i = 0; i < 200; i++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "\"k%d\": %d, ", i, i);
    snprintf(big + strlen(big), sizeof big - strlen(big), "\"k17\": 0}");
    ck_assert_ptr_null(jsonx_parse(big, "big.json", &e));
    ck_assert_str_eq(e.path, "k17");
    big[strlen(big) - 10] = 0; /* drop the repeat: parses */
    snprintf(big + strlen(big), sizeof big - strlen(big), "\"x\": 0}");
    root = jsonx_parse(big, "big.json", &e);
    ck_assert_ptr_nonnull(root);
    cJSON_Delete(root);
    root = jsonx_parse_file("\xef\xbb\xbf{\"a\": 1}", 11, "bom.json", &e); /* a BOM is skipped */
    ck_assert_ptr_nonnull(root);
    cJSON_Delete(root);
}
END_TEST

/* Contents of a file as a string (static buffer; "" when it cannot be read). */
static const char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    return buf;
}

START_TEST(test_outfile_atomic)
{
    char dir[] = "/tmp/kt-of-XXXXXX", path[64], link[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    ck_assert_int_eq(symlink("out.txt", link), 0);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    kt_err e;
    err_clear(&e);
    of_file o;
    ck_assert_int_eq(of_kind_of(link), OF_ATOMIC);
    ck_assert_int_eq(of_open(&o, link, 0, &e), 0);
    ck_assert_str_eq(o.target, path); /* the link's target is replaced, the link stays */
    fputs("new", o.f);
    ck_assert_str_eq(slurp(path), "old"); /* nothing visible before the commit */
    of_abort(&o);
    ck_assert_str_eq(slurp(path), "old");
    ck_assert_int_eq(of_open(&o, link, OF_BUFFER, &e), 0);
    fputs("new", o.f);
    ck_assert_int_eq(of_commit(&o, &e), 0);
    ck_assert_str_eq(slurp(path), "new");
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    unlink(link);
    unlink(path);
    ck_assert_int_eq(rmdir(dir), 0); /* no temporary file left */
    ck_assert_int_eq(of_kind_of("/dev/null"), OF_DIRECT);
    ck_assert_int_eq(of_kind_of("-"), OF_STDOUT);
    ck_assert_int_eq(of_kind_of(NULL), OF_STDOUT);
    ck_assert_int_eq(of_kind_of("/dev/stdout"), OF_STDOUT);
}
END_TEST

START_TEST(test_outfile_sibling)
{
    char out[1024], name[300];
    of_sibling("dir/out.csv", ".partial", out, sizeof out);
    ck_assert_str_eq(out, "dir/out.csv.partial");
    memset(name, 'a', 250);
    name[250] = 0;
    of_sibling(name, ".partial", out, sizeof out);
    ck_assert_uint_eq(strlen(out), 255); /* 230 a's, '-', 16 hex digits, ".partial" */
    ck_assert(!strncmp(out, name, 230) && out[230] == '-');
    ck_assert_str_eq(out + 247, ".partial");
    char again[1024];
    of_sibling(name, ".partial", again, sizeof again);
    ck_assert_str_eq(out, again); /* deterministic */
    name[249] = 'b';
    of_sibling(name, ".partial", again, sizeof again);
    ck_assert_str_ne(out, again); /* the hash covers the part cut off */
}
END_TEST

static Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *c = tcase_create("csv");
    tcase_add_test(c, test_csv_record);
    tcase_add_test(c, test_writers);
    suite_add_tcase(s, c);
    TCase *f = tcase_create("file_json");
    tcase_add_test(f, test_read_file);
    tcase_add_test(f, test_json_member);
    suite_add_tcase(s, f);
    TCase *o = tcase_create("outfile");
    tcase_add_test(o, test_outfile_atomic);
    tcase_add_test(o, test_outfile_sibling);
    suite_add_tcase(s, o);
    return s;
}

KT_TEST_MAIN(io_suite)
