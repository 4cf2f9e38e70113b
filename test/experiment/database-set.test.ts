// Tests lib/experiment/database-set.ts and its use by `merit run` / `merit initial` (METHOD.md §1.1, §2.3):
// a small Spider test-suite layout built here (a copy of the bundled concert_singer database plus a
// variant with one added row) scores a hard-coded answer right on the canonical database and wrong
// on the variant; a config naming absent test-suite databases stops with one line, --allow-single-db
// runs on the single set and the manifest records which set scored the run.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRunIdentity } from "../../lib/analysis/run-directory.ts";
import { main } from "../../lib/cli.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { loadConfigDataset } from "../../lib/experiment/database-set.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { cacheFromChosenSql, SPIDER_DIR, tempDir } from "../helpers/run-fixture.ts";

let root: string;
let dataDir: string;
let suite: string;
const DB = "concert_singer";

beforeAll(() => {
  root = tempDir("database-set");
  // A Spider dataset of the concert_singer questions only, with its single bundled database.
  dataDir = join(root, "spider");
  mkdirSync(join(dataDir, "database", DB), { recursive: true });
  const dev = (JSON.parse(readFileSync(join(SPIDER_DIR, "dev.json"), "utf8")) as Array<{ db_id: string }>).filter((e) => e.db_id === DB);
  writeFileSync(join(dataDir, "dev.json"), JSON.stringify(dev));
  copyFileSync(join(SPIDER_DIR, "tables.json"), join(dataDir, "tables.json"));
  copyFileSync(join(SPIDER_DIR, "database", DB, `${DB}.sqlite`), join(dataDir, "database", DB, `${DB}.sqlite`));
  // The test-suite layout: the canonical database and a variant with one more singer.
  suite = join(root, "spider_test_suite", "database");
  mkdirSync(join(suite, DB), { recursive: true });
  copyFileSync(join(SPIDER_DIR, "database", DB, `${DB}.sqlite`), join(suite, DB, `${DB}.sqlite`));
  copyFileSync(join(SPIDER_DIR, "database", DB, `${DB}.sqlite`), join(suite, DB, `${DB}_1.sqlite`));
  const variant = new Database(join(suite, DB, `${DB}_1.sqlite`));
  variant.prepare("INSERT INTO singer (Singer_ID, Name, Country, Song_Name, Song_release_year, Age, Is_male) VALUES (99, 'Variant', 'Nowhere', 'Song', '2001', 40, 'F')").run();
  variant.close();
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const config = (over: Record<string, unknown> = {}) =>
  parseConfig({ dataset: "spider", data_dir: dataDir, initial_cache: join(root, "initial.json"), call_cache: join(root, "llm.sqlite"), ...over });

describe("the database set of a config", () => {
  it("test-suite set: a hard-coded count is right on the canonical database and wrong on the variant", async () => {
    const single = await loadConfigDataset(config());
    const testSuite = await loadConfigDataset(config({ test_suite_databases: suite }));
    expect(single.databaseSet).toMatchObject({ kind: "single", root: join(dataDir, "database"), databases: 1, files: 1, tree_hash: single.dataset.databaseManifestHash });
    expect(testSuite.databaseSet).toMatchObject({ kind: "test-suite", root: suite, databases: 1, files: 2, tree_hash: testSuite.dataset.databaseManifestHash, allow_single_db: false });
    expect(testSuite.dataset.databaseManifestHash).not.toBe(single.dataset.databaseManifestHash);
    const example = single.dataset.examples.find((e) => e.goldSql === "SELECT count(*) FROM singer")!;
    const scores = async (set: typeof single, sql: string) => {
      const oracle = new Oracle({ dataset: "spider", databases: set.dataset.databases, protocol: "merit", timeoutMs: 30_000, jobs: 1 });
      try {
        return (await oracle.score(example, sql)).status;
      } finally {
        await oracle.close();
      }
    };
    expect(await scores(single, "SELECT 6")).toBe("CORRECT");
    expect(await scores(testSuite, "SELECT 6")).toBe("DENOTATION_MISMATCH");
    expect(await scores(testSuite, "SELECT count(*) FROM singer")).toBe("CORRECT");
  });

  it("absent or incomplete test-suite databases: one line naming the command, unless --allow-single-db", async () => {
    const empty = join(root, "no-suite");
    await expect(loadConfigDataset(config({ test_suite_databases: empty }), { configFile: "configs/spider.json" })).rejects.toThrow(
      `configs/spider.json scores Spider on the test-suite databases in ${empty} (the paper's protocol), but ${empty} holds no .sqlite files; run \`make data-spider\` (or \`merit data download spider-testsuite\`) to get them, or pass --allow-single-db to score on the single databases of ${join(dataDir, "database")} (not the paper's protocol)`,
    );
    await expect(loadConfigDataset(config({ test_suite_databases: join(dataDir, "database") }))).rejects.toThrow(/but 1 of its 1 databases have no test-suite variants \(first: .*concert_singer holds only 1 \.sqlite file\)/);
    const allowed = await loadConfigDataset(config({ test_suite_databases: empty }), { allowSingleDb: true });
    expect(allowed.databaseSet).toMatchObject({ kind: "single", allow_single_db: true });
    expect(allowed.warnings).toHaveLength(1);
    expect(allowed.warnings[0]).toMatch(/^warning: --allow-single-db: .* EX is not the paper's test-suite EX/);
    await expect(loadConfigDataset(parseConfig({ dataset: "bird", data_dir: "data/bird", initial_cache: "x", test_suite_databases: suite }))).rejects.toThrow(/test_suite_databases applies to Spider only/);
  });

  it("the paper config names the test-suite databases; the demo config keeps the single set", () => {
    const read = (f: string) => JSON.parse(readFileSync(join(SPIDER_DIR, "../../configs", f), "utf8"));
    expect(read("spider.json").test_suite_databases).toBe("data/spider_test_suite/database");
    expect(read("demo.json").test_suite_databases).toBeUndefined();
  });
});

describe("merit run / initial with test-suite databases in the config", () => {
  const cli = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };
  const writeConfig = (name: string, value: Record<string, unknown>) => {
    const file = join(root, name);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };
  // zeroshot makes no model call; the OpenAI-compatible backend connects only when called.
  const base = (initial: string, suiteRoot: string) => ({
    dataset: "spider",
    data_dir: dataDir,
    test_suite_databases: suiteRoot,
    initial_cache: initial,
    call_cache: join(root, "llm.sqlite"),
    model: { backend: "openai", base_urls: ["http://127.0.0.1:9/v1"], prompt_format: "chat" },
  });

  it("stops with one line without them; --allow-single-db runs on the single set and the manifest says so", async () => {
    const single = await loadConfigDataset(config());
    const oracle = new Oracle({ dataset: "spider", databases: single.dataset.databases, protocol: "merit", timeoutMs: 30_000, jobs: 1 });
    const cacheDir = join(root, "cache-single");
    mkdirSync(cacheDir, { recursive: true });
    let path: string;
    try {
      ({ path } = await cacheFromChosenSql(single.dataset, oracle, new Map(single.dataset.examples.slice(0, 2).map((e) => [e.id, e.goldSql])), cacheDir));
    } finally {
      await oracle.close();
    }
    const file = writeConfig("absent.json", base(path, join(root, "absent-suite")));
    const outDir = join(root, "run-refused");
    const refused = await cli(["run", "--config", file, "--method", "zeroshot", "--seed", "0", "--limit", "2", "--out", outDir]);
    expect(refused.code).toBe(2);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toMatch(/^merit run: .*absent\.json scores Spider on the test-suite databases .* run `make data-spider` \(or `merit data download spider-testsuite`\) to get them, or pass --allow-single-db/);
    expect(existsSync(outDir)).toBe(false);
    const initial = await cli(["initial", "--config", file, "--from-pred", join(cacheDir, "chosen_predictions.sql"), "--out", join(root, "never.json")]);
    expect(initial.code).toBe(2);
    expect(initial.err).toEqual([expect.stringMatching(/^merit initial: .*merit data download spider-testsuite/)]);

    const allowedDir = join(root, "run-allowed");
    const allowed = await cli(["run", "--config", file, "--method", "zeroshot", "--seed", "0", "--limit", "2", "--out", allowedDir, "--allow-single-db"]);
    expect(allowed.err.filter((l) => l.startsWith("merit run:")), allowed.err.join("\n")).toEqual([]);
    expect(allowed.code).toBe(0);
    expect(allowed.err[0]).toMatch(/^warning: --allow-single-db: /);
    const manifest = JSON.parse(readFileSync(join(allowedDir, "manifest.json"), "utf8"));
    expect(manifest.database_set).toEqual({ kind: "single", root: join(dataDir, "database"), databases: 1, files: 1, tree_hash: single.dataset.databaseManifestHash, allow_single_db: true });
    expect(manifest.dataset.database_manifest_hash).toBe(single.dataset.databaseManifestHash);
    expect(readRunIdentity(allowedDir).database_set).toBe("single");
  });

  it.skipIf(existsSync(join(SPIDER_DIR, "../spider_test_suite/database")))("the repository's configs/spider.json stops `merit run` and `merit grid` with that line in a fresh clone", async () => {
    process.chdir(join(SPIDER_DIR, "../.."));
    for (const argv of [
      ["run", "--config", "configs/spider.json", "--method", "merit", "--seed", "0", "--out", join(root, "paper-run")],
      ["grid", "--config", "configs/spider.json", "--methods", "merit,iterative", "--seeds", "0", "--out", join(root, "paper-grid")],
    ]) {
      const result = await cli(argv);
      expect(result.code).toBe(2);
      expect(result.err).toEqual([
        `merit ${argv[0]}: configs/spider.json scores Spider on the test-suite databases in data/spider_test_suite/database (the paper's protocol), but data/spider_test_suite/database holds no .sqlite files; run \`make data-spider\` (or \`merit data download spider-testsuite\`) to get them, or pass --allow-single-db to score on the single databases of data/spider/database (not the paper's protocol)`,
      ]);
    }
    expect(existsSync(join(root, "paper-run"))).toBe(false);
    expect(existsSync(join(root, "paper-grid"))).toBe(false);
  });

  it("with them, the run is scored on the test-suite set and records its tree hash", async () => {
    const testSuite = await loadConfigDataset(config({ test_suite_databases: suite }));
    const oracle = new Oracle({ dataset: "spider", databases: testSuite.dataset.databases, protocol: "merit", timeoutMs: 30_000, jobs: 1 });
    const cacheDir = join(root, "cache-suite");
    mkdirSync(cacheDir, { recursive: true });
    let path: string;
    try {
      // Gold SQL everywhere, except the two "how many singers" questions, answered by a hard-coded 6.
      const chosen = new Map(testSuite.dataset.examples.map((e) => [e.id, e.goldSql === "SELECT count(*) FROM singer" ? "SELECT 6" : e.goldSql]));
      ({ path } = await cacheFromChosenSql(testSuite.dataset, oracle, chosen, cacheDir));
    } finally {
      await oracle.close();
    }
    const outDir = join(root, "run-suite");
    const result = await cli(["run", "--config", writeConfig("suite.json", base(path, suite)), "--method", "zeroshot", "--seed", "0", "--out", outDir]);
    expect(result.code, result.err.join("\n")).toBe(0);
    const manifest = JSON.parse(readFileSync(join(outDir, "manifest.json"), "utf8"));
    expect(manifest.database_set).toEqual({ kind: "test-suite", root: suite, databases: 1, files: 2, tree_hash: testSuite.dataset.databaseManifestHash, allow_single_db: false });
    const trajectories = readFileSync(join(outDir, "trajectories.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { query_id: string; initial_correct: boolean });
    const hardCoded = testSuite.dataset.examples.filter((e) => e.goldSql === "SELECT count(*) FROM singer").map((e) => e.id).sort();
    expect(hardCoded).toHaveLength(2);
    expect(trajectories).toHaveLength(testSuite.dataset.examples.length);
    // "SELECT 6" is right on the canonical database but not on the variant; every gold query is right on both.
    expect(trajectories.filter((t) => !t.initial_correct).map((t) => t.query_id).sort()).toEqual(hardCoded);
    expect(readRunIdentity(outDir).database_set).toBe("test-suite");
  });
});
