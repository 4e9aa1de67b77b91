/* check_ilp: the stage-to-SM mapper (exact search, estimate, GLPK MILP) against exhaustive
 * enumeration computed here independently. */
#include <math.h>
#include <stdlib.h>

#include "../src/opt/ilp.h"
#include "ktest.h"

enum { MAXS = 4, MAXC = 8 };

/* Deterministic LCG so the random pipelines are the same every run. */
static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

/* Independent brute force: every combination, capacities and the time formula written here. */
static double brute(const ilp_problem *p)
{
    int c[MAXS] = {0};
    double best = -1;
    for (;;) {
        double pool[2] = {0, 0}, smem = 0, q = 0, P = 0, fill = 0;
        double l2 = p->l2_fixed_bytes, dram = p->dram_fixed_bytes;
        for (int i = 0; i < p->nstages; i++) {
            const ilp_stage *s = &p->st[i];
            int a = s->cand_ctas[c[i]];
            pool[p->shared_pool ? 0 : s->tensor] += a;
            smem += a * s->smem_per_cta_bytes;
            q += s->queue_bytes[c[i]];
            P = fmax(P, s->period_s[c[i]]);
            fill += s->fill_s[c[i]];
            l2 += s->l2_bytes[c[i]];
            dram += s->dram_bytes[c[i]];
        }
        if (p->l2_Bps > 0)
            P = fmax(P, l2 / p->l2_Bps);
        if (p->dram_Bps > 0)
            P = fmax(P, dram / p->dram_Bps);
        double t = fill + (p->tiles - 1) * P;
        int ok = pool[0] <= p->sm_count && pool[1] <= p->sm_count &&
                 smem <= p->sm_count * p->smem_per_sm_bytes &&
                 (p->queue_budget_bytes < 0 || q <= p->queue_budget_bytes);
        if (ok && (best < 0 || t < best))
            best = t;
        int i = 0;
        while (i < p->nstages && ++c[i] == p->st[i].ncand)
            c[i++] = 0;
        if (i == p->nstages)
            break;
    }
    return best;
}

/* A random stage: a period that falls with the CTA count but not linearly (wave quantization),
 * traffic that grows with it (multicast), a fill that falls with it, ring storage that grows
 * with it (the mapper's contract for every resource). */
static void random_stage(unsigned *seed, const int *cands, int nc, ilp_stage *st, double *buf)
{
    double *period = buf, *l2 = buf + MAXC, *dram = buf + 2 * MAXC, *fill = buf + 3 * MAXC,
           *qb = buf + 4 * MAXC;
    double work = 1e-6 * (1 + rnd(seed) % 100);
    double wave = 1 + rnd(seed) % 7;
    double mc = (rnd(seed) % 3) * 1000.0;
    double qbase = 100.0 * (rnd(seed) % 50);
    for (int k = 0; k < nc; k++) {
        period[k] = work * ceil(wave / cands[k] + 0.5) / wave;
        l2[k] = 4000.0 + mc * cands[k];
        dram[k] = rnd(seed) % 4 ? 0 : 2000.0;
        fill[k] = period[k] * (1 + rnd(seed) % 3);
        qb[k] = qbase * (1 + cands[k] / 4);
    }
    st->tensor = (int)(rnd(seed) % 2);
    st->ncand = nc;
    st->cand_ctas = cands;
    st->period_s = period;
    st->l2_bytes = l2;
    st->dram_bytes = dram;
    st->fill_s = fill;
    st->queue_bytes = qb;
    st->smem_per_cta_bytes = rnd(seed) % 3 ? 1000.0 * (rnd(seed) % 100) : 0;
    st->regs_per_cta_bytes = 0;
}

/* A stage whose fill has a floor the CTA count does not move (resident weights loaded before
 * the first tile, a reduction's output written once) or is one period (a reduction's): the
 * allocations with the least period then need not be the fastest, which is where a lower bound
 * taken from the exact search's own period was wrong (it claimed "optimal" 3.4% above the
 * optimum and a bound above it; found with this generator, seeds 1-3 and 12345). */
static void floor_stage(unsigned *seed, const int *cands, int nc, ilp_stage *st, double *buf)
{
    random_stage(seed, cands, nc, st, buf);
    double *period = buf, *dram = buf + 2 * MAXC, *fill = buf + 3 * MAXC;
    double floor_s = rnd(seed) % 2 ? 1e-6 * (rnd(seed) % 50) : 0;
    int reduction = rnd(seed) % 3 == 0;
    for (int k = 0; k < nc; k++) {
        dram[k] = 0;
        fill[k] = (reduction ? period[k] : fill[k]) + floor_s;
    }
    st->smem_per_cta_bytes = 0;
}

