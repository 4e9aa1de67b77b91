/* ilp: stage-to-SM mapping - an exact search, and a MILP solved by a branch and bound over period
 * levels (GLPK beyond its node budget); the only file that includes glpk.h.
 *
 * A pipeline of N tiles takes fill + (N - 1) x P, where P, the period, is the slowest stage's
 * seconds per tile or one tile's L2 / DRAM bytes over their bandwidths. With x[i][c] binary
 * (stage i gets cand_ctas[c] CTAs) and P continuous:
 *   min (N - 1) P + sum_i sum_c fill_i(c) x[i][c]
 *   sum_c x[i][c] = 1                                        one allocation per stage
 *   P - sum_c period_i(c) x[i][c] >= 0                       every stage keeps up
 *   P - sum_i sum_c l2_i(c) / B_L2 x[i][c] >= l2_fixed / B_L2        L2 bandwidth
 *   P - sum_i sum_c dram_i(c) / B_DRAM x[i][c] >= dram_fixed / B_DRAM  DRAM bandwidth
 *   sum_{i tensor} sum_c a_c x[i][c] <= #SMs                 Tensor pool
 *   sum_{i simt}   sum_c a_c x[i][c] <= #SMs                 SIMT pool (one CTA of each kind per
 *                                                             SM: the paper's heterogeneity-aware
 *                                                             scheduler; one pool if shared_pool)
 *   sum_i sum_c a_c smem_i x[i][c] <= #SMs * smem/SM         co-resident shared memory
 *   sum_i sum_c a_c regs_i x[i][c] <= #SMs * regs/SM         co-resident registers
 *   sum_i sum_c queue_i(c) x[i][c] <= queue budget           rings stay in (persisting) L2
 * Kitsune paper section 5 maximizes the throughput 1/P alone with stage rates from a zero-latency
 * model; here fill and traffic are in the objective, so the mapper trades a faster steady state
 * against a longer fill and multicast traffic exactly. Binary choices because neither periods
 * nor traffic are linear in the CTA count (wave quantization, multicast). */
#include "ilp.h"

#include <glpk.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative tolerance for capacity checks (floating-point sums). */
#define ILP_CAP_TOL 1e-9
/* The exact search's allocation is taken without GLPK when it is within this fraction of the
 * lower bound (least fills + N - 1 least periods): GLPK could gain at most that much. */
#define ILP_GAP_DONE 1e-2

const char *ilp_status_name(int status)
{
    static const char *const N[] = {"optimal",
                                    "feasible (time limit)",
                                    "exact search (within 1% of the bound)",
                                    "exact search",
                                    "exact search (solver time limit)",
                                    "exact search (solver failed)",
                                    "exact search (solver error)",
                                    "infeasible"};
    return status >= 0 && status <= ILP_INFEASIBLE ? N[status] : "unknown";
}

/* Capacity use of an allocation: SMs per pool, smem, regs, queue bytes. */
typedef struct ilp_use {
    double pool[2], smem, regs, qb;
} ilp_use;

/* The use of an allocation (into *u when u is not NULL) and the first capacity it breaks: 0
 * none, 1 + pool for a pool, 3 shared memory, 4 registers, 5 queue storage. Hot: the searches
 * call it for every allocation they try. */
static inline int violated(const ilp_problem *p, const int *choice, ilp_use *u)
{
    double pool[2] = {0, 0}, smem = 0, regs = 0, qb = 0;
    for (int i = 0; i < p->nstages; i++) {
        const ilp_stage *s = &p->st[i];
        double a = s->cand_ctas[choice[i]];
        pool[p->shared_pool ? 0 : s->tensor] += a;
        smem += a * s->smem_per_cta_bytes;
        regs += a * s->regs_per_cta_bytes;
        qb += s->queue_bytes ? s->queue_bytes[choice[i]] : 0;
    }
    if (u)
        *u = (ilp_use){{pool[0], pool[1]}, smem, regs, qb};
    double S = p->sm_count * (1 + ILP_CAP_TOL);
    if (pool[0] > S)
        return 1;
    if (pool[1] > S)
        return 2;
    if (smem > p->sm_count * p->smem_per_sm_bytes * (1 + ILP_CAP_TOL) + 1e-6)
        return 3;
    if (regs > p->sm_count * p->regs_per_sm_bytes * (1 + ILP_CAP_TOL) + 1e-6)
        return 4;
    if (p->queue_budget_bytes >= 0 && qb > p->queue_budget_bytes * (1 + ILP_CAP_TOL) + 1e-6)
        return 5;
    return 0;
}

/* 1 if the allocation is within every capacity. */
static int fits(const ilp_problem *p, const int *choice)
{
    return !violated(p, choice, NULL);
}

int ilp_explain(const ilp_problem *p, const int *choice, char *buf, unsigned long n)
{
    static const char *const POOL[2] = {"SIMT ", "Tensor-core "};
    ilp_use u;
    int v = violated(p, choice, &u), stages = 0;
    for (int i = 0; i < p->nstages; i++)
        stages += p->shared_pool || p->st[i].tensor == v - 1;
    buf[0] = 0;
    if (v == 1 || v == 2)
        snprintf(buf, n, "%d %sstages need at least %.0f SMs, the GPU has %d", stages,
                 p->shared_pool ? "" : POOL[v - 1], u.pool[v - 1], p->sm_count);
    else if (v == 3)
        snprintf(buf, n, "the stages' shared memory (%.0f KiB) exceeds the GPU's (%.0f KiB)",
                 u.smem / 1024, p->sm_count * p->smem_per_sm_bytes / 1024);
    else if (v == 4)
        snprintf(buf, n, "the stages' registers (%.0f KiB) exceed the GPU's (%.0f KiB)",
                 u.regs / 1024, p->sm_count * p->regs_per_sm_bytes / 1024);
    else if (v == 5)
        snprintf(buf, n, "the queues (%.0f KiB) exceed their L2 budget (%.0f KiB)", u.qb / 1024,
                 p->queue_budget_bytes / 1024);
    return v != 0;
}

double ilp_eval(const ilp_problem *p, const int *choice, double *period_s)
{
    if (!fits(p, choice))
        return -1;
    double P = 0, fill = 0, l2 = p->l2_fixed_bytes, dram = p->dram_fixed_bytes;
    for (int i = 0; i < p->nstages; i++) {
        const ilp_stage *s = &p->st[i];
        int c = choice[i];
        if (s->period_s[c] > P)
            P = s->period_s[c];
        fill += s->fill_s[c];
        l2 += s->l2_bytes[c];
        dram += s->dram_bytes[c];
    }
    if (p->l2_Bps > 0 && l2 / p->l2_Bps > P)
        P = l2 / p->l2_Bps;
    if (p->dram_Bps > 0 && dram / p->dram_Bps > P)
        P = dram / p->dram_Bps;
    if (period_s)
        *period_s = P;
    double n = p->tiles > 1 ? p->tiles - 1 : 0;
    return fill + n * P;
}

/* Inputs the solvers accept: stages with candidates, finite non-negative terms. */
static int valid(const ilp_problem *p)
{
    if (p->nstages < 1 || p->sm_count < 1 || !(p->tiles >= 1) || !isfinite(p->tiles))
        return 0;
    for (int i = 0; i < p->nstages; i++) {
        const ilp_stage *s = &p->st[i];
        if (s->ncand < 1 || !s->cand_ctas || !s->period_s || !s->l2_bytes || !s->dram_bytes ||
            !s->fill_s)
            return 0;
        /* finite and >= 0 (false for NaN): one compare pair per term; hot, the searches
         * check every problem they get */
#define ILP_TERM_OK(v) ((v) >= 0 && (v) <= DBL_MAX)
        const double *q = s->queue_bytes;
        for (int c = 0; c < s->ncand; c++)
            if (!(ILP_TERM_OK(s->period_s[c]) && ILP_TERM_OK(s->l2_bytes[c]) &&
                  ILP_TERM_OK(s->dram_bytes[c]) && ILP_TERM_OK(s->fill_s[c]) &&
                  (!q || ILP_TERM_OK(q[c])) && s->cand_ctas[c] >= 1 &&
                  (c == 0 || s->cand_ctas[c] > s->cand_ctas[c - 1])))
                return 0;
#undef ILP_TERM_OK
    }
    return 1;
}

