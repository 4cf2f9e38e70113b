// Tests lib/cli/report.ts in the paper's layout (issue 15 §3–4, issue 13 §2, §5): default methods, comparisons and display names, --all-methods/--all-comparisons, Table 3 precision, Table 4 Holm, Table 5 columns, the per-difficulty table, the MDE column and figure, COMPARISON.md, the model banner everywhere, the true file count and --min-gold-labels.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { holmAdjust } from "../../lib/analysis/holm.ts";
import { latexEscape } from "../../lib/analysis/table.ts";
import { PAPER_NUMBERS_FILE } from "../../lib/analysis/paper-comparison.ts";
import { reportCommand } from "../../lib/cli/report.ts";
import { UsageError } from "../../lib/errors.ts";
import { sha256Hex } from "../../lib/hash.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-paper-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const METHODS = ["iterative", "reflexion", "dynamic_rag", "merit", "merit_typerel", "zeroshot", "no_bm25", "no_type_filter"];
const TINY = { kind: "llama.cpp", model: "tiny-random-qwen2.5-instruct.gguf", modelHash: "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f" };
const N = 40;

/** Deterministic 0/1 from a string (FNV-1a), so outcomes differ by method, seed and query. */
function coin(key: string, probability: number): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return h / 2 ** 32 < probability;
}
const P: Record<string, number> = { iterative: 0.3, reflexion: 0.4, dynamic_rag: 0.5, merit: 0.55, merit_typerel: 0.5, zeroshot: 0, no_bm25: 0.45, no_type_filter: 0.5 };

function grid(dir: string, backend: typeof TINY | undefined): string {
  for (const dataset of ["spider", "bird"]) {
    for (const method of METHODS) {
      for (const seed of [0, 1, 2]) {
        const trajectories: Trajectory[] = Array.from({ length: N }, (_, q) => {
          const common = { method, dataset, stream_seed: seed };
          if (q % 3 === 0) return buildTrajectory({ query_id: String(q), attempts: [`SELECT ${q}`], statuses: ["CORRECT"], ...common });
          const repaired = coin(`${dataset}/${method}/${seed}/${q}`, P[method]);
          const t = repairTrajectory(String(q), repaired ? 1 + (q % 3) : method === "zeroshot" ? 0 : 7, repaired, common);
          return q % 5 === 1 ? { ...t, error_types: ["Schema Linking", ...t.error_types.slice(1)] } : t;
        });
        writeRunDir(join(dir, dataset, `${method}-s${seed}`), trajectories, { backend, data_dir: `data/${dataset}` });
      }
    }
  }
  return dir;
}
const runs = grid(join(root, "runs"), TINY);

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, sink: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}
const read = (...p: string[]) => readFileSync(join(...p), "utf8");
/** Rows of a CSV whose quoted fields hold no quotes or line breaks (true of these tables). */
const csvRows = (text: string) => text.trim().split("\n").map((l) => [...l.matchAll(/("[^"]*"|[^,]*)(,|$)/g)].slice(0, -1).map((m) => m[1].replace(/^"|"$/g, "")));
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? filesUnder(join(dir, n)) : [join(dir, n)]));
}

