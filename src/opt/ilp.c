/* ilp: stage-to-SM mapping by ILP (GLPK); the only file that includes glpk.h.
 *
 * Variables: x[i][c] binary (stage i gets cand_ctas[c] CTAs), T >= 0 continuous.
 *   max T
 *   sum_c x[i][c] = 1                                     one allocation per stage
 *   T - sum_c rate_i(c) x[i][c] <= 0                      stage throughput (wave effects inside)
 *   sum_{i tensor} sum_c a_c x[i][c] <= #SMs              Tensor pool
 *   sum_{i simt}   sum_c a_c x[i][c] <= #SMs              SIMT pool (one of each kind per SM:
 *                                                          the paper's heterogeneity-aware
 *                                                          scheduler; one pool with shared_pool)
 *   sum_i sum_c a_c smem_i x[i][c] <= #SMs * smem/SM      co-resident shared memory
 *   sum_i sum_c a_c regs_i x[i][c] <= #SMs * regs/SM      co-resident registers
 *   sum_i sum_c a_c qbytes_i x[i][c] <= queue budget      queues stay in L2
 *   T <= rate_cap                                         DRAM and L2 bandwidth per tile
 * (Kitsune paper section 5, load-balancing ILP; binary choices because rates are not linear in
 * the CTA count.) */
#include "ilp.h"

#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* Relative tolerance for capacity checks of the greedy and ilp_eval (floating-point sums). */
#define ILP_CAP_TOL 1e-9

const char *ilp_status_name(int status)
{
    static const char *const N[] = {"optimal", "feasible", "greedy (time limit)",
                                    "greedy (solver failed)", "greedy (solver error)"};
    return status >= 0 && status <= ILP_GREEDY_ERROR ? N[status] : "unknown";
}

/* Capacity use of an allocation: pools, smem, regs, queue bytes; 1 if within every limit. */
static int fits(const ilp_problem *p, const int *choice)
{
    double pool[2] = {0, 0}, smem = 0, regs = 0, qb = 0;
    for (int i = 0; i < p->nstages; i++) {
        const ilp_stage *s = &p->st[i];
        double a = s->cand_ctas[choice[i]];
        pool[p->shared_pool ? 0 : s->tensor] += a;
        smem += a * s->smem_per_cta_bytes;
        regs += a * s->regs_per_cta_bytes;
        qb += a * s->queue_bytes_per_cta;
    }
    double S = p->sm_count * (1 + ILP_CAP_TOL);
    if (pool[0] > S || pool[1] > S)
        return 0;
    if (smem > p->sm_count * p->smem_per_sm_bytes * (1 + ILP_CAP_TOL) + 1e-6)
        return 0;
    if (regs > p->sm_count * p->regs_per_sm_bytes * (1 + ILP_CAP_TOL) + 1e-6)
        return 0;
    if (p->queue_budget_bytes >= 0 && qb > p->queue_budget_bytes * (1 + ILP_CAP_TOL) + 1e-6)
        return 0;
    return 1;
}

double ilp_eval(const ilp_problem *p, const int *choice)
{
    if (!fits(p, choice))
        return -1;
    double t = p->rate_cap > 0 ? p->rate_cap : INFINITY;
    for (int i = 0; i < p->nstages; i++) {
        double r = p->st[i].cand_rate[choice[i]];
        if (r < t)
            t = r;
    }
    return isfinite(t) ? t : 0;
}

double ilp_greedy(const ilp_problem *p, int *choice)
{
    for (int i = 0; i < p->nstages; i++)
        choice[i] = 0;
    if (!fits(p, choice))
        return -1;
    /* stages that cannot grow further are frozen; stop when the slowest is frozen */
    for (;;) {
        int slow = -1;
        for (int i = 0; i < p->nstages; i++)
            if (slow < 0 || p->st[i].cand_rate[choice[i]] < p->st[slow].cand_rate[choice[slow]])
                slow = i;
        if (slow < 0 || choice[slow] + 1 >= p->st[slow].ncand)
            break;
        if (p->rate_cap > 0 && p->st[slow].cand_rate[choice[slow]] >= p->rate_cap)
            break;
        choice[slow]++;
        if (!fits(p, choice)) {
            choice[slow]--;
            break;
        }
    }
    return ilp_eval(p, choice);
}

