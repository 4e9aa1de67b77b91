/* map: Kitsune pipelines of a workload - stages, CTAs per stage, queues, ILP status. */
#include <stdio.h>
#include <string.h>

#include "../io/out.h"
#include "../model/exec/kitsune.h"
#include "../model/run.h"
#include "cli.h"
#include "cmds.h"

static const char *const HELP =
    "usage: kitsune map --hw HW --workload WL [options]\n"
    "\n"
    "The spatial pipelines Kitsune execution selects for a workload: per pipeline its stages (op,\n"
    "unit, CTAs, rate in tiles/s, limit), the bottleneck, the ring queues between stages (payload,\n"
    "depth, storage, L2 or spilled), the ILP solver status, objective, bound and gap, and how far\n"
    "the paper's pattern selection is from the model-driven search.\n"
    "\n"
    "  --mode inference|training        (default inference)\n"
    "  --select search|patterns         subgraph selection (default search)\n"
    "  --scheduler hetero|shared        SM pools: one Tensor and one SIMT CTA per SM (default), or\n"
    "                                   one pool for all stages (ablation without the paper's change)\n"
    "  --rest vf|bsp                    how ops outside pipelines run (default vf)\n"
    "  --set NAME=VALUE  --optimizer none|sgd|adam  --vf inductor|paper|rules  --vf-backward\n"
    "  --launch graph|plain\n"
    "  --format table|json|csv          output format (default table)\n"
    "  -o FILE                          write to FILE (atomically) instead of stdout\n"
    "\n"
    "example: kitsune map --hw a100 --workload dlrm --select patterns --format json\n";

static const char *unit_name(int tensor)
{
    return tensor ? "tensor" : "simt";
}

static void table(FILE *f, const kt_result *r, const ks_plan *pl, const wl_graph *g)
{
    fprintf(f, "kitsune: %.2f us, %d pipelines; select %s (used: %s); rest as %s%s; scheduler %s\n",
            r->time_s * 1e6, pl->npipelines, pl->select, pl->chosen, pl->rest,
            pl->rest_fallback ? " (vf unavailable)" : "", pl->scheduler_shared ? "shared" : "hetero");
    fprintf(f, "end-to-end: search %.2f us, patterns %.2f us (%+.1f%% vs search), no pipelines %.2f us\n",
            pl->search_time_s * 1e6, pl->patterns_time_s * 1e6,
            pl->search_time_s > 0 ? 100 * (pl->patterns_time_s / pl->search_time_s - 1) : 0,
            pl->none_time_s * 1e6);
    for (int i = 0; i < pl->npipelines; i++) {
        const ks_pipeline *p = &pl->p[i];
        fprintf(f, "\npipe%d: ops %s..%s (%d ops), %lld tiles of %d rows (stream rows %lld)\n", i,
                g->op[p->first_op].name, g->op[p->last_op].name, p->last_op - p->first_op + 1,
                (long long)p->tiles, 128, (long long)p->stream_rows);
        fprintf(f, "  time %.2f us (fill %.2f us), throughput %.4g tiles/s, bottleneck %s; "
                   "dram rd %.3f MB wr %.3f MB (weights re-read %.3f MB, spilled %.3f MB)\n",
                p->time_s * 1e6, p->fill_s * 1e6, p->throughput_tiles_per_s, p->bottleneck,
                (double)p->dram_read_bytes / 1e6, (double)p->dram_write_bytes / 1e6,
                (double)p->weight_reread_bytes / 1e6, (double)p->spilled_bytes / 1e6);
        fprintf(f, "  bounds: dram %.4g tiles/s, l2 %.4g tiles/s; ilp %s%s, objective %.4g tiles/s, "
                   "bound %.4g, gap %.2f%%\n",
                p->dram_bound_tiles_per_s, p->l2_bound_tiles_per_s, p->ilp_status_name,
                p->ilp_fallback ? " [greedy fallback: slowest stage gets the next allocation]" : "",
                p->ilp_objective_tiles_per_s, p->ilp_bound_tiles_per_s, 100 * p->ilp_gap);
        fprintf(f, "  %-5s %-24s %-6s %5s %14s %11s %8s  %s\n", "stage", "op", "unit", "ctas",
                "rate_tiles/s", "body_us", "limit", "members");
        for (int s = 0; s < p->nstages; s++) {
            const ks_stage *st = &p->stages[s];
            fprintf(f, "  %-5d %-24.24s %-6s %5d %14.4g %11.2f %8s  ", s, g->op[st->op].name,
                    unit_name(st->tensor), st->ctas, st->rate_tiles_per_s, st->body_s * 1e6,
                    st->limit);
            for (int m = 0; m < st->nmembers; m++)
                fprintf(f, "%s%s", m ? "+" : "", g->op[st->members[m]].name);
            fprintf(f, "%s%s\n", st->reduction_tree ? " (reduction tree)" : "",
                    s == p->bottleneck_stage ? " <- bottleneck" : "");
        }
        if (p->nqueues) {
            fprintf(f, "  %-5s %-24s %7s %10s %5s %9s %12s %10s %s\n", "queue", "tensor", "stages",
                    "payload_KiB", "depth", "xfer/tile", "storage_KiB", "eff_GBps", "where");
            for (int q = 0; q < p->nqueues; q++) {
                const ks_queue *u = &p->queues[q];
                char st[32];
                snprintf(st, sizeof st, "%d->%d", u->producer_stage, u->nconsumers);
                fprintf(f, "  %-5d %-24.24s %7s %10.1f %5d %9d %12.1f %10.2f %s%s\n", q,
                        g->t[u->tensor].name, st, (double)u->payload_bytes / 1024, u->depth,
                        u->transfers_per_tile, (double)u->storage_bytes / 1024,
                        u->eff_bandwidth_GBps, u->spilled ? "spilled" : "l2",
                        u->nconsumers > 1 ? " (multicast)" : "");
            }
        }
    }
}

