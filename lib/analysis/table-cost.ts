/**
 * Analysis stage, the cost by call kind (issue 29 §4): beside Table 3's total tokens, the tokens and
 * calls of every call kind a method made — the paper's `initial_cache`, `repair`, `reflection`, and
 * the kinds its hooks or its feedback regime declare (`distill`, `judge`, `curate`, …) — with its
 * embedding calls and, for memory methods, the measured wall time of retrieval and of memory
 * maintenance (manifest.json `timing`), per query, mean over seeds; one column per call kind some
 * shown method made. Shown when some shown run made a call of a kind beyond the paper's (a memory method that distils, a judge) or when asked (`merit report
 * --costs`), so the paper's default reports are unchanged; Table 3's total already includes every
 * LLM call kind. Embedding tokens (trajectory accounting.embedding_tokens: the embedded texts' tokens
 * by the embedder's own tokenizer, cached or computed) are a column of their own; "—" where a run
 * could not count them.
 * @module
 */
import { BUILTIN_CALL_KINDS } from "../methods/hooks.ts";
import { fixed } from "./number-format.ts";
import type { RunSummary } from "./run-summary.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

/** Measured wall time of one run (manifest.json `timing`), keyed by `timingKey`. */
export type RunTimings = ReadonlyMap<string, { retrieval_ms: number; memory_ms: number; episodes: number }>;

/** The key of a run in RunTimings. */
export function timingKey(dataset: string, method: string, seed: number): string {
  return `${dataset}\u0000${method}\u0000${seed}`;
}

/**
 * The cost table, or null when every run made only the paper's call kinds and it was not asked for
 * (`force`). The measured wall-time columns only with `timings` (`merit report --costs`): they are
 * measurements of one machine, so a report that must be byte-stable (the demos') leaves them out.
 */
