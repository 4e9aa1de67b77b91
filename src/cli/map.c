/* map: Kitsune pipelines of a workload - stages, CTAs per stage, queues, ILP status. */
#include <stdio.h>
#include <string.h>

#include "../io/csv.h"
#include "../io/out.h"
#include "../model/exec/kitsune.h"
#include "../model/run.h"
#include "cli.h"
#include "cmds.h"

static const char *const HELP =
    "usage: kitsune map --hw HW --workload WL [options]\n"
    "\n"
    "The spatial pipelines Kitsune execution selects for a workload: per pipeline its tiles, period,\n"
    "fill and traffic per tile; per stage its CTAs, work split (row, column, row x column groups or\n"
    "reduction), seconds per tile (compute, L2 port, queue sync) and what limits it, where its\n"
    "broadcast operand (weights) lives; the ring queues (tile, payload, storage, spill), the\n"
    "mapper's status, time, bound and gap, and how far the paper's pattern selection is from the\n"
    "model-driven search (end-to-end times before the board's power limit; the pipelines are then\n"
    "checked against none under it). Selected segments that no allocation of SMs can run are\n"
    "listed as \"not a pipeline\", with why. A Linear -> elementwise -> Linear chain whose weights\n"
    "exceed all shared memory may stream its hidden dimension instead of rows (\"hidden-dimension\n"
    "streaming\": tiles of rows x hidden columns, the row block its partial sums allow).\n"
    "\n"
    "  --mode inference|training        (default inference)\n"
    "  --select search|patterns         subgraph selection (default search)\n"
    "  --scheduler hetero|shared        SM pools: one Tensor and one SIMT CTA per SM (default), or\n"
    "                                   one pool for all stages (ablation without the paper's change)\n"
    "  --rest vf|bsp                    how ops outside pipelines run (default vf)\n"
    "  --set NAME=VALUE  --optimizer none|sgd|adam  --vf inductor|paper|rules  --vf-backward\n"
    "  --launch graph|plain\n"
    "\n"
    "Imposing a pipeline (instead of the selection; the other ops run as --rest):\n"
    "  --ops FIRST..LAST                ops FIRST..LAST as one pipeline, the model's own stages\n"
    "  --stages A+B,C,D+E               the stages, in order, each a '+'-list of op names\n"
    "  --alloc N1-N2-...                CTAs per stage (default: the mapper's allocation)\n"
    "  --tile ROWS                      rows per tile (default: the model's choice)\n"
    "  --ctas-per-sm K                  a stage_body runtime's CTAs per SM (default: the hw's)\n"
    "  --stage-cta-tile-us T1,T2,...    a stage_body runtime's measured stage times (a profile):\n"
    "                                   per stage, one CTA's busy microseconds for one tile at\n"
    "                                   this --tile and --ctas-per-sm, in place of the modelled\n"
    "                                   stage body; with --stages and --tile, and without --alloc\n"
    "                                   the mapper allocates CTAs from them\n"
    "\n"
    "  --why                            also list every candidate subgraph (paper patterns, the\n"
    "                                   search's segments, the longest pipelinable runs): its time\n"
    "                                   as a pipeline, the rest's time for the same ops, and why it\n"
    "                                   was or was not pipelined\n"
    "  --dtype DT                       every floating-point tensor in DT (as for predict)\n"
    "  --format table|json|csv          output format (default table)\n"
    "  -o FILE                          write to FILE (atomically) instead of stdout\n"
    "\n"
    "examples: kitsune map --hw a100 --workload dlrm --select patterns --format json\n"
    "          kitsune map --hw h200-ktpipe --workload mgn --tile 128 --alloc 40-29-18-15-30 \\\n"
    "            --stages gather_src+gather_dst+edge_cat,edge_fc1+edge_relu1,edge_fc2+edge_relu2,\\\n"
    "edge_fc3,edge_ln+edge_res\n";

static const char *unit_name(int tensor)
{
    return tensor ? "tensor" : "simt";
}

