// Experiment runs, the causal audit (METHOD.md §4.7; lib/experiment/audit.ts, `merit audit`): a clean
// scripted MERIT run on real Spider data has 0 violations; each kind of planted leak is caught with
// its own kind; the CLI prints `violations N` last and exits 1 when N > 0.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import type { Dataset } from "../../lib/data/index.ts";
import { canonicalJson, type JsonValue } from "../../lib/hash.ts";
import { auditRun, type ViolationKind } from "../../lib/experiment/audit.ts";
import { readMemoryEntries } from "../../lib/experiment/run-dir.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { cacheFromChosenSql, loadSpider, readJsonl, readRun, SPIDER_DIR, spiderOracle, streamIds, tempDir } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, B, C, runScenario, scenarioInitialSql, SCENARIO_IDS } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

let dataset: Dataset;
let oracle: Oracle;
let root: string;
let clean: string;
const goldRows = new Map<string, unknown[][]>();

beforeAll(async () => {
  root = tempDir("audit");
  dataset = await loadSpider();
  oracle = spiderOracle(dataset);
  const { cache, path: cachePath } = await cacheFromChosenSql(dataset, oracle, scenarioInitialSql(dataset), root);
  clean = join(root, "clean");
  await runScenario({ method: "merit", dataset, oracle, cache, cachePath, outDir: clean });
  for (const id of SCENARIO_IDS) {
    const rows = await oracle.goldRows(dataset.examples.find((e) => e.id === id)!);
    if (rows) goldRows.set(id, rows as unknown[][]);
  }
}, budget(120_000));

