/**
 * Analysis stage, comparison with the paper (METHOD.md §9; `merit report --paper-numbers`): each
 * cell of the kit's Tables 1–5 next to the number the paper reports (data/paper-numbers.json,
 * transcribed from arXiv 2608.05906) and the difference, as COMPARISON.md. Deterministic text.
 * @module
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { InputFileError } from "../errors.ts";
import { fixed, MISSING, signed } from "./number-format.ts";
import type { DataValue, Table } from "./table.ts";
import { displayName, type TableSelection } from "./table-selection.ts";

const num = z.number();
const PaperNumbersSchema = z.object({
  source: z.string().min(1),
  setup: z.record(z.unknown()),
  table1: z.array(z.object({ dataset: z.string(), method: z.string(), ex_mean: num, ex_std: num })),
  table2: z.array(z.object({ dataset: z.string(), reference: z.string(), other: z.string(), delta: num, lo: num, hi: num, level: num })),
  table3: z.array(z.object({ dataset: z.string(), method: z.string(), repaired: num, steps: num, oscillation_pct: num, tokens_millions: num, llm_calls: num })),
  table4: z.array(z.object({ dataset: z.string(), method: z.string(), ex_mean: num, ex_std: num, delta: num.nullable() })),
  table5: z.array(z.object({ dataset: z.string(), result_mismatch_pct: num, schema_linking_pct: num, other_pct: num, accuracy_pct: num, macro_f1: num })),
});
export type PaperNumbers = z.infer<typeof PaperNumbersSchema>;

/** The kit's transcription of the paper's numbers. */
export const PAPER_NUMBERS_FILE = fileURLToPath(new URL("../../data/paper-numbers.json", import.meta.url));

/** Reads and checks a paper-numbers file (default: the kit's data/paper-numbers.json). */
export function readPaperNumbers(file: string = PAPER_NUMBERS_FILE): { numbers: PaperNumbers; bytes: Buffer } {
  let bytes: Buffer;
  let json: unknown;
  try {
    bytes = readFileSync(file);
    json = JSON.parse(bytes.toString("utf8"));
  } catch (cause) {
    throw new InputFileError(file, "cannot be read as JSON", "restore data/paper-numbers.json from the repository", cause);
  }
  const parsed = PaperNumbersSchema.safeParse(json);
  if (!parsed.success) throw new InputFileError(file, `${parsed.error.issues[0].path.join(".")}: ${parsed.error.issues[0].message}`, "restore data/paper-numbers.json from the repository");
  return { numbers: parsed.data, bytes };
}

interface Line {
  dataset: string;
  row: string;
  quantity: string;
  kit: number | null;
  paper: number;
  decimals: number;
}

