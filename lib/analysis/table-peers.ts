/**
 * Analysis stage, the peers table (issue "The peers on the same stream" §2–§3; METHOD.md §13): the
 * peer memory methods (lib/methods/peers/, each with a `citation`) run on the same streams as MERIT,
 * in the paper's style. Per dataset × peer: EX mean ± std over stream orders, the paired Δ EX against
 * the reference (`--reference`, default `merit`; Δ = peer − reference, as Table 4) with the paired
 * query-cluster bootstrap interval, the bootstrap p, the MDE of the design (power.ts), the Holm p
 * over the dataset's peer family (one family per dataset, as Table 4), the total tokens per query
 * (every call kind: repair, reflection and the peers' own distill / judge / curate calls) and the
 * peer's source. The budget-matched view beside it is figures.ts `paretoFigure`.
 * @module
 */
import { MeritError } from "../errors.ts";
import { methodNames, methodSource } from "../methods/index.ts";
import { meanStd } from "./aggregate.ts";
import { bootstrapPValue, pairedClusterBootstrap } from "./bootstrap.ts";
import { holmAdjust } from "./holm.ts";
import { fixed, meanPm, MISSING, pValue } from "./number-format.ts";
import { pairedPower } from "./power.ts";
import { pairedMatrices, runsOf, type RunSummary } from "./run-summary.ts";
import { markBest, type Cell, type DataValue, type Table } from "./table.ts";
import { differenceFormat, displayName, seedNote, tableBootstrap, tableDatasets, type TableBootstrapOptions, type TableSelection } from "./table-selection.ts";

/** Options of the peers table. */
export interface PeersTableOptions extends Omit<TableSelection, "methods">, TableBootstrapOptions {
  /** The method every peer is compared with (`merit`). */
  reference: string;
  /** The peer family in row order; default: {@link peerMethodsOf} the runs. */
  peers?: string[];
}

/** The source and ground-truth flag a registered method declares (lib/methods/registry.ts; lib/plugin.ts exports it too). */
export { methodSource };

/** The registered peer methods (those declaring a citation), in registration order. */
export function registeredPeers(): string[] {
  return methodNames().filter((m) => methodSource(m).citation !== null);
}

/** The methods of `runs` that are peers (declare a citation), in registration order. */
export function peerMethodsOf(runs: readonly RunSummary[]): string[] {
  const present = new Set(runs.map((r) => r.method));
  return registeredPeers().filter((m) => present.has(m));
}

/**
 * Tokens per query of a run, the budget-matched view's cost: Table 3's total (every LLM call kind)
 * plus the embedding tokens where the run counted them (accounting.embedding_tokens), over the queries.
 */
export function tokensPerQuery(run: RunSummary): number {
  return (run.metrics.accounting.total_tokens + (run.metrics.accounting.embedding_tokens ?? 0)) / run.metrics.total;
}

/**
 * The peers table: per dataset a block, the reference first, then each peer with its Δ against the
 * reference, interval, bootstrap p, MDE, Holm p over the block's peers, tokens per query and source.
 */