static void table(FILE *f, const kt_result *r, const ks_plan *pl, const wl_graph *g,
                  const hw_gpu *hw)
{
    int body = hw_has_stage_body(hw);
    int imposed = !strcmp(pl->select, "imposed");
    fprintf(f, "kitsune: %.2f us, %d pipelines; select %s (used: %s); rest as %s%s; scheduler %s\n",
            r->time_s * 1e6, pl->npipelines, pl->select, pl->chosen, pl->rest,
            pl->rest_fallback ? " (vf unavailable)" : "",
            body ? "one kernel (stage_body)" : pl->scheduler_shared ? "shared" : "hetero");
    if (imposed)
        fprintf(f, "end-to-end: with the imposed pipeline %.2f us, no pipelines %.2f us\n",
                r->time_s * 1e6, pl->none_time_s * 1e6);
    else
        fprintf(f, "end-to-end: search %.2f us, patterns %.2f us (%+.1f%% vs search), no pipelines "
                   "%.2f us\n",
                pl->search_time_s * 1e6, pl->patterns_time_s * 1e6,
                pl->search_time_s > 0 ? 100 * (pl->patterns_time_s / pl->search_time_s - 1) : 0,
                pl->none_time_s * 1e6);
    if (body)
        fprintf(f, "stage bodies (hw stage_body): one tile at a time per CTA, %d CTAs per SM; hand-off "
                   "%.0f ns + poll %.0f ns, loads %.1f GB/s (GEMM operands %.1f), gathers %.1f GB/s, "
                   "stores %.1f GB/s, tensor %.0f GFLOP/s, SIMT %.0f GFLOP/s per SM\n",
                hw->body_ctas_per_sm, hw->body_handoff_ns, hw->body_poll_ns, hw->body_load_GBps,
                hw->body_operand_GBps,
                hw->body_gather_GBps, hw->body_store_GBps, hw->body_tensor_GFLOPps,
                hw->body_simt_GFLOPps);
    if (body && pl->measured_stage_times)
        fputs("stage times measured (--stage-cta-tile-us): they replace the modelled hand-offs, "
              "loads, math and stores; the poll is added\n", f);
    for (int i = 0; i < pl->nrejected; i++) {
        const ks_rejected *j = &pl->rejected[i];
        fprintf(f, "not a pipeline: ops %s..%s (%d ops): no SM allocation fits (%s); they run as %s\n",
                g->op[j->first_op].name, g->op[j->last_op].name, j->last_op - j->first_op + 1,
                j->why, pl->rest);
    }
    for (int i = 0; i < pl->npipelines; i++) {
        const ks_pipeline *p = &pl->p[i];
        if (p->hidden_cols > 0)
            fprintf(f, "\npipe%d: ops %s..%s (%d ops), hidden-dimension streaming: %lld tiles of %lld "
                       "rows x %lld hidden columns (rows %lld, hidden %lld), row blocks of %lld rows, "
                       "partial sums %s\n",
                    i, g->op[p->first_op].name, g->op[p->last_op].name, p->last_op - p->first_op + 1,
                    (long long)p->tiles, (long long)p->tile_rows, (long long)p->hidden_cols,
                    (long long)p->stream_rows, (long long)p->hidden_dim,
                    (long long)p->row_block_rows, p->hidden_acc_in_l2 ? "in L2" : "on chip");
        else
            fprintf(f, "\npipe%d: ops %s..%s (%d ops), %lld tiles of %lld rows (stream rows %lld)%s\n", i,
                    g->op[p->first_op].name, g->op[p->last_op].name, p->last_op - p->first_op + 1,
                    (long long)p->tiles, (long long)p->tile_rows, (long long)p->stream_rows,
                    p->barriers ? ", barriers" : "");
        fprintf(f, "  time %.2f us (fill %.2f us, setup %.2f us, period %.4g us), bottleneck %s; "
                   "dram rd %.3f MB wr %.3f MB (",
                p->time_s * 1e6, p->fill_s * 1e6, p->setup_s * 1e6, p->period_s * 1e6, p->bottleneck,
                (double)p->dram_read_bytes / 1e6, (double)p->dram_write_bytes / 1e6);
        if (p->gather_dram_bytes > 0)
            fprintf(f, "gathered rows %.3f MB, ", (double)p->gather_dram_bytes / 1e6);
        fprintf(f, "weights re-read %.3f MB, spilled %.3f MB)\n",
                (double)p->weight_reread_bytes / 1e6, (double)p->spilled_bytes / 1e6);
        if (hw->queue_rings_pinned)
            fprintf(f, "  per tile: l2 %.1f KiB, dram %.1f KiB; queue rings %.1f MiB of %.1f MiB "
                       "persisting L2; mapping %s",
                    p->l2_bytes_per_tile / 1024, p->dram_bytes_per_tile / 1024,
                    (double)p->queue_storage_bytes / 1048576.0,
                    (double)p->queue_budget_bytes / 1048576.0, p->ilp_status_name);
        else
            fprintf(f, "  per tile: l2 %.1f KiB, dram %.1f KiB; queue rings %.1f MiB, not pinned "
                       "(L2 evicts them as l2.ring_reuse measures); mapping %s",
                    p->l2_bytes_per_tile / 1024, p->dram_bytes_per_tile / 1024,
                    (double)p->queue_storage_bytes / 1048576.0, p->ilp_status_name);
        if (!strcmp(p->ilp_status_name, "imposed"))
            fputs(" (the allocation given)\n", f);
        else
            fprintf(f, ", time %.2f us, bound %.2f us, gap %.2f%%\n", p->ilp_objective_s * 1e6,
                    p->ilp_bound_s * 1e6, 100 * p->ilp_gap);
        fprintf(f, "  %-5s %-24s %-6s %5s %-12s %10s %10s %10s %10s ", "stage", "op", "unit", "ctas",
                "split", "period_us", "compute_us", "port_us", "sync_us");
        if (body)
            fprintf(f, "%12s ", "cta_tile_us");
        fprintf(f, "%5s %-10s  %s\n", "busy", "limit", "members");
        for (int s = 0; s < p->nstages; s++) {
            const ks_stage *st = &p->stages[s];
            char split[40];
            if (st->split == KS_SPLIT_2D)
                snprintf(split, sizeof split, "%dx%d", st->groups, st->ctas / st->groups);
            else
                snprintf(split, sizeof split, "%s", ks_split_name(st->split));
            /* busy: the share of the pipeline's period this stage's CTAs work (compute; with a
             * stage_body, the body) */
            fprintf(f, "  %-5d %-24.24s %-6s %5d %-12s %10.4g %10.4g %10.4g %10.4g ", s,
                    g->op[st->op].name, unit_name(st->tensor), st->ctas, split, st->period_s * 1e6,
                    st->compute_s * 1e6, st->port_s * 1e6, st->queue_s * 1e6);
            if (body)
                fprintf(f, "%12.4g ", st->body_cta_tile_s * 1e6);
            double work = body ? st->body_s : st->compute_s;
            fprintf(f, "%4.0f%% %-10s  ", p->period_s > 0 ? 100 * work / p->period_s : 0,
                    ks_limit_name(st->limit));
            for (int m = 0; m < st->nmembers; m++)
                fprintf(f, "%s%s", m ? "+" : "", g->op[st->members[m]].name);
            if (st->bcast_bytes > 0)
                fprintf(f, " [broadcast %.1f KiB %s]", st->bcast_bytes / 1024,
                        st->bcast_resident ? "resident in smem"
                        : st->bcast_in_l2  ? "re-read from L2"
                                           : "re-read from DRAM");
            if (st->split == KS_SPLIT_REDUCE)
                fprintf(f, " [accumulators %.1f KiB/CTA%s]", st->acc_bytes_per_cta / 1024,
                        st->acc_spills ? ", spilled" : "");
            fprintf(f, "%s\n", s == p->bottleneck_stage ? " <- bottleneck" : "");
        }
        if (p->nqueues) {
            fprintf(f, "  %-5s %-24s %7s %12s %12s %5s %12s %10s %s\n", "queue", "tensor", "stages",
                    "tile_KiB", "payload_KiB", "depth", "storage_KiB", "eff_GBps",
                    hw->queue_rings_pinned ? "spill" : "written/read back");
            for (int q = 0; q < p->nqueues; q++) {
                const ks_queue *u = &p->queues[q];
                char st[32];
                snprintf(st, sizeof st, "%d->%d", u->producer_stage, u->nconsumers);
                fprintf(f, "  %-5d %-24.24s %7s %12.1f %12.1f %5d %12.1f %10.2f ", q,
                        g->t[u->tensor].name, st, (double)u->tile_bytes / 1024,
                        (double)u->payload_bytes / 1024, u->depth, (double)u->storage_bytes / 1024,
                        u->eff_bandwidth_GBps);
                if (hw->queue_rings_pinned)
                    fprintf(f, "%.0f%%", 100 * u->spill_frac);
                else
                    fprintf(f, "%.0f%%/%.0f%%", 100 * u->written_back_frac,
                            100 * u->read_back_frac);
                fprintf(f, "%s\n", u->nconsumers > 1 ? " (multicast)" : "");
            }
        }
    }
}

