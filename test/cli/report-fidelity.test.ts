// Tests lib/cli/report.ts on synthetic runs in the shape of `make reproduce`'s report (issue 20 §7–10): Table 4's ± std cells in COMPARISON.md (all 130 cells), the paper's names, row blocks, bold/underline and "0.00", the Figure 2 example episode (SVG and PNG, escaped and wrapped, with its errors), and Table 5's population-weighted accuracy beside the plain one. Set KEEP_FIDELITY=1 to keep the report under the temp directory for inspection.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { MeritError, UsageError } from "../../lib/errors.ts";
import { readTrajectories } from "../../lib/experiment/run-dir.ts";
import { writeSyntheticGrid, type Status } from "../report/synthetic-runs.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-fidelity-"));
afterAll(() => (process.env.KEEP_FIDELITY ? undefined : rmSync(root, { recursive: true, force: true })));

const TINY = { kind: "llama.cpp", model: "tiny-random-qwen2.5-instruct.gguf", modelHash: "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f" };
const DEV = JSON.parse(readFileSync("data/spider/dev.json", "utf8")) as { question: string; db_id: string }[];
const N = 30;
const QUERIES = DEV.slice(0, N).map((e, i) => ({ id: String(i), db: e.db_id }));
const METHODS = ["iterative", "reflexion", "dynamic_rag", "merit", "merit_typerel", "no_bm25", "no_type_filter"];
/** Initial status: q % 3 = 0 correct, 1 Result Mismatch, 2 Schema Linking (Execution when q % 9 = 8). */
function initial(q: number): Status {
  return q % 3 === 0 ? "CORRECT" : q % 3 === 1 ? "DENOTATION_MISMATCH" : q % 9 === 8 ? "TIMEOUT" : "EXECUTION_ERROR";
}
/** Repairs per method (dynamic_rag repairs exactly what merit repairs, so their Δ is 0): query → step of the repair, or none. */
const REPAIRS: Record<string, (q: number, seed: number) => number | null> = {
  iterative: (q) => (q % 6 === 1 ? 3 : null),
  reflexion: (q, s) => (q % 4 === 1 || (q + s) % 5 === 0 ? 2 : null),
  dynamic_rag: (q, s) => (q % 3 === 1 || (q + s) % 7 === 2 ? 2 : null),
  merit: (q, s) => (q % 3 === 1 || (q + s) % 7 === 2 ? 2 : null),
  merit_typerel: (q, s) => (q % 3 === 1 || (q + s) % 5 === 2 ? 1 : null),
  no_bm25: (q, s) => (q % 3 === 1 && (q + s) % 4 !== 0 ? 2 : null),
  no_type_filter: (q, s) => (q % 3 === 1 || (q + s) % 3 === 2 ? 2 : null),
};
function plan(method: string, seed: number, q: number): Status[] {
  const first = initial(q);
  if (first === "CORRECT") return ["CORRECT"];
  const step = REPAIRS[method](q, seed);
  return step === null ? [first, ...Array<Status>(7).fill("DENOTATION_MISMATCH")] : [first, ...Array<Status>(step - 1).fill("DENOTATION_MISMATCH"), "CORRECT"];
}
/** Long SQL with characters SVG must escape (<, &, quotes). */
const sql = (_m: string, _s: number, q: number, k: number) =>
  `SELECT s.name, COUNT(*) AS n FROM singer AS s JOIN singer_in_concert AS c ON s.singer_id = c.singer_id WHERE s.age < ${30 + k} AND s.country <> 'France & "Co"' AND c.concert_id IN (SELECT concert_id FROM concert WHERE year >= 2014) GROUP BY s.name HAVING n > ${q}`;

/** The synthetic grid (retrieval logs, memory) as finished run directories `merit report` accepts. */
function grid(): string {
  const raw = join(root, "raw");
  const dirs = writeSyntheticGrid({ outDir: raw, dataset: "spider", dataDir: "data/spider", queries: QUERIES, methods: METHODS, seeds: [0, 1, 2], memoryMethods: new Set(["dynamic_rag", "merit"]), plan, sql });
  const runs = join(root, "runs", "spider");
  for (const dir of dirs) {
    const name = dir.slice(raw.length + 1);
    const out = writeRunDir(join(runs, name), readTrajectories(dir), { backend: TINY, data_dir: "data/spider" });
    if (name.startsWith("merit-") || name.startsWith("dynamic_rag-")) {
      cpSync(join(dir, "retrieval_log.jsonl"), join(out, "retrieval_log.jsonl"));
      cpSync(join(dir, "memory"), join(out, "memory"), { recursive: true });
    }
  }
  return runs;
}
const runs = grid();