static void json(FILE *f, const kt_result *r, const ks_plan *pl, const wl_graph *g)
{
    fputs(",\n \"kitsune\": {\"time_s\": ", f);
    out_json_num(f, r->time_s);
    fprintf(f, ", \"dram_read_bytes\": %lld, \"dram_write_bytes\": %lld, \"ops_total\": %d, "
               "\"ops_covered\": %d, \"select\": \"%s\", \"chosen\": \"%s\", \"rest\": \"%s\", "
               "\"rest_fallback\": %s, \"scheduler\": \"%s\", \"search_time_s\": ",
            (long long)r->dram_read_bytes, (long long)r->dram_write_bytes, r->ops_total,
            r->ops_covered, pl->select, pl->chosen, pl->rest, pl->rest_fallback ? "true" : "false",
            pl->scheduler_shared ? "shared" : "hetero");
    out_json_num(f, pl->search_time_s);
    out_json_knum(f, "patterns_time_s", pl->patterns_time_s);
    out_json_knum(f, "no_pipelines_time_s", pl->none_time_s);
    fputs("},\n \"pipelines\": [", f);
    for (int i = 0; i < pl->npipelines; i++) {
        const ks_pipeline *p = &pl->p[i];
        fputs(i ? ",\n  " : "\n  ", f);
        fputs("{\"first_op\": ", f);
        out_json_str(f, g->op[p->first_op].name);
        out_json_kstr(f, "last_op", g->op[p->last_op].name);
        fprintf(f, ", \"ops\": %d, \"stream_rows\": %lld, \"tiles\": %lld, \"time_s\": ",
                p->last_op - p->first_op + 1, (long long)p->stream_rows, (long long)p->tiles);
        out_json_num(f, p->time_s);
        out_json_knum(f, "fill_s", p->fill_s);
        out_json_knum(f, "throughput_tiles_per_s", p->throughput_tiles_per_s);
        out_json_knum(f, "dram_bound_tiles_per_s", p->dram_bound_tiles_per_s);
        out_json_knum(f, "l2_bound_tiles_per_s", p->l2_bound_tiles_per_s);
        out_json_kstr(f, "bottleneck", p->bottleneck);
        fprintf(f, ", \"dram_read_bytes\": %lld, \"dram_write_bytes\": %lld, \"l2_bytes\": %lld, "
                   "\"queue_storage_bytes\": %lld, \"spilled_bytes\": %lld, \"weight_bytes\": %lld, "
                   "\"weight_reread_bytes\": %lld",
                (long long)p->dram_read_bytes, (long long)p->dram_write_bytes,
                (long long)p->l2_bytes, (long long)p->queue_storage_bytes,
                (long long)p->spilled_bytes, (long long)p->weight_bytes,
                (long long)p->weight_reread_bytes);
        fputs(",\n   \"ilp\": {\"status\": ", f);
        out_json_str(f, p->ilp_status_name);
        fprintf(f, ", \"fallback\": %s, \"objective_tiles_per_s\": ", p->ilp_fallback ? "true" : "false");
        out_json_num(f, p->ilp_objective_tiles_per_s);
        out_json_knum(f, "bound_tiles_per_s", p->ilp_bound_tiles_per_s);
        out_json_knum(f, "gap_frac", p->ilp_gap);
        fputs("},\n   \"stages\": [", f);
        for (int s = 0; s < p->nstages; s++) {
            const ks_stage *st = &p->stages[s];
            fputs(s ? ",\n    " : "\n    ", f);
            fputs("{\"op\": ", f);
            out_json_str(f, g->op[st->op].name);
            fprintf(f, ", \"unit\": \"%s\", \"ctas\": %d, \"rate_tiles_per_s\": ",
                    unit_name(st->tensor), st->ctas);
            out_json_num(f, st->rate_tiles_per_s);
            out_json_knum(f, "body_s", st->body_s);
            out_json_knum(f, "queue_s_per_tile", st->queue_s_per_tile);
            out_json_knum(f, "latency_s", st->latency_s);
            fprintf(f, ", \"bound\": \"%s\", \"limit\": \"%s\", \"reduction_tree\": %s, \"members\": [",
                    roof_bound_name(st->bound), st->limit, st->reduction_tree ? "true" : "false");
            for (int m = 0; m < st->nmembers; m++) {
                fputs(m ? ", " : "", f);
                out_json_str(f, g->op[st->members[m]].name);
            }
            fputs("]}", f);
        }
        fputs("],\n   \"queues\": [", f);
        for (int q = 0; q < p->nqueues; q++) {
            const ks_queue *u = &p->queues[q];
            fputs(q ? ",\n    " : "\n    ", f);
            fputs("{\"tensor\": ", f);
            out_json_str(f, g->t[u->tensor].name);
            fprintf(f, ", \"producer_stage\": %d, \"consumers\": %d, \"payload_bytes\": %lld, "
                       "\"depth\": %d, \"transfers_per_tile\": %d, \"storage_bytes\": %lld, "
                       "\"in\": \"%s\", \"spill_frac\": ",
                    u->producer_stage, u->nconsumers, (long long)u->payload_bytes, u->depth,
                    u->transfers_per_tile, (long long)u->storage_bytes, u->spilled ? "spilled" : "l2");
            out_json_num(f, u->spill_frac);
            out_json_knum(f, "eff_bandwidth_GBps", u->eff_bandwidth_GBps);
            fputs("}", f);
        }
        fputs("]}", f);
    }
    fputs("]}\n", f);
}