describe("merit report: the paper's layout by default", () => {
  const dest = join(root, "default");
  let summary: { files: number; tables: string[] };
  it("writes the tables, figures, HTML and COMPARISON.md, and counts every file it wrote", async () => {
    const { out, err, sink } = io();
    const argv = [runs, "--out", dest, "--resamples", "500", "--full", "merit", "--ablations", "no_bm25,no_type_filter", "--html", "--paper-numbers"];
    expect(await reportCommand.run(argv, sink)).toBe(0);
    summary = JSON.parse(out.at(-1)!);
    const onDisk = filesUnder(dest).map((f) => relative(dest, f));
    expect(summary.files).toBe(onDisk.length); // HTML assets, data chunks and COMPARISON.md included
    expect(err.at(-1)).toBe(`report: wrote ${onDisk.length} files under ${dest}`);
    expect(summary.tables).toEqual(["table1", "table1-difficulty", "table2", "table3", "table4", "table5", "order-sensitivity"]);
  });
  it("Table 1: the paper's four methods in its order under its names, then every other method below a rule, Spider then BIRD", () => {
    const md = read(dest, "tables", "table1.md").split("\n");
    expect(md[2]).toBe("| Dataset | Method | EX (%) |"); // issue 20 §8: datasets as row blocks (was "| Method | Spider | BIRD |")
    const names = ["Iterative", "Reflexion-style", "Dyn. RAG", "MERIT"]; // issue 20 §8: the paper's "Dyn. RAG" (was "Dynamic RAG")
    // issue 39 §3: the runs' other methods follow below a rule (they were left out unless --all-methods)
    const extras = ["MERIT (type-rel.)", "No BM25", "No type filter", "Zero-shot"];
    const block = (d: string) => [...names.map((m) => `| ${d} | ${m}`), "| — | —", ...extras.map((m) => `| ${d} | ${m}`)];
    expect(md.slice(4, 22).map((l) => l.split(" | ").slice(0, 2).join(" | "))).toEqual([...block("Spider"), ...block("BIRD")]);
    expect(md[22]).toBe("");
  });
  it("Table 2: MERIT against the paper's comparisons, Δ, CI, p and MDE shown; the rest in the CSV", () => {
    const md = read(dest, "tables", "table2.md").split("\n");
    expect(md[2]).toBe("| Dataset | Comparison | Δ EX (pp) | 95% CI | p (bootstrap) | MDE (pp) |");
    expect(md.slice(4, 12).map((l) => l.split(" | ").slice(0, 2).join(" | "))).toEqual([
      "| Spider | MERIT vs Iterative", "| Spider | MERIT vs Reflexion-style", "| Spider | MERIT vs Dyn. RAG", "| Spider | MERIT vs MERIT (type-rel.)",
      "| BIRD | MERIT vs Iterative", "| BIRD | MERIT vs Reflexion-style", "| BIRD | MERIT vs Dyn. RAG", "| BIRD | MERIT vs MERIT (type-rel.)",
    ]);
    const csv = csvRows(read(dest, "tables", "table2.csv"));
    expect(csv[0]).toEqual(["Dataset", "Comparison", "Δ EX (pp)", "95% CI", "p (bootstrap)", "MDE (pp)", "p (McNemar)", "Orders for MDE ≤ |Δ|", "Queries", "Seeds", "B", "Seed", "Interval"]);
    expect(read(dest, "tables", "table2.md")).toMatch(/MERIT vs Dyn\. RAG on Spider: (\d+ stream orders would give MDE|at the observed Δ)/);
  });
  it("Table 3: the paper's precision (Osc. 2 decimals, Tok. 3)", () => {
    const row = read(dest, "tables", "table3.md").split("\n")[4].replace(/\*\*|<\/?u>/g, ""); // issue 20 §8: best/second marks, stripped here
    expect(row).toMatch(/^\| Spider \| Iterative \| \d+\.\d \| \d\.\d{3} \| \d+\.\d{2} \| \d\.\d{3} \| \d+ \|$/);
  });
  it("Table 4: bootstrap p and Holm-adjusted p over each dataset's ablation family", () => {
    const csv = csvRows(read(dest, "tables", "table4.csv"));
    expect(csv[0].slice(0, 6)).toEqual(["Method", "Spider EX", "Spider Δ", "Spider 95% CI", "Spider p", "Spider p (Holm)"]);
    const raw = csv.slice(2).map((r) => Number(r[4]));
    const holm = csv.slice(2).map((r) => Number(r[5]));
    const expected = holmAdjust(raw);
    holm.forEach((p, i) => expect(Math.abs(p - expected[i])).toBeLessThan(3e-4)); // shown p are rounded to 4 decimals
    expect(holm.every((p, i) => p >= raw[i])).toBe(true);
  });
  it("Table 5: Result Mismatch, Schema Linking, Other, Acc., Macro-F1, and a note on the missing gold labels", () => {
    const md = read(dest, "tables", "table5.md");
    expect(md.split("\n")[2]).toBe("| Dataset | Result Mismatch | Schema Linking | Other | Acc. (%) | Macro-F1 |");
    expect(md).toContain("No gold labels for Spider, BIRD");
  });
  it("per-difficulty EX where the dataset labels it (BIRD), counts from dev.json", () => {
    const bird = JSON.parse(read("data/bird/dev.json")) as { question_id: number; difficulty: string }[];
    const count = (level: string) => bird.filter((e) => e.question_id < N && e.difficulty === level).length;
    const header = read(dest, "tables", "table1-difficulty.md").split("\n")[2];
    expect(header).toBe(`| Method | BIRD simple (n = ${count("simple")}) | BIRD moderate (n = ${count("moderate")}) | BIRD challenging (n = ${count("challenging")}) |`);
  });
  it("the MDE figure", () => {
    const svg = read(dest, "figures", "mde-vs-stream-orders.svg");
    expect(svg).toContain("Minimum detectable effect");
    expect(svg).toContain("MERIT vs Dynamic RAG");
  });
  it("COMPARISON.md: each cell next to the paper's number and the difference", () => {
    const md = read(dest, "COMPARISON.md");
    const t1 = JSON.parse(read(dest, "tables", "table1.csv").split("\n")[1].split(",")[2].split(" ± ")[0]); // issue 20 §8: Dataset, Method, EX columns
    expect(md).toContain(`| Spider | Iterative | EX mean | ${t1.toFixed(2)} | 66.34 | ${t1 - 66.34 >= 0 ? "+" : ""}${(t1 - 66.34).toFixed(2)} |`);
    expect(md).toContain("| BIRD | Reflexion-style | Tok. (M) |");
    expect(md).toContain("| BIRD | No type filter | Δ |");
    expect(md).toContain("| Spider | Classifier | Acc. (%) | — | 48.71 | — |");
    expect(md).toContain("**TEST MODEL — numbers are meaningless");
    const manifest = JSON.parse(read(dest, "manifest.json"));
    expect(manifest.paper_numbers).toEqual({ source: "arXiv:2608.05906", sha256: sha256Hex(readFileSync(PAPER_NUMBERS_FILE)) });
  });
  it("every table note, figure subtitle and the HTML header carry the model and the test-model banner", () => {
    for (const name of readdirSync(join(dest, "tables")).filter((f) => !f.endsWith(".csv"))) {
      const text = read(dest, "tables", name);
      const shown = name.endsWith(".tex") ? latexEscape : (s: string) => s;
      expect(text, name).toContain(shown("TEST MODEL — numbers are meaningless: tiny-random-qwen2.5-instruct.gguf is a random-weight test fixture"));
      expect(text, name).toContain(shown("Model: tiny-random-qwen2.5-instruct.gguf (llama.cpp, sha256 020deda330f2…)"));
    }
    for (const name of readdirSync(join(dest, "figures")).filter((f) => f.endsWith(".svg"))) {
      expect(read(dest, "figures", name), name).toContain("TEST MODEL — numbers are meaningless");
      expect(read(dest, "figures", name), name).toContain("Model: tiny-random-qwen2.5-instruct.gguf");
    }
    const html = read(dest, "index.html");
    expect(html).toMatch(/<header><p class="banner" role="alert">TEST MODEL — numbers are meaningless: [^<]+<\/p>\n<h1>MERIT report<\/h1>\n<p class="model">Model: tiny-random-qwen2\.5-instruct\.gguf/);
    const manifest = JSON.parse(read(dest, "manifest.json"));
    expect(manifest.model_identity.banner).toMatch(/^TEST MODEL/);
    expect(manifest.table_selection).toEqual({ all_methods: false, all_comparisons: false });
  });
});

