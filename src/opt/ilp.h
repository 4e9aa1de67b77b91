/* ilp: stage-to-SM mapping of a spatial pipeline by integer linear programming (GLPK). */
#ifndef KT_ILP_H
#define KT_ILP_H

/** One stage: candidate CTA (SM) allocations and the stage's throughput at each. */
typedef struct ilp_stage {
    int tensor;               /* 1: Tensor-core stage, 0: SIMT stage (which SM pool it uses) */
    int ncand;
    const int *cand_ctas;     /* candidate allocations, ascending, each in 1..sm_count */
    const double *cand_rate;  /* tiles/s the stage sustains at each candidate */
    double smem_per_cta_bytes, regs_per_cta_bytes;
    double queue_bytes_per_cta; /* L2 storage of the queues this stage's CTAs produce into */
} ilp_stage;

typedef struct ilp_problem {
    int nstages;
    const ilp_stage *st;
    int sm_count;
    int shared_pool;          /* 1: all stages draw from one pool of sm_count SMs (ablation) */
    double smem_per_sm_bytes, regs_per_sm_bytes;
    double rate_cap;          /* tiles/s bound from DRAM and L2 bandwidth (<= 0: none) */
    double queue_budget_bytes;/* L2 bytes for queue storage; < 0: no queue-capacity constraint */
    double time_limit_s;
} ilp_problem;

enum { ILP_OPTIMAL, ILP_FEASIBLE, ILP_GREEDY_TIMEOUT, ILP_GREEDY_FAILED, ILP_GREEDY_ERROR };

typedef struct ilp_solution {
    int status;               /* ILP_* */
    int fallback;             /* 1 when the allocation is the greedy fallback */
    double objective;         /* throughput T in tiles/s of the chosen allocation */
    double bound;             /* best upper bound on T known (LP relaxation when not optimal) */
    double gap;               /* (bound - objective) / bound, 0 when optimal */
    int *choice;              /* per stage: index into its candidates (caller-owned, nstages) */
} ilp_solution;

/** Maximize T subject to T <= rate_i(a_i) for every stage, T <= rate_cap, sum of Tensor-stage
 *  CTAs <= sm_count and sum of SIMT-stage CTAs <= sm_count (one pool when shared_pool), shared
 *  memory and registers of all co-resident CTAs <= sm_count x per-SM capacity, queue storage <=
 *  queue_budget_bytes. GLPK is silenced, its error hook longjmps back, the time limit is set;
 *  when GLPK fails, times out without a solution or reports an infeasible model, ilp_greedy is
 *  used (status says which). 0, or -1 when even the smallest allocation is infeasible (then
 *  sol->choice is all zeros and objective the greedy value). sol->choice must hold nstages. */
int ilp_solve(const ilp_problem *p, ilp_solution *sol);
/** Greedy fallback: every stage starts at its smallest candidate; repeatedly the slowest stage
 *  moves to its next candidate while all capacity constraints still hold. Returns T. */
double ilp_greedy(const ilp_problem *p, int *choice);
/** Throughput of an allocation (min over stages and rate_cap), or -1 if it violates a
 *  constraint. */
double ilp_eval(const ilp_problem *p, const int *choice);
/** "optimal", "feasible", "greedy (time limit)", "greedy (solver failed)", "greedy (solver error)". */
const char *ilp_status_name(int status);
/** Free GLPK's per-thread environment; call before a thread that solved ILPs exits (sweep
 *  workers), else GLPK's thread-local memory leaks. Harmless when GLPK was not used. */
void ilp_thread_release(void);

#endif