typedef struct glpk_guard {
    jmp_buf jb;
} glpk_guard;

/* GLPK's error hook: GLPK must not return into its own code after an error; free its
 * environment and jump back to ilp_solve (GLPK reference manual, glp_error_hook). */
static void on_glpk_error(void *info)
{
    glpk_guard *g = info;
    glp_free_env();
    longjmp(g->jb, 1);
}

static int fallback(const ilp_problem *p, ilp_solution *sol, int status)
{
    double t = ilp_greedy(p, sol->choice);
    sol->status = status;
    sol->fallback = 1;
    sol->objective = t;
    if (!(sol->bound >= t))
        sol->bound = t;
    sol->gap = sol->bound > 0 && t >= 0 ? (sol->bound - t) / sol->bound : 0;
    if (t < 0) {
        for (int i = 0; i < p->nstages; i++)
            sol->choice[i] = 0;
        return -1;
    }
    return 0;
}

/* Build the model in lp; returns the column of T (columns 1..nx are the x[i][c]). */
static int build(glp_prob *lp, const ilp_problem *p, int *ind, double *val, double scale)
{
    int nx = 0;
    for (int i = 0; i < p->nstages; i++)
        nx += p->st[i].ncand;
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_cols(lp, nx + 1);
    int col = 1;
    for (int i = 0; i < p->nstages; i++)
        for (int c = 0; c < p->st[i].ncand; c++, col++) {
            glp_set_col_kind(lp, col, GLP_BV);
        }
    int tcol = nx + 1;
    if (p->rate_cap > 0)
        glp_set_col_bnds(lp, tcol, GLP_DB, 0.0, p->rate_cap / scale);
    else
        glp_set_col_bnds(lp, tcol, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, tcol, 1.0);

    /* per stage: choice and rate rows */
    col = 1;
    for (int i = 0; i < p->nstages; i++) {
        const ilp_stage *s = &p->st[i];
        int r = glp_add_rows(lp, 2);
        for (int c = 0; c < s->ncand; c++) {
            ind[c + 1] = col + c;
            val[c + 1] = 1.0;
        }
        glp_set_mat_row(lp, r, s->ncand, ind, val);
        glp_set_row_bnds(lp, r, GLP_FX, 1.0, 1.0);
        for (int c = 0; c < s->ncand; c++) {
            ind[c + 1] = col + c;
            val[c + 1] = -s->cand_rate[c] / scale;
        }
        ind[s->ncand + 1] = tcol;
        val[s->ncand + 1] = 1.0;
        glp_set_mat_row(lp, r + 1, s->ncand + 1, ind, val);
        glp_set_row_bnds(lp, r + 1, GLP_UP, 0.0, 0.0);
        col += s->ncand;
    }
    /* capacity rows: 0 tensor pool, 1 simt pool, 2 smem, 3 regs, 4 queue bytes */
    for (int k = 0; k < 5; k++) {
        if (k == 1 && p->shared_pool)
            continue;
        if (k == 4 && p->queue_budget_bytes < 0)
            continue;
        int n = 0;
        double cap = k <= 1 ? p->sm_count
                   : k == 2 ? p->sm_count * p->smem_per_sm_bytes
                   : k == 3 ? p->sm_count * p->regs_per_sm_bytes
                            : p->queue_budget_bytes;
        if (!(cap > 0))
            cap = 1; /* zero capacity: any positive use violates it either way */
        col = 1;
        for (int i = 0; i < p->nstages; i++) {
            const ilp_stage *s = &p->st[i];
            int in_row = k >= 2 || p->shared_pool || (k == 0 ? s->tensor : !s->tensor);
            double per = k == 2 ? s->smem_per_cta_bytes
                       : k == 3 ? s->regs_per_cta_bytes
                       : k == 4 ? s->queue_bytes_per_cta
                                : 1.0;
            for (int c = 0; c < s->ncand; c++, col++)
                if (in_row && per > 0) {
                    n++;
                    ind[n] = col;
                    val[n] = per * s->cand_ctas[c] / cap;
                }
        }
        if (!n)
            continue;
        int r = glp_add_rows(lp, 1);
        glp_set_mat_row(lp, r, n, ind, val);
        glp_set_row_bnds(lp, r, GLP_UP, 0.0, 1.0);
    }
    return tcol;
}

