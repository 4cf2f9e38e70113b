/**
 * Analysis stage, the peers table (issue "The peers on the same stream" §2–§3, issue 37 §3; METHOD.md
 * §13): the peer memory methods (lib/methods/peers/, each with a `citation`) run on the same streams as
 * MERIT, in the paper's style. Per dataset × method (the reference first, then the peers): EX mean ±
 * std over stream orders; the paired Δ EX between the reference (`--reference`, default `merit`) and
 * the peer, **Δ = reference − peer**, the sign of Table 2 and the forest figure (one sign per pair in
 * the whole report: the method under study minus what it is measured against), with the paired
 * query-cluster bootstrap interval, the bootstrap p, the MDE of the design (power.ts) and the Holm p
 * over the dataset's peer family; then, for each baseline the runs hold (Iterative and the
 * equal-budget control `iterative_budget`, PEER_BASELINES), Δ = method − baseline with its interval
 * and the Holm p over that baseline's family; the LLM tokens per query (every call kind) and the
 * embedding tokens per query as two columns (never added: a 7B model's token and a 335M encoder's
 * token are not one unit); whether the method relies on the oracle's verdict; and its source. Every
 * comparison that carries no evidence gets Table 2's "uninformative" words (comparison-verdict.ts),
 * one note per verdict naming the comparisons it covers. The EX-vs-tokens view beside it is figures.ts
 * `paretoFigure`.
 * @module
 */
import { MeritError } from "../errors.ts";
import { methodNames, methodSource } from "../methods/index.ts";
import { meanStd } from "./aggregate.ts";
import { bootstrapPValue, pairedClusterBootstrap } from "./bootstrap.ts";
import { comparisonVerdict } from "./comparison-verdict.ts";
import { holmAdjust } from "./holm.ts";
import { fixed, meanPm, MISSING, pValue } from "./number-format.ts";
import { pairedPower } from "./power.ts";
import { tokenMatchedComparison, type PrefixCurve } from "./prefix-runs.ts";
import { pairedMatrices, runsOf, type RunSummary } from "./run-summary.ts";
import { markBest, type Cell, type DataValue, type Table } from "./table.ts";
import { differenceFormat, displayName, seedNote, tableBootstrap, tableDatasets, type TableBootstrapOptions, type TableSelection } from "./table-selection.ts";

/**
 * The baselines every row of the peers table is also compared with, when the runs hold them: the
 * paper's Iterative, and the equal-budget control (`iterative_budget`, the arm `make reproduce
 * PEERS=1` and `merit demo --peers` run: Iterative with the peers' extra calls as repair steps).
 */
export const PEER_BASELINES = ["iterative", "iterative_budget"] as const;