/* Restore the heap of stages (least key, the period of its next frontier entry, on top) after
 * its top changed. */
static void sift_down(const double *key, int *heap, int nh)
{
    for (int c = 0;;) {
        int l = 2 * c + 1, m = c;
        if (l < nh && key[heap[l]] < key[heap[m]])
            m = l;
        if (l + 1 < nh && key[heap[l + 1]] < key[heap[m]])
            m = l + 1;
        if (m == c)
            return;
        int t = heap[c];
        heap[c] = heap[m];
        heap[m] = t;
        c = m;
    }
}

/* Running sums of an allocation's capacity use and traffic, updated as single stages change:
 * the searches' O(1) pre-screen of an allocation before ilp_eval's exact O(stages) sum (the
 * order-dependent rounding of running sums never decides: an allocation the screen passes is
 * evaluated exactly, and the screen's slack is far above its rounding). */
typedef struct ilp_sums {
    double pool[2], smem, regs, qb, fill, l2, dram;
} ilp_sums;

/* Add (sign 1) or remove (sign -1) stage i at candidate c. */
static void sums_add(const ilp_problem *p, int i, int c, double sign, ilp_sums *u)
{
    const ilp_stage *s = &p->st[i];
    double a = s->cand_ctas[c];
    u->pool[p->shared_pool ? 0 : s->tensor] += sign * a;
    u->smem += sign * a * s->smem_per_cta_bytes;
    u->regs += sign * a * s->regs_per_cta_bytes;
    u->qb += sign * (s->queue_bytes ? s->queue_bytes[c] : 0);
    u->fill += sign * s->fill_s[c];
    u->l2 += sign * s->l2_bytes[c];
    u->dram += sign * s->dram_bytes[c];
}

static void sums_of(const ilp_problem *p, const int *choice, ilp_sums *u)
{
    memset(u, 0, sizeof *u);
    for (int i = 0; i < p->nstages; i++)
        sums_add(p, i, choice[i], 1, u);
}

/* Relative slack of the screen: sums of at most a few thousand updates round far below it. */
#define ILP_SCREEN_TOL 1e-7

/* 1 when the sums break a capacity by more than rounding could explain (ilp_eval would refuse
 * the allocation) */
static int sums_over(const ilp_problem *p, const ilp_sums *u)
{
    double f = 1 + ILP_CAP_TOL + ILP_SCREEN_TOL, S = p->sm_count * f;
    return u->pool[0] > S || u->pool[1] > S ||
           u->smem > p->sm_count * p->smem_per_sm_bytes * f + 1 ||
           u->regs > p->sm_count * p->regs_per_sm_bytes * f + 1 ||
           (p->queue_budget_bytes >= 0 && u->qb > p->queue_budget_bytes * f + 1);
}

/* The pipeline's period from the sums, with the slowest stage's period P: P or the L2 or DRAM
 * bytes per tile over their bandwidths */
static double sums_period(const ilp_problem *p, const ilp_sums *u, double P)
{
    double l2 = p->l2_fixed_bytes + u->l2, dram = p->dram_fixed_bytes + u->dram;
    if (p->l2_Bps > 0 && l2 / p->l2_Bps > P)
        P = l2 / p->l2_Bps;
    if (p->dram_Bps > 0 && dram / p->dram_Bps > P)
        P = dram / p->dram_Bps;
    return P;
}

/* ilp_eval's time from the sums, with the slowest stage's period P */
static double sums_time(const ilp_problem *p, const ilp_sums *u, double P)
{
    P = sums_period(p, u, P);
    double n = p->tiles > 1 ? p->tiles - 1 : 0;
    return u->fill + n * P;
}

/* 1 when an allocation with sums u and slowest period P may beat `best` (< 0: none yet) */
static int sums_may_beat(const ilp_problem *p, const ilp_sums *u, double P, double best)
{
    return !sums_over(p, u) && (best < 0 || sums_time(p, u, P) < best * (1 + ILP_SCREEN_TOL));
}

/* ilp_exact, with (spare = 1) or without the spare-SM improvement pass. With pmin, also a lower
 * bound on the period of any allocation that fits (-1 when none): every allocation whose
 * slowest stage is at most level v gives every stage at least its fewest CTAs reaching v, and
 * every resource grows with the CTAs; so its period is at least the least, over the levels
 * whose fewest-CTA allocation fits, of the level and of the L2 and DRAM bytes per tile over
 * their bandwidths, each stage counted at its least bytes at or above its fewest CTAs (bytes
 * need not grow with the CTAs: a weight slice that becomes resident at more column slices
 * leaves the per-tile traffic). Levels the search does not reach are above the one it stops
 * at, a bound for them. */