describe("merit report: everything beyond the paper behind flags", () => {
  it("--all-methods puts the other methods below a rule; --all-comparisons compares MERIT with every method", async () => {
    const dest = join(root, "all");
    expect(await reportCommand.run([runs, "--out", dest, "--resamples", "200", "--no-figures", "--all-methods", "--all-comparisons"], io().sink)).toBe(0);
    const md = read(dest, "tables", "table1.md").split("\n");
    // issue 20 §8: the method is the second column of each dataset block (was the first); "Dyn. RAG" (was "Dynamic RAG")
    expect(md.slice(4, 13).map((l) => l.split(" | ")[1])).toEqual(["Iterative", "Reflexion-style", "Dyn. RAG", "MERIT", "—", "MERIT (type-rel.)", "No BM25", "No type filter", "Zero-shot"]);
    expect(read(dest, "tables", "table1.tex")).toMatch(/MERIT & [^\n]+\n\\midrule\nSpider & MERIT \(type-rel\.\) &/);
    const t2 = read(dest, "tables", "table2.csv");
    for (const other of ["Zero-shot", "No BM25", "No type filter"]) expect(t2).toContain(`Spider,MERIT vs ${other},`);
    expect(JSON.parse(read(dest, "manifest.json")).table_selection).toEqual({ all_methods: true, all_comparisons: true });
  });
  it("an unverified real model gets the UNVERIFIED banner; runs without a model identity get the test-model banner", async () => {
    const other = grid(join(root, "runs-unverified"), { kind: "llama.cpp", model: "Qwen2.5-7B-Instruct-Q4_K_M.gguf", modelHash: "ab".repeat(32) });
    const dest = join(root, "unverified");
    const { err, sink } = io();
    expect(await reportCommand.run([join(other, "spider"), "--out", dest, "--resamples", "100", "--no-figures"], sink)).toBe(0);
    expect(err).toContain("report: UNVERIFIED MODEL — numbers are meaningless until the model is verified: Qwen2.5-7B-Instruct-Q4_K_M.gguf (abababababab…) is not a verified entry of models/models.json or models/models.lock.json.");
    const bare = grid(join(root, "runs-bare"), undefined);
    const dest2 = join(root, "bare");
    expect(await reportCommand.run([join(bare, "spider"), "--out", dest2, "--resamples", "100", "--no-figures"], io().sink)).toBe(0);
    expect(read(dest2, "tables", "table1.md")).toContain("TEST MODEL — numbers are meaningless: 24 run manifest(s) record no model identity.");
  });
});