/** Options of the peers table. */
export interface PeersTableOptions extends Omit<TableSelection, "methods">, TableBootstrapOptions {
  /** The method every peer is compared with (`merit`). */
  reference: string;
  /** The peer family in row order; default: {@link peerMethodsOf} the runs. */
  peers?: string[];
  /** The baselines each row is also compared with (Δ = method − baseline); default: those of PEER_BASELINES the runs hold, the reference left out. */
  baselines?: string[];
  /** A note naming the Holm family of each dataset (a study's report: its family holds its equal-budget control). */
  familyNote?: boolean;
  /**
   * The long Iterative run's curve per dataset (prefix-runs.ts): each row is also compared with
   * Iterative at its token-matched K′ (three more columns: K′*, Δ, interval). Absent: no such columns.
   */
  tokenMatched?: readonly PrefixCurve[];
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

/** LLM tokens per query of a run: Table 3's total (prompt + output of every LLM call kind) over the queries. */
export function llmTokensPerQuery(run: RunSummary): number {
  return run.metrics.accounting.total_tokens / run.metrics.total;
}

/**
 * Embedding tokens per query of a run (accounting.embedding_tokens: the embedded texts' tokens by the
 * embedder's own tokenizer) over the queries; null when the run could not count them. Kept apart from
 * {@link llmTokensPerQuery}: the two models' tokens are not one unit.
 */
export function embeddingTokensPerQuery(run: RunSummary): number | null {
  const t = run.metrics.accounting.embedding_tokens;
  return t === undefined ? null : t / run.metrics.total;
}

/** One paired comparison of a row: Δ = EX(a) − EX(b) with its interval, p, MDE and, once the family is known, Holm p and the verdict words. */
interface Comparison {
  a: string;
  b: string;
  record: Record<string, DataValue>;
  p: number;
}

/**
 * The peers table: per dataset a block, the reference first, then each peer: Δ = reference − peer,
 * interval, bootstrap p, MDE, Holm p over the block's peers; Δ = method − baseline and its interval
 * and Holm p for each baseline; LLM and embedding tokens per query; oracle flag; source.
 */
export function peersTable(runs: readonly RunSummary[], opts: PeersTableOptions): Table {
  const { resamples, seed, level, method } = tableBootstrap(opts);
  const peers = opts.peers ?? peerMethodsOf(runs);
  if (peers.includes(opts.reference)) throw new MeritError(`peers table: the reference ${opts.reference} is also listed as a peer; list it once, as the reference`);
  if (!runs.some((r) => r.method === opts.reference)) throw new MeritError(`peers table: no runs of the reference method ${JSON.stringify(opts.reference)}`);
  const baselines = (opts.baselines ?? PEER_BASELINES.filter((b) => runs.some((r) => r.method === b))).filter((b) => b !== opts.reference);
  for (const b of baselines) if (!runs.some((r) => r.method === b)) throw new MeritError(`peers table: no runs of the baseline ${JSON.stringify(b)}; run it or leave it out of the baselines`);
  const format = differenceFormat(opts);
  const name = (m: string) => displayName(m, opts);
  const ref = name(opts.reference);
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  const rulesBefore: number[] = [];
  const verdicts = new Map<string, string[]>();
  // column of each comparison's first cell: reference Δ at 3 (Δ, CI, p, MDE, p Holm), then 3 per baseline (Δ, CI, p Holm)
  const baselineColumn = (k: number) => 8 + 3 * k;
  const compare = (dataset: string, a: string, b: string): Comparison => {
    const pm = pairedMatrices(runs, dataset, a, b);
    const boot = pairedClusterBootstrap(pm.a, pm.b, { resamples, seed, level, method });
    const p = bootstrapPValue(pm.a, pm.b, { resamples, seed });
    const power = pairedPower(pm.a, pm.b, { resamples, seed });
    const record: Record<string, DataValue> = { delta: boot.delta, lo: boot.lo, hi: boot.hi, p_bootstrap: p, mde: power.mde, se: power.se, queries: pm.queryIds.length, seeds: pm.seeds.join(" "), p_holm: null };
    const verdict = comparisonVerdict({ delta: boot.delta, lo: boot.lo, hi: boot.hi, se: power.se, mde: power.mde, queries: pm.queryIds.length, seeds: pm.seeds.join(" ") });
    record.informative = verdict === null;
    // a pair met twice (the reference's row against the control, the control's row against the reference) is named once
    const pair = `${name(a)} vs ${name(b)} on ${displayName(dataset, opts)}`;
    if (verdict !== null && !(verdicts.get(verdict) ?? []).includes(pair)) verdicts.set(verdict, [...(verdicts.get(verdict) ?? []), pair]);
    return { a, b, record, p };
  };
  const familyLines: string[] = [];
  for (const dataset of tableDatasets(runs, opts)) {
    const refRuns = runsOf(runs, dataset, opts.reference);
    const present = baselines.filter((b) => runsOf(runs, dataset, b).length > 0);
    const block = rows.length;
    if (block > 0) rulesBefore.push(block);
    const means: (number | null)[] = [];
    // one Holm family per dataset and reference: the peers against the reference, every row against each baseline
    const families = new Map<string, { row: number; column: number; comparison: Comparison }[]>();
    const join = (family: string, row: number, column: number, comparison: Comparison) => families.set(family, [...(families.get(family) ?? []), { row, column, comparison }]);
    for (const m of [opts.reference, ...peers]) {
      const selected = runsOf(runs, dataset, m);
      if (selected.length === 0) continue;
      const ex = meanStd(selected.map((r) => r.metrics.final_accuracy * 100));
      const llm = meanStd(selected.map(llmTokensPerQuery)).mean;
      const embeddingValues = selected.map(embeddingTokensPerQuery);
      const embedding = embeddingValues.every((v) => v !== null) ? meanStd(embeddingValues as number[]).mean : null;
      const { citation, groundTruth } = methodSource(m);
      const record: Record<string, DataValue> = {
        dataset, method: m, reference: opts.reference, ex_mean: ex.mean, ex_std: ex.std, seeds: ex.n,
        delta: null, lo: null, hi: null, level, p_bootstrap: null, mde: null, p_holm: null, queries: null, informative: null,
        llm_tokens_per_query: llm, embedding_tokens_per_query: embedding, ground_truth: groundTruth, source: citation,
      };
      const row: Cell[] = [{ text: displayName(dataset, opts) }, { text: name(m) }, { text: meanPm(ex, 2) }];
      const at = rows.length;
      if (m === opts.reference || refRuns.length === 0) {
        row.push({ text: MISSING }, { text: MISSING }, { text: MISSING }, { text: MISSING }, { text: MISSING });
      } else {
        // Δ = reference − peer: Table 2's sign for the same pair
        const c = compare(dataset, opts.reference, m);
        row.push({ text: format.delta(c.record.delta as number, 2) }, { text: format.interval(c.record.lo as number, c.record.hi as number, 2) }, { text: pValue(c.p) }, { text: fixed(c.record.mde as number, 2) }, { text: MISSING });
        Object.assign(record, { delta: c.record.delta, lo: c.record.lo, hi: c.record.hi, p_bootstrap: c.p, mde: c.record.mde, queries: c.record.queries, informative: c.record.informative });
        join("", at, 7, { ...c, record });
      }
      baselines.forEach((b, k) => {
        const key = `vs_${b}`;
        record[`delta_${key}`] = null;
        record[`lo_${key}`] = null;
        record[`hi_${key}`] = null;
        record[`p_bootstrap_${key}`] = null;
        record[`p_holm_${key}`] = null;
        record[`informative_${key}`] = null;
        if (m === b || !present.includes(b)) {
          row.push({ text: MISSING }, { text: MISSING }, { text: MISSING });
          return;
        }
        // Δ = method − baseline
        const c = compare(dataset, m, b);
        row.push({ text: format.delta(c.record.delta as number, 2) }, { text: format.interval(c.record.lo as number, c.record.hi as number, 2) }, { text: MISSING });
        Object.assign(record, { [`delta_${key}`]: c.record.delta, [`lo_${key}`]: c.record.lo, [`hi_${key}`]: c.record.hi, [`p_bootstrap_${key}`]: c.p, [`informative_${key}`]: c.record.informative });
        join(b, at, baselineColumn(k) + 2, { ...c, record });
      });
      if (opts.tokenMatched !== undefined) row.push(...tokenMatchedCells(runs, opts.tokenMatched, dataset, m, record, { resamples, seed, level, method }, format));
      row.push({ text: fixed(llm, 1) }, { text: embedding === null ? MISSING : fixed(embedding, 1) }, { text: groundTruth === null ? MISSING : groundTruth ? "yes" : "no" }, { text: citation ?? MISSING });
      rows.push(row);
      means.push(ex.mean);
      data.push(record);
    }
    // Holm within each family of this dataset
    for (const [family, members] of [...families].sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : 0))) {
      const adjusted = holmAdjust(members.map((f) => f.comparison.p));
      members.forEach((f, k) => {
        f.comparison.record[family === "" ? "p_holm" : `p_holm_vs_${family}`] = adjusted[k];
        rows[f.row][f.column] = { text: pValue(adjusted[k]) };
      });
      const against = family === "" ? opts.reference : family;
      const others = members.map((f) => (f.comparison.a === against ? f.comparison.b : f.comparison.a));
      familyLines.push(`${displayName(dataset, opts)}: ${members.length} comparison${members.length === 1 ? "" : "s"} with ${name(against)} (${others.map(name).join(", ")})`);
    }
    if (opts.paperLayout) markBest(rows, 2, [...Array(block).fill(null), ...means], 2);
  }
  const ci = `${fixed(level * 100, 0)}% CI`;
  const baselineColumns = baselines.flatMap((b) => [`Δ method − ${name(b)} (pp)`, ci, `p (Holm) vs ${name(b)}`]);
  const baselineNote = baselines.map(
    (b) =>
      `Δ method − ${name(b)} = EX(row method) − EX(${name(b)}), the same paired bootstrap (${ref}'s row is the pair ${ref} vs ${name(b)}, with its sign in Table 2); p (Holm) vs ${name(b)}: Holm's adjustment over the rows compared with ${name(b)} on the same dataset.` +
      (b === "iterative_budget" ? ` ${name(b)} matches calls, not tokens: Iterative with K plus the most extra LLM calls a peer declares per episode, spent only on queries still failing and with no memory text in its prompts, so it bounds the peers' extra calls, not their LLM tokens (METHOD.md §13.8).` : ""),
  );
  const matched = opts.tokenMatched ?? [];
  const longName = matched.length > 0 ? name(matched[0].method) : "";
  const matchedColumns = matched.length > 0 ? [`${longName} K′ (token-matched)`, `Δ method − ${longName}@K′ (pp)`, ci] : [];
  const matchedNote =
    matched.length > 0
      ? [
          `${longName} K′ (token-matched): the K′ at which one long ${longName} run (${matched.map((c) => `${displayName(c.dataset, opts)} K = ${c.k}`).join(", ")}), read at every K′ ≤ K as the shorter runs it holds as prefixes (METHOD.md §13.8), spends the row method's LLM tokens per query (prompt + output of every LLM call kind; embedding tokens not counted), interpolated linearly between the two integer K′ around it; Δ method − ${longName}@K′ = EX(row method) − EX(${longName} at K′), its outcomes at the two K′ mixed per query with the interpolation weight, the same paired bootstrap. "< 0" / "> K": the method spends fewer tokens than ${longName} at K′ = 0 or more than at K; no match.`,
        ]
      : [];
  return {
    id: "peers",
    title: `Peer memory methods on the same streams: EX (%) and differences in EX (pp), ${ref} − peer and method − baseline`,
    columns: ["Dataset", "Method", "EX", `Δ ${ref} − peer (pp)`, ci, "p (bootstrap)", "MDE (pp)", "p (Holm)", ...baselineColumns, ...matchedColumns, "LLM tokens / query", "Embedding tokens / query", "Oracle verdict", "Source"],
    align: ["l", "l", "r", "r", "r", "r", "r", "r", ...baselineColumns.map(() => "r" as const), ...matchedColumns.map(() => "r" as const), "r", "r", "l", "l"],
    rows,
    notes: [
      `EX: mean ± sample std over ${seedNote(runs)}. Sign, the same for a pair everywhere in the report: Δ = EX(method under study) − EX(what it is measured against), in pp; here Δ ${ref} − peer = EX(${ref}) − EX(peer), the sign of Table 2 and the forest figure. Paired query-cluster bootstrap, B = ${resamples}, seed ${seed}, ${method} interval.`,
      "p: two-sided bootstrap p from the same resamples; MDE: the Δ this design detects with 80% power at α = 0.05 (2.80 × the bootstrap standard error); p (Holm): Holm's step-down adjustment over the peers of the same dataset (one family per dataset).",
      ...baselineNote,
      ...matchedNote,
      "LLM tokens / query: prompt + output tokens of every LLM call kind (initial, repair, reflection and the peers' own calls: judge, distill, curate, …), Table 3's total over the queries; Embedding tokens / query: the texts embedded for retrieval and memory, by the embedder's own tokenizer (— where a run could not count them). The two are different models' tokens and are never added; tables/cost-by-kind.* splits both by call kind, figures/peers-pareto.svg plots EX against each. Mean over seeds. Oracle verdict: whether the method's memory relies on the oracle's verdict (ground truth) rather than on what the agent saw. Source: the work each peer ports (METHOD.md §13).",
      ...(opts.familyNote && familyLines.length > 0 ? [`Holm families per dataset: ${familyLines.join("; ")}.`] : []),
      ...(opts.paperLayout ? ["Per dataset, the best EX in bold, the second underlined."] : []),
      ...[...verdicts].map(([verdict, pairs]) => `Uninformative — ${pairs.join("; ")}: ${verdict}.`),
    ],
    data,
    rulesBefore,
  };
}

