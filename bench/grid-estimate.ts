/**
 * The full `make reproduce` grid's wall time from token rates (bench/README.md; issue 22 "the paper's
 * grid in hours"): the paper grid's tokens come from the grid plan's counting with the paper's
 * initial failures (lib/experiment/grid-plan.ts `paperGridEstimate`), the time is prompt tokens ÷
 * prefill rate + generated tokens ÷ decode rate. The rates are measured (a JSON that
 * bench/throughput.ts `--json` or bench/gpu.sh wrote) or stated, and always labelled.
 * Used by bench/throughput.ts and bench/cost.ts.
 * @module
 */
import { readFileSync } from "node:fs";

/** Aggregate token rates of one engine, and where they come from. */
export interface Rates {
  prefillTokS: number;
  decodeTokS: number;
  /** "measured …" or "assumed …". */
  source: string;
}

/** Tokens of a grid. */
export interface GridTokens {
  prompt: number;
  generated: number;
}

/** Seconds: prompt ÷ prefill + generated ÷ decode. */
export function gridSeconds(tokens: GridTokens, rates: Pick<Rates, "prefillTokS" | "decodeTokS">): number {
  return tokens.prompt / rates.prefillTokS + tokens.generated / rates.decodeTokS;
}

/** What bench/throughput.ts measured of one engine (its JSON's `results[]`). */
export interface MeasuredSlice {
  engine: string;
  wallS: number;
  calls: number;
  promptTokens: number;
  generatedTokens: number;
}

/** `llama-batched-bench` at one batch size (its JSON's `batched_bench.rows[]`). */
export interface AnchorRates {
  b: number;
  ppTokS: number;
  tgTokS: number;
}

/**
 * An engine's effective rates from its measured slice: time = f·(P·a + G·b) with a, b = seconds per
 * prompt / generated token of `llama-batched-bench` at the slice's N and f fitted to the engine's
 * wall time, so its rates are the anchor's divided by f; without the anchor, one rate for both
 * (time proportional to prompt + generated tokens).
 */
export function sliceRates(r: MeasuredSlice, anchor: AnchorRates | null): { prefillTokS: number; decodeTokS: number } {
  if (anchor === null) {
    const rate = (r.promptTokens + r.generatedTokens) / r.wallS;
    return { prefillTokS: rate, decodeTokS: rate };
  }
  const f = r.wallS / (r.promptTokens / anchor.ppTokS + r.generatedTokens / anchor.tgTokS);
  return { prefillTokS: anchor.ppTokS / f, decodeTokS: anchor.tgTokS / f };
}

/**
 * The rates of the kit's throughput mode (else the first engine measured) from a bench/throughput.ts
 * JSON, labelled with the machine it ran on; a CPU run is said to be one (not a GPU rate).
 * Throws one line naming the file when it is not such a JSON.
 */
export function ratesFromThroughputJson(file: string): Rates {
  let json: { slice?: { streams?: number; gpu?: string; model?: string }; machine?: { gpu_name?: string | null; cpu?: string }; results?: MeasuredSlice[]; batched_bench?: { rows?: AnchorRates[] } | null };
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: not readable as JSON (${(error as Error).message}); pass the file bench/throughput.ts --json or bench/gpu.sh wrote`);
  }
  const results = (json.results ?? []).filter((r) => r.calls > 0 && r.wallS > 0);
  const r = results.find((x) => x.engine === "throughput") ?? results[0];
  if (!r) throw new Error(`${file}: no measured engine in "results"; pass the file bench/throughput.ts --json or bench/gpu.sh wrote`);
  const n = json.slice?.streams;
  const anchor = json.batched_bench?.rows?.find((x) => x.b === n) ?? null;
  const onGpu = json.slice?.gpu !== undefined && json.slice.gpu !== "false";
  const where = onGpu ? `GPU ${json.machine?.gpu_name ?? "?"}` : `CPU ${json.machine?.cpu ?? "?"} (not a GPU rate)`;
  const model = json.slice?.model ? `, model ${json.slice.model.split("/").at(-1)}` : "";
  return { ...sliceRates(r, anchor), source: `measured: ${r.engine} mode at N = ${n ?? "?"} on ${where}${model}${anchor ? ", fitted to llama-batched-bench" : ""} (${file})` };
}
