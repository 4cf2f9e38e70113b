/**
 * Experiment runs, the paper grid's plan in closed form (README "The full grid on one GPU"): the
 * grid plan's counts from the number of initially failed queries alone, and the paper's numbers the
 * estimate of its calls, tokens and hours starts from.
 * @module
 */
import { getMethod } from "../methods/index.ts";
import { kitBound, kitStep } from "./plan-bounds.ts";
import { CONTROL_METHODS, REPRODUCE_METHODS } from "./method-roles.ts";

/** One method's calls in `closedFormPlan`. */
export interface ClosedFormMethod {
  method: string;
  /** Computed calls at most, whatever the repairs do (GridPlan.computedAtMost). */
  computedAtMost: number;
  /** Computed calls if no repair succeeds (GridPlan.computed; an upper bound with several memory methods that keep negatives). */
  computed: number;
  /** Calls with every stream counted in full (no call shared across streams). */
  everyStream: number;
}

/** `closedFormPlan`'s counts, summed over the methods. */
export interface ClosedFormPlan {
  methods: ClosedFormMethod[];
  computedAtMost: number;
  computed: number;
  everyStream: number;
}

/**
 * The grid plan's counts from the number of initially failed queries alone, the same rules as
 * `computePlan` (module comment) with an empty call cache, for a grid whose inputs are not at hand
 * (the paper grid: README "The full grid on one GPU"). Per method, in the order given, over
 * `orders` stream orders, with B = kitBound(method, K) calls per repaired episode:
 * - a memoryless method: its F episodes are the same calls in every order, B·F once; 0 when an
 *   earlier method of the list with the same kit step (Reflexion's reflect, or none) already counted them;
 * - a memory method seeded by the transductive pre-pass: B·F per order, every episode its own;
 * - any other memory method: its memory is necessarily empty at each order's first initially failed
 *   query, whose episode is the memoryless twin's (0 when such a twin came earlier in the list, else
 *   B, an upper bound); the other F − 1 per order are its own: B·(F − 1). In `computed` (no repair
 *   succeeds) a writer that keeps positives only never stores, so all its episodes are the twin's.
 * `computePlan` on real inputs gives these numbers when every stream order has F failures (its
 * test checks the two agree on the bundled data).
 */
export function closedFormPlan(opts: { methods: readonly string[]; failed: number; k: number; orders: number }): ClosedFormPlan {
  const { failed, k, orders } = opts;
  if (!Number.isInteger(failed) || failed < 0 || !Number.isInteger(k) || k < 0 || !Number.isInteger(orders) || orders < 1) throw new RangeError(`closedFormPlan: failed, k must be integers ≥ 0 and orders ≥ 1 (got ${failed}, ${k}, ${orders})`);
  const twins = new Set<string>(); // kit steps ("" for none) whose memoryless episodes are already counted
  const methods: ClosedFormMethod[] = [];
  for (const name of opts.methods) {
    const m = getMethod(name);
    const b = kitBound(m, k);
    const everyStream = orders * failed * b;
    if (b === 0 || failed === 0) {
      methods.push({ method: name, computedAtMost: 0, computed: 0, everyStream });
      continue;
    }
    const stepKey = kitStep(m)?.name ?? "";
    const twin = twins.has(stepKey);
    if (m.memory === null) {
      const n = twin ? 0 : failed * b;
      twins.add(stepKey);
      methods.push({ method: name, computedAtMost: n, computed: n, everyStream });
    } else if (m.memory.transductivePrepass) {
      methods.push({ method: name, computedAtMost: everyStream, computed: everyStream, everyStream });
    } else {
      const first = twin ? 0 : b;
      const atMost = orders * (first + (failed - 1) * b);
      const computed = m.memory.writes.writesNegative ? atMost : twin ? 0 : failed * b;
      methods.push({ method: name, computedAtMost: atMost, computed, everyStream });
    }
  }
  const sum = (f: (m: ClosedFormMethod) => number) => methods.reduce((n, m) => n + f(m), 0);
  return { methods, computedAtMost: sum((m) => m.computedAtMost), computed: sum((m) => m.computed), everyStream: sum((m) => m.everyStream) };
}

/**
 * The paper's numbers the paper-grid estimate starts from (arXiv 2608.05906; METHOD.md §9): initial
 * failures per dataset (Table 3: Spider 1,034 − 609, BIRD), tokens per call of one MERIT run (Table
 * 3's cost columns: Spider 5.27 M tokens / 3,419 calls, BIRD 17.6 M / 7,325; initial calls included,
 * shorter than repairs, so low), and generated tokens per call (the paper's cost table: 50 M
 * generated over the 13-method grid, 378,120 calls when every stream is counted).
 */
export const PAPER_GRID = {
  k: 7,
  orders: 3,
  datasets: [
    { dataset: "spider", failed: 425, tokensPerCall: 5.27e6 / 3419 },
    { dataset: "bird", failed: 945, tokensPerCall: 17.6e6 / 7325 },
  ],
  generatedPerCall: 50e6 / 378_120,
  maxInputTokens: 4096,
  maxOutputTokens: 512,
} as const;

/** The paper grid's calls and tokens (README "The full grid on one GPU"). */
export interface PaperGridEstimate {
  datasets: Array<{ dataset: string; failed: number; plan: ClosedFormPlan; controls: ClosedFormPlan }>;
  /** Computed calls at most of `make reproduce` (REPRODUCE_METHODS, both datasets). */
  calls: number;
  /** Estimated tokens: calls × the paper's tokens per call, split into prompt and generated. */
  promptTokens: number;
  generatedTokens: number;
  /** Bounds: calls × max_input_tokens, calls × max_output_tokens. */
  promptTokensBound: number;
  generatedTokensBound: number;
}

/** `closedFormPlan` of `make reproduce` (and of its controls) with the paper's failures, and the token estimate and bounds. */
export function paperGridEstimate(methods: readonly string[] = REPRODUCE_METHODS): PaperGridEstimate {
  const p = PAPER_GRID;
  const datasets = p.datasets.map((d) => ({
    dataset: d.dataset,
    failed: d.failed,
    plan: closedFormPlan({ methods, failed: d.failed, k: p.k, orders: p.orders }),
    controls: closedFormPlan({ methods: CONTROL_METHODS, failed: d.failed, k: p.k, orders: p.orders }),
  }));
  const calls = datasets.reduce((n, d) => n + d.plan.computedAtMost, 0);
  const tokens = datasets.reduce((n, d, i) => n + d.plan.computedAtMost * p.datasets[i].tokensPerCall, 0);
  const generatedTokens = calls * p.generatedPerCall;
  return { datasets, calls, promptTokens: tokens - generatedTokens, generatedTokens, promptTokensBound: calls * p.maxInputTokens, generatedTokensBound: calls * p.maxOutputTokens };
}

