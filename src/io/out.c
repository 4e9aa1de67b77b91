/* out: writers for results - aligned tables for people, JSON and CSV for programs. */
#include "out.h"

#include <math.h>
#include <string.h>

#include "../model/exec/kitsune.h"
#include "csv.h"

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, surrogates or
 * code points above U+10FFFF), or 0 when the bytes there are not one. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n < 2)
        return n;
    unsigned v = c & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3f);
    }
    static const unsigned MIN[5] = {0, 0, 0x80, 0x800, 0x10000};
    return v < MIN[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ? 0 : n;
}

/* JSON strings are UTF-8: a byte that does not start a well-formed sequence (a Latin-1 name,
 * a truncated character) is written as U+FFFD, so the output always parses. */
void out_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        int n = utf8_len(p);
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else if (n == 0)
            fputs("\\ufffd", f);
        else
            fwrite(p, 1, (size_t)n, f);
        p += n ? n : 1;
    }
    fputc('"', f);
}

void out_json_num(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else if (v == 0)
        fputs("0", f);
    else
        fprintf(f, "%.9g", v);
}

void out_json_knum(FILE *f, const char *key, double v)
{
    fprintf(f, ", \"%s\": ", key);
    out_json_num(f, v);
}

void out_json_kstr(FILE *f, const char *key, const char *s)
{
    fprintf(f, ", \"%s\": ", key);
    out_json_str(f, s);
}

const char *out_class_name(int c)
{
    static const char *const N[] = {"both_low", "sm_low", "dram_low", "neither_low"};
    return N[c];
}

void out_json_head(FILE *f, const char *version, const hw_gpu *hw, const wl_graph *g, int training)
{
    fputs("{\"tool\": \"kitsune\", \"version\": ", f);
    out_json_str(f, version);
    out_json_kstr(f, "workload", g->name);
    out_json_kstr(f, "hw", hw->name);
    fprintf(f, ", \"mode\": \"%s\", \"params\": {", training ? "training" : "inference");
    for (int i = 0; i < g->nparam; i++) {
        fprintf(f, "%s", i ? ", " : "");
        out_json_str(f, g->param[i].name);
        fprintf(f, ": %lld", (long long)g->param[i].value);
    }
    fputs("}", f);
}

static void json_energy(FILE *f, double total, double avg, double t, double s, double d, double l2,
                        double sm, double rf, double st)
{
    out_json_knum(f, "energy_J", total);
    out_json_knum(f, "avg_power_W", avg);
    fputs(", \"energy_breakdown_J\": {\"tensor\": ", f);
    out_json_num(f, t);
    out_json_knum(f, "simt", s);
    out_json_knum(f, "dram", d);
    out_json_knum(f, "l2", l2);
    out_json_knum(f, "smem", sm);
    out_json_knum(f, "rf", rf);
    out_json_knum(f, "static", st);
    fputs("}", f);
}

void out_json_pipelines(FILE *f, const void *plan, const wl_graph *g)
{
    const ks_plan *pl = plan;
    fprintf(f, ", \"select\": \"%s\", \"select_used\": \"%s\", \"search_time_s\": ", pl->select,
            pl->chosen);
    out_json_num(f, pl->search_time_s);
    out_json_knum(f, "patterns_time_s", pl->patterns_time_s);
    fputs(", \"pipelines\": [", f);
    for (int i = 0; i < pl->npipelines; i++) {
        const ks_pipeline *p = &pl->p[i];
        fputs(i ? ", " : "", f);
        fputs("{\"first_op\": ", f);
        out_json_str(f, g->op[p->first_op].name);
        out_json_kstr(f, "last_op", g->op[p->last_op].name);
        fprintf(f, ", \"stages\": %d, \"queues\": %d, \"tiles\": %lld, \"time_s\": ", p->nstages,
                p->nqueues, (long long)p->tiles);
        out_json_num(f, p->time_s);
        out_json_knum(f, "throughput_tiles_per_s", p->throughput_tiles_per_s);
        out_json_kstr(f, "bottleneck", p->bottleneck);
        out_json_kstr(f, "ilp_status", p->ilp_status_name);
        out_json_knum(f, "ilp_gap_frac", p->ilp_gap);
        fputs("}", f);
    }
    fputs("]", f);
}

