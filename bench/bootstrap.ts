/**
 * Benchmark, paired query-cluster bootstrap (METHOD.md §9, Table 2): wall time of 10,000 resamples
 * of 1,534 queries × 3 seeds for 10 method pairs (a BIRD-sized Table 2), median of 5 repetitions.
 * Target: < 2 s on one core. Each repetition uses its own seed, so it pays for drawing the
 * 15.3M indices once (shared by its 10 pairs, see the memo in bootstrap.ts). Never asserted by tests.
 * Run: node bench/bootstrap.ts
 */
import { pairedClusterBootstrap } from "../lib/analysis/bootstrap.ts";
import { PyRandom } from "../lib/random.ts";

const QUERIES = 1534;
const SEEDS = 3;
const PAIRS = 10;
const REPETITIONS = 5;

/** A synthetic 0/1 outcome matrix with success probability p (seeded, so every run times the same input). */
function outcomes(rng: PyRandom, p: number): number[][] {
  return Array.from({ length: QUERIES }, () => Array.from({ length: SEEDS }, () => (rng.random() < p ? 1 : 0)));
}

const rng = new PyRandom(12345);
const methods = Array.from({ length: PAIRS + 1 }, (_, i) => outcomes(rng, 0.4 + 0.01 * i));
const times: number[] = [];
let checksum = 0;
for (let rep = 0; rep < REPETITIONS; rep++) {
  const start = process.hrtime.bigint();
  for (let pair = 1; pair <= PAIRS; pair++) {
    // A fresh seed per repetition: each repetition draws its index stream once (no memo carried over).
    const r = pairedClusterBootstrap(methods[0], methods[pair], { resamples: 10_000, seed: rep });
    checksum += r.lo + r.hi;
  }
  times.push(Number(process.hrtime.bigint() - start) / 1e9);
}
times.sort((x, y) => x - y);
const median = times[Math.floor(times.length / 2)];
console.log(`bootstrap: ${PAIRS} pairs × 10000 resamples × ${QUERIES} queries × ${SEEDS} seeds`);
console.log(`times (s): ${times.map((t) => t.toFixed(3)).join(", ")}`);
console.log(`median ${median.toFixed(3)} s (target < 2 s) ${median < 2 ? "OK" : "SLOWER THAN TARGET"}; checksum ${checksum.toFixed(6)}`);