static int solve_glpk(const ilp_problem *p, ilp_solution *sol)
{
    sol->status = ILP_GREEDY_FAILED;
    sol->fallback = 0;
    sol->objective = sol->bound = sol->gap = 0;
    int nx = 0;
    for (int i = 0; i < p->nstages; i++) {
        nx += p->st[i].ncand;
        sol->choice[i] = 0;
        if (p->st[i].ncand < 1)
            return fallback(p, sol, ILP_GREEDY_FAILED);
    }
    /* validate before GLPK sees it: finite, non-negative rates and capacities */
    for (int i = 0; i < p->nstages; i++)
        for (int c = 0; c < p->st[i].ncand; c++)
            if (!isfinite(p->st[i].cand_rate[c]) || p->st[i].cand_rate[c] < 0 ||
                p->st[i].cand_ctas[c] < 1)
                return fallback(p, sol, ILP_GREEDY_FAILED);
    if (p->nstages < 1 || p->sm_count < 1 || !isfinite(p->rate_cap))
        return fallback(p, sol, ILP_GREEDY_FAILED);
    /* an allocation that does not fit at the smallest candidates has no feasible point */
    int *zero = calloc((size_t)p->nstages, sizeof *zero);
    int *ind = calloc((size_t)nx + 2, sizeof *ind);
    double *val = calloc((size_t)nx + 2, sizeof *val);
    if (!zero || !ind || !val) {
        free(zero);
        free(ind);
        free(val);
        return fallback(p, sol, ILP_GREEDY_FAILED);
    }
    int feasible0 = fits(p, zero);
    free(zero);
    if (!feasible0) {
        free(ind);
        free(val);
        return fallback(p, sol, ILP_GREEDY_FAILED);
    }

    glpk_guard guard;
    glp_prob *volatile lp = NULL;
    volatile int status = ILP_GREEDY_ERROR;
    volatile double obj = 0, bound = 0;
    glp_term_out(GLP_OFF);
    glp_error_hook(on_glpk_error, &guard);
    if (setjmp(guard.jb) == 0) {
        lp = glp_create_prob();
        /* rows are scaled to O(1): rates by the largest rate, capacities by their limit */
        double scale = p->rate_cap > 0 ? p->rate_cap : 0;
        for (int i = 0; i < p->nstages; i++)
            for (int c = 0; c < p->st[i].ncand; c++)
                if (p->st[i].cand_rate[c] > scale)
                    scale = p->st[i].cand_rate[c];
        if (!(scale > 0))
            scale = 1;
        int tcol = build(lp, p, ind, val, scale);
        glp_smcp sm;
        glp_init_smcp(&sm);
        sm.msg_lev = GLP_MSG_OFF;
        int rc = glp_simplex(lp, &sm);
        if (rc == 0 && glp_get_status(lp) == GLP_OPT) {
            bound = glp_get_obj_val(lp);
            glp_iocp io;
            glp_init_iocp(&io);
            io.msg_lev = GLP_MSG_OFF;
            io.presolve = GLP_OFF;
            double ms = p->time_limit_s * 1e3;
            io.tm_lim = ms >= 1 ? (ms < 1e9 ? (int)ms : 1000000000) : 1;
            rc = glp_intopt(lp, &io);
            int ms_status = glp_mip_status(lp);
            if ((rc == 0 || rc == GLP_ETMLIM || rc == GLP_EMIPGAP) &&
                (ms_status == GLP_OPT || ms_status == GLP_FEAS)) {
                status = (rc == 0 && ms_status == GLP_OPT) ? ILP_OPTIMAL : ILP_FEASIBLE;
                obj = glp_mip_col_val(lp, tcol);
                int col = 1;
                for (int i = 0; i < p->nstages; i++)
                    for (int c = 0; c < p->st[i].ncand; c++, col++)
                        if (glp_mip_col_val(lp, col) > 0.5)
                            sol->choice[i] = c;
            } else {
                status = rc == GLP_ETMLIM ? ILP_GREEDY_TIMEOUT : ILP_GREEDY_FAILED;
            }
        } else {
            status = ILP_GREEDY_FAILED;
        }
        glp_delete_prob(lp);
        lp = NULL;
    } else {
        lp = NULL; /* freed with the environment by the hook */
        status = ILP_GREEDY_ERROR;
    }
    glp_error_hook(NULL, NULL);
    free(ind);
    free(val);
    if (status >= ILP_GREEDY_TIMEOUT) {
        sol->bound = bound;
        return fallback(p, sol, status);
    }
    /* the reported objective is the allocation's exact throughput (no solver tolerance) */
    double t = ilp_eval(p, sol->choice);
    if (t < 0) {
        sol->bound = bound;
        return fallback(p, sol, ILP_GREEDY_FAILED);
    }
    (void)obj;
    sol->status = status;
    sol->objective = t;
    sol->bound = status == ILP_OPTIMAL ? t : (bound > t ? bound : t);
    sol->gap = sol->bound > 0 ? (sol->bound - t) / sol->bound : 0;
    return 0;
}

