/* ilp: stage-to-SM mapping of a spatial pipeline - an exact search and an integer linear program
 * (GLPK). */
#ifndef KT_ILP_H
#define KT_ILP_H

/** One stage: its candidate CTA (SM) allocations and what it costs at each. */
typedef struct ilp_stage {
    int tensor;               /* 1: Tensor-core stage, 0: SIMT stage (which SM pool it uses) */
    int ncand;
    const int *cand_ctas;     /* candidate allocations, ascending, each in 1..sm_count */
    const double *period_s;   /* seconds per tile the stage needs at each candidate (> 0) */
    const double *l2_bytes;   /* its L2 bytes per tile at each candidate */
    const double *dram_bytes; /* its DRAM bytes per tile at each candidate */
    const double *fill_s;     /* its share of the pipeline fill (first tile) at each candidate */
    const double *queue_bytes;/* L2 storage of the rings it produces into, at each candidate
                                 (non-decreasing in the CTA count, as smem and registers are) */
    double smem_per_cta_bytes, regs_per_cta_bytes;
} ilp_stage;

/** The pipeline: time = fill + (tiles - 1) x period, where the period is the slowest stage's
 *  seconds per tile or the L2 / DRAM bytes of one tile over their bandwidths, whichever is
 *  longer. */
typedef struct ilp_problem {
    int nstages;
    const ilp_stage *st;
    int sm_count;
    int shared_pool;          /* 1: all stages draw from one pool of sm_count SMs (ablation) */
    double smem_per_sm_bytes, regs_per_sm_bytes;
    double tiles;             /* N >= 1 */
    double l2_Bps, dram_Bps;  /* achievable aggregate bandwidths (<= 0: no bound) */
    double l2_fixed_bytes, dram_fixed_bytes; /* per tile, outside the stages */
    double queue_budget_bytes;/* L2 bytes for queue storage; < 0: no constraint */
    double time_limit_s;
    long bb_nodes;            /* ilp_solve's branch-and-bound node budget: 0 the default
                                 (ILP_BB_NODES), < 0 none (GLPK's MILP decides) */
} ilp_problem;

enum { ILP_OPTIMAL, ILP_FEASIBLE, ILP_EXACT_BOUND, ILP_EXACT, ILP_EXACT_TIMEOUT, ILP_EXACT_FAILED,
       ILP_EXACT_ERROR, ILP_INFEASIBLE };

typedef struct ilp_solution {
    int status;               /* ILP_* */
    int fallback;             /* 1 when the allocation is the exact search's, not GLPK's */
    double time_s;            /* fill + (tiles - 1) x period of the chosen allocation */
    double period_s;
    double bound_s;           /* best lower bound on the time known */
    double gap;               /* (time - bound) / time, 0 when optimal */
    int *choice;              /* per stage: index into its candidates (caller-owned, nstages) */
} ilp_solution;

/** Time of an allocation (period into *period_s when not NULL), or -1 when it violates a
 *  capacity: Tensor-stage CTAs <= sm_count and SIMT-stage CTAs <= sm_count (one pool when
 *  shared_pool), shared memory and registers of all CTAs <= sm_count x per-SM capacity, queue
 *  storage <= queue_budget_bytes. */
double ilp_eval(const ilp_problem *p, const int *choice, double *period_s);
/** The exact period-minimizing allocation: for every candidate period P (each stage's distinct
 *  periods), each stage takes the fewest CTAs that reach P - every resource and every stage's
 *  traffic grows with its CTAs, so that is the cheapest way to P - and the best time over all P
 *  wins. Returns the time, or -1 when even one CTA per stage does not fit. Pure, no solver: the
 *  selection search's estimate (ilp_solve then gives spare SMs to stages whose fill they
 *  shorten, and runs the MILP). */
double ilp_exact(const ilp_problem *p, int *choice);
/** A fast estimate of ilp_exact for searches over many pipelines: the least feasible period level
 *  by bisection, then a geometric grid of levels and a refinement around the best, each level
 *  allocated as in ilp_exact. Returns the time, or -1 when nothing fits. Not guaranteed
 *  optimal; ilp_solve is. */
double ilp_estimate(const ilp_problem *p, int *choice);
/** Minimize fill + (tiles - 1) x P over binary x[i][c] (stage i gets cand_ctas[c] CTAs) with
 *  P >= period_i(c) for the chosen c, P >= (l2_fixed + sum l2_i(c)) / l2_Bps, P >= (dram_fixed +
 *  sum dram_i(c)) / dram_Bps, and the capacities of ilp_eval. From ilp_exact's allocation; when
 *  it is within 1% of a lower bound (every stage's least fill plus N - 1 least periods) nothing
 *  more is done (ILP_EXACT_BOUND). Else, on candidates pruned exactly (a candidate that is no
 *  better than a smaller one in every term is dominated; one whose bound exceeds the exact
 *  time is out), an exact branch and bound over period levels with knapsack bounds (ilp.c)
 *  proves the optimum (ILP_OPTIMAL, to a relative 1e-3) within bb_nodes nodes; beyond that the
 *  MILP is solved by GLPK, started from the best allocation found: silenced, its error hook
 *  longjmps back, the time limit set; when GLPK fails or runs out of time, the exact search's
 *  allocation is kept (status says which). 0, or -1 when nothing fits (choice all zeros).
 *  sol->choice must hold nstages. */
int ilp_solve(const ilp_problem *p, ilp_solution *sol);
/** Why an allocation breaks a capacity, as a phrase for messages ("3 Tensor-core stages need at
 *  least 3 SMs, the GPU has 1"), written into buf (size n); 0 when it fits (buf empty). */
int ilp_explain(const ilp_problem *p, const int *choice, char *buf, unsigned long n);
/** "optimal", "feasible (time limit)", "exact search", ... */
const char *ilp_status_name(int status);
/** Free GLPK's per-thread environment; call before a thread that solved ILPs exits (sweep
 *  workers), else GLPK's thread-local memory leaks. Harmless when GLPK was not used. */
void ilp_thread_release(void);

#endif