void out_json_result(FILE *f, const kt_result *r, const wl_graph *g, int with_items)
{
    fputs("{\"exec\": ", f);
    out_json_str(f, r->exec);
    out_json_knum(f, "time_s", r->time_s);
    fprintf(f, ", \"flops\": %lld, \"dram_read_bytes\": %lld, \"dram_write_bytes\": %lld, "
               "\"l2_bytes\": %lld, \"kernels\": %d, \"ops_total\": %d, \"ops_covered\": %d",
            (long long)r->flops, (long long)r->dram_read_bytes, (long long)r->dram_write_bytes,
            (long long)r->l2_bytes, r->kernels, r->ops_total, r->ops_covered);
    out_json_knum(f, "clock_MHz", r->clock_MHz);
    fprintf(f, ", \"over_cap_items\": %d", r->over_cap_items);
    json_energy(f, r->energy_J, r->avg_power_W, r->e_tensor_J, r->e_simt_J, r->e_dram_J, r->e_l2_J,
                r->e_smem_J, r->e_rf_J, r->e_static_J);
    fputs(", \"class_time_s\": {", f);
    for (int i = 0; i < UC_COUNT; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", out_class_name(i));
        out_json_num(f, r->class_time_s[i]);
    }
    fputs("}", f);
    if (r->extra && r->exec_id == EX_KITSUNE)
        out_json_pipelines(f, r->extra, g);
    if (with_items) {
        /* bsp lists ops, vf its fusion groups, kitsune its kernels (pipelines and groups) */
        static const char *const KEY[EX_COUNT] = {"ops", "groups", "kernels"};
        const char *key = KEY[r->exec_id];
        fprintf(f, ",\n  \"%s\": [", key);
        for (int i = 0; i < r->nitems; i++) {
            const kt_item *it = &r->items[i];
            const cost_result *c = &it->c;
            fputs(i ? ",\n    " : "\n    ", f);
            fputs("{\"name\": ", f);
            out_json_str(f, it->name);
            out_json_kstr(f, "type", it->type);
            out_json_knum(f, "time_s", c->time_s);
            fprintf(f, ", \"bound\": \"%s\", \"flops\": %lld, \"dram_read_bytes\": %lld, "
                       "\"dram_write_bytes\": %lld, \"l2_bytes\": %lld",
                    roof_bound_name(c->bound), (long long)c->flops, (long long)c->dram_read_bytes,
                    (long long)c->dram_write_bytes, (long long)c->l2_bytes);
            fputs(", \"terms_s\": {\"compute\": ", f);
            out_json_num(f, c->compute_s);
            out_json_knum(f, "tensor", c->tensor_s);
            out_json_knum(f, "simt", c->simt_s);
            out_json_knum(f, "l2", c->l2_s);
            out_json_knum(f, "dram", c->dram_s);
            out_json_knum(f, "chain", c->chain_s);
            out_json_knum(f, "tail", c->tail_s);
            out_json_knum(f, "latency", c->latency_s);
            out_json_knum(f, "launch", c->launch_s);
            out_json_knum(f, "cta_dispatch", c->dispatch_s);
            fprintf(f, "}, \"tiles\": %lld, \"waves\": %lld, \"sms\": %d", (long long)c->tiles,
                    (long long)c->waves, c->sms);
            out_json_knum(f, "sm_util", c->sm_util);
            out_json_knum(f, "dram_util", c->dram_util);
            out_json_knum(f, "energy_J", it->energy_J);
            out_json_knum(f, "avg_power_W", it->avg_power_W);
            out_json_knum(f, "clock_MHz", it->clock_MHz > 0 ? it->clock_MHz : r->clock_MHz);
            if (it->over_cap)
                fputs(", \"over_cap\": true", f);
            if (it->nops > 1 || it->note) {
                fputs(", \"members\": [", f);
                for (int k = 0; k < it->nops; k++) {
                    fputs(k ? ", " : "", f);
                    out_json_str(f, g->op[it->ops[k]].name);
                }
                fputs("]", f);
            }
            if (it->note) {
                out_json_kstr(f, "note", it->note);
            }
            fputs("}", f);
        }
        fputs("]", f);
    }
    fputs("}", f);
}

static double mb(int64_t b)
{
    return (double)b / 1e6;
}