describe("merit report --min-gold-labels", () => {
  // 12 initially failed queries, 4 of them with a second annotator
  const trajectories = Array.from({ length: 12 }, (_, i) => repairTrajectory(String(i), 1, false));
  const dir = writeRunDir(join(root, "gold", "iterative-s0"), trajectories, { backend: TINY });
  const row = (i: number, annotator: string) => [String(i), "db", "q", "SELECT 1", "", "Syntax", i < 9 ? "Syntax" : "Schema Linking", annotator].join(",");
  const file = join(root, "gold", "cases.csv");
  writeFileSync(file, ["query_id,db_id,question,predicted_sql,error_message,predicted_type,gold_type,annotator_id", ...trajectories.map((_, i) => row(i, "a")), ...[0, 1, 2, 3].map((i) => row(i, "b"))].join("\n") + "\n");
  it("without the flag, fewer than 150 cases is one line naming the flag", async () => {
    const dest = join(root, "gold-refused");
    const run = reportCommand.run([dir, "--gold-labels", file, "--out", dest, "--no-figures"], io().sink);
    await expect(run).rejects.toThrow(UsageError);
    await expect(reportCommand.run([dir, "--gold-labels", file, "--out", dest, "--no-figures"], io().sink)).rejects.toThrow(/12 cases, but 150–200 are required.*pass --min-gold-labels N/);
    expect(existsSync(join(dest, "manifest.json"))).toBe(false);
    await expect(reportCommand.run([dir, "--min-gold-labels", "10", "--out", dest], io().sink)).rejects.toThrow(/--min-gold-labels needs --gold-labels/);
  });
  it("with --min-gold-labels 12 the flow runs, and the manifest and the table note record it", async () => {
    const dest = join(root, "gold-trial");
    expect(await reportCommand.run([dir, "--gold-labels", file, "--min-gold-labels", "12", "--out", dest, "--no-figures"], io().sink)).toBe(0);
    expect(JSON.parse(read(dest, "manifest.json")).min_gold_labels).toBe(12);
    const md = read(dest, "tables", "table5.md");
    expect(md).toContain("| Spider | 100.00 | 0.00 | 0.00 | 75.00 | 0.429 |"); // 9 of 12 right; F1 Syntax 6/7 (P 9/12, R 1), Schema Linking 0 → macro 3/7
    expect(md).toContain("Validated with --min-gold-labels 12, below the 150 cases METHOD.md §8 requires");
  });
  it("with runs of two datasets, the dataset is the one whose runs hold every labelled case", async () => {
    const bird = writeRunDir(join(root, "gold", "bird-iterative-s0"), Array.from({ length: 5 }, (_, i) => repairTrajectory(`b${i}`, 1, false, { dataset: "bird" })), { backend: TINY, data_dir: "data/bird" });
    const dest = join(root, "gold-two");
    expect(await reportCommand.run([dir, bird, "--gold-labels", file, "--min-gold-labels", "12", "--out", dest, "--no-figures"], io().sink)).toBe(0);
    expect(read(dest, "tables", "table5.md")).toContain("| Spider | 100.00 | 0.00 | 0.00 | 75.00 | 0.429 |");
    expect(read(dest, "tables", "table5.md")).toContain("No gold labels for BIRD");
  });
});