export function costTable(runs: readonly RunSummary[], sel: TableSelection = {}, timings: RunTimings | null = null, force = false): Table | null {
  // the call kinds of the shown runs only: a column no shown method made a call of is not printed
  const datasets = tableDatasets(runs, sel);
  const methods = tableMethods(runs, sel);
  const shown = runs.filter((r) => datasets.includes(r.dataset) && methods.includes(r.method));
  const kinds = [...new Set(shown.flatMap((r) => Object.keys(r.costs?.by_kind ?? {})))];
  const extra = kinds.filter((k) => !BUILTIN_CALL_KINDS.includes(k)).sort();
  if (extra.length === 0 && !force) return null;
  const order = [...BUILTIN_CALL_KINDS.filter((k) => kinds.includes(k)), ...extra];
  // Kinds with a prompt cut to max_input_tokens in some shown run: a column each (none: the table is as before).
  const cutKinds = order.filter((k) => runs.some((r) => (r.costs?.by_kind[k]?.cut_calls ?? 0) > 0));
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  for (const dataset of datasets) {
    for (const method of methods) {
      const of = runs.filter((r) => r.dataset === dataset && r.method === method && r.costs !== undefined);
      if (of.length === 0) continue;
      const perQuery = (f: (r: RunSummary) => number) => of.reduce((s, r) => s + f(r) / r.metrics.total, 0) / of.length;
      const tokens = (k: string) => perQuery((r) => (r.costs!.by_kind[k]?.prompt_tokens ?? 0) + (r.costs!.by_kind[k]?.output_tokens ?? 0));
      const calls = (k: string) => perQuery((r) => r.costs!.by_kind[k]?.calls ?? 0);
      // Calls cut at their kind's output limit, per run (mean over seeds): their text may be incomplete.
      const cut = (k: string) => of.reduce((s, r) => s + (r.costs!.by_kind[k]?.truncated ?? 0), 0) / of.length;
      const cutTotal = order.reduce((s, k) => s + cut(k), 0);
      const cutIn = (k: string) => perQuery((r) => r.costs!.by_kind[k]?.cut_calls ?? 0);
      const total = perQuery((r) => r.metrics.accounting.total_tokens);
      const embeddings = perQuery((r) => r.metrics.accounting.embedding_calls);
      const embeddingTokens = of.every((r) => r.metrics.accounting.embedding_tokens !== undefined) ? perQuery((r) => r.metrics.accounting.embedding_tokens!) : null;
      // Wall time per timed episode, mean over the seeds whose manifest has it.
      const timed = of.map((r) => timings?.get(timingKey(r.dataset, r.method, r.stream_seed))).filter((t) => t !== undefined && t.episodes > 0);
      const ms = (f: (t: { retrieval_ms: number; memory_ms: number; episodes: number }) => number) => (timed.length === 0 ? null : timed.reduce((s, t) => s + f(t!) / t!.episodes, 0) / timed.length);
      const retrievalMs = ms((t) => t.retrieval_ms);
      const memoryMs = ms((t) => t.memory_ms);
      const msText = (x: number | null) => (x === null ? "—" : fixed(x, 1));
      const wall = timings === null ? [] : [{ text: msText(retrievalMs) }, { text: msText(memoryMs) }];
      rows.push([{ text: displayName(dataset, sel) }, { text: displayName(method, sel) }, ...order.map((k) => ({ text: fixed(tokens(k), 1) })), { text: fixed(total, 1) }, { text: fixed(embeddings, 2) }, { text: embeddingTokens === null ? "—" : fixed(embeddingTokens, 1) }, ...wall, ...(extra.length > 0 ? [{ text: fixed(cutTotal, 1) }] : []), ...cutKinds.map((k) => ({ text: fixed(cutIn(k), 2) })), ...order.map((k) => ({ text: fixed(calls(k), 2) })), ...extra.map((k) => ({ text: fixed(cut(k), 1) }))]);
      data.push({ dataset, method, seeds: of.length, total_tokens_per_query: total, embedding_calls_per_query: embeddings, embedding_tokens_per_query: embeddingTokens, ...(timings === null ? {} : { retrieval_ms_per_query: retrievalMs, memory_ms_per_query: memoryMs }), ...Object.fromEntries(order.flatMap((k) => [[`${k}_tokens_per_query`, tokens(k)], [`${k}_calls_per_query`, calls(k)]])), ...(extra.length > 0 ? { truncated_calls_per_run: cutTotal } : {}), ...Object.fromEntries(extra.map((k) => [`${k}_truncated_calls_per_run`, cut(k)])), ...Object.fromEntries(cutKinds.map((k) => [`${k}_cut_calls_per_query`, cutIn(k)])) });
    }
  }
  const wallColumns = timings === null ? [] : ["Retrieval ms", "Memory ms"];
  // Output truncation is recorded for declared kinds only: its column only when some run has one.
  const truncatedColumns = extra.length > 0 ? ["Truncated calls"] : [];
  const cutColumns = cutKinds.map((k) => `${k} cut`);
  const first = 2 + order.length + 3 + wallColumns.length + truncatedColumns.length + cutColumns.length;
  return {
    id: "cost-by-kind",
    title: "Tokens per query by call kind (mean over seeds), total, embedding calls and embedding tokens",
    columns: ["Dataset", "Method", ...order.map((k) => `${k} tokens`), "LLM tokens (all kinds)", "Embedding calls", "Embedding tokens", ...wallColumns, ...truncatedColumns, ...cutColumns, ...order.map((k) => `${k} calls`), ...extra.map((k) => `${k} truncated`)],
    align: ["l", "l", ...order.map(() => "r" as const), "r", "r", "r", ...wallColumns.map(() => "r" as const), ...truncatedColumns.map(() => "r" as const), ...cutColumns.map(() => "r" as const), ...order.map(() => "r" as const), ...extra.map(() => "r" as const)],
    rows,
    notes: [
      `Prompt + output tokens per query of each call kind: the paper's (initial_cache, repair, reflection) and those declared by methods' hooks or a feedback regime (${extra.join(", ")}); LLM tokens (all kinds) = Table 3's total, every LLM call kind included; embedding tokens (another model's) are a column of their own, never added to it. Embedding calls: texts embedded per query (queries and stored memory); Embedding tokens: their tokens by the embedder's own tokenizer, the same whether a vector was cached or computed (— where a run's embedder could not count them: a remote one without a local GGUF of its model). ${timings === null ? "The measured retrieval and memory wall times are added with `merit report --costs`." : "Retrieval ms / Memory ms: measured wall time per query of retrieval (query embedding, ranking, a memory hook's retrieve) and of memory maintenance (insertion with its embedding, a hook's write with its calls), from manifest.json `timing` (— for memoryless methods); measurements of the machine that ran them, not outputs."}${extra.length > 0 ? " Truncated calls: calls per run (mean over seeds) of a kind declared by a hook or the feedback regime that generated up to that kind's output limit (its declared maxOutputTokens, else max_output_tokens), so their text may be cut; the hook was told and may keep its previous state." : ""} The CSV adds calls per query of each kind${extra.length > 0 ? " and the truncated calls of each declared kind" : ""}.`,
      ...(cutKinds.length > 0 ? [`<kind> cut: calls per query whose prompt was cut to its last max_input_tokens tokens (METHOD.md §6.4), losing what came first (a memory section, the start of a hook's prompt).`] : []),
    ],
    data,
    csvOnly: [...order.map((_, i) => first + i), ...extra.map((_, i) => first + order.length + i)],
  };
}