afterAll(async () => {
  await oracle?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Copies the clean run and rewrites one JSONL file of the copy line by line. */
function planted(name: string, file: "prompts.jsonl" | "retrieval_log.jsonl", edit: (line: Record<string, unknown>, index: number) => Record<string, unknown>): string {
  const dir = join(root, name);
  cpSync(clean, dir, { recursive: true });
  const lines = readJsonl<Record<string, unknown>>(join(dir, file)).map(edit);
  writeFileSync(join(dir, file), lines.map((l) => JSON.stringify(l) + "\n").join(""));
  return dir;
}

/** Edits the first repair prompt of `queryId`. */
function promptEdit(queryId: string, change: (prompt: string) => string) {
  let done = false;
  return (line: Record<string, unknown>) => {
    if (done || line.query_id !== queryId || line.kind !== "repair") return line;
    done = true;
    return { ...line, prompt: change(line.prompt as string) };
  };
}

/** Sets the first source position of `queryId`'s retrieval at step 1. */
function positionEdit(queryId: string, position: number) {
  return (line: Record<string, unknown>) =>
    line.query_id === queryId && line.repair_iteration === 1 ? { ...line, source_stream_positions: [position, ...(line.source_stream_positions as number[]).slice(1)] } : line;
}

function kinds(dir: string): ViolationKind[] {
  return auditRun(dir, dataset, goldRows).violations.map((v) => v.kind);
}

async function cli(dir: string): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const code = await main(["audit", dir], { out: (l) => out.push(l), err: () => undefined });
  return { code, out };
}

describe("auditRun on real run directories", () => {
  it("the clean scripted run (with real retrievals) has 0 violations", () => {
    const report = auditRun(clean, dataset, goldRows);
    expect(report.retrievals).toBeGreaterThan(0);
    expect(report.prompts).toBeGreaterThan(0);
    expect(report.violations).toEqual([]);
  });

  it("catches the gold SQL of the query in its own prompt", () => {
    const gold = dataset.examples.find((e) => e.id === A)!.goldSql;
    expect(kinds(planted("gold-sql", "prompts.jsonl", promptEdit(A, (p) => p.replace("LOCAL ATTEMPT HISTORY:\n", `LOCAL ATTEMPT HISTORY:\n${gold}\n`))))).toEqual(["gold-sql"]);
  });

  it("catches the gold result rows of the query in its own prompt (text rows)", () => {
    const rows = goldRows.get(A)!; // [["Sky Radio"]]
    expect(rows).toEqual([["Sky Radio"]]);
    const dir = planted("gold-rows", "prompts.jsonl", promptEdit(A, (p) => p.replace("CURRENT FEEDBACK:\n", `CURRENT FEEDBACK:\nRows: ${canonicalJson(rows as JsonValue)}\n`)));
    expect(kinds(dir)).toEqual(["gold-rows"]);
  });

  it("catches gold rows holding integers, written as JSON (the kit's canonical JSON: integers unquoted)", () => {
    // C's gold is `select count(*), t2.fullname … group by t2.id`: rows like [1,"American Motor Company"].
    const rows = goldRows.get(C)!;
    expect(rows[0]).toEqual([1n, "American Motor Company"]);
    const text = canonicalJson(rows as JsonValue); // [[1,"American Motor Company"],[2,"Volkswagen"],…]
    const dir = planted("gold-rows-int", "prompts.jsonl", promptEdit(C, (p) => p.replace("CURRENT FEEDBACK:\n", `CURRENT FEEDBACK:\nRows: ${text}\n`)));
    expect(kinds(dir)).toEqual(["gold-rows"]);
  });

  it("catches a retrieval from a later stream position (future memory)", () => {
    // B is at position 2; its step-1 retrieval returned A's entry (position 1). Pretend it came from 3.
    expect(kinds(planted("future", "retrieval_log.jsonl", positionEdit(B, 3)))).toEqual(["future-memory"]);
  });

  it("catches a retrieval from the current stream position (the query's own episode)", () => {
    expect(kinds(planted("own", "retrieval_log.jsonl", positionEdit(B, 2)))).toEqual(["own-query"]);
  });

  it("checks each retrieved id against the run's memory itself, not the log's positions (one check for entries and notes)", () => {
    /** B's step-1 retrieval with its first id replaced, the logged position left as it was (1, before B at 2). */
    const idEdit = (id: string) => (line: Record<string, unknown>) =>
      line.query_id === B && line.repair_iteration === 1 ? { ...line, retrieved_entry_ids: [id, ...(line.retrieved_entry_ids as string[]).slice(1)] } : line;
    // an id the memory never held (and the prompt now shows an entry its retrieval did not return)
    expect(kinds(planted("unknown-item", "retrieval_log.jsonl", idEdit("f".repeat(64))))).toEqual(["unknown-memory-item", "unretrieved-entry"]);
    // an entry that came into the memory only at B's position or later, logged as if from position 1
    const later = (readMemoryEntries(clean) ?? []).find((e) => Math.min(e.source_stream_position, ...e.provenance_history.map((o) => o.source_stream_position)) >= 2);
    expect(later, "the clean run stores an entry from position 2 on").toBeDefined();
    expect(kinds(planted("later-item", "retrieval_log.jsonl", idEdit(later!.entry_id)))).toEqual(["future-memory", "unretrieved-entry"]);
  });

  it("catches an Entry ID in a prompt that its retrieval did not return", () => {
    const fake = "f".repeat(64);
    const dir = planted("unretrieved", "prompts.jsonl", promptEdit(C, (p) => p.replace("OBSERVED FAILED DIRECTIONS:\n", `OBSERVED FAILED DIRECTIONS:\n[OBSERVED FAILED DIRECTION 9]\nEntry ID: ${fake}\n\n`)));
    const report = auditRun(dir, dataset, goldRows);
    expect(report.violations.map((v) => v.kind)).toEqual(["unretrieved-entry"]);
    expect(report.violations[0].queryId).toBe(C);
    expect(report.violations[0].detail).toContain(fake);
  });
});

describe("merit audit (CLI)", () => {
  it("prints `violations 0` last and exits 0 on the clean run", async () => {
    const { code, out } = await cli(clean);
    expect(out[out.length - 1]).toBe("violations 0");
    expect(code).toBe(0);
  }, budget(60_000));

  it("prints `violations N` last and exits 1 when N > 0 (gold rows found with the CLI's own oracle)", async () => {
    const { code, out } = await cli(join(root, "gold-rows"));
    expect(out[out.length - 1]).toBe("violations 1");
    expect(out[0]).toMatch(/^gold-rows\tquery 609\t/);
    expect(code).toBe(1);
  }, budget(60_000));

  it("a directory without a run is a clear error, not a crash", async () => {
    const err: string[] = [];
    const code = await main(["audit", root], { out: () => undefined, err: (l) => err.push(l) });
    expect(code).toBe(2);
    expect(err.join("\n")).toMatch(/config\.json/);
  });
});

it("the planted copies differ from the clean run only in the edited file", () => {
  expect(readFileSync(join(root, "future", "trajectories.jsonl"), "utf8")).toBe(readFileSync(join(clean, "trajectories.jsonl"), "utf8"));
});

describe("gold text that reaches a prompt causally, through an earlier paraphrase's memory entry", () => {
  // Spider dev pairs paraphrases with identical gold SQL (966 of 1,034 questions share their gold
  // with another question). Stream seed 0: 390 (position 44) and 389 (position 52) both have gold
  // `SELECT Name FROM teacher WHERE Age = 32 OR Age = 33`. 390 is repaired to exactly that SQL and
  // stores a POSITIVE entry; 389 later retrieves it legally (earlier position, other query) and its
  // prompt shows that SQL delta. No gold reached the prompt around the causal memory, so a causal
  // run should audit clean. (Currently auditRun reports it as `gold-sql`.)
  it("is not reported as a gold-sql leak", async () => {
    const dir = join(root, "paraphrase");
    const cacheDir = join(root, "paraphrase-cache");
    mkdirSync(cacheDir);
    const ids = streamIds(dataset, (await cacheFromChosenSql(dataset, oracle, new Map(), cacheDir)).cache, 0, 53);
    expect([ids[44], ids[52]]).toEqual(["390", "389"]);
    const sql = new Map(ids.map((id) => [id, dataset.examples.find((e) => e.id === id)!.goldSql]));
    sql.set("390", "SELECT Nme FROM teacher WHERE Age = 32 OR Age = 33");
    sql.set("389", "SELECT Name FROM teachers WHERE Age = 32 OR Age = 33");
    const { cache, path } = await cacheFromChosenSql(dataset, oracle, sql, cacheDir);
    const question = (id: string) => dataset.examples.find((e) => e.id === id)!.question;
    const repaired = "SELECT Name FROM teacher WHERE Age = 32 OR Age = 33";
    await runExperiment({
      spec: { config: parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: path }), method: "merit", seed: 0, limit: 53 },
      method: getMethod("merit"),
      dataset,
      initialCache: cache,
      outDir: dir,
      services: { backend: new ScriptedBackend(new Map([[question("390"), [repaired]], [question("389"), [repaired]]])), oracle, embedder: new HashedEmbedder(), retriever: createRetriever() },
    });
    const run = readRun(dir);
    expect(run.trajectories.filter((t) => !t.initial_correct).map((t) => t.query_id)).toEqual(["390", "389"]);
    const step = run.retrievals.find((r) => r.query_id === "389")!;
    expect(step.source_stream_positions).toEqual([44]);
    expect(run.prompts.find((p) => p.query_id === "389")!.prompt).toContain(`SQL delta: SELECT Nme FROM teacher WHERE Age = 32 OR Age = 33 => ${repaired}`);
    expect(auditRun(dir, dataset, goldRows).violations).toEqual([]);
  }, budget(60_000));
});