static double exact(const ilp_problem *p, int *choice, int spare, double *pmin)
{
    if (pmin)
        *pmin = -1;
    int n = p->nstages;
    for (int i = 0; i < n; i++)
        choice[i] = 0;
    if (!valid(p))
        return -1;
    /* per stage, the frontier: candidates whose period beats every smaller allocation */
    int total = 0;
    for (int i = 0; i < n; i++)
        total += p->st[i].ncand;
    int *front = malloc((size_t)total * sizeof *front);
    /* with pmin: per stage and candidate, the least L2 and DRAM bytes at it or above */
    double *sl2 = pmin ? malloc(2 * (size_t)total * sizeof *sl2) : NULL;
    int *soff = pmin ? malloc(((size_t)n + 1) * sizeof *soff) : NULL;
    int *fstart = malloc(((size_t)n + 1) * sizeof *fstart);
    int *cur = malloc((size_t)n * sizeof *cur);
    int *heap = malloc((size_t)n * sizeof *heap); /* stages by their next frontier period */
    int *at = malloc((size_t)n * sizeof *at);     /* per stage: its next frontier entry */
    double *key = malloc((size_t)n * sizeof *key); /* per stage: that entry's period */
    if (!front || !fstart || !cur || !heap || !at || !key || (pmin && (!sl2 || !soff))) {
        free(sl2);
        free(soff);
        free(front);
        free(fstart);
        free(cur);
        free(heap);
        free(at);
        free(key);
        return ilp_eval(p, choice, NULL);
    }
    if (pmin) {
        soff[0] = 0;
        for (int i = 0; i < n; i++) {
            const ilp_stage *s = &p->st[i];
            int o = soff[i];
            soff[i + 1] = o + s->ncand;
            for (int c = s->ncand - 1; c >= 0; c--) {
                int last = c == s->ncand - 1;
                sl2[2 * (o + c)] = last ? s->l2_bytes[c] : fmin(s->l2_bytes[c], sl2[2 * (o + c + 1)]);
                sl2[2 * (o + c) + 1] =
                    last ? s->dram_bytes[c] : fmin(s->dram_bytes[c], sl2[2 * (o + c + 1) + 1]);
            }
        }
    }
    int nf = 0;
    double plo = 0;
    for (int i = 0; i < n; i++) {
        const ilp_stage *s = &p->st[i];
        fstart[i] = nf;
        double best = INFINITY;
        for (int c = 0; c < s->ncand; c++)
            if (s->period_s[c] < best) {
                best = s->period_s[c];
                front[nf++] = c;
            }
        if (best > plo)
            plo = best;
    }
    fstart[n] = nf;
    /* the levels worth trying, ascending: the frontier periods no stage can go below all of.
     * Each stage's frontier periods descend along it, so the levels are a merge of the stages'
     * frontiers read backwards (a heap of the stages by their next period); popping a stage's
     * entry makes it that stage's choice, the fewest CTAs with a period <= the level. The merge
     * stops where the search stops: O(levels tried x log stages) instead of sorting them all. */
    int nh = 0;
    for (int i = 0; i < n; i++) {
        /* the levels below plo are skipped: start each stage past its entries below plo, the
         * last of them (its largest period below plo, the fewest CTAs there) its choice. Its
         * frontier descends, so they are a suffix: found by bisection. */
        int lo = fstart[i], hi = fstart[i + 1]; /* first entry below plo: in [lo, hi] */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (p->st[i].period_s[front[mid]] < plo)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo < fstart[i + 1])
            cur[i] = front[lo];
        at[i] = lo - 1;
        if (at[i] < fstart[i])
            continue; /* its frontier is used up */
        key[i] = p->st[i].period_s[front[at[i]]];
        heap[nh++] = i;
        for (int c = nh - 1; c > 0 && key[heap[(c - 1) / 2]] > key[heap[c]]; c = (c - 1) / 2) {
            int t = heap[c];
            heap[c] = heap[(c - 1) / 2];
            heap[(c - 1) / 2] = t;
        }
    }
    double best = -1, prev = 0, N1 = p->tiles > 1 ? p->tiles - 1 : 0;
    ilp_sums u;
    int have_sums = 0;
    while (nh) {
        double v = key[heap[0]];
        while (nh && key[heap[0]] == v) { /* every stage's entry at v */
            int i = heap[0];
            if (have_sums)
                sums_add(p, i, cur[i], -1, &u);
            cur[i] = front[at[i]];
            if (have_sums)
                sums_add(p, i, cur[i], 1, &u);
            if (--at[i] < fstart[i]) /* its frontier is used up */
                heap[0] = heap[--nh];
            else
                key[i] = p->st[i].period_s[front[at[i]]];
            sift_down(key, heap, nh);
        }
        if (v < plo)
            continue; /* below a stage's least period: the stages' choices are being set */
        if (best >= 0 && N1 * prev >= best) {
            if (pmin && *pmin > v)
                *pmin = v;
            break; /* any new allocation has a stage slower than prev */
        }
        prev = v;
        if (!have_sums) {
            sums_of(p, cur, &u);
            have_sums = 1;
        }
        if (pmin && !sums_over(p, &u)) {
            ilp_sums w = u;
            w.l2 = w.dram = 0;
            for (int i = 0; i < n; i++) {
                w.l2 += sl2[2 * (soff[i] + cur[i])];
                w.dram += sl2[2 * (soff[i] + cur[i]) + 1];
            }
            double pv = sums_period(p, &w, v);
            if (*pmin < 0 || pv < *pmin)
                *pmin = pv;
        }
        /* every stage's period is <= v and a popped one's is v: the slowest stage's is v */
        if (!sums_may_beat(p, &u, v, best))
            continue;
        double t = ilp_eval(p, cur, NULL);
        if (t >= 0 && (best < 0 || t < best)) {
            best = t;
            memcpy(choice, cur, (size_t)n * sizeof *cur);
        }
    }
    if (best >= 0 && spare) {
        /* spare SMs: move a stage to its next frontier candidate while that shortens the time */
        for (int iter = 0; iter < total; iter++) {
            int bi = -1, bc = 0;
            double bt = best;
            memcpy(cur, choice, (size_t)n * sizeof *cur);
            /* the sums and the two slowest stages' periods of the current allocation: a move
             * of one stage is screened in O(1) */
            sums_of(p, cur, &u);
            int top = 0;
            double p1 = -INFINITY, p2 = -INFINITY;
            for (int i = 0; i < n; i++) {
                double q = p->st[i].period_s[cur[i]];
                if (q > p1) {
                    p2 = p1;
                    p1 = q;
                    top = i;
                } else if (q > p2) {
                    p2 = q;
                }
            }
            for (int i = 0; i < n; i++) {
                int old = cur[i];
                for (int f = fstart[i]; f < fstart[i + 1]; f++)
                    if (front[f] > old) {
                        ilp_sums w = u;
                        sums_add(p, i, old, -1, &w);
                        sums_add(p, i, front[f], 1, &w);
                        double P = fmax(i == top ? p2 : p1, p->st[i].period_s[front[f]]);
                        if (!sums_may_beat(p, &w, P, bt * (1 - 1e-12)))
                            break;
                        cur[i] = front[f];
                        double t = ilp_eval(p, cur, NULL);
                        if (t >= 0 && t < bt * (1 - 1e-12)) {
                            bt = t;
                            bi = i;
                            bc = front[f];
                        }
                        break;
                    }
                cur[i] = old;
            }
            if (bi < 0)
                break;
            choice[bi] = bc;
            best = bt;
        }
    }
    free(sl2);
    free(soff);
    free(front);
    free(fstart);
    free(cur);
    free(heap);
    free(at);
    free(key);
    if (best < 0) {
        for (int i = 0; i < n; i++)
            choice[i] = 0;
        return ilp_eval(p, choice, NULL);
    }
    return best;
}

double ilp_exact(const ilp_problem *p, int *choice)
{
    return exact(p, choice, 0, NULL);
}

/* Each stage's fewest CTAs with a period <= v (its first candidate when none reaches v). */
static void choose_at(const ilp_problem *p, double v, int *choice)
{
    for (int i = 0; i < p->nstages; i++) {
        const ilp_stage *s = &p->st[i];
        int k = 0;
        double best = s->period_s[0];
        for (int c = 0; c < s->ncand; c++) {
            if (s->period_s[c] <= v) {
                k = c;
                break;
            }
            if (s->period_s[c] < best) {
                best = s->period_s[c];
                k = c;
            }
        }
        choice[i] = k;
    }
}

/* Probes of the period level: a geometric grid between the least feasible level and the slowest
 * stage's single-CTA period, then a refinement around the best. */
enum { ILP_PROBE_GRID = 16, ILP_PROBE_REFINE = 8 };