/* Exact candidate reduction before the solver (keeps the optimum, shrinks the search):
 * - T* >= T_greedy, so a candidate whose rate is below the greedy throughput can never be chosen;
 * - a candidate is dominated by a smaller allocation with at least the same rate (every resource
 *   grows with the CTA count), so rates along the kept candidates strictly increase;
 * - above T_ub = min(rate_cap, min over stages of the best rate) only the smallest candidate
 *   matters, since T can never exceed T_ub.
 * GLPK then solves the reduced problem; choices map back to the caller's candidate indices. */
int ilp_solve(const ilp_problem *p, ilp_solution *sol)
{
    int n = p->nstages, total = 0;
    for (int i = 0; i < n; i++) {
        if (p->st[i].ncand < 1 || !p->st[i].cand_ctas || !p->st[i].cand_rate)
            return solve_glpk(p, sol);
        total += p->st[i].ncand;
        for (int c = 0; c < p->st[i].ncand; c++)
            if (!isfinite(p->st[i].cand_rate[c]))
                return solve_glpk(p, sol); /* rejected there, with the greedy answer */
    }
    if (n < 1)
        return solve_glpk(p, sol);
    int *gchoice = calloc((size_t)n, sizeof *gchoice);
    int *map = calloc((size_t)total, sizeof *map);
    int *ctas = calloc((size_t)total, sizeof *ctas);
    double *rate = calloc((size_t)total, sizeof *rate);
    ilp_stage *st = calloc((size_t)n, sizeof *st);
    int rc;
    if (!gchoice || !map || !ctas || !rate || !st) {
        rc = solve_glpk(p, sol);
        goto out;
    }
    double tlb = ilp_greedy(p, gchoice);
    double tub = p->rate_cap > 0 ? p->rate_cap : INFINITY;
    for (int i = 0; i < n; i++) {
        double best = 0;
        for (int c = 0; c < p->st[i].ncand; c++)
            if (p->st[i].cand_rate[c] > best)
                best = p->st[i].cand_rate[c];
        if (best < tub)
            tub = best;
    }
    int off = 0;
    for (int i = 0; i < n; i++) {
        const ilp_stage *s = &p->st[i];
        st[i] = *s;
        st[i].cand_ctas = ctas + off;
        st[i].cand_rate = rate + off;
        int k = 0;
        double last = -1;
        for (int c = 0; c < s->ncand; c++) {
            double r = s->cand_rate[c];
            if ((tlb > 0 && r < tlb) || r <= last)
                continue;
            ctas[off + k] = s->cand_ctas[c];
            rate[off + k] = r;
            map[off + k] = c;
            k++;
            last = r;
            if (r >= tub)
                break;
        }
        if (k == 0) { /* nothing reaches the greedy rate: keep the solver's own view */
            rc = solve_glpk(p, sol);
            goto out;
        }
        st[i].ncand = k;
        off += k;
    }
    ilp_problem q = *p;
    q.st = st;
    rc = solve_glpk(&q, sol);
    if (!sol->fallback) {
        off = 0;
        for (int i = 0; i < n; i++) {
            sol->choice[i] = map[off + sol->choice[i]];
            off += st[i].ncand;
        }
    } else {
        /* the fallback ran on the reduced problem: redo it on the caller's candidates */
        double b = sol->bound;
        int status = sol->status;
        sol->bound = b;
        rc = fallback(p, sol, status);
    }
out:
    free(gchoice);
    free(map);
    free(ctas);
    free(rate);
    free(st);
    return rc;
}

void ilp_thread_release(void)
{
    glp_free_env();
}
