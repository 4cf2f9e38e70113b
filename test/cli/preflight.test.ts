// `merit preflight` (the first step of `make reproduce`, lib/experiment/preflight.ts): in a temp
// layout with inputs missing, it stops at the FIRST missing one — models, then Spider databases,
// then BIRD databases — with one line naming it and the command that gets it, exit code 2; with
// everything present it exits 0.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { REPO, tempDir } from "../helpers/run-fixture.ts";

let root: string;
let configs: string;

function dbIds(examplesFile: string): string[] {
  return [...new Set((JSON.parse(readFileSync(examplesFile, "utf8")) as { db_id: string }[]).map((e) => e.db_id))];
}

beforeAll(() => {
  root = tempDir("preflight");
  for (const [name, files] of [["spider", ["dev.json", "tables.json"]], ["bird", ["dev.json", "dev_tables.json"]]] as const) {
    mkdirSync(join(root, "data", name), { recursive: true });
    for (const f of files) copyFileSync(join(REPO, "data", name, f), join(root, "data", name, f));
  }
  const config = (dataset: string) => ({
    dataset,
    data_dir: join(root, "data", dataset),
    initial_cache: join(root, "runs", `${dataset}.json`),
    model: { backend: "llama", path: join(root, "models", "chat.gguf") },
    embedder: { backend: "llama", path: join(root, "models", "embed.gguf") },
  });
  writeFileSync(join(root, "spider.json"), JSON.stringify(config("spider")));
  writeFileSync(join(root, "bird.json"), JSON.stringify(config("bird")));
  configs = `${join(root, "spider.json")},${join(root, "bird.json")}`;
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

async function preflight(): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(["preflight", "--config", configs], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

/** Puts a (stand-in) database file for each db_id under `root`, except `skip`. */
function databases(dir: string, ids: string[], skip: string[] = []): void {
  for (const id of ids.filter((i) => !skip.includes(i))) {
    mkdirSync(join(dir, id), { recursive: true });
    writeFileSync(join(dir, id, `${id}.sqlite`), "");
  }
}

describe("merit preflight stops at the first missing input", () => {
  it("no model files: names the chat model and `make models`", async () => {
    const r = await preflight();
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^merit preflight: .*models\/chat\.gguf is missing \(chat model, .*spider\.json model\.path.*\): run `make models` first$/);
  });

  it("the embedder missing: names it", async () => {
    mkdirSync(join(root, "models"), { recursive: true });
    writeFileSync(join(root, "models", "chat.gguf"), "");
    const r = await preflight();
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/models\/embed\.gguf is missing \(embedding model.*\): run `make models` first$/)]);
  });

  it("no Spider databases, then one Spider database absent: names `make data-spider`", async () => {
    writeFileSync(join(root, "models", "embed.gguf"), "");
    let r = await preflight();
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/data\/spider\/database is missing \(no spider databases at all \(20 needed\).*\): run `make data-spider` first$/)]);
    // The bundled layout: every Spider dev database but wta_1.
    databases(join(root, "data", "spider", "database"), dbIds(join(REPO, "data/spider/dev.json")), ["wta_1"]);
    r = await preflight();
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/data\/spider\/database\/wta_1 is missing \(1 of 20 spider databases absent.*\): run `make data-spider` first$/)]);
  });

  it("no BIRD databases: names `make data-bird`", async () => {
    databases(join(root, "data", "spider", "database"), ["wta_1"]);
    const r = await preflight();
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/data\/bird\/dev_databases is missing \(no bird databases at all \(11 needed\).*\): run `make data-bird` first$/)]);
  });

  it("everything present: exit 0", async () => {
    databases(join(root, "data", "bird", "dev_databases"), dbIds(join(REPO, "data/bird/dev.json")));
    const r = await preflight();
    expect(r).toMatchObject({ code: 0, err: [] });
    expect(r.out[0]).toMatch(/^all inputs present/);
  });

  it("a config naming test-suite databases (the paper's Spider protocol) needs them too", async () => {
    const suite = join(root, "data", "spider_test_suite", "database");
    const spider = JSON.parse(readFileSync(join(root, "spider.json"), "utf8"));
    writeFileSync(join(root, "spider.json"), JSON.stringify({ ...spider, test_suite_databases: suite }));
    let r = await preflight();
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/spider_test_suite\/database is missing \(no spider test-suite databases at all \(20 needed\), .*spider\.json test_suite_databases\): run `make data-spider` first$/)]);
    databases(suite, dbIds(join(REPO, "data/spider/dev.json")));
    r = await preflight();
    expect(r).toMatchObject({ code: 0, err: [] });
  });

  it("a config that cannot be read is its own one line", async () => {
    const err: string[] = [];
    const code = await main(["preflight", "--config", join(root, "nope.json")], { out: () => {}, err: (l) => err.push(l) });
    expect(code).toBe(2);
    expect(err).toEqual([expect.stringMatching(/nope\.json: config file cannot be read/)]);
  });
});
