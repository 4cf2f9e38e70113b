// Experiment runs, bad inputs (STYLE.md typed errors carrying the fix; METHOD.md §6.6): every mistake
// a user can make when starting `merit run` ends in ONE clear stderr line and exit code 2, through
// main() with a capturing CommandIO — never a stack trace, never a half-written run directory.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import type { Dataset } from "../../lib/data/index.ts";
import { contentHash, type JsonValue } from "../../lib/hash.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle, tempDir, TINY_BGE, TINY_QWEN } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

let root: string;
let dataset: Dataset;
let oracle: Oracle;
let cachePath: string;

beforeAll(async () => {
  root = tempDir("run-bad-input");
  dataset = await loadSpider();
  oracle = spiderOracle(dataset);
  // A valid, sealed cache: two chosen gold queries, every other query "" (fast to score).
  const gold = new Map(dataset.examples.slice(0, 2).map((e) => [e.id, e.goldSql]));
  ({ path: cachePath } = await cacheFromChosenSql(dataset, oracle, gold, root));
}, budget(60_000));

afterAll(async () => {
  await oracle?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

function baseConfig(): Record<string, unknown> {
  return {
    dataset: "spider",
    data_dir: SPIDER_DIR,
    initial_cache: cachePath,
    call_cache: join(root, "llm.sqlite"),
    model: { backend: "llama", path: TINY_QWEN, gpu: false, threads: 1 },
    embedder: { backend: "llama", path: TINY_BGE },
    decoding: { max_output_tokens: 8 },
  };
}

let counter = 0;
function writeJson(name: string, value: unknown): string {
  const path = join(root, `${++counter}-${name}`);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

/** Runs `merit run` with a config object (or path) and returns exit code and stderr lines. */
async function run(config: Record<string, unknown> | string, method = "merit"): Promise<{ code: number; err: string[]; out: string[]; outDir: string }> {
  const path = typeof config === "string" ? config : writeJson("config.json", config);
  const outDir = join(root, `run-${++counter}`);
  const err: string[] = [];
  const out: string[] = [];
  const code = await main(["run", "--config", path, "--method", method, "--seed", "0", "--limit", "2", "--out", outDir], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, err, out, outDir };
}

/** The one error line (progress lines before it are allowed only for inputs read after the model). */
function expectOneLineError(r: { code: number; err: string[]; outDir: string }, ...patterns: RegExp[]): string {
  expect(r.code).toBe(2);
  expect(existsSync(r.outDir)).toBe(false); // refused before any run directory is written
  const errors = r.err.filter((l) => l.startsWith("merit run: "));
  expect(errors).toHaveLength(1);
  const line = errors[0];
  expect(line).not.toContain("\n");
  expect(line).not.toMatch(/internal error|\n\s+at /);
  for (const p of patterns) expect(line).toMatch(p);
  return line;
}

describe("merit run refuses bad inputs with one clear line and exit code 2", () => {
  it("unknown method: suggests the nearest name", async () => {
    const r = await run(baseConfig(), "merrit");
    expectOneLineError(r, /unknown method "merrit"/, /did you mean "merit"\?/);
    expect(r.err).toHaveLength(1); // refused before loading data or models
  });

  it("missing required config keys: names each missing path", async () => {
    const { data_dir: _d, initial_cache: _i, ...rest } = baseConfig();
    expectOneLineError(await run(rest), /invalid config/, /data_dir/, /initial_cache/);
  });

  it("unknown top-level config key: names the key", async () => {
    expectOneLineError(await run({ ...baseConfig(), max_repairs: 3 }), /invalid config/, /max_repairs/);
  });

  it("unknown nested config key: names the path to it", async () => {
    const config = baseConfig();
    expectOneLineError(await run({ ...config, model: { ...(config.model as object), pth: "x.gguf" } }), /invalid config/, /model/, /pth/);
  });

  it("wrong type of a config value: names the path", async () => {
    expectOneLineError(await run({ ...baseConfig(), decoding: { max_output_tokens: "many" } }), /decoding\.max_output_tokens/);
  });

  it("malformed config JSON", async () => {
    expectOneLineError(await run(writeJson("broken.json", '{"dataset": "spider",')), /malformed JSON/);
  });

  it("missing model file: names the file and says `make models`", async () => {
    const missing = join(root, "no-such-model.gguf");
    const line = expectOneLineError(await run({ ...baseConfig(), model: { backend: "llama", path: missing, gpu: false, threads: 1 } }), /make models/);
    expect(line).toContain(missing);
  }, budget(60_000));

  it("initial cache with an edited record: cache_hash mismatch", async () => {
    const cache = JSON.parse(readFileSync(cachePath, "utf8"));
    cache.records[0].initial_sql = "SELECT 1";
    const edited = writeJson("edited-cache.json", cache);
    expectOneLineError(await run({ ...baseConfig(), initial_cache: edited }), /cache_hash does not match/, new RegExp(edited.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")), /merit initial/);
  });

  it("truncated initial cache JSON", async () => {
    const text = readFileSync(cachePath, "utf8");
    const truncated = writeJson("truncated-cache.json", text.slice(0, Math.floor(text.length / 2)));
    expectOneLineError(await run({ ...baseConfig(), initial_cache: truncated }), /not valid JSON/, /merit initial/);
  });

  it("missing initial cache file", async () => {
    expectOneLineError(await run({ ...baseConfig(), initial_cache: join(root, "nowhere.json") }), /initial cache not found/, /merit initial/);
  });

  it("initial cache built for other data (properly sealed, other dataset checksum)", async () => {
    const { cache_hash: _h, ...body } = JSON.parse(readFileSync(cachePath, "utf8"));
    body.identity.dataset_checksum = "0".repeat(64);
    const other = writeJson("other-data-cache.json", { ...body, cache_hash: contentHash(body as JsonValue) });
    expectOneLineError(await run({ ...baseConfig(), initial_cache: other }), /built for other data/, /dataset checksum differs/);
  });

  it("initial cache of the other dataset (BIRD identity on Spider)", async () => {
    const { cache_hash: _h, ...body } = JSON.parse(readFileSync(cachePath, "utf8"));
    body.identity.dataset_name = "bird";
    const other = writeJson("bird-cache.json", { ...body, cache_hash: contentHash(body as JsonValue) });
    expectOneLineError(await run({ ...baseConfig(), initial_cache: other }), /built for other data/, /dataset bird ≠ spider/);
  });

  it("initial cache labelled under another oracle protocol (official) for a `merit`-protocol run", async () => {
    // METHOD.md §6.6: the cache identity records evaluation_protocol; §11.6: repair runs use `merit`,
    // `merit eval` defaults to `official`, and the two label some queries differently. A cache from
    // the other protocol should be refused up front, not discovered query by query mid-run.
    const official = new Oracle({ dataset: "spider", databases: dataset.databases, protocol: "official", timeoutMs: 30_000, jobs: 1 });
    const dir = join(root, "official-cache");
    mkdirSync(dir);
    try {
      const gold = new Map(["426", "609"].map((id) => [id, dataset.examples.find((e) => e.id === id)!.goldSql]));
      const { cache, path } = await cacheFromChosenSql(dataset, official, gold, dir);
      expect(cache.identity.evaluation_protocol).toBe("spider-test-suite-official-v1");
      expectOneLineError(await run({ ...baseConfig(), initial_cache: path }), /protocol/, /official/, /merit initial/);
    } finally {
      await official.close();
    }
  }, budget(60_000));

  it("missing --method / bad --seed are usage errors", async () => {
    const err: string[] = [];
    const code = await main(["run", "--config", writeJson("ok.json", baseConfig()), "--seed", "x", "--method", "merit"], { out: () => undefined, err: (l) => err.push(l) });
    expect(code).toBe(2);
    expect(err[0]).toMatch(/seeds must be non-negative integers, got "x"/);
  });
});