double ilp_estimate(const ilp_problem *p, int *choice)
{
    int n = p->nstages;
    for (int i = 0; i < n; i++)
        choice[i] = 0;
    if (!valid(p))
        return -1;
    int *cur = malloc((size_t)n * sizeof *cur);
    if (!cur)
        return ilp_eval(p, choice, NULL);
    double plo = 0, phi = 0;
    for (int i = 0; i < n; i++) {
        const ilp_stage *s = &p->st[i];
        double mn = INFINITY, mx = 0;
        for (int c = 0; c < s->ncand; c++) {
            if (s->period_s[c] < mn)
                mn = s->period_s[c];
            if (s->period_s[c] > mx)
                mx = s->period_s[c];
        }
        if (mn > plo)
            plo = mn;
        if (mx > phi)
            phi = mx;
    }
    if (phi < plo)
        phi = plo;
    double best = -1, bv = plo;
    /* the least feasible level: feasibility only grows with the level (fewer CTAs) */
    double lo = plo, hi = phi;
    choose_at(p, lo, cur);
    if (ilp_eval(p, cur, NULL) < 0) {
        choose_at(p, hi, cur);
        if (ilp_eval(p, cur, NULL) < 0) {
            free(cur);
            return ilp_eval(p, choice, NULL);
        }
        for (int it = 0; it < 24 && hi > lo * (1 + 1e-6); it++) {
            double mid = sqrt(lo * hi) > 0 ? sqrt(lo * hi) : 0.5 * (lo + hi);
            choose_at(p, mid, cur);
            if (ilp_eval(p, cur, NULL) >= 0)
                hi = mid;
            else
                lo = mid;
        }
        lo = hi;
    }
    double r = phi > lo && lo > 0 ? pow(phi / lo, 1.0 / ILP_PROBE_GRID) : 1.0;
    double v = lo;
    for (int k = 0; k <= ILP_PROBE_GRID; k++, v *= r) {
        choose_at(p, v, cur);
        double t = ilp_eval(p, cur, NULL);
        if (t >= 0 && (best < 0 || t < best)) {
            best = t;
            bv = v;
            memcpy(choice, cur, (size_t)n * sizeof *cur);
        }
        if (r <= 1.0)
            break;
    }
    /* refine between the neighbouring probes */
    double a = bv / r, b = bv * r;
    for (int k = 0; k < ILP_PROBE_REFINE && r > 1.0; k++) {
        double m1 = a * pow(b / a, 1.0 / 3), m2 = a * pow(b / a, 2.0 / 3);
        double t1, t2;
        choose_at(p, m1, cur);
        t1 = ilp_eval(p, cur, NULL);
        if (t1 >= 0 && t1 < best) {
            best = t1;
            memcpy(choice, cur, (size_t)n * sizeof *cur);
        }
        choose_at(p, m2, cur);
        t2 = ilp_eval(p, cur, NULL);
        if (t2 >= 0 && t2 < best) {
            best = t2;
            memcpy(choice, cur, (size_t)n * sizeof *cur);
        }
        if (t1 < 0 || (t2 >= 0 && t2 < t1))
            a = m1;
        else
            b = m2;
    }
    free(cur);
    return best;
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

/* The reduced problem GLPK sees and the incumbent it starts from. */
typedef struct reduced {
    int ncol;        /* x columns + P */
    int *stage_of;   /* per x column (1-based): stage */
    int *cand_of;    /* per x column: caller's candidate index */
    double *start;   /* [1..ncol]: the exact allocation as a GLPK solution */
    int given;
} reduced;

static void heur_cb(glp_tree *tree, void *info)
{
    reduced *r = info;
    if (glp_ios_reason(tree) == GLP_IHEUR && !r->given) {
        r->given = 1;
        glp_ios_heur_sol(tree, r->start);
    }
}

/* Capacity r of an allocation's use (violated's limits): 0 and 1 the SM pools (0 only when
 * shared), 2 shared memory, 3 registers, 4 queue storage (DBL_MAX when unconstrained). */
static double cap_of(const ilp_problem *p, int r)
{
    double f = 1 + ILP_CAP_TOL;
    return r <= 1 ? p->sm_count * f
         : r == 2 ? p->sm_count * p->smem_per_sm_bytes * f + 1e-6
         : r == 3 ? p->sm_count * p->regs_per_sm_bytes * f + 1e-6
         : p->queue_budget_bytes >= 0 ? p->queue_budget_bytes * f + 1e-6
                                      : DBL_MAX;
}

/* Stage i's use of capacity r at candidate c (non-decreasing in c: every resource grows with
 * the CTA count; the queue bytes are kept so by the caller). */
static double use_of(const ilp_problem *p, int i, int c, int r)
{
    const ilp_stage *s = &p->st[i];
    double a = s->cand_ctas[c];
    return r <= 1 ? ((p->shared_pool ? 0 : s->tensor) == r ? a : 0.0)
         : r == 2 ? a * s->smem_per_cta_bytes
         : r == 3 ? a * s->regs_per_cta_bytes
                  : (s->queue_bytes ? s->queue_bytes[c] : 0.0);
}

enum { ILP_NCAP = 5 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The branch and bound's optimality tolerance: a node is cut when its bound is within this
 * fraction of the best time, so the allocation it proves is within 0.1% of the optimum (a MILP
 * solver's relative gap; theirs default to 1e-4). Proving the last 0.1% is what costs: on
 * training pipelines of 11-21 stages with deep rings the bound sits 0.01% under the optimum over
 * tens of thousands of near-equal allocations (up to 130,000 nodes, 32 ms, at 1e-12; 1,300 at
 * 1e-3), while the allocations found differ by at most 0.009% on every shipped workload and GPU
 * file. */
#define ILP_BB_REL_GAP 1e-3

/* The exact branch and bound over period levels (ilp_solve's first choice for the MILP). Every
 * allocation's period is at least its slowest stage's, one of the candidates' periods: level by
 * level, ascending, the allocations whose slowest stage's period is the level v are searched
 * stage by stage for the least fill + (N - 1) x max(v, L2 and DRAM bytes per tile over their
 * bandwidths), which is their time. The search stops at the first level where (N - 1) v plus
 * every stage's least fill cannot beat the best time. At each level the stages with a candidate
 * at exactly v come first; a branch that passes them all without taking one is cut (its
 * allocations belong to a lower level). A node's bound is the largest of three valid ones, each
 * its terms so far plus the least the remaining stages can add in the CTAs left in their SM
 * pools (a knapsack over CTA counts per pool, exact for a separable sum): the fill, with
 * (N - 1) x the level or the least bytes' bandwidth time; the fill plus (N - 1) x L2 bytes over
 * the L2 bandwidth; the same with DRAM; the fill plus (N - 1) x the mean of the L2 time and
 * max(level, DRAM bound) (max(v, a, b) is at least each of these). Candidates that do not fit
 * beside the other stages' least use at the level are left out. A node whose least capacity use
 * already breaks a capacity is cut. Children are tried best bound first. */
typedef struct bb_opt {
    double bound;
    int k;
} bb_opt;

/* A kept candidate's terms, gathered once */
typedef struct bb_cand {
    int c, ctas;
    double period, fill, l2, dram, use[ILP_NCAP];
} bb_cand;

/* the knapsacks' values: the fill; the fill plus N - 1 times the L2 time; the same with DRAM;
 * the fill plus half of N - 1 times the L2 time */
enum { BB_FILL, BB_L2, BB_DRAM, BB_HALF_L2, BB_NV };

typedef struct bb_ctx {
    const ilp_problem *p;
    int n, S;
    const int *first;    /* per stage: its kept candidates are k[first[i] .. first[i + 1]) */
    bb_cand *k;
    int *pool;           /* per stage: 0 or 1 */
    int *order;          /* per depth: the stage searched there (this level's order) */
    int *few;            /* per stage: its fewest-CTA kept candidate that reaches the level */
    int nv;              /* the first nv depths' stages have a candidate at exactly the level */
    int *ok;             /* per kept candidate: 1 when its period is <= the level */
    double v, N1, best;
    double *sl2, *sdram; /* [n + 1] per depth: the least bytes of the stages from there on */
    double *suse;        /* [(n + 1) x ILP_NCAP]: the least capacity use of those stages */
    double *G;           /* [BB_NV][2][n + 1][S + 1]: least value of pool p's stages from depth
                            d on in r CTAs */
    int has[BB_NV];      /* which knapsacks are kept */
    double cap[ILP_NCAP];
    bb_opt *opts;        /* per depth: room for the most kept candidates of a stage */
    int maxk;
    int *pre;            /* [2][n + 1]: per pool, the fewest CTAs reaching the level of the
                            stages at depths before d (bb_level: the CTA counts a table is read at) */
    int *fr_ctas;        /* [maxk]: a stage's kept candidates that no other dominates (bb_level) */
    double *fr_val;
    int *cur, *best_choice;
    long nodes, budget;
} bb_ctx;

static double *bb_G(const bb_ctx *b, int val, int pool, int d)
{
    return &b->G[(((size_t)val * 2 + (size_t)pool) * (size_t)(b->n + 1) + (size_t)d) *
                 (size_t)(b->S + 1)];
}

/* A node's bound at depth d (its stages chosen: fill f, bytes l2 and dram, capacity use u, CTAs
 * per pool used0 and used1); INFINITY when it cannot fit. */
static double bb_bound(const bb_ctx *b, int d, double f, double l2, double dram, const double *u,
                       int used0, int used1)
{
    const ilp_problem *p = b->p;
    const double *su = &b->suse[(size_t)d * ILP_NCAP];
    for (int r = 0; r < ILP_NCAP; r++)
        if (u[r] + su[r] > b->cap[r])
            return INFINITY;
    if (used0 > b->S || used1 > b->S)
        return INFINITY;
    int r0 = b->S - used0, r1 = b->S - used1;
    double P = b->v;
    if (p->l2_Bps > 0 && (p->l2_fixed_bytes + l2 + b->sl2[d]) / p->l2_Bps > P)
        P = (p->l2_fixed_bytes + l2 + b->sl2[d]) / p->l2_Bps;
    if (p->dram_Bps > 0 && (p->dram_fixed_bytes + dram + b->sdram[d]) / p->dram_Bps > P)
        P = (p->dram_fixed_bytes + dram + b->sdram[d]) / p->dram_Bps;
    double bd = f + b->N1 * P + bb_G(b, BB_FILL, 0, d)[r0] + bb_G(b, BB_FILL, 1, d)[r1];
    if (b->has[BB_L2]) {
        double x = f + b->N1 * (p->l2_fixed_bytes + l2) / p->l2_Bps + bb_G(b, BB_L2, 0, d)[r0] +
                   bb_G(b, BB_L2, 1, d)[r1];
        bd = x > bd ? x : bd;
    }
    if (b->has[BB_DRAM]) {
        double x = f + b->N1 * (p->dram_fixed_bytes + dram) / p->dram_Bps +
                   bb_G(b, BB_DRAM, 0, d)[r0] + bb_G(b, BB_DRAM, 1, d)[r1];
        bd = x > bd ? x : bd;
    }
    if (b->has[BB_HALF_L2]) {
        double D = b->v;
        if (p->dram_Bps > 0 && (p->dram_fixed_bytes + dram + b->sdram[d]) / p->dram_Bps > D)
            D = (p->dram_fixed_bytes + dram + b->sdram[d]) / p->dram_Bps;
        double x = f + 0.5 * b->N1 * (D + (p->l2_fixed_bytes + l2) / p->l2_Bps) +
                   bb_G(b, BB_HALF_L2, 0, d)[r0] + bb_G(b, BB_HALF_L2, 1, d)[r1];
        bd = x > bd ? x : bd;
    }
    return bd;
}

/* Depth-first from depth d (hit: a stage so far takes a candidate at exactly the level); 0, or
 * -1 when the node budget ran out. */
static int bb_dfs(bb_ctx *b, int d, int hit, double f, double l2, double dram, const double *u,
                  int used0, int used1)
{
    if (++b->nodes > b->budget)
        return -1;
    if (d == b->nv && !hit)
        return 0; /* its slowest stage is below the level: searched there */
    if (d == b->n) {
        double t = ilp_eval(b->p, b->cur, NULL);
        if (t >= 0 && t < b->best * (1 - 1e-12)) {
            b->best = t;
            memcpy(b->best_choice, b->cur, (size_t)b->n * sizeof *b->cur);
        }
        return 0;
    }
    int i = b->order[d], pool = b->pool[i];
    bb_opt *o = &b->opts[(size_t)d * (size_t)b->maxk];
    int no = 0;
    for (int k = b->first[i]; k < b->first[i + 1]; k++) {
        if (!b->ok[k])
            continue;
        const bb_cand *c = &b->k[k];
        double nu[ILP_NCAP];
        for (int r = 0; r < ILP_NCAP; r++)
            nu[r] = u[r] + c->use[r];
        double bd = bb_bound(b, d + 1, f + c->fill, l2 + c->l2, dram + c->dram, nu,
                             used0 + (pool == 0 ? c->ctas : 0), used1 + (pool == 1 ? c->ctas : 0));
        if (!(bd < b->best * (1 - ILP_BB_REL_GAP)))
            continue;
        int j = no++; /* insertion by bound, ties by candidate order */
        while (j > 0 && o[j - 1].bound > bd) {
            o[j] = o[j - 1];
            j--;
        }
        o[j] = (bb_opt){bd, k};
    }
    for (int j = 0; j < no; j++) {
        if (!(o[j].bound < b->best * (1 - ILP_BB_REL_GAP)))
            break; /* the best improved meanwhile */
        const bb_cand *c = &b->k[o[j].k];
        double nu[ILP_NCAP];
        for (int r = 0; r < ILP_NCAP; r++)
            nu[r] = u[r] + c->use[r];
        b->cur[i] = c->c;
        if (bb_dfs(b, d + 1, hit || c->period == b->v, f + c->fill, l2 + c->l2, dram + c->dram,
                   nu, used0 + (pool == 0 ? c->ctas : 0), used1 + (pool == 1 ? c->ctas : 0)) < 0)
            return -1;
    }
    return 0;
}

/* One level's tables: the order of the stages, the candidates that reach v and fit beside the
 * other stages' least use (at their fewest CTAs that reach v: every use grows with the CTAs),
 * the least bytes and capacity use from each depth on, and the pools' knapsacks. 0 when a stage
 * has no such candidate (nothing fits at this level). */
static int bb_level(bb_ctx *b, double v)
{
    int n = b->n, S = b->S;
    b->v = v;
    double tot[ILP_NCAP] = {0};
    for (int i = 0; i < n; i++) {
        b->few[i] = -1;
        for (int k = b->first[i]; k < b->first[i + 1] && b->few[i] < 0; k++)
            if (b->k[k].period <= v)
                b->few[i] = k;
        if (b->few[i] < 0)
            return 0;
        for (int r = 0; r < ILP_NCAP; r++)
            tot[r] += b->k[b->few[i]].use[r];
    }
    b->nv = 0;
    for (int i = 0; i < n; i++)
        for (int k = b->first[i]; k < b->first[i + 1]; k++)
            if (b->k[k].period == v) {
                b->order[b->nv++] = i;
                break;
            }
    for (int i = 0, m = b->nv; i < n; i++) {
        int at = 0;
        for (int k = b->first[i]; k < b->first[i + 1] && !at; k++)
            at = b->k[k].period == v;
        if (!at)
            b->order[m++] = i;
    }
    b->sl2[n] = b->sdram[n] = 0;
    for (int r = 0; r < ILP_NCAP; r++)
        b->suse[(size_t)n * ILP_NCAP + (size_t)r] = 0;
    for (int w = 0; w < BB_NV; w++)
        for (int q = 0; q < 2 && b->has[w]; q++)
            memset(bb_G(b, w, q, n), 0, ((size_t)S + 1) * sizeof(double));
    /* a node at depth d has given each earlier stage at least its fewest CTAs reaching the level
     * (every candidate kept below takes at least those), so depth d's table of pool q is read at
     * r <= S - pre[q][d] only, and the next depth's is infinite below the later stages' fewest
     * CTAs: the convolution runs over that band, the entries outside it are never read */
    for (int q = 0; q < 2; q++) {
        int *pq = b->pre + (size_t)q * ((size_t)n + 1);
        pq[0] = 0;
        for (int d = 0; d < n; d++) {
            int i = b->order[d];
            pq[d + 1] = pq[d] + (b->pool[i] == q ? b->k[b->few[i]].ctas : 0);
        }
    }
    for (int d = n - 1; d >= 0; d--) {
        int i = b->order[d];
        double l2 = INFINITY, dram = INFINITY;
        const bb_cand *fewest = NULL;
        const double *own = b->k[b->few[i]].use;
        for (int k = b->first[i]; k < b->first[i + 1]; k++) {
            const bb_cand *e = &b->k[k];
            b->ok[k] = e->period <= v;
            for (int r = 0; r < ILP_NCAP && b->ok[k]; r++)
                b->ok[k] = e->use[r] + (tot[r] - own[r]) <= b->cap[r];
            if (!b->ok[k])
                continue;
            l2 = e->l2 < l2 ? e->l2 : l2;
            dram = e->dram < dram ? e->dram : dram;
            if (!fewest)
                fewest = e;
        }
        if (!fewest)
            return 0;
        b->sl2[d] = b->sl2[d + 1] + l2;
        b->sdram[d] = b->sdram[d + 1] + dram;
        for (int r = 0; r < ILP_NCAP; r++)
            b->suse[(size_t)d * ILP_NCAP + (size_t)r] =
                b->suse[((size_t)d + 1) * ILP_NCAP + (size_t)r] +
                fewest->use[r];
        const ilp_problem *p = b->p;
        for (int w = 0; w < BB_NV; w++) {
            if (!b->has[w])
                continue;
            double per = w == BB_L2        ? b->N1 / p->l2_Bps
                       : w == BB_HALF_L2   ? 0.5 * b->N1 / p->l2_Bps
                       : w == BB_DRAM      ? b->N1 / p->dram_Bps
                                           : 0;
            for (int q = 0; q < 2; q++) {
                double *cur = bb_G(b, w, q, d);
                const double *nxt = bb_G(b, w, q, d + 1);
                if (b->pool[i] != q) {
                    memcpy(cur, nxt, ((size_t)S + 1) * sizeof *cur);
                    continue;
                }
                for (int r = 0; r <= S; r++)
                    cur[r] = INFINITY;
                /* nxt is non-increasing in r (more CTAs never cost more), so a candidate with
                 * at least the CTAs and at least the value of an earlier one never sets a
                 * minimum: only the frontier of (CTAs, value) is convolved, with the same
                 * minima (rounding is monotone). Candidates come by CTA count; if not, all. */
                int nf = 0, sorted = 1, last = 0;
                double low = INFINITY;
                for (int k = b->first[i]; k < b->first[i + 1]; k++) {
                    const bb_cand *e = &b->k[k];
                    if (!b->ok[k])
                        continue;
                    double val = e->fill + per * (w == BB_DRAM ? e->dram : e->l2);
                    sorted &= e->ctas >= last;
                    last = e->ctas;
                    if (!sorted || val < low) {
                        b->fr_ctas[nf] = e->ctas;
                        b->fr_val[nf++] = val;
                        low = val < low ? val : low;
                    }
                }
                const int *pq = b->pre + (size_t)q * ((size_t)n + 1);
                int hi = S - pq[d], lo = pq[n] - pq[d + 1];
                for (int j = 0; j < nf; j++) {
                    double val = b->fr_val[j];
                    int c = b->fr_ctas[j];
                    for (int r = c + lo; r <= hi; r++)
                        if (val + nxt[r - c] < cur[r])
                            cur[r] = val + nxt[r - c];
                }
            }
        }
    }
    return 1;
}

/* The optimum over the kept candidates (stage i's: cand[first[i] .. first[i + 1])), starting
 * from the allocation `choice` of time *best: 1 when proven (choice and *best the optimum, to a
 * relative ILP_BB_REL_GAP), 0 when the node budget ran out (choice and *best the best found),
 * -1 when memory ran out (unchanged). */
static int bb_solve(const ilp_problem *p, const int *first, const int *cand, long budget,
                    int *choice, double *best)
{
    int n = p->nstages, S = p->sm_count, total = first[n];
    bb_ctx b = {0};
    b.p = p;
    b.n = n;
    b.S = S;
    b.first = first;
    b.N1 = p->tiles > 1 ? p->tiles - 1 : 0;
    b.best = *best;
    b.budget = budget;
    for (int i = 0; i < n; i++)
        if (first[i + 1] - first[i] > b.maxk)
            b.maxk = first[i + 1] - first[i];
    for (int r = 0; r < ILP_NCAP; r++)
        b.cap[r] = cap_of(p, r);
    size_t nk = (size_t)(total > 0 ? total : 1);
    b.k = malloc(nk * sizeof *b.k);
    b.pool = malloc((size_t)n * sizeof *b.pool);
    b.order = malloc((size_t)n * sizeof *b.order);
    b.few = malloc((size_t)n * sizeof *b.few);
    b.ok = malloc(nk * sizeof *b.ok);
    b.sl2 = malloc(((size_t)n + 1) * sizeof *b.sl2);
    b.sdram = malloc(((size_t)n + 1) * sizeof *b.sdram);
    b.suse = malloc(((size_t)n + 1) * ILP_NCAP * sizeof *b.suse);
    b.G = malloc((size_t)BB_NV * 2 * ((size_t)n + 1) * ((size_t)S + 1) * sizeof *b.G);
    b.opts = malloc((size_t)n * (size_t)(b.maxk > 0 ? b.maxk : 1) * sizeof *b.opts);
    b.pre = malloc(2 * ((size_t)n + 1) * sizeof *b.pre);
    b.fr_ctas = malloc((size_t)(b.maxk > 0 ? b.maxk : 1) * sizeof *b.fr_ctas);
    b.fr_val = malloc((size_t)(b.maxk > 0 ? b.maxk : 1) * sizeof *b.fr_val);
    b.cur = malloc((size_t)n * sizeof *b.cur);
    b.best_choice = malloc((size_t)n * sizeof *b.best_choice);
    double *lev = malloc(nk * sizeof *lev);
    int rc = -1;
    if (!b.k || !b.pool || !b.order || !b.few || !b.ok || !b.sl2 || !b.sdram || !b.suse || !b.G ||
        !b.opts || !b.pre || !b.fr_ctas || !b.fr_val || !b.cur || !b.best_choice || !lev)
        goto out;
    memcpy(b.best_choice, choice, (size_t)n * sizeof *choice);
    memcpy(b.cur, choice, (size_t)n * sizeof *choice);
    double plo = 0, fill_lb = 0;
    int any_dram = 0;
    for (int i = 0; i < n; i++) {
        const ilp_stage *s = &p->st[i];
        b.pool[i] = p->shared_pool ? 0 : s->tensor;
        double pl = INFINITY, fl = INFINITY;
        for (int k = first[i]; k < first[i + 1]; k++) {
            int c = cand[k];
            bb_cand *e = &b.k[k];
            e->c = c;
            e->ctas = s->cand_ctas[c];
            e->period = s->period_s[c];
            e->fill = s->fill_s[c];
            e->l2 = s->l2_bytes[c];
            e->dram = s->dram_bytes[c];
            any_dram |= e->dram > 0;
            for (int r = 0; r < ILP_NCAP; r++)
                e->use[r] = use_of(p, i, c, r);
            lev[k] = e->period;
            pl = fmin(pl, e->period);
            fl = fmin(fl, e->fill);
        }
        plo = fmax(plo, pl);
        fill_lb += fl;
    }
    b.has[BB_FILL] = 1;
    b.has[BB_L2] = p->l2_Bps > 0;
    b.has[BB_DRAM] = p->dram_Bps > 0 && any_dram;
    b.has[BB_HALF_L2] = p->l2_Bps > 0;
    qsort(lev, (size_t)total, sizeof *lev, cmp_double);
    rc = 1;
    for (int l = 0; l < total; l++) {
        double v = lev[l];
        if (v < plo || (l > 0 && v == lev[l - 1]))
            continue;
        if (b.N1 * v + fill_lb >= b.best * (1 - ILP_BB_REL_GAP))
            break; /* every allocation left has a stage at least this slow */
        if (!bb_level(&b, v))
            continue;
        double u0[ILP_NCAP] = {0};
        if (!(bb_bound(&b, 0, 0, 0, 0, u0, 0, 0) < b.best * (1 - ILP_BB_REL_GAP)))
            continue;
        if (bb_dfs(&b, 0, 0, 0, 0, 0, u0, 0, 0) < 0) {
            rc = 0;
            break;
        }
    }
    memcpy(choice, b.best_choice, (size_t)n * sizeof *choice);
    *best = b.best;
out:
    free(b.k);
    free(b.pool);
    free(b.order);
    free(b.few);
    free(b.ok);
    free(b.sl2);
    free(b.sdram);
    free(b.suse);
    free(b.G);
    free(b.opts);
    free(b.pre);
    free(b.fr_ctas);
    free(b.fr_val);
    free(b.cur);
    free(b.best_choice);
    free(lev);
    return rc;
}

/* ILP_BB_NODES: the branch and bound's node budget; beyond it GLPK's MILP decides. Over every
 * shipped workload on the 8 GPU files (96 problems with the default options) the most one needs
 * is 1,300 (a 21-stage training pipeline on the b200); a budget, not a time limit, keeps the
 * answer the same on any machine. */
#define ILP_BB_NODES 2000000L

/* The branch and bound on ilp_solve's kept columns (first: 1-based column ranges per stage),
 * from sol's allocation: 1 when it proved the optimum, else 0; sol takes the best allocation it
 * found either way. scratch holds nstages ints. */
static int bb_done(const ilp_problem *p, const int *first, const int *cand, ilp_solution *sol,
                   int *scratch)
{
    int n = p->nstages;
    int *kf = malloc(((size_t)n + 1) * sizeof *kf);
    if (!kf)
        return 0;
    for (int i = 0; i <= n; i++)
        kf[i] = first[i] - 1;
    memcpy(scratch, sol->choice, (size_t)n * sizeof *scratch);
    double t = sol->time_s;
    int rc = bb_solve(p, kf, cand, p->bb_nodes > 0 ? p->bb_nodes : ILP_BB_NODES, scratch, &t);
    free(kf);
    if (rc >= 0 && t < sol->time_s) { /* proven, or the best found before the budget ran out */
        memcpy(sol->choice, scratch, (size_t)n * sizeof *scratch);
        sol->time_s = t;
    }
    return rc == 1;
}

/* Exact pruning: keep candidate c of stage i unless a smaller candidate is no worse in every term
 * or a lower bound on any allocation using it - its fill, every other stage's least fill
 * (fill_rest), N - 1 periods of at least max(its period, the least period pmin) - exceeds the
 * exact search's time. Returns the kept count. */
static int prune(const ilp_problem *p, int i, double tmax, double fill_rest, double pmin, int keep,
                 int *out)
{
    const ilp_stage *s = &p->st[i];
    double N1 = p->tiles > 1 ? p->tiles - 1 : 0;
    int k = 0;
    for (int c = 0; c < s->ncand; c++) {
        double lb = s->fill_s[c] + fill_rest + N1 * (s->period_s[c] > pmin ? s->period_s[c] : pmin);
        int drop = c != keep && lb > tmax * (1 + 1e-12);
        /* periods at or below the least period never bind P: compare those as equal. Only the
         * kept smaller candidates are compared: one that was dropped as dominated has a
         * dominator that dominates c too (the terms compare with <=), and one dropped by the
         * bound bounds c as well (no larger fill and period: c's bound is at least its own),
         * so c is dropped exactly when some smaller candidate dominates it */
        double pc = s->period_s[c] > pmin ? s->period_s[c] : pmin;
        for (int j = 0; j < k && !drop && c != keep; j++) {
            int d = out[j];
            double pd = s->period_s[d] > pmin ? s->period_s[d] : pmin;
            drop = pd <= pc && s->l2_bytes[d] <= s->l2_bytes[c] &&
                   s->dram_bytes[d] <= s->dram_bytes[c] && s->fill_s[d] <= s->fill_s[c] &&
                   (!s->queue_bytes || s->queue_bytes[d] <= s->queue_bytes[c]);
        }
        if (!drop)
            out[k++] = c;
    }
    return k;
}

int ilp_solve(const ilp_problem *p, ilp_solution *sol)
{
    int n = p->nstages;
    memset(sol->choice, 0, (size_t)(n > 0 ? n : 0) * sizeof *sol->choice);
    sol->fallback = 1;
    sol->gap = 0;
    double pst;
    double t0 = exact(p, sol->choice, 1, &pst);
    double p0 = 0;
    if (t0 < 0) { /* exact checked the problem (valid): -1 when it is not, or nothing fits */
        sol->status = ILP_INFEASIBLE;
        sol->time_s = sol->bound_s = t0;
        sol->period_s = 0;
        return -1;
    }
    ilp_eval(p, sol->choice, &p0);
    sol->time_s = sol->bound_s = t0;
    sol->period_s = p0;
    sol->status = ILP_EXACT;
    if (!(t0 > 0))
        return 0; /* nothing to improve */
    /* a lower bound: the least fill of every stage plus N - 1 of the least period any allocation
     * that fits can have - the exact search's bound pst, and at least the L2 or DRAM bytes per
     * tile at every stage's least (what stands when the search met no level that fits); when
     * the search is that close, GLPK is not needed */
    double lb = 0, N1 = p->tiles > 1 ? p->tiles - 1 : 0;
    double l2_lb = p->l2_fixed_bytes, dram_lb = p->dram_fixed_bytes;
    double *fill_min = calloc((size_t)n, sizeof *fill_min);
    if (!fill_min) {
        sol->status = ILP_EXACT_FAILED;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const ilp_stage *s = &p->st[i];
        double f = INFINITY, l2 = INFINITY, dram = INFINITY;
        for (int c = 0; c < s->ncand; c++) {
            f = fmin(f, s->fill_s[c]);
            l2 = fmin(l2, s->l2_bytes[c]);
            dram = fmin(dram, s->dram_bytes[c]);
        }
        fill_min[i] = f;
        lb += f;
        l2_lb += l2;
        dram_lb += dram;
    }
    double pmin = pst > 0 ? pst : 0;
    if (p->l2_Bps > 0)
        pmin = fmax(pmin, l2_lb / p->l2_Bps);
    if (p->dram_Bps > 0)
        pmin = fmax(pmin, dram_lb / p->dram_Bps);
    pmin = fmin(pmin, p0); /* rounding: never above the exact search's own */
    double fill_lb = lb;
    lb += N1 * pmin;
    sol->bound_s = lb < t0 ? lb : t0;
    sol->gap = (t0 - sol->bound_s) / t0;
    if (sol->gap <= ILP_GAP_DONE) {
        sol->status = ILP_EXACT_BOUND;
        sol->fallback = 0;
        free(fill_min);
        return 0;
    }
    int total = 0;
    for (int i = 0; i < n; i++)
        total += p->st[i].ncand;
    reduced r = {0, NULL, NULL, NULL, 0};
    r.stage_of = calloc((size_t)total + 2, sizeof(int));
    r.cand_of = calloc((size_t)total + 2, sizeof(int));
    r.start = calloc((size_t)total + 2, sizeof(double));
    int *kept = calloc((size_t)total + 1, sizeof(int));
    int *first = calloc((size_t)n + 1, sizeof(int));
    int *ind = calloc((size_t)total + 2, sizeof(int));
    double *val = calloc((size_t)total + 2, sizeof(double));
    if (!r.stage_of || !r.cand_of || !r.start || !kept || !first || !ind || !val) {
        sol->status = ILP_EXACT_FAILED;
        goto out;
    }
    int nx = 0;
    for (int i = 0; i < n; i++) {
        first[i] = nx + 1;
        int k = prune(p, i, t0, fill_lb - fill_min[i], pmin, sol->choice[i], kept);
        for (int j = 0; j < k; j++) {
            nx++;
            r.stage_of[nx] = i;
            r.cand_of[nx] = kept[j];
            r.start[nx] = kept[j] == sol->choice[i] ? 1.0 : 0.0;
        }
    }
    first[n] = nx + 1;
    r.ncol = nx + 1;
    /* P in units of p0 (or of t0 when the period does not matter), objective in units of t0 */
    double pu = p0 > 0 ? p0 : t0;
    r.start[nx + 1] = p0 / pu;
    if (p->bb_nodes >= 0 && bb_done(p, first, r.cand_of + 1, sol, kept)) {
        /* the branch and bound proved its allocation optimal to ILP_BB_REL_GAP: GLPK is not
         * needed; the bound is what it proved (or the simple bound, when higher) */
        sol->status = ILP_OPTIMAL;
        sol->fallback = 0;
        ilp_eval(p, sol->choice, &sol->period_s);
        sol->bound_s = fmin(sol->time_s, fmax(sol->bound_s, sol->time_s * (1 - ILP_BB_REL_GAP)));
        sol->gap = (sol->time_s - sol->bound_s) / sol->time_s;
        goto out;
    }

    glpk_guard guard;
    glp_prob *volatile lp = NULL;
    volatile int status = ILP_EXACT_ERROR;
    volatile double bound = 0;
    glp_term_out(GLP_OFF);
    glp_error_hook(on_glpk_error, &guard);
    if (setjmp(guard.jb) == 0) {
        lp = glp_create_prob();
        glp_set_obj_dir(lp, GLP_MIN);
        glp_add_cols(lp, nx + 1);
        for (int col = 1; col <= nx; col++) {
            const ilp_stage *s = &p->st[r.stage_of[col]];
            glp_set_col_kind(lp, col, GLP_BV);
            glp_set_obj_coef(lp, col, s->fill_s[r.cand_of[col]] / t0);
        }
        int pc = nx + 1;
        glp_set_col_bnds(lp, pc, GLP_LO, pmin / pu, 0.0); /* a valid cut: the LP's P no lower */
        glp_set_obj_coef(lp, pc, N1 * pu / t0);
        for (int i = 0; i < n; i++) {
            const ilp_stage *s = &p->st[i];
            int m = 0;
            for (int col = first[i]; col < first[i + 1]; col++) {
                ind[++m] = col;
                val[m] = 1.0;
            }
            int row = glp_add_rows(lp, 2);
            glp_set_mat_row(lp, row, m, ind, val);
            glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
            for (int j = 1; j <= m; j++)
                val[j] = -s->period_s[r.cand_of[ind[j]]] / pu;
            ind[m + 1] = pc;
            val[m + 1] = 1.0;
            glp_set_mat_row(lp, row + 1, m + 1, ind, val);
            glp_set_row_bnds(lp, row + 1, GLP_LO, 0.0, 0.0);
        }
        /* bandwidth rows: 0 L2, 1 DRAM */
        for (int k = 0; k < 2; k++) {
            double B = k == 0 ? p->l2_Bps : p->dram_Bps;
            double fixed = k == 0 ? p->l2_fixed_bytes : p->dram_fixed_bytes;
            if (!(B > 0))
                continue;
            int m = 0;
            for (int col = 1; col <= nx; col++) {
                const ilp_stage *s = &p->st[r.stage_of[col]];
                double b = k == 0 ? s->l2_bytes[r.cand_of[col]] : s->dram_bytes[r.cand_of[col]];
                if (b > 0) {
                    ind[++m] = col;
                    val[m] = -b / B / pu;
                }
            }
            ind[m + 1] = pc;
            val[m + 1] = 1.0;
            int row = glp_add_rows(lp, 1);
            glp_set_mat_row(lp, row, m + 1, ind, val);
            glp_set_row_bnds(lp, row, GLP_LO, fixed / B / pu, 0.0);
        }
        /* capacity rows: 0 tensor pool, 1 simt pool, 2 smem, 3 regs, 4 queue bytes */
        for (int k = 0; k < 5; k++) {
            if (k == 1 && p->shared_pool)
                continue;
            if (k == 4 && p->queue_budget_bytes < 0)
                continue;
            double cap = k <= 1 ? p->sm_count
                       : k == 2 ? p->sm_count * p->smem_per_sm_bytes
                       : k == 3 ? p->sm_count * p->regs_per_sm_bytes
                                : p->queue_budget_bytes;
            if (!(cap > 0))
                cap = 1; /* zero capacity: any positive use violates it either way */
            int m = 0;
            for (int col = 1; col <= nx; col++) {
                const ilp_stage *s = &p->st[r.stage_of[col]];
                int c = r.cand_of[col];
                int in_row = k >= 2 || p->shared_pool || (k == 0 ? s->tensor : !s->tensor);
                double use = k == 2 ? s->smem_per_cta_bytes * s->cand_ctas[c]
                           : k == 3 ? s->regs_per_cta_bytes * s->cand_ctas[c]
                           : k == 4 ? (s->queue_bytes ? s->queue_bytes[c] : 0)
                                    : s->cand_ctas[c];
                if (in_row && use > 0) {
                    ind[++m] = col;
                    val[m] = use / cap;
                }
            }
            if (!m)
                continue;
            int row = glp_add_rows(lp, 1);
            glp_set_mat_row(lp, row, m, ind, val);
            glp_set_row_bnds(lp, row, GLP_UP, 0.0, 1.0 + ILP_CAP_TOL);
        }
        glp_smcp sm;
        glp_init_smcp(&sm);
        sm.msg_lev = GLP_MSG_OFF;
        int rc = glp_simplex(lp, &sm);
        if (rc == 0 && glp_get_status(lp) == GLP_OPT && glp_get_obj_val(lp) * t0 >=
                                                            t0 * (1 - ILP_GAP_DONE)) {
            /* the LP relaxation already proves the exact search within ILP_GAP_DONE */
            bound = glp_get_obj_val(lp) * t0;
            status = ILP_EXACT_BOUND;
        } else if (rc == 0 && glp_get_status(lp) == GLP_OPT) {
            bound = glp_get_obj_val(lp) * t0;
            glp_iocp io;
            glp_init_iocp(&io);
            io.msg_lev = GLP_MSG_OFF;
            io.presolve = GLP_OFF;
            io.cb_func = heur_cb;
            io.cb_info = &r;
            /* Gomory mixed-integer cuts: the same optimum in fewer nodes. On the shipped
             * workloads' pipelines (sweep of all workloads x both modes x 4 DRAM bandwidths on
             * the a100) they cut the process's instructions by 19% (callgrind; 470M of 1549M
             * were GLPK's branch and bound); every compare, map and sweep output tried was
             * byte-identical */
            io.gmi_cuts = GLP_ON;
            /* no MIP preprocessing at the nodes: with one binary per (stage, CTA count) and a
             * choice row per stage there is little to tighten, and it cost more than it saved -
             * compare --workload all --mode both on a100, h100, h200, b200 under five option
             * sets each: GLPK's branch and bound 4-45% faster (a100 6.4 -> 3.4 ms, b200 16.8 ->
             * 11.7 ms), every output byte-identical */
            io.pp_tech = GLP_PP_NONE;
            double ms = p->time_limit_s * 1e3;
            io.tm_lim = ms >= 1 ? (ms < 1e9 ? (int)ms : 1000000000) : 1;
            rc = glp_intopt(lp, &io);
            int ms_status = glp_mip_status(lp);
            if ((rc == 0 || rc == GLP_ETMLIM || rc == GLP_EMIPGAP) &&
                (ms_status == GLP_OPT || ms_status == GLP_FEAS)) {
                status = (rc == 0 && ms_status == GLP_OPT) ? ILP_OPTIMAL : ILP_FEASIBLE;
                int *ch = kept; /* scratch: the MILP's allocation */
                for (int i = 0; i < n; i++)
                    ch[i] = sol->choice[i];
                for (int col = 1; col <= nx; col++)
                    if (glp_mip_col_val(lp, col) > 0.5)
                        ch[r.stage_of[col]] = r.cand_of[col];
                double t = ilp_eval(p, ch, NULL);
                if (t >= 0 && t < sol->time_s) {
                    memcpy(sol->choice, ch, (size_t)n * sizeof *ch);
                    sol->time_s = t;
                }
            } else {
                status = rc == GLP_ETMLIM ? ILP_EXACT_TIMEOUT : ILP_EXACT_FAILED;
            }
        } else {
            status = ILP_EXACT_FAILED;
        }
        glp_delete_prob(lp);
        lp = NULL;
    } else {
        lp = NULL; /* freed with the environment by the hook */
        status = ILP_EXACT_ERROR;
    }
    glp_error_hook(NULL, NULL);
    sol->status = status;
    sol->fallback = status >= ILP_EXACT_TIMEOUT;
    ilp_eval(p, sol->choice, &sol->period_s);
    if (status == ILP_OPTIMAL)
        sol->bound_s = sol->time_s;
    else if (status == ILP_EXACT_BOUND && bound > sol->bound_s)
        sol->bound_s = bound < sol->time_s ? bound : sol->time_s;
    else
        sol->bound_s = bound > 0 && bound < sol->time_s ? bound : sol->time_s;
    sol->gap = sol->time_s > 0 ? (sol->time_s - sol->bound_s) / sol->time_s : 0;
out:
    free(fill_min);
    free(r.stage_of);
    free(r.cand_of);
    free(r.start);
    free(kept);
    free(first);
    free(ind);
    free(val);
    return 0;
}

void ilp_thread_release(void)
{
    glp_free_env();
}
