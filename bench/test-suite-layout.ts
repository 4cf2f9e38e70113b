/**
 * Benchmark fixture, the Spider test-suite layout (METHOD.md §2.3; README "Scoring protocols"): a
 * dataset directory whose database folders hold the canonical `<db>/<db>.sqlite` and `variants − 1`
 * more `.sqlite` files with the same rows in another order, as the distilled test suites ship them
 * (the oracle scores a prediction on every `.sqlite` of the folder; the first failure decides).
 *
 * Each variant is the canonical file copied (`VACUUM INTO`), then every table's rows deleted and
 * re-inserted in a seeded shuffled order (CPython-compatible MT19937, lib/random.ts; Fisher–Yates). A
 * table whose rows are stored by key (an `INTEGER PRIMARY KEY`, `WITHOUT ROWID`) keeps its scan order,
 * as in the real test suites; the rest get new row ids in the shuffled order. The rows are the same,
 * so every gold query has the same denotation up to row order: the gold scores 100 % on it. Deterministic:
 * the same seed gives the same files. The questions, schemas and gold files are copied beside.
 *
 * Run: node bench/test-suite-layout.ts [--variants 10] [--seed 0] [--out DIR] (default: a folder
 * under the OS temporary directory); bench/oracle.ts builds one itself.
 * @module
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { PyRandom } from "../lib/random.ts";

/** The dataset files copied beside the databases (data/spider's layout). */
const DATASET_FILES = ["dev.json", "tables.json", "dev_gold.sql"];

export interface TestSuiteLayout {
  /** The dataset directory (`--data` of `merit eval`). */
  dir: string;
  databases: number;
  files: number;
}

/** Builds `<outDir>/{dev.json,tables.json,dev_gold.sql,database/<db>/*.sqlite}` from `spiderDir`. */
export function buildTestSuiteLayout(spiderDir: string, outDir: string, variants = 10, seed = 0): TestSuiteLayout {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, "database"), { recursive: true });
  for (const file of DATASET_FILES) copyFileSync(join(spiderDir, file), join(outDir, file));
  const dbIds = readdirSync(join(spiderDir, "database")).filter((d) => existsSync(join(spiderDir, "database", d, `${d}.sqlite`))).sort();
  const random = new PyRandom(seed);
  let files = 0;
  for (const dbId of dbIds) {
    const source = join(spiderDir, "database", dbId, `${dbId}.sqlite`);
    const folder = join(outDir, "database", dbId);
    mkdirSync(folder);
    copyFileSync(source, join(folder, `${dbId}.sqlite`));
    files += 1;
    for (let v = 1; v < variants; v++) {
      const target = join(folder, `${dbId}_v${String(v).padStart(2, "0")}.sqlite`);
      const src = new Database(source, { readonly: true, fileMustExist: true });
      try {
        src.prepare("VACUUM INTO ?").run(target);
      } finally {
        src.close();
      }
      shuffleRows(target, random);
      files += 1;
    }
  }
  return { dir: outDir, databases: dbIds.length, files };
}

/** Re-inserts every table's rows of `path` in a shuffled order (foreign keys off, one transaction). */
function shuffleRows(path: string, random: PyRandom): void {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma("foreign_keys = OFF");
    db.pragma("journal_mode = OFF");
    db.defaultSafeIntegers(true);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
    db.transaction(() => {
      for (const table of tables) {
        const quoted = `"${table.replaceAll('"', '""')}"`;
        const rows = db.prepare(`SELECT * FROM ${quoted}`).raw(true).all() as unknown[][];
        if (rows.length < 2) continue;
        for (let i = rows.length - 1; i > 0; i--) {
          const j = random.randbelow(i + 1);
          [rows[i], rows[j]] = [rows[j], rows[i]];
        }
        db.prepare(`DELETE FROM ${quoted}`).run();
        const insert = db.prepare(`INSERT INTO ${quoted} VALUES (${rows[0].map(() => "?").join(", ")})`);
        for (const row of rows) insert.run(...row);
      }
    })();
  } finally {
    db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { variants: { type: "string", default: "10" }, seed: { type: "string", default: "0" }, out: { type: "string", default: join(tmpdir(), "merit-test-suite-layout") } } });
  const layout = buildTestSuiteLayout("data/spider", values.out, Number(values.variants), Number(values.seed));
  console.log(`${layout.dir}: ${layout.databases} databases, ${layout.files} .sqlite files (${values.variants} per database, seed ${values.seed})`);
}