/**
 * Gold labels of 10 of the 20 initial failures (10 Result Mismatch, 7 Schema Linking, 3 Execution):
 * Result Mismatch 2 cases, both right; Schema Linking 6, 3 right; Execution 2, none right.
 * Plain accuracy 5/10 = 50%; weighted 10/20·1 + 7/20·½ + 3/20·0 = 67.5%.
 */
function goldLabels(): string {
  const cases: [number, string, string][] = [
    [1, "Result Mismatch", "Result Mismatch"], [4, "Result Mismatch", "Result Mismatch"],
    [2, "Schema Linking", "Schema Linking"], [5, "Schema Linking", "Schema Linking"], [11, "Schema Linking", "Schema Linking"],
    [14, "Schema Linking", "Syntax"], [20, "Schema Linking", "Syntax"], [23, "Schema Linking", "Result Mismatch"],
    [8, "Execution", "Syntax"], [17, "Execution", "Schema Linking"],
  ];
  const row = ([q, predicted, gold]: [number, string, string], annotator: string) => [String(q), QUERIES[q].db, "q", "SELECT 1", "", predicted, gold, annotator].join(",");
  const file = join(root, "cases.csv");
  writeFileSync(file, ["query_id,db_id,question,predicted_sql,error_message,predicted_type,gold_type,annotator_id", ...cases.map((c) => row(c, "a")), ...cases.slice(0, 3).map((c) => row(c, "b"))].join("\n") + "\n");
  return file;
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, sink: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}
const read = (...p: string[]) => readFileSync(join(...p), "utf8");