export function peersTable(runs: readonly RunSummary[], opts: PeersTableOptions): Table {
  const { resamples, seed, level, method } = tableBootstrap(opts);
  const peers = opts.peers ?? peerMethodsOf(runs);
  if (peers.includes(opts.reference)) throw new MeritError(`peers table: the reference ${opts.reference} is also listed as a peer; list it once, as the reference`);
  if (!runs.some((r) => r.method === opts.reference)) throw new MeritError(`peers table: no runs of the reference method ${JSON.stringify(opts.reference)}`);
  const format = differenceFormat(opts);
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  const rulesBefore: number[] = [];
  for (const dataset of tableDatasets(runs, opts)) {
    const refRuns = runsOf(runs, dataset, opts.reference);
    const block = rows.length;
    if (block > 0) rulesBefore.push(block);
    const means: (number | null)[] = [];
    const family: { row: number; record: Record<string, DataValue>; p: number }[] = [];
    for (const m of [opts.reference, ...peers]) {
      const selected = runsOf(runs, dataset, m);
      if (selected.length === 0) continue;
      const ex = meanStd(selected.map((r) => r.metrics.final_accuracy * 100));
      const tokens = meanStd(selected.map(tokensPerQuery)).mean;
      const { citation, groundTruth } = methodSource(m);
      const record: Record<string, DataValue> = {
        dataset, method: m, reference: opts.reference, ex_mean: ex.mean, ex_std: ex.std, seeds: ex.n,
        delta: null, lo: null, hi: null, level, p_bootstrap: null, mde: null, p_holm: null, queries: null,
        tokens_per_query: tokens, ground_truth: groundTruth, source: citation,
      };
      const row: Cell[] = [{ text: displayName(dataset, opts) }, { text: displayName(m, opts) }, { text: meanPm(ex, 2) }];
      if (m === opts.reference || refRuns.length === 0) {
        row.push({ text: MISSING }, { text: MISSING }, { text: MISSING }, { text: MISSING }, { text: MISSING });
      } else {
        const pm = pairedMatrices(runs, dataset, m, opts.reference);
        const boot = pairedClusterBootstrap(pm.a, pm.b, { resamples, seed, level, method });
        const p = bootstrapPValue(pm.a, pm.b, { resamples, seed });
        const power = pairedPower(pm.a, pm.b, { resamples, seed });
        row.push({ text: format.delta(boot.delta, 2) }, { text: format.interval(boot.lo, boot.hi, 2) }, { text: pValue(p) }, { text: fixed(power.mde, 2) }, { text: MISSING });
        Object.assign(record, { delta: boot.delta, lo: boot.lo, hi: boot.hi, p_bootstrap: p, mde: power.mde, queries: pm.queryIds.length });
        family.push({ row: rows.length, record, p });
      }
      row.push({ text: fixed(tokens, 1) }, { text: groundTruth === null ? MISSING : groundTruth ? "yes" : "no" }, { text: citation ?? MISSING });
      rows.push(row);
      means.push(ex.mean);
      data.push(record);
    }
    // Holm over this dataset's family: every peer compared with the reference
    const adjusted = holmAdjust(family.map((f) => f.p));
    family.forEach((f, k) => {
      f.record.p_holm = adjusted[k];
      rows[f.row][7] = { text: pValue(adjusted[k]) };
    });
    if (opts.paperLayout) markBest(rows, 2, [...Array(block).fill(null), ...means], 2);
  }
  const ci = `${fixed(level * 100, 0)}% CI`;
  return {
    id: "peers",
    title: `Peer memory methods on the same streams: EX (%) and difference to ${displayName(opts.reference, opts)} (pp)`,
    columns: ["Dataset", "Method", "EX", "Δ EX (pp)", ci, "p (bootstrap)", "MDE (pp)", "p (Holm)", "Tokens / query", "Oracle verdict", "Source"],
    align: ["l", "l", "r", "r", "r", "r", "r", "r", "r", "l", "l"],
    rows,
    notes: [
      `EX: mean ± sample std over ${seedNote(runs)}. Δ = peer − ${displayName(opts.reference, opts)}; paired query-cluster bootstrap, B = ${resamples}, seed ${seed}, ${method} interval.`,
      "p: two-sided bootstrap p from the same resamples; MDE: the Δ this design detects with 80% power at α = 0.05 (2.80 × the bootstrap standard error); p (Holm): Holm's step-down adjustment over the peers of the same dataset (one family per dataset).",
      "Tokens / query: prompt + output tokens of every call kind (initial, repair, reflection and the peers' own calls: judge, distill, curate, …) plus the embedding tokens (texts embedded for retrieval and memory, by the embedder's tokenizer; tables/cost-by-kind.* splits them), mean over seeds; the budget-matched view is figures/peers-pareto.svg. Oracle verdict: whether the method's memory relies on the oracle's verdict (ground truth) rather than on what the agent saw. Source: the work each peer ports (METHOD.md §13).",
      ...(opts.paperLayout ? ["Per dataset, the best EX in bold, the second underlined."] : []),
    ],
    data,
    rulesBefore,
  };
}
