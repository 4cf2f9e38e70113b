// `merit run --plugin FILE.ts` with a plugin that registers a DATASET (issue 14 §1–2): the plugin is
// imported before the config is parsed, so a config naming the plugin's dataset is accepted, and
// the run directory records the dataset's name and the plugin file. A fresh CLI process is spawned,
// so nothing registered by this test process helps.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../lib/data/dataset.ts";
import { loadPlugins } from "../../lib/methods/index.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { runCli } from "../helpers/killable-run.ts";
import { cacheFromChosenSql, SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN } from "../helpers/run-fixture.ts";

const PLUGIN = "test/fixtures/plugins/dataset.ts";
const root = tempDir("plugin-dataset");
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a plugin that registers a dataset", () => {
  it("is loaded before the config is parsed: merit run on the plugin's dataset", async () => {
    const config = { dataset: "spider-plugin", data_dir: SPIDER_DIR, initial_cache: join(root, "initial_cache.json"), call_cache: join(root, "calls.sqlite"), protocol: "merit", max_repair_steps: 1, model: { backend: "llama", path: TINY_QWEN, threads: 1 }, embedder: { backend: "llama", path: TINY_BGE } };
    writeFileSync(join(root, "config.json"), JSON.stringify(config));
    const without = await runCli(["run", "--config", join(root, "config.json"), "--method", "zeroshot", "--seed", "0", "--limit", "2", "--out", join(root, "refused")]);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/invalid config — dataset: unknown dataset "spider-plugin"/);

    await loadPlugins([PLUGIN]); // this process needs it only to build the initial cache
    const dataset = await loadDataset({ name: "spider-plugin", dir: SPIDER_DIR });
    const oracle = new Oracle({ dataset: "spider-plugin", databases: dataset.databases, protocol: "merit", timeoutMs: 30_000, jobs: 1 });
    try {
      await cacheFromChosenSql(dataset, oracle, new Map(dataset.examples.slice(0, 4).map((e) => [e.id, e.goldSql])), root);
    } finally {
      await oracle.close();
    }
    const out = join(root, "zeroshot-s0");
    const run = await runCli(["run", "--plugin", PLUGIN, "--config", join(root, "config.json"), "--method", "zeroshot", "--seed", "0", "--limit", "2", "--out", out]);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest.dataset.name).toBe("spider-plugin");
    expect(manifest.plugins).toEqual([{ path: PLUGIN, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(readFileSync(join(out, "trajectories.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
  });
});