describe("merit report in the shape of make reproduce (issue 20 §7–10)", () => {
  const dest = join(root, "paper");
  const argv = [runs, "--out", dest, "--resamples", "300", "--reference", "merit", "--full", "merit", "--ablations", "no_bm25,no_type_filter", "--html", "--paper-numbers"];
  it("writes the report with gold labels and the example episode", async () => {
    const { out, sink } = io();
    expect(await reportCommand.run([...argv, "--gold-labels", goldLabels(), "--min-gold-labels", "10", "--example", "28"], sink)).toBe(0);
    expect(JSON.parse(out.at(-1)!).tables).toEqual(["table1", "table2", "table3", "table4", "table5", "table5-confusion-spider", "order-sensitivity"]);
  });
  it("§7: COMPARISON.md has all 130 cells of the paper, Table 4's ± std included", () => {
    const md = read(dest, "COMPARISON.md");
    const cells = md.split("\n").filter((l) => /^\| (Spider|BIRD) \|/.test(l));
    expect(cells).toHaveLength(130);
    const t4 = md.slice(md.indexOf("## Table 4"), md.indexOf("## Table 5"));
    expect(t4.split("\n").filter((l) => l.includes("| EX std |"))).toHaveLength(14);
    expect(t4).toMatch(/\| Spider \| No BM25 \| EX std \| \d+\.\d\d \| 0\.20 \| [+-]?\d+\.\d\d \|/);
    expect(t4).toContain("| BIRD | No BM25 | EX std | — | 0.07 | — |");
    // Table 5's Acc. is compared as the population-weighted accuracy
    expect(md).toContain("| Spider | Classifier | Acc. (%) | 67.50 | 48.71 | +18.79 |");
  });
  it("§8: Table 1 in dataset row blocks under the paper's names, best bold and second underlined", () => {
    const md = read(dest, "tables", "table1.md").split("\n");
    expect(md[2]).toBe("| Dataset | Method | EX (%) |");
    // issue 39 §3: the runs' other methods follow the paper's four below a rule; the marks rank the paper's four only
    expect(md.slice(4, 12).map((l) => l.split(" | ")[1].replace(/\*\*|<\/?u>/g, ""))).toEqual(["Iterative", "Reflexion-style", "Dyn. RAG", "MERIT", "—", "MERIT (type-rel.)", "No BM25", "No type filter"]);
    // merit and dynamic_rag repair the same queries: tied best, both bold
    expect(md[6]).toMatch(/^\| Spider \| Dyn\. RAG \| \*\*\d+\.\d\d ± \d+\.\d\d\*\* \|$/);
    expect(md[7]).toMatch(/^\| Spider \| MERIT \| \*\*/);
    expect(md[5]).toMatch(/<u>/); // Reflexion-style second
    expect(md[9]).toBe("| Spider | MERIT (type-rel.) | 73.33 ± 0.00 |"); // below the rule: shown, not ranked
    expect(md[11]).toBe("| Spider | No type filter | 77.78 ± 19.25 |");
    expect(read(dest, "tables", "table1.md")).toContain("among the paper's methods (above the rule");
    expect(read(dest, "tables", "table1.tex")).toMatch(/Spider & MERIT & \\textbf\{/);
    expect(read(dest, "tables", "table1.csv")).not.toMatch(/\*\*|<u>|textbf/);
  });
  it("§8: Table 2 prints a zero difference as 0.00, not +0.00", () => {
    const md = read(dest, "tables", "table2.md");
    expect(md).toMatch(/\| Spider \| MERIT vs Dyn\. RAG \| 0\.00 \| \[0\.00, 0\.00\] \|/);
    expect(md).not.toContain("+0.00");
  });
  it("§8: Table 3 marks the most repairs and the fewest steps, oscillations, tokens and calls", () => {
    const rows = read(dest, "tables", "table3.md").split("\n").slice(4, 12).map((l) => l.split(" | "));
    const row = (name: string) => rows.find((r) => r[1] === name)!;
    expect(row("MERIT")[2]).toMatch(/^\*\*/); // Rep.: merit (tied with Dyn. RAG) repairs most of the paper's four
    expect(row("MERIT")[3]).toMatch(/^\*\*/); // Steps: fewest
    expect(row("Iterative")[2]).not.toMatch(/\*\*|<u>/); // iterative repairs least
    for (const below of ["MERIT (type-rel.)", "No BM25", "No type filter"]) expect(row(below).slice(2).join(" ")).not.toMatch(/\*\*|<u>/); // below the rule: not ranked
    expect(read(dest, "tables", "table3.md")).toContain("Per dataset, best in bold, second underlined");
  });
  it("§8: Table 4 names the full method MERIT Full and marks the best EX; p and Holm stay after the paper's columns", () => {
    const md = read(dest, "tables", "table4.md").split("\n");
    expect(md[2]).toBe("| Method | Spider EX | Spider Δ | Spider 95% CI | Spider p | Spider p (Holm) |");
    expect(md[4]).toMatch(/^\| MERIT Full \| (\*\*|<u>)\d/);
    expect(md.slice(5, 7).map((l) => l.split(" | ")[0])).toEqual(["| No BM25", "| No type filter"]);
    expect(md.join("\n")).not.toContain("+0.00");
  });
  it("§9: the example episode as SVG and PNG: question, failed attempt, precedents, repair, escaped and wrapped", () => {
    const svg = read(dest, "figures", "example-episode.svg");
    expect(svg).toContain("Figure 2. One MERIT repair episode: Spider query 28 (concert_singer), stream order 0");
    expect(svg).toContain(DEV[28].question);
    expect(svg).toContain("Failed attempt 1 (repair step 2 of 2)");
    expect(svg).toContain("status DENOTATION_MISMATCH · type Result Mismatch");
    expect(svg).toMatch(/Retrieved precedents \(2; legal pool \d+/);
    expect(svg).toMatch(/1\. (positive|negative) \([^)]+\) · [A-Za-z ]+ · from \w+, query \d+ · score 0\.800/);
    expect(svg).toContain("verdict: CORRECT (repaired)");
    expect(svg).toContain("s.age &lt; 32");
    expect(svg).toContain("&apos;France &amp; &quot;Co&quot;&apos;");
    expect(svg).not.toMatch(/<(?!\/?(svg|rect|text|path)[ >])/); // no unescaped markup from the SQL
    // wrapped: the ~270-character SQL spans several text lines, none wider than the panel (884 px)
    const lines = [...svg.matchAll(/<text [^>]*font-size="(\d+)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({ size: Number(m[1]), mono: m[0].includes("Mono"), text: m[2].replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" })[e]!) }));
    for (const l of lines) expect(l.text.length * l.size * (l.mono ? 0.602 : 0.62), l.text).toBeLessThanOrEqual(884);
    const sqlLines = lines.filter((l) => l.mono && l.size === 12);
    expect(sqlLines.find((l) => l.text.startsWith("SELECT s.name"))).toBeDefined();
    expect(sqlLines.find((l) => l.text.endsWith("HAVING n > 28"))).toBeDefined();
    expect(svg).toContain("TEST MODEL — numbers are meaningless");
    const png = readFileSync(join(dest, "figures", "example-episode.png"));
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(png.readUInt32BE(16)).toBe(1920); // 960 px at scale 2
    expect(read(dest, "index.html")).toContain("figures/example-episode.svg");
    expect(JSON.parse(read(dest, "manifest.json")).example_episode).toEqual({ dataset: "spider", query_id: "28", method: "merit", stream_seed: 0 });
  });
  it("§10: Table 5's Acc. is population-weighted by predicted type, the plain accuracy beside it, and the note says which", () => {
    const md = read(dest, "tables", "table5.md");
    expect(md.split("\n")[2]).toBe("| Dataset | Result Mismatch | Schema Linking | Other | Acc. (%) | Macro-F1 | Acc., plain (%) |");
    // 10 Result Mismatch, 7 Schema Linking, 3 Execution of 20 initial failures
    expect(md).toMatch(/\| Spider \| 50\.00 \| 35\.00 \| 15\.00 \| 67\.50 \| \d\.\d{3} \| 50\.00 \|/);
    expect(md).toContain("Acc.: population-weighted, as in the paper");
    expect(md).toContain("`merit annotate` draws a simple random sample");
    const csv = read(dest, "tables", "table5.csv").split("\n");
    expect(csv[0]).toMatch(/^Dataset,Result Mismatch,Schema Linking,Other,Acc\. \(%\),Macro-F1,"Acc\., plain \(%\)",Initial failures,Annotated cases,/);
  });
});