static void csv(FILE *f, const ks_plan *pl, const wl_graph *g, const hw_gpu *hw, int training)
{
    fputs("workload,hw,mode,pipeline,stage,op,unit,ctas,rate_tiles_per_s,body_s,limit,"
          "pipeline_tiles,pipeline_throughput_tiles_per_s,bottleneck,pipeline_time_s,ilp_status,"
          "ilp_gap_frac,ilp_fallback\n",
          f);
    for (int i = 0; i < pl->npipelines; i++) {
        const ks_pipeline *p = &pl->p[i];
        for (int s = 0; s < p->nstages; s++) {
            const ks_stage *st = &p->stages[s];
            fprintf(f, "%s,%s,%s,%d,%d,%s,%s,%d,%.9g,%.9g,%s,%lld,%.9g,%s,%.9g,%s,%.9g,%d\n", g->name,
                    hw->name, cli_mode_name(training), i, s, g->op[st->op].name,
                    unit_name(st->tensor), st->ctas, st->rate_tiles_per_s, st->body_s, st->limit,
                    (long long)p->tiles, p->throughput_tiles_per_s, p->bottleneck, p->time_s,
                    p->ilp_status_name, p->ilp_gap, p->ilp_fallback);
        }
    }
}

static int run(cli_ctx *x)
{
    cli_common *c = &x->c;
    c->opts.exec_mask = EXEC_KITSUNE;
    kt_run_result rr;
    if (cli_run_workload(x, &rr))
        return -1;
    const kt_result *r = rr.by[EX_KITSUNE];
    if (!r || !r->extra)
        return cli_error(x, KT_EINTERNAL, NULL, "no kitsune result");
    const ks_plan *pl = r->extra;
    FILE *f = cli_output(x);
    if (!f)
        return -1;
    if (c->format == FMT_JSON) {
        out_json_head(f, KT_VERSION, &x->hw, rr.g, c->opts.training);
        json(f, r, pl, rr.g);
    } else if (c->format == FMT_CSV) {
        csv(f, pl, rr.g, &x->hw, c->opts.training);
    } else {
        fprintf(f, "%s on %s, %s:\n", rr.g->name, x->hw.name, cli_mode_name(c->opts.training));
        table(f, r, pl, rr.g);
    }
    return 0;
}

const cli_command cmd_map = {"map", "kitsune pipelines: stages, CTAs per stage, queues, ILP status",
                             HELP, O_MODEL | O_FORMAT | O_OUT, CMD_HW | CMD_OUT, run};