void out_table_result(FILE *f, const kt_result *r, const wl_graph *g, const hw_gpu *hw, int explain)
{
    (void)hw;
    int wn = 4, wt = 4;
    for (int i = 0; i < r->nitems; i++) {
        int n = (int)strlen(r->items[i].name), t = (int)strlen(r->items[i].type);
        if (n > wn)
            wn = n;
        if (t > wt)
            wt = t;
    }
    if (wn > 40)
        wn = 40;
    fprintf(f, "%-*s  %-*s  %11s  %-8s  %10s  %12s  %12s  %10s", wn, "name", wt, "type", "time_us",
            "bound", "GFLOP", "dram_rd_MB", "dram_wr_MB", "l2_MB");
    if (explain)
        fprintf(f, "  %10s  %10s  %10s  %10s  %10s  %10s  %10s  %8s  %6s", "compute_us", "l2_us",
                "dram_us", "chain_us", "tail_us", "latency_us", "launch_us", "tiles", "waves");
    fputc('\n', f);
    for (int i = 0; i < r->nitems; i++) {
        const kt_item *it = &r->items[i];
        const cost_result *c = &it->c;
        fprintf(f, "%-*.*s  %-*s  %11.2f  %-8s  %10.3f  %12.3f  %12.3f  %10.3f", wn, wn, it->name,
                wt, it->type, c->time_s * 1e6, c->bound == BOUND_NONE ? "-" : roof_bound_name(c->bound),
                (double)c->flops / 1e9, mb(c->dram_read_bytes), mb(c->dram_write_bytes),
                mb(c->l2_bytes));
        if (explain)
            fprintf(f, "  %10.2f  %10.2f  %10.2f  %10.2f  %10.2f  %10.2f  %10.2f  %8lld  %6lld",
                    c->compute_s * 1e6, c->l2_s * 1e6, c->dram_s * 1e6, c->chain_s * 1e6,
                    c->tail_s * 1e6,
                    c->latency_s * 1e6, c->launch_s * 1e6, (long long)c->tiles,
                    (long long)c->waves);
        if (it->note && it->nops > 1)
            fprintf(f, "  [%d ops: %s]", it->nops, it->note);
        fputc('\n', f);
    }
    fprintf(f, "%-*s  %-*s  %11.2f  %-8s  %10.3f  %12.3f  %12.3f  %10.3f\n", wn, "total", wt, r->exec,
            r->time_s * 1e6, "", (double)r->flops / 1e9, mb(r->dram_read_bytes),
            mb(r->dram_write_bytes), mb(r->l2_bytes));
    fprintf(f, "%d kernels for %d ops (%d in multi-op groups)", r->kernels, r->ops_total,
            r->ops_covered);
    if (r->energy_J > 0)
        fprintf(f, "; energy %.4g J, average power %.1f W at %.0f MHz", r->energy_J, r->avg_power_W,
                r->clock_MHz);
    fputc('\n', f);
    (void)g;
}

void out_csv_items_header(FILE *f)
{
    fputs("workload,hw,mode,exec,name,type,time_s,bound,flops,dram_read_bytes,dram_write_bytes,"
          "l2_bytes,compute_s,l2_s,dram_s,latency_s,launch_s,tiles,waves,energy_J,tail_s,chain_s\n",
          f);
}

void out_csv_items(FILE *f, const kt_result *r, const wl_graph *g, const hw_gpu *hw, int training)
{
    for (int i = 0; i < r->nitems; i++) {
        const kt_item *it = &r->items[i];
        const cost_result *c = &it->c;
        /* names are quoted when they hold a comma, quote or newline (RFC 4180) */
        csv_field(f, g->name);
        fputc(',', f);
        csv_field(f, hw->name);
        fprintf(f, ",%s,%s,", training ? "training" : "inference", r->exec);
        csv_field(f, it->name);
        fprintf(f, ",%s,%.9g,%s,%lld,%lld,%lld,%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%lld,%lld,%.9g,%.9g,%.9g\n",
                it->type, c->time_s, c->bound == BOUND_NONE ? "none" : roof_bound_name(c->bound),
                (long long)c->flops, (long long)c->dram_read_bytes, (long long)c->dram_write_bytes,
                (long long)c->l2_bytes, c->compute_s, c->l2_s, c->dram_s, c->latency_s, c->launch_s,
                (long long)c->tiles, (long long)c->waves, it->energy_J, c->tail_s, c->chain_s);
    }
}