describe("merit report --example: the user's mistakes are one line", () => {
  const run = (extra: string[]) => reportCommand.run([runs, "--out", join(root, "bad"), "--resamples", "50", "--no-figures", ...extra], io().sink);
  it("refuses an unknown query, an initially correct one, a memoryless method and a malformed id, before writing", async () => {
    await expect(run(["--example", "999"])).rejects.toThrow(UsageError);
    await expect(run(["--example", "999"])).rejects.toThrow(/--example 999: query 999 is in no merit run/);
    await expect(run(["--example", "3"])).rejects.toThrow(/query 3 was initially correct .* pick an initially failed query \(e\.g\. \d+/);
    await expect(run(["--example", "28", "--reference", "iterative"])).rejects.toThrow(MeritError);
    await expect(run(["--example", "28", "--reference", "iterative"])).rejects.toThrow(/memoryless run \(no retrieval_log\.jsonl records\).*pass --reference with a memory method/);
    await expect(run(["--example", "bird:28"])).rejects.toThrow(/no run of method merit on bird/);
    await expect(run(["--example", "spider:"])).rejects.toThrow(/--example expects QUERY_ID or DATASET:QUERY_ID/);
    expect(existsSync(join(root, "bad"))).toBe(false);
  });
  it("draws a step with no precedent (an early stream position, empty memory), even with --no-figures", async () => {
    const dest = join(root, "early");
    expect(await reportCommand.run([runs, "--out", dest, "--resamples", "50", "--no-figures", "--example", "spider:1"], io().sink)).toBe(0);
    const svg = read(dest, "figures", "example-episode.svg");
    expect(svg).toContain("Retrieved precedents (0; legal pool 0");
    expect(svg).toContain("(nothing retrieved: no eligible entry in memory yet)");
    expect(existsSync(join(dest, "figures", "example-episode.png"))).toBe(true);
    expect(existsSync(join(dest, "figures", "ex-per-method.svg"))).toBe(false); // --no-figures leaves the other figures out
  });
});