static void why_table(FILE *f, const ks_plan *pl, const wl_graph *g)
{
    fprintf(f, "\ncandidates (%d): time as a pipeline vs the rest's time for the same ops\n",
            pl->ncands);
    fprintf(f, "  %-24s %-24s %4s %-11s %6s %12s %12s  %s\n", "first_op", "last_op", "ops",
            "source", "stages", "pipeline_us", "rest_us", "verdict");
    for (int i = 0; i < pl->ncands; i++) {
        const ks_candidate *c = &pl->cands[i];
        char pt[32];
        if (c->pipeline_s >= 0)
            snprintf(pt, sizeof pt, "%.2f", c->pipeline_s * 1e6);
        else
            snprintf(pt, sizeof pt, "-");
        fprintf(f, "  %-24.24s %-24.24s %4d %-11s %6d %12s %12.2f  %s\n", g->op[c->first].name,
                g->op[c->last].name, c->last - c->first + 1, c->source, c->nstages, pt,
                c->rest_s * 1e6, c->reason);
    }
}

static void why_json(FILE *f, const ks_plan *pl, const wl_graph *g)
{
    fputs(",\n \"candidates\": [", f);
    for (int i = 0; i < pl->ncands; i++) {
        const ks_candidate *c = &pl->cands[i];
        fputs(i ? ",\n  " : "\n  ", f);
        fputs("{\"first_op\": ", f);
        out_json_str(f, g->op[c->first].name);
        out_json_kstr(f, "last_op", g->op[c->last].name);
        fprintf(f, ", \"ops\": %d", c->last - c->first + 1);
        out_json_kstr(f, "source", c->source);
        fprintf(f, ", \"stages\": %d, \"pipelined\": %s, \"pipeline\": %d, \"pipeline_time_s\": ",
                c->nstages, c->pipelined ? "true" : "false", c->pipeline);
        if (c->pipeline_s >= 0)
            out_json_num(f, c->pipeline_s);
        else
            fputs("null", f);
        out_json_knum(f, "rest_time_s", c->rest_s);
        out_json_kstr(f, "reason", c->reason);
        fputs("}", f);
    }
    fputs("]", f);
}