/* ilp_solve's answer to p against the brute force's want */
static void solve_vs_brute(const ilp_problem *p, double want, int trial, ilp_solution *sol)
{
    int rc = ilp_solve(p, sol);
    if (want < 0) {
        ck_assert_int_eq(rc, -1);
        return;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(sol->status == ILP_OPTIMAL || sol->status == ILP_EXACT_BOUND,
                  "trial %d status %s (bb_nodes %ld)", trial, ilp_status_name(sol->status),
                  p->bb_nodes);
    /* optimal to the branch and bound's relative 0.1% (ilp.c ILP_BB_REL_GAP; GLPK's exactly),
     * or proven within the 1% of the time the bound allows */
    double tol = 1 / (1 - (sol->status == ILP_OPTIMAL ? 1e-3 : 1e-2)) - 1 + 1e-9;
    ck_assert_msg(sol->gap <= (sol->status == ILP_OPTIMAL ? 1e-3 : 1e-2) + 1e-12,
                  "trial %d: gap %g", trial, sol->gap);
    ck_assert_msg(sol->time_s >= want * (1 - 1e-9) && sol->time_s <= want * (1 + tol),
                  "trial %d: ilp %g brute %g (%s, bb_nodes %ld)", trial, sol->time_s, want,
                  ilp_status_name(sol->status), p->bb_nodes);
    ck_assert_double_eq_tol(ilp_eval(p, sol->choice, NULL), sol->time_s, 1e-9 * want);
    ck_assert_msg(sol->bound_s <= want * (1 + 1e-9), "trial %d: bound %g above the optimum %g",
                  trial, sol->bound_s, want);
}

/* ilp_solve (its branch and bound; GLPK's MILP alone; GLPK after a branch and bound out of
 * nodes), ilp_exact and ilp_estimate on one random problem against the brute force; 1 when
 * GLPK proved the optimum. */
static int against_brute(const ilp_problem *p, int trial)
{
    int choice[MAXS], ch2[MAXS];
    ilp_solution sol = {.choice = choice};
    double want = brute(p);
    ilp_problem q = *p;
    q.bb_nodes = 1;
    solve_vs_brute(&q, want, trial, &sol);
    q.bb_nodes = -1;
    solve_vs_brute(&q, want, trial, &sol);
    int glpk = want >= 0 && sol.status == ILP_OPTIMAL;
    solve_vs_brute(p, want, trial, &sol);
    if (want < 0) {
        ck_assert_double_eq(ilp_exact(p, ch2), -1);
        return 0;
    }
    /* the exact search and the estimate are feasible and never better than the optimum */
    double te = ilp_exact(p, ch2);
    ck_assert(te >= want * (1 - 1e-9));
    double tq = ilp_estimate(p, ch2);
    ck_assert(tq >= want * (1 - 1e-9));
    ck_assert_double_eq_tol(ilp_eval(p, ch2, NULL), tq, 1e-9 * tq);
    return glpk;
}

/* A random pipeline's stages: 4..16 SMs (*S), 2..4 stages (returned) drawn by gen over the
 * candidate counts that fit (cands holds MAXC). */
typedef void (*stage_gen)(unsigned *, const int *, int, ilp_stage *, double *);
static int random_stages(unsigned *seed, stage_gen gen, int *S, int *cands, ilp_stage *st,
                         double (*buf)[5 * MAXC])
{
    static const int CAND[MAXC] = {1, 2, 3, 4, 6, 8, 12, 16};
    *S = 4 + (int)(rnd(seed) % 13);
    int n = 2 + (int)(rnd(seed) % 3), nc = 0;
    for (int k = 0; k < MAXC; k++)
        if (CAND[k] <= *S)
            cands[nc++] = CAND[k];
    for (int i = 0; i < n; i++)
        gen(seed, cands, nc, &st[i], buf[i]);
    return n;
}

START_TEST(random_vs_brute_force)
{
    unsigned seed = 12345;
    int optimal = 0;
    for (int trial = 0; trial < 80; trial++) {
        ilp_stage st[MAXS];
        double buf[MAXS][5 * MAXC];
        int S, cands[MAXC];
        int n = random_stages(&seed, random_stage, &S, cands, st, buf);
        ilp_problem p = {n, st, S, (int)(rnd(&seed) % 2), 64000, 65536,
                         1.0 + (rnd(&seed) % 4 ? rnd(&seed) % 500 : 0),
                         rnd(&seed) % 2 ? 0 : 1e9 + 1e7 * (rnd(&seed) % 100),
                         rnd(&seed) % 2 ? 0 : 1e9,
                         0, rnd(&seed) % 2 ? 0 : 500.0,
                         rnd(&seed) % 2 ? -1 : 2000.0 + 500.0 * (rnd(&seed) % 100), 5.0, 0};
        optimal += against_brute(&p, trial);
    }
    ck_assert_int_ge(optimal, 5); /* GLPK itself was exercised */
}
END_TEST

START_TEST(fill_floors_vs_brute_force)
{
    static const unsigned SEEDS[] = {1, 2, 3, 12345};
    for (size_t sd = 0; sd < sizeof SEEDS / sizeof *SEEDS; sd++) {
        unsigned seed = SEEDS[sd];
        for (int trial = 0; trial < 3000; trial++) {
            ilp_stage st[MAXS];
            double buf[MAXS][5 * MAXC];
            int S, cands[MAXC];
            int n = random_stages(&seed, floor_stage, &S, cands, st, buf);
            ilp_problem p = {n, st, S, (int)(rnd(&seed) % 2), 64000, 65536,
                             1.0 + rnd(&seed) % 200,
                             rnd(&seed) % 2 ? 0 : 1e8 + 1e7 * (rnd(&seed) % 100), 0,
                             0, 0, -1, 5.0, 0};
            against_brute(&p, trial);
        }
    }
}
END_TEST

/* ilp_exact's definition, written out: for every period level v at or above the slowest
 * stage's least period (every candidate's period is tried, ascending), each stage takes its
 * fewest CTAs with a period <= v; the first level with the least time wins. No frontier, heap,
 * running sums or skipped levels. -1 (and choice 0) when no level fits. */
static double levels_ref(const ilp_problem *p, int *choice)
{
    enum { NV = 8 * 64 };
    double lv[NV];
    int nv = 0, cur[8];
    double plo = 0;
    for (int i = 0; i < p->nstages; i++) {
        double m = INFINITY;
        for (int c = 0; c < p->st[i].ncand; c++)
            m = fmin(m, p->st[i].period_s[c]);
        plo = fmax(plo, m);
    }
    for (int i = 0; i < p->nstages; i++)
        for (int c = 0; c < p->st[i].ncand; c++)
            if (p->st[i].period_s[c] >= plo && nv < NV)
                lv[nv++] = p->st[i].period_s[c];
    for (int a = 1; a < nv; a++) /* ascending */
        for (int b = a; b > 0 && lv[b - 1] > lv[b]; b--) {
            double t = lv[b];
            lv[b] = lv[b - 1];
            lv[b - 1] = t;
        }
    double best = -1;
    for (int i = 0; i < p->nstages; i++)
        choice[i] = 0;
    for (int k = 0; k < nv; k++) {
        for (int i = 0; i < p->nstages; i++) {
            cur[i] = 0;
            while (p->st[i].period_s[cur[i]] > lv[k])
                cur[i]++; /* lv[k] >= plo: some candidate reaches it */
        }
        double t = ilp_eval(p, cur, NULL);
        if (t >= 0 && (best < 0 || t < best)) {
            best = t;
            for (int i = 0; i < p->nstages; i++)
                choice[i] = cur[i];
        }
    }
    return best;
}

/* The exact search (frontiers merged by a heap, levels below the least period skipped by
 * bisection, an O(1) screen before each evaluation) against its definition, on problems shaped
 * like the shipped pipelines': every CTA count 1..#SMs, up to 8 stages, periods with plateaus
 * (wave quantization) and ties. The same time and the same allocation. */
START_TEST(exact_is_its_definition)
{
    enum { BS = 8, BC = 40 };
    unsigned seed = 777;
    static int cands[BC];
    for (int k = 0; k < BC; k++)
        cands[k] = k + 1;
    int feasible = 0;
    for (int trial = 0; trial < 300; trial++) {
        int S = 6 + (int)(rnd(&seed) % (BC - 5)); /* 6..40 SMs, candidates 1..S */
        int n = 2 + (int)(rnd(&seed) % (BS - 1)); /* 2..8 stages */
        ilp_stage st[BS];
        static double buf[BS][5][BC];
        for (int i = 0; i < n; i++) {
            double work = 1e-6 * (1 + rnd(&seed) % 50), wave = 1 + rnd(&seed) % 9;
            double qbase = 100.0 * (rnd(&seed) % 50), mc = (rnd(&seed) % 3) * 1000.0;
            for (int k = 0; k < S; k++) {
                buf[i][0][k] = work * ceil(wave / cands[k] + 0.5) / wave;
                buf[i][1][k] = 4000.0 + mc * cands[k];
                buf[i][2][k] = rnd(&seed) % 4 ? 0 : 2000.0;
                buf[i][3][k] = buf[i][0][k] * (1 + rnd(&seed) % 3);
                buf[i][4][k] = qbase * (1 + cands[k] / 4);
            }
            st[i] = (ilp_stage){.tensor = (int)(rnd(&seed) % 2), .ncand = S, .cand_ctas = cands,
                                .period_s = buf[i][0], .l2_bytes = buf[i][1],
                                .dram_bytes = buf[i][2], .fill_s = buf[i][3],
                                .queue_bytes = buf[i][4],
                                .smem_per_cta_bytes = rnd(&seed) % 3 ? 1000.0 * (rnd(&seed) % 100) : 0};
        }
        ilp_problem p = {n, st, S, (int)(rnd(&seed) % 2), 64000, 65536,
                         1.0 + rnd(&seed) % 2000,
                         rnd(&seed) % 2 ? 0 : 1e9 + 1e7 * (rnd(&seed) % 100),
                         rnd(&seed) % 2 ? 0 : 1e9, 0, 0,
                         rnd(&seed) % 2 ? -1 : 2000.0 + 500.0 * (rnd(&seed) % 400), 5.0, 0};
        int got[BS], want[BS];
        double tw = levels_ref(&p, want);
        double tg = ilp_exact(&p, got);
        if (tw < 0) {
            ck_assert_double_eq(tg, -1);
            continue;
        }
        feasible++;
        ck_assert_msg(tg == tw, "trial %d: exact %.17g, definition %.17g", trial, tg, tw);
        for (int i = 0; i < n; i++)
            ck_assert_msg(got[i] == want[i], "trial %d stage %d: exact %d, definition %d", trial,
                          i, got[i], want[i]);
    }
    ck_assert_int_ge(feasible, 100); /* most problems have an allocation */
}
END_TEST

/* With one tile the period does not matter: the mapper minimizes fill alone. */
START_TEST(one_tile_is_fill_only)
{
    static const int C[] = {1, 2, 4};
    double per[3] = {4, 2, 1}, l2[3] = {0, 0, 0}, dr[3] = {0, 0, 0}, fill[3] = {3, 2, 5},
           qb[3] = {0, 0, 0};
    ilp_stage st[1] = {{1, 3, C, per, l2, dr, fill, qb, 0, 0}};
    ilp_problem p = {1, st, 4, 0, 1, 1, 1, 0, 0, 0, 0, -1, 5.0, 0};
    int ch[1];
    ilp_solution sol = {.choice = ch};
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(C[ch[0]], 2);
    ck_assert_double_eq_tol(sol.time_s, 2, 1e-12);
}
END_TEST

START_TEST(falling_bytes_keep_the_bound)
{
    /* Stage A's DRAM bytes per tile fall from 3000 at 2 CTAs to 0 at 3 (a weight slice that
     * becomes resident); B needs 1 CTA. DRAM 1e9 B/s, 101 tiles, periods in us. The fewest
     * CTAs reaching 2 us give A 2 CTAs and a 3 us DRAM-bound period (time 2 + 1 + 100 x 3 =
     * 303 us); A at 3 CTAs reaches 2 us without DRAM traffic: 2 + 1 + 100 x 2 = 203 us, the
     * optimum. A bound that takes bytes to grow with CTAs is 303 us and stops the search
     * there. */
    static const int CA[] = {1, 2, 3}, CB[] = {1};
    double pa[3] = {4e-6, 2e-6, 2e-6}, da[3] = {0, 3000, 0}, za[3] = {0, 0, 0};
    double pb[1] = {1e-6}, zb[1] = {0};
    ilp_stage st[2] = {{1, 3, CA, pa, za, da, pa, za, 0, 0}, {1, 1, CB, pb, zb, zb, pb, zb, 0, 0}};
    ilp_problem p = {2, st, 4, 1, 1, 1, 101, 0, 1e9, 0, 0, -1, 5.0, 0};
    int ch[2];
    ilp_solution sol = {.choice = ch};
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(CA[ch[0]], 3);
    ck_assert_double_eq_tol(sol.time_s, 203e-6, 1e-15);
    ck_assert(sol.bound_s <= 203e-6 * (1 + 1e-12));
}
END_TEST

START_TEST(equal_stages_split_evenly)
{
    /* two Tensor stages with the same linear rate, many tiles: the optimum is S/2 each */
    static const int C[] = {1, 2, 4, 8, 12, 16, 24};
    double per[7], z[7] = {0}, fill[7];
    for (int k = 0; k < 7; k++) {
        per[k] = 1.0 / (10.0 * C[k]);
        fill[k] = per[k];
    }
    ilp_stage st[2] = {{1, 7, C, per, z, z, fill, z, 0, 0}, {1, 7, C, per, z, z, fill, z, 0, 0}};
    ilp_problem p = {2, st, 24, 0, 1, 1, 1001, 0, 0, 0, 0, -1, 5.0, 0};
    int ch[2];
    ilp_solution sol = {.choice = ch};
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(C[ch[0]], 12);
    ck_assert_int_eq(C[ch[1]], 12);
    ck_assert_double_eq_tol(sol.period_s, 1.0 / 120, 1e-12);
    /* a Tensor and a SIMT stage share SMs under the heterogeneity-aware scheduler ... */
    st[1].tensor = 0;
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(C[ch[0]], 24);
    ck_assert_int_eq(C[ch[1]], 24);
    /* ... and not in the shared-pool ablation */
    p.shared_pool = 1;
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(C[ch[0]] + C[ch[1]], 24);
    ck_assert_double_eq_tol(sol.period_s, 1.0 / 120, 1e-12);
}
END_TEST

START_TEST(bounds_and_failures)
{
    static const int C[] = {1, 2, 4};
    double p1[3] = {1, 0.5, 0.25}, p2[3] = {1.0 / 3, 1.0 / 6, 1.0 / 12}, z[3] = {0},
           l2[3] = {10, 10, 10}, f[3] = {0, 0, 0};
    ilp_stage st[2] = {{1, 3, C, p1, l2, z, f, z, 0, 0}, {0, 3, C, p2, l2, z, f, z, 0, 0}};
    /* L2 bandwidth binds: 20 bytes per tile at 50 B/s = 0.4 s per tile */
    ilp_problem p = {2, st, 4, 0, 1, 1, 11, 50, 0, 0, 0, -1, 5.0, 0};
    int ch[2];
    ilp_solution sol = {.choice = ch};
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_double_eq_tol(sol.period_s, 0.4, 1e-12);
    ck_assert_double_eq_tol(sol.time_s, 10 * 0.4, 1e-12);
    /* smem: each CTA needs a whole SM's shared memory: 4 CTAs in total at most */
    st[0].smem_per_cta_bytes = st[1].smem_per_cta_bytes = 100;
    p.smem_per_sm_bytes = 100;
    p.l2_Bps = 0;
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_le(C[ch[0]] + C[ch[1]], 4);
    ck_assert_double_eq_tol(sol.period_s, 0.5, 1e-12); /* (2, 1) or (2, 2) */
    /* nothing fits: -1 */
    p.smem_per_sm_bytes = 10;
    ck_assert_int_eq(ilp_solve(&p, &sol), -1);
    ck_assert_int_eq(sol.status, ILP_INFEASIBLE);
    /* a non-finite period is rejected */
    p.smem_per_sm_bytes = 100;
    p2[2] = NAN;
    ck_assert_int_eq(ilp_solve(&p, &sol), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ilp");
    TCase *t = tcase_create("ilp_solve");
    tcase_add_test(t, random_vs_brute_force);
    tcase_add_test(t, fill_floors_vs_brute_force);
    tcase_add_test(t, exact_is_its_definition);
    tcase_add_test(t, one_tile_is_fill_only);
    tcase_add_test(t, falling_bytes_keep_the_bound);
    tcase_add_test(t, equal_stages_split_evenly);
    tcase_add_test(t, bounds_and_failures);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(suite)
