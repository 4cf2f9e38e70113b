/**
 * Dataset conformance (DESIGN.md §1 "Datasets"): every registered dataset, found by default under
 * data/<name>, must load through its adapter, render a schema text for every db_id its questions use,
 * render its initial prompt, parse as a config, build its stream order, and — where its databases are
 * present — score its own gold SQL as predictions 100% correct on every executable question under its
 * default protocol. Questions that cannot be scored (no database, gold that fails) are printed, not
 * hidden. A new dataset gets these checks by registering; no test edits elsewhere.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { datasetAdapter, datasetNames } from "../../lib/data/datasets/index.ts";
import { loadDataset, missingDatabases } from "../../lib/data/dataset.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { streamOrder } from "../../lib/experiment/stream-order.ts";
import { evaluatePredictions } from "../../lib/oracle/evaluate.ts";
import { readPredictions } from "../../lib/oracle/predictions.ts";
import { initialPrompt } from "../../lib/prompts.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const temp = mkdtempSync(join(tmpdir(), "merit-conformance-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe.each(datasetNames())("dataset %s", (name) => {
  const dir = join(ROOT, "data", name);

  it("loads, renders every schema and prompt, parses as a config and builds its stream order", async () => {
    const adapter = datasetAdapter(name);
    expect(adapter.name).toBe(name);
    const data = await loadDataset({ name, dir });
    expect(data.examples.length).toBeGreaterThan(0);
    for (const dbId of new Set(data.examples.map((e) => e.dbId))) expect(data.schemas.get(dbId)).toMatch(new RegExp(`^Database: ${dbId}\\n\\nTable: `));
    const [first] = data.examples;
    const prompt = initialPrompt({ dataset: name, schema: data.schemas.get(first.dbId) ?? "", question: first.question, evidence: first.evidence });
    expect(prompt).toContain(first.question);
    expect(parseConfig({ dataset: name, data_dir: dir, initial_cache: "x" }).dataset).toBe(name);

    const out: string[] = [];
    const code = await main(["stream-order", "--dataset", name, "--data", dir, "--seed", "0"], { out: (l) => out.push(l), err: () => {} });
    expect(code).toBe(0);
    expect(JSON.parse(out[0])).toEqual(streamOrder(data.examples.length, 0));
  });

  it("its gold SQL as predictions scores 100% of the executable questions", async () => {
    const data = await loadDataset({ name, dir });
    const missing = missingDatabases(data);
    if (data.databases.size === 0) {
      console.log(`${name}: no databases under ${dir}; ${data.examples.length} questions not executable here`);
      return;
    }
    const file = join(temp, `${name}-gold.sql`);
    writeFileSync(file, data.examples.map((e) => e.goldSql.replace(/\s+/g, " ")).join("\n") + "\n");
    const predictions = readPredictions(file, "utf8", data.examples.length);
    const { verdicts, summary } = await evaluatePredictions(data, predictions, { protocol: "official", timeoutMs: 30_000, jobs: 1 });
    const goldErrors = verdicts.flatMap((v, i) => (v.status === "GOLD_ERROR" ? [`${data.examples[i].id} (${v.dbError})`] : []));
    console.log(`${name}: ${summary.correct}/${summary.n} gold as predictions correct; NO_DATABASE ${summary.counts.NO_DATABASE} (${missing.map((m) => `${m.dbId} ${m.examples}`).join(", ") || "none"}); GOLD_ERROR ${goldErrors.length}${goldErrors.length ? `: ${goldErrors.join("; ")}` : ""}`);
    expect(summary.n).toBeGreaterThan(0);
    expect(summary.correct).toBe(summary.n);
    expect(summary.counts.NO_DATABASE).toBe(missing.reduce((s, m) => s + m.examples, 0));
  });
});
