/**
 * Verdict parity of the `sqljs` executor plugin (examples/sqljs-executor.ts: SQLite 3.54.1 as
 * WebAssembly) with the bundled `sqlite` executor (better-sqlite3, SQLite 3.53.2) on the four
 * bundled prediction files (data/predictions/, data/README.md), under the `official` and `merit`
 * protocols: each file is scored by one oracle per engine and every example whose status or db_error
 * differs is printed with both verdicts. BIRD dev's databases are not bundled (`make data-bird`), so
 * there every example is NO_DATABASE on both engines unless they are installed.
 *
 * Run: `node examples/sqljs-parity.ts [--jobs N] [--protocols official,merit]` (about two
 * minutes on two cores). The numbers, and why there is no disagreement to explain, are in the
 * README ("How to add a SQL engine").
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadDataset } from "../lib/data/index.ts";
import { Oracle, type Verdict } from "../lib/oracle/oracle.ts";
import { readPredictions, type PredictionEncoding } from "../lib/oracle/predictions.ts";
import type { SpiderProtocol } from "../lib/oracle/protocol.ts";
import "./sqljs-executor.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FILES: Array<{ file: string; dataset: "spider" | "bird"; encoding: PredictionEncoding }> = [
  { file: "spider_dev__Llama3-8B.sql", dataset: "spider", encoding: "latin1" },
  { file: "spider_dev__Deepseek-Coder-7B.sql", dataset: "spider", encoding: "utf8" },
  { file: "spider_dev__SFT_CodeS_7B.sql", dataset: "spider", encoding: "utf8" },
  { file: "bird_dev__SFT_CodeS_7B_EK.sql", dataset: "bird", encoding: "utf8" },
];

/** Scores every example of a predictions file on one engine (verdict rows dropped). */
async function verdictsOn(engine: string, dataset: Awaited<ReturnType<typeof loadDataset>>, lines: readonly string[], protocol: SpiderProtocol, jobs: number): Promise<Verdict[]> {
  const oracle = new Oracle({ dataset: dataset.name, databases: dataset.databases, protocol, engine, jobs, timeoutMs: 30_000 });
  try {
    return await Promise.all(dataset.examples.map(async (example, i) => ({ ...(await oracle.score(example, lines[i])), predictedRows: null })));
  } finally {
    await oracle.close();
  }
}

const { values } = parseArgs({ options: { jobs: { type: "string", default: "2" }, protocols: { type: "string", default: "official,merit" } } });
const jobs = Number(values.jobs);
const protocols = values.protocols.split(",") as SpiderProtocol[];
const rows: string[] = ["| predictions | protocol | n scored | same verdict | same status | EX sqlite | EX sqljs |", "| --- | --- | --- | --- | --- | --- | --- |"];
for (const { file, dataset: name, encoding } of FILES) {
  const dataset = await loadDataset({ name, dir: join(ROOT, "data", name) });
  const { lines } = readPredictions(join(ROOT, "data/predictions", file), encoding, dataset.examples.length);
  for (const protocol of name === "bird" ? (["official"] as SpiderProtocol[]) : protocols) {
    const bundled = await verdictsOn("sqlite", dataset, lines, protocol, jobs);
    const sqljs = await verdictsOn("sqljs", dataset, lines, protocol, jobs);
    let sameVerdict = 0;
    let sameStatus = 0;
    bundled.forEach((a, i) => {
      const b = sqljs[i];
      if (a.status === b.status) sameStatus += 1;
      if (a.status === b.status && a.dbError === b.dbError) sameVerdict += 1;
      else console.log(`${file} ${protocol} #${i} (${dataset.examples[i].dbId}): sqlite ${a.status} ${JSON.stringify(a.dbError)} | sqljs ${b.status} ${JSON.stringify(b.dbError)} | ${lines[i].slice(0, 160)}`);
    });
    const scored = (vs: Verdict[]) => vs.filter((v) => v.status !== "NO_DATABASE" && v.status !== "GOLD_ERROR");
    const ex = (vs: Verdict[]) => `${vs.filter((v) => v.status === "CORRECT").length}/${scored(vs).length}`;
    rows.push(`| ${file} | ${protocol} | ${scored(bundled).length} | ${sameVerdict}/${bundled.length} | ${sameStatus}/${bundled.length} | ${ex(bundled)} | ${ex(sqljs)} |`);
  }
}
console.log(rows.join("\n"));
