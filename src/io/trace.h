/* trace: measured kernels from a torch.profiler Chrome trace (JSON) or an Nsight Compute export
 * (ncu --csv --page raw), for validate --trace. */
#ifndef KT_TRACE_H
#define KT_TRACE_H
#include <stdint.h>

#include "../arena.h"
#include "../err.h"

/** One measured kernel. */
typedef struct trace_kernel {
    const char *name;
    double start_s;          /* Chrome trace "ts" (from the trace's clock); ncu: -1 */
    double dur_s;            /* Chrome "dur"; ncu gpu__time_duration.sum */
    int64_t dram_read_bytes; /* ncu dram__bytes_read.sum / _write.sum; -1 when absent */
    int64_t dram_write_bytes;
} trace_kernel;

enum { TRACE_CHROME, TRACE_NCU };

/** The kernels of a trace, in launch order (Chrome: by start time; ncu: by row). */
typedef struct trace {
    int format;      /* TRACE_CHROME or TRACE_NCU */
    int n;
    trace_kernel *k;
    int other;       /* GPU events that are not kernels (memsets, memcpys): left out */
    double other_s;  /* their time */
    int has_bytes;   /* ncu with both DRAM byte metrics */
    int steps;       /* Chrome: CPU events named "ProfilerStep#N" (torch.profiler's schedule) */
} trace;

/** Largest trace file read (bytes). */
#define TRACE_MAX_FILE_BYTES ((size_t)512 << 20)

/** Read `file`: JSON is a Chrome trace (events "ph": "X" with "cat": "kernel", "name", "ts" and
 *  "dur" in microseconds), anything else an ncu CSV (columns "Kernel Name" and
 *  "gpu__time_duration.sum", optional "dram__bytes_read.sum" and "dram__bytes_write.sum", a
 *  units row, ncu's "==PROF==" lines and "#" lines skipped). range (Chrome traces only; NULL:
 *  every kernel): the name of a CPU-side range (a record_function label, "ProfilerStep#3")
 *  whose kernels are kept: those whose launch (a cuda_runtime/cuda_driver event with the
 *  kernel's "correlation") falls inside its first occurrence. A gzip-compressed file is refused
 *  with a hint. Strings and arrays in a. 0, or -1 with e naming the file, the place (a JSON
 *  path, "line N") and the reason. */
int trace_load(const char *file, const char *range, arena *a, trace *t, kt_err *e);

#endif
