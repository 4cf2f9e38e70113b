"""numpy reference for bench/bootstrap-first-call.ts: the same paired query-cluster bootstrap (METHOD.md §9).

Resample the n query clusters with replacement B times (each drawn query brings its s seeds for both
methods), Δ* = mean over the drawn cells of a − b in percentage points, 95% percentile interval.
numpy's own generator (default_rng, PCG64) draws the indices, so the values differ from the kit's
CPython-exact draws; only the work is the same. Reads the outcomes as JSON {"a": [[...]], "b": [[...]],
"resamples": B, "seed": s} from the file named by argv[1]; prints one JSON line with the time of the
call alone (ms, after the input is a numpy array) and of a second call on the same input
(after_first_ms: what the bench subtracts from the process time).
Run by the bench, not by hand: python3 bench/bootstrap_numpy.py input.json
"""
import json
import sys
import time

import numpy as np


def paired_cluster_bootstrap(a, b, resamples, seed):
    n, s = a.shape
    diff = (a - b).sum(axis=1).astype(np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    deltas = diff[idx].sum(axis=1) * 100.0 / (n * s)
    deltas.sort()
    lo, hi = np.quantile(deltas, [0.025, 0.975])
    return diff.sum() * 100.0 / (n * s), float(lo), float(hi)


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    a = np.asarray(data["a"], dtype=np.int8)
    b = np.asarray(data["b"], dtype=np.int8)
    start = time.perf_counter()
    delta, lo, hi = paired_cluster_bootstrap(a, b, data["resamples"], data["seed"])
    first = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    paired_cluster_bootstrap(a, b, data["resamples"], data["seed"])
    second = (time.perf_counter() - start) * 1000
    print(json.dumps({"first_ms": first, "second_ms": second, "after_first_ms": second, "delta": delta, "lo": lo, "hi": hi, "numpy": np.__version__}))


if __name__ == "__main__":
    main()
