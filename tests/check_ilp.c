/* check_ilp: the GLPK stage-to-SM mapping against exhaustive enumeration. */
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

/* Independent brute force: every combination, feasibility checked here. */
static double brute(const ilp_problem *p)
{
    int c[MAXS] = {0};
    double best = -1;
    for (;;) {
        double pool[2] = {0, 0}, smem = 0, q = 0, t = p->rate_cap > 0 ? p->rate_cap : 1e300;
        for (int i = 0; i < p->nstages; i++) {
            int a = p->st[i].cand_ctas[c[i]];
            pool[p->shared_pool ? 0 : p->st[i].tensor] += a;
            smem += a * p->st[i].smem_per_cta_bytes;
            q += a * p->st[i].queue_bytes_per_cta;
            t = fmin(t, p->st[i].cand_rate[c[i]]);
        }
        int ok = pool[0] <= p->sm_count && pool[1] <= p->sm_count &&
                 smem <= p->sm_count * p->smem_per_sm_bytes &&
                 (p->queue_budget_bytes < 0 || q <= p->queue_budget_bytes);
        if (ok && t > best)
            best = t;
        int i = 0;
        while (i < p->nstages && ++c[i] == p->st[i].ncand)
            c[i++] = 0;
        if (i == p->nstages)
            break;
    }
    return best;
}

START_TEST(random_vs_brute_force)
{
    unsigned seed = 12345;
    static const int CAND[MAXC] = {1, 2, 3, 4, 6, 8, 12, 16};
    for (int trial = 0; trial < 60; trial++) {
        int S = 4 + (int)(rnd(&seed) % 13); /* 4..16 SMs */
        int n = 2 + (int)(rnd(&seed) % 3);  /* 2..4 stages */
        ilp_stage st[MAXS];
        double rate[MAXS][MAXC];
        int cands[MAXC], nc = 0;
        for (int k = 0; k < MAXC; k++)
            if (CAND[k] <= S)
                cands[nc++] = CAND[k];
        for (int i = 0; i < n; i++) {
            double base = 1 + rnd(&seed) % 100;
            double wave = 1 + rnd(&seed) % 7; /* tiles per wave: non-linear scaling */
            for (int k = 0; k < nc; k++)
                rate[i][k] = base * cands[k] / ceil(wave / cands[k] + 0.5);
            st[i].tensor = (int)(rnd(&seed) % 2);
            st[i].ncand = nc;
            st[i].cand_ctas = cands;
            st[i].cand_rate = rate[i];
            st[i].smem_per_cta_bytes = rnd(&seed) % 3 ? 1000.0 * (rnd(&seed) % 100) : 0;
            st[i].regs_per_cta_bytes = 0;
            st[i].queue_bytes_per_cta = 100.0 * (rnd(&seed) % 50);
        }
        ilp_problem p = {n, st, S, (int)(rnd(&seed) % 2), 64000, 65536,
                         rnd(&seed) % 2 ? 0 : 50.0 + rnd(&seed) % 500,
                         rnd(&seed) % 2 ? -1 : 2000.0 + 100.0 * (rnd(&seed) % 100), 5.0};
        int choice[MAXS];
        ilp_solution sol = {.choice = choice};
        double want = brute(&p);
        int rc = ilp_solve(&p, &sol);
        if (want < 0) {
            ck_assert_int_eq(rc, -1);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        ck_assert_msg(sol.status == ILP_OPTIMAL, "trial %d status %s", trial,
                      ilp_status_name(sol.status));
        ck_assert_msg(fabs(sol.objective - want) <= 1e-6 * want, "trial %d: ilp %g brute %g",
                      trial, sol.objective, want);
        ck_assert_double_eq_tol(ilp_eval(&p, choice), want, 1e-6 * want);
        ck_assert_double_eq_tol(sol.gap, 0, 1e-12);
        /* the greedy fallback is feasible and never better than the optimum */
        int gch[MAXS];
        double g = ilp_greedy(&p, gch);
        ck_assert(g <= want * (1 + 1e-9));
    }
}
END_TEST

START_TEST(equal_stages_split_evenly)
{
    /* two Tensor stages with the same linear rate: the optimum is S/2 each */
    static const int C[] = {1, 2, 4, 8, 12, 16, 24};
    double r[7];
    for (int k = 0; k < 7; k++)
        r[k] = 10.0 * C[k];
    ilp_stage st[2] = {{1, 7, C, r, 0, 0, 0}, {1, 7, C, r, 0, 0, 0}};
    ilp_problem p = {2, st, 24, 0, 1, 1, 0, -1, 5.0};
    int ch[2];
    ilp_solution sol = {.choice = ch};
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(C[ch[0]], 12);
    ck_assert_int_eq(C[ch[1]], 12);
    ck_assert_double_eq_tol(sol.objective, 120, 1e-9);
    /* a Tensor and a SIMT stage share SMs under the heterogeneity-aware scheduler ... */
    st[1].tensor = 0;
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(C[ch[0]], 24);
    ck_assert_int_eq(C[ch[1]], 24);
    /* ... and not in the shared-pool ablation */
    p.shared_pool = 1;
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(C[ch[0]] + C[ch[1]], 24);
    ck_assert_double_eq_tol(sol.objective, 120, 1e-9);
}
END_TEST

START_TEST(bounds_and_fallback)
{
    static const int C[] = {1, 2, 4};
    double r1[3] = {1, 2, 4}, r2[3] = {3, 6, 12};
    ilp_stage st[2] = {{1, 3, C, r1, 0, 0, 0}, {0, 3, C, r2, 0, 0, 0}};
    /* rate cap from bandwidth binds */
    ilp_problem p = {2, st, 4, 0, 1, 1, 2.5, -1, 5.0};
    int ch[2];
    ilp_solution sol = {.choice = ch};
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_double_eq_tol(sol.objective, 2.5, 1e-12);
    /* smem: each CTA needs the whole SM's shared memory: 4 CTAs in total at most */
    st[0].smem_per_cta_bytes = st[1].smem_per_cta_bytes = 100;
    p.smem_per_sm_bytes = 100;
    p.rate_cap = 0;
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_le(C[ch[0]] + C[ch[1]], 4);
    ck_assert_double_eq_tol(sol.objective, 2, 1e-12); /* (2, 1) or (2, 2): min(2, 3 or 6) */
    /* nothing fits: -1, greedy status */
    p.smem_per_sm_bytes = 10;
    ck_assert_int_eq(ilp_solve(&p, &sol), -1);
    ck_assert_int_eq(sol.fallback, 1);
    /* a non-finite rate is rejected before GLPK and the greedy answers */
    p.smem_per_sm_bytes = 100;
    r2[2] = NAN;
    ck_assert_int_eq(ilp_solve(&p, &sol), 0);
    ck_assert_int_eq(sol.fallback, 1);
    ck_assert_int_eq(sol.status, ILP_GREEDY_FAILED);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ilp");
    TCase *t = tcase_create("ilp_solve");
    tcase_add_test(t, random_vs_brute_force);
    tcase_add_test(t, equal_stages_split_evenly);
    tcase_add_test(t, bounds_and_fallback);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(suite)