/** COMPARISON.md: one section per paper table, each cell as kit | paper | kit − paper. */
export function paperComparison(tables: readonly Table[], paper: PaperNumbers, sel: TableSelection = {}, notes: readonly string[] = []): string {
  const data = (id: string) => tables.find((t) => t.id === id)?.data ?? [];
  const find = (id: string, match: Record<string, DataValue>) => data(id).find((r) => Object.entries(match).every(([k, v]) => r[k] === v));
  const value = (r: Record<string, DataValue> | undefined, key: string, scale = 1) => (r && typeof r[key] === "number" ? (r[key] as number) * scale : null);
  const name = (x: string) => displayName(x, sel);
  const sections: [string, Line[]][] = [
    ["Table 1 — execution accuracy (%)", paper.table1.flatMap((p) => {
      const r = find("table1", { dataset: p.dataset, method: p.method });
      return [
        { dataset: p.dataset, row: name(p.method), quantity: "EX mean", kit: value(r, "ex_mean"), paper: p.ex_mean, decimals: 2 },
        { dataset: p.dataset, row: name(p.method), quantity: "EX std", kit: value(r, "ex_std"), paper: p.ex_std, decimals: 2 },
      ];
    })],
    ["Table 2 — Δ EX (pp), MERIT − comparison", paper.table2.flatMap((p) => {
      const r = find("table2", { dataset: p.dataset, reference: p.reference, other: p.other });
      const row = `${name(p.reference)} vs ${name(p.other)}`;
      return [
        { dataset: p.dataset, row, quantity: "Δ", kit: value(r, "delta"), paper: p.delta, decimals: 2 },
        { dataset: p.dataset, row, quantity: "CI low", kit: value(r, "lo"), paper: p.lo, decimals: 2 },
        { dataset: p.dataset, row, quantity: "CI high", kit: value(r, "hi"), paper: p.hi, decimals: 2 },
      ];
    })],
    ["Table 3 — repair behaviour and cost", paper.table3.flatMap((p) => {
      const r = find("table3", { dataset: p.dataset, method: p.method });
      const row = name(p.method);
      return [
        { dataset: p.dataset, row, quantity: "Rep.", kit: value(r, "repaired"), paper: p.repaired, decimals: 1 },
        { dataset: p.dataset, row, quantity: "Steps", kit: value(r, "steps"), paper: p.steps, decimals: 3 },
        { dataset: p.dataset, row, quantity: "Osc. (%)", kit: value(r, "oscillation_pct"), paper: p.oscillation_pct, decimals: 2 },
        { dataset: p.dataset, row, quantity: "Tok. (M)", kit: value(r, "tokens_millions"), paper: p.tokens_millions, decimals: 3 },
        { dataset: p.dataset, row, quantity: "Calls", kit: value(r, "llm_calls"), paper: p.llm_calls, decimals: 0 },
      ];
    })],
    ["Table 4 — ablations, EX (%) mean ± std and Δ vs MERIT Full (pp)", paper.table4.flatMap((p) => {
      const r = find("table4", { dataset: p.dataset, method: p.method });
      const row = name(p.method);
      const lines: Line[] = [
        { dataset: p.dataset, row, quantity: "EX mean", kit: value(r, "ex_mean"), paper: p.ex_mean, decimals: 2 },
        { dataset: p.dataset, row, quantity: "EX std", kit: value(r, "ex_std"), paper: p.ex_std, decimals: 2 },
      ];
      if (p.delta !== null) lines.push({ dataset: p.dataset, row, quantity: "Δ", kit: value(r, "delta"), paper: p.delta, decimals: 2 });
      return lines;
    })],
    ["Table 5 — initial-failure composition (%) and classifier validation", paper.table5.flatMap((p) => {
      const share = (type: string) => value(find("table5", { dataset: p.dataset, error_type: type }), "share", 100);
      const v = find("table5", { dataset: p.dataset, error_type: null });
      // the paper's accuracy is population-weighted (table-failures.ts); the plain one where the report has no weighting
      const accuracy = v && "weighted_accuracy" in v ? value(v, "weighted_accuracy", 100) : value(v, "accuracy", 100);
      return [
        { dataset: p.dataset, row: "Result Mismatch", quantity: "%", kit: share("Result Mismatch"), paper: p.result_mismatch_pct, decimals: 2 },
        { dataset: p.dataset, row: "Schema Linking", quantity: "%", kit: share("Schema Linking"), paper: p.schema_linking_pct, decimals: 2 },
        { dataset: p.dataset, row: "Other", quantity: "%", kit: share("Other"), paper: p.other_pct, decimals: 2 },
        { dataset: p.dataset, row: "Classifier", quantity: "Acc. (%)", kit: accuracy, paper: p.accuracy_pct, decimals: 2 },
        { dataset: p.dataset, row: "Classifier", quantity: "Macro-F1", kit: value(v, "macro_f1"), paper: p.macro_f1, decimals: 3 },
      ];
    })],
  ];
  const out = [
    "# The kit's tables next to the paper's numbers",
    "",
    ...notes.flatMap((n) => [`**${n}**`, ""]),
    `Paper: ${paper.source} (data/paper-numbers.json). Kit − Paper is the kit's value minus the paper's, in the table's unit; Table 5's Acc. is the population-weighted accuracy, as in the paper; "—" where the report has no such cell (the method, dataset or gold labels were not part of the runs).`,
    "",
  ];
  for (const [title, lines] of sections) {
    out.push(`## ${title}`, "", "| Dataset | Row | Quantity | Kit | Paper | Kit − Paper |", "|:---|:---|:---|---:|---:|---:|");
    for (const l of lines) {
      const diff = l.kit === null ? MISSING : signed(l.kit - l.paper, l.decimals);
      out.push(`| ${name(l.dataset)} | ${l.row} | ${l.quantity} | ${l.kit === null ? MISSING : fixed(l.kit, l.decimals)} | ${fixed(l.paper, l.decimals)} | ${diff} |`);
    }
    out.push("");
  }
  return out.join("\n");
}