static void json(FILE *f, const kt_result *r, const ks_plan *pl, const wl_graph *g)
{
    fputs(",\n \"kitsune\": {\"time_s\": ", f);
    out_json_num(f, r->time_s);
    fprintf(f, ", \"dram_read_bytes\": %lld, \"dram_write_bytes\": %lld, \"ops_total\": %d, "
               "\"ops_covered\": %d, \"select\": \"%s\", \"chosen\": \"%s\", \"rest\": \"%s\", "
               "\"rest_fallback\": %s, \"scheduler\": \"%s\", \"stage_times\": \"%s\", "
               "\"search_time_s\": ",
            (long long)r->dram_read_bytes, (long long)r->dram_write_bytes, r->ops_total,
            r->ops_covered, pl->select, pl->chosen, pl->rest, pl->rest_fallback ? "true" : "false",
            pl->scheduler_shared ? "shared" : "hetero", pl->measured_stage_times ? "measured" : "model");
    out_json_num(f, pl->search_time_s);
    out_json_knum(f, "patterns_time_s", pl->patterns_time_s);
    out_json_knum(f, "no_pipelines_time_s", pl->none_time_s);
    if (pl->nrejected) {
        fputs(", \"rejected\": [", f);
        for (int i = 0; i < pl->nrejected; i++) {
            fputs(i ? ", {\"first_op\": " : "{\"first_op\": ", f);
            out_json_str(f, g->op[pl->rejected[i].first_op].name);
            out_json_kstr(f, "last_op", g->op[pl->rejected[i].last_op].name);
            out_json_kstr(f, "reason", pl->rejected[i].why);
            fputs("}", f);
        }
        fputs("]", f);
    }
    fputs("},\n \"pipelines\": [", f);
    for (int i = 0; i < pl->npipelines; i++) {
        const ks_pipeline *p = &pl->p[i];
        fputs(i ? ",\n  " : "\n  ", f);
        fputs("{\"first_op\": ", f);
        out_json_str(f, g->op[p->first_op].name);
        out_json_kstr(f, "last_op", g->op[p->last_op].name);
        fprintf(f, ", \"ops\": %d, \"stream_rows\": %lld, \"tile_rows\": %lld, \"tiles\": %lld, "
                   "\"barriers\": %d, \"time_s\": ",
                p->last_op - p->first_op + 1, (long long)p->stream_rows, (long long)p->tile_rows,
                (long long)p->tiles, p->barriers);
        out_json_num(f, p->time_s);
        if (p->hidden_cols > 0) /* hidden-dimension streaming only */
            fprintf(f, ", \"hidden_cols\": %lld, \"hidden_dim\": %lld, \"row_block_rows\": %lld, "
                       "\"partial_sums\": \"%s\"",
                    (long long)p->hidden_cols, (long long)p->hidden_dim, (long long)p->row_block_rows,
                    p->hidden_acc_in_l2 ? "l2" : "chip");
        out_json_knum(f, "fill_s", p->fill_s);
        out_json_knum(f, "setup_s", p->setup_s);
        out_json_knum(f, "period_s", p->period_s);
        out_json_knum(f, "throughput_tiles_per_s", p->throughput_tiles_per_s);
        out_json_knum(f, "l2_bytes_per_tile", p->l2_bytes_per_tile);
        out_json_knum(f, "dram_bytes_per_tile", p->dram_bytes_per_tile);
        out_json_kstr(f, "bottleneck", p->bottleneck);
        fprintf(f, ", \"dram_read_bytes\": %lld, \"dram_write_bytes\": %lld, \"l2_bytes\": %lld, "
                   "\"queue_storage_bytes\": %lld, \"queue_budget_bytes\": %lld, "
                   "\"spilled_bytes\": %lld, \"weight_bytes\": %lld, \"weight_reread_bytes\": %lld, "
                   "\"gather_dram_bytes\": %lld",
                (long long)p->dram_read_bytes, (long long)p->dram_write_bytes,
                (long long)p->l2_bytes, (long long)p->queue_storage_bytes,
                (long long)p->queue_budget_bytes, (long long)p->spilled_bytes,
                (long long)p->weight_bytes, (long long)p->weight_reread_bytes,
                (long long)p->gather_dram_bytes);
        fputs(",\n   \"mapping\": {\"status\": ", f);
        out_json_str(f, p->ilp_status_name);
        fprintf(f, ", \"fallback\": %s, \"time_s\": ", p->ilp_fallback ? "true" : "false");
        out_json_num(f, p->ilp_objective_s);
        out_json_knum(f, "bound_s", p->ilp_bound_s);
        out_json_knum(f, "gap_frac", p->ilp_gap);
        fputs("},\n   \"stages\": [", f);
        for (int s = 0; s < p->nstages; s++) {
            const ks_stage *st = &p->stages[s];
            fputs(s ? ",\n    " : "\n    ", f);
            fputs("{\"op\": ", f);
            out_json_str(f, g->op[st->op].name);
            fprintf(f, ", \"unit\": \"%s\", \"ctas\": %d, \"groups\": %d, \"split\": \"%s\", \"period_s\": ",
                    unit_name(st->tensor), st->ctas, st->groups, ks_split_name(st->split));
            out_json_num(f, st->period_s);
            out_json_knum(f, "compute_s", st->compute_s);
            out_json_knum(f, "port_s", st->port_s);
            out_json_knum(f, "queue_sync_s", st->queue_s);
            out_json_knum(f, "body_s", st->body_s);
            out_json_knum(f, "body_cta_tile_s", st->body_cta_tile_s);
            fputs(", \"body_work_per_tile\": {\"handoffs\": ", f);
            out_json_num(f, st->body_handoffs);
            out_json_knum(f, "load_bytes", st->body_load_bytes);
            out_json_knum(f, "gather_bytes", st->body_gather_bytes);
            out_json_knum(f, "store_bytes", st->body_store_bytes);
            out_json_knum(f, "tensor_flops", st->body_tensor_flops);
            out_json_knum(f, "simt_flops", st->body_simt_flops);
            fputs("}", f);
            out_json_knum(f, "fill_s", st->fill_s);
            out_json_knum(f, "l2_bytes_per_tile", st->l2_bytes_per_tile);
            out_json_knum(f, "dram_bytes_per_tile", st->dram_bytes_per_tile);
            out_json_knum(f, "broadcast_bytes", st->bcast_bytes);
            fprintf(f, ", \"broadcast\": \"%s\", \"limit\": \"%s\"",
                    st->bcast_bytes <= 0    ? "none"
                    : st->bcast_resident ? "smem"
                    : st->bcast_in_l2    ? "l2"
                                         : "dram",
                    ks_limit_name(st->limit));
            if (st->split == KS_SPLIT_REDUCE) {
                out_json_knum(f, "accumulator_bytes_per_cta", st->acc_bytes_per_cta);
                fprintf(f, ", \"accumulators_spill\": %s", st->acc_spills ? "true" : "false");
            }
            fputs(", \"members\": [", f);
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
            fprintf(f, ", \"producer_stage\": %d, \"consumers\": %d, \"tile_bytes\": %lld, "
                       "\"payload_bytes\": %lld, \"depth\": %d, \"storage_bytes\": %lld, \"spill_frac\": ",
                    u->producer_stage, u->nconsumers, (long long)u->tile_bytes,
                    (long long)u->payload_bytes, u->depth, (long long)u->storage_bytes);
            out_json_num(f, u->spill_frac);
            out_json_knum(f, "written_back_frac", u->written_back_frac);
            out_json_knum(f, "read_back_frac", u->read_back_frac);
            out_json_knum(f, "eff_bandwidth_GBps", u->eff_bandwidth_GBps);
            fputs("}", f);
        }
        fputs("]}", f);
    }
    fputs("]", f);
    if (pl->cands)
        why_json(f, pl, g);
}