/**
 * The token-matched cells of a row (K′*, Δ, interval) against the long run of `dataset`, recorded in
 * `record` as `k_token_matched`, `delta_token_matched`, `lo_…`, `hi_…`, `p_bootstrap_token_matched`
 * and `ex_token_matched`; "—" when the dataset has no long run or the row is the long run itself.
 */
function tokenMatchedCells(
  runs: readonly RunSummary[],
  curves: readonly PrefixCurve[],
  dataset: string,
  m: string,
  record: Record<string, DataValue>,
  boot: { resamples: number; seed: number; level: number; method: "percentile" | "bca" },
  format: ReturnType<typeof differenceFormat>,
): Cell[] {
  Object.assign(record, { k_token_matched: null, ex_token_matched: null, delta_token_matched: null, lo_token_matched: null, hi_token_matched: null, p_bootstrap_token_matched: null });
  const curve = curves.find((c) => c.dataset === dataset);
  if (curve === undefined || curve.method === m) return [{ text: MISSING }, { text: MISSING }, { text: MISSING }];
  const c = tokenMatchedComparison(runs, curve, m, boot);
  if (!c.match.within) return [{ text: c.match.side === "below" ? "< 0" : `> ${curve.k}` }, { text: MISSING }, { text: MISSING }];
  Object.assign(record, { k_token_matched: c.match.kStar, ex_token_matched: c.exMatched, delta_token_matched: c.delta, lo_token_matched: c.lo, hi_token_matched: c.hi, p_bootstrap_token_matched: c.p });
  return [{ text: fixed(c.match.kStar, 2) }, { text: format.delta(c.delta!, 2) }, { text: format.interval(c.lo!, c.hi!, 2) }];
}
