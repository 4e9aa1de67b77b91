#!/usr/bin/env python3
"""genz_llama_layer.py: GenZ's prediction of the Llama 3 8B decoder layer kitsune ships
(workloads/llama3-8b-ctx.json: B=4 sequences of 2,048 tokens, prefill, bf16) on an H100, timed
in-process: one warm-up call, then the median and min-max of REPEATS calls of
GenZ.prefill_moddeling on a one-layer Llama 3.1 8B configuration (GenZ's own llama3_8b config
with num_decoder_layers=1; GenZ adds the embedding and the classifier GEMMs around it). Prints
"median_us min_us max_us latency_ms", the latency GenZ predicts for that model.

GenZ (github.com/abhibambhaniya/GenZ-LLM-Analyzer) is not packaged for Debian: give a checkout
as GENZ_DIR. Its imports need python3-numpy, python3-pandas, python3-matplotlib, python3-seaborn
and python3-ipython (Debian packages) and paretoset (not packaged; only its Pareto search uses
it, so scripts/bench-genz.sh puts a stub that raises on use on the path).

  GENZ_DIR=/path/to/GenZ-LLM-Analyzer python3 bench/genz_llama_layer.py [REPEATS]
"""
import copy
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.environ["GENZ_DIR"])
warnings.filterwarnings("ignore")
from GenZ import prefill_moddeling  # noqa: E402
from GenZ.Models.Model_sets.meta import llama3_8b_config  # noqa: E402

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
layer = copy.deepcopy(llama3_8b_config)
layer.num_decoder_layers = 1


def once():
    return prefill_moddeling(model=layer, batch_size=4, input_tokens=2048, system_name="H100_GPU",
                             bits="bf16")


out = once()  # warm-up (GenZ writes its operator tables on first use)
t = []
for _ in range(reps):
    t0 = time.perf_counter()
    out = once()
    t.append(time.perf_counter() - t0)
print("%.1f %.1f %.1f %.4f" % (1e6 * statistics.median(t), 1e6 * min(t), 1e6 * max(t),
                              out["Latency"]))