static void csv(FILE *f, const ks_plan *pl, const wl_graph *g, const hw_gpu *hw, int training)
{
    fputs("workload,hw,mode,pipeline,stage,op,unit,ctas,groups,split,period_s,compute_s,limit,"
          "pipeline_tiles,pipeline_tile_rows,pipeline_period_s,bottleneck,pipeline_time_s,mapping,"
          "mapping_gap_frac,mapping_fallback\n",
          f);
    for (int i = 0; i < pl->npipelines; i++) {
        const ks_pipeline *p = &pl->p[i];
        for (int s = 0; s < p->nstages; s++) {
            const ks_stage *st = &p->stages[s];
            csv_field(f, g->name);
            fputc(',', f);
            csv_field(f, hw->name);
            fprintf(f, ",%s,%d,%d,", cli_mode_name(training), i, s);
            csv_field(f, g->op[st->op].name);
            fprintf(f, ",%s,%d,%d,%s,%.9g,%.9g,%s,%lld,%lld,%.9g,", unit_name(st->tensor), st->ctas,
                    st->groups, ks_split_name(st->split), st->period_s, st->compute_s,
                    ks_limit_name(st->limit), (long long)p->tiles, (long long)p->tile_rows,
                    p->period_s);
            csv_field(f, p->bottleneck);
            fprintf(f, ",%.9g,%s,%.9g,%d\n", p->time_s, p->ilp_status_name, p->ilp_gap,
                    p->ilp_fallback);
        }
    }
}

static int run(cli_ctx *x)
{
    cli_common *c = &x->c;
    c->opts.exec_mask = EXEC_KITSUNE;
    if (cli_applicable(x))
        return -1;
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
        cli_json_memory(f, &x->mem, &x->hw);
        json(f, r, pl, rr.g);
        cli_json_warnings(f, x);
        fputs("}\n", f);
    } else if (c->format == FMT_CSV) {
        csv(f, pl, rr.g, &x->hw, c->opts.training);
    } else {
        fprintf(f, "%s on %s, %s:\n", rr.g->name, x->hw.name, cli_mode_name(c->opts.training));
        table(f, r, pl, rr.g, &x->hw);
        if (pl->cands)
            why_table(f, pl, rr.g);
    }
    return 0;
}

const cli_command cmd_map = {"map", "kitsune pipelines: stages, CTAs per stage, queues, ILP status",
                             HELP,
                             (O_MODEL & ~O_POWER) | O_FORMAT | O_OUT | O_WHY | O_OPS | O_STAGES | O_ALLOC |
                                 O_TILE | O_CPS | O_STIME,
                             CMD_HW | CMD_OUT, run, 0};
