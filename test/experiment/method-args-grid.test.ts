// Tests that a method's own memory args reach its runs through the grid (lib/experiment/grid.ts, the
// path `merit grid` and `merit study run` take), on the scripted repair scenario (Spider dev, scripted
// chat double, hashed embedder): a two-arm sweep whose methods differ only in MERIT's memory's
// max_positive retrieves differently and records each arm's value; a config setting conflicting with
// a method's own arg stops the grid before any run; a run of a method that sets
// max_positive itself (`merit_k5`), and one of merit under a config that sets it, interrupted and
// resumed through the grid, end byte-identical to an uninterrupted run.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/experiment/config.ts";
import { planStreams, runGrid } from "../../lib/experiment/grid.ts";
import { RESUMABLE_MANIFEST_FIELDS } from "../../lib/experiment/run.ts";
import type { ChatBackend, GenerateRequest } from "../../lib/llm/types.ts";
import { meritMethod, registerMethod } from "../../lib/methods/index.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { readRun, SPIDER_DIR } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { C, closeScenario, openScenario, SCENARIO_LIMIT, SCENARIO_SEED, scenarioScript, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

registerMethod(meritMethod("sweep_p0", "MERIT, max_positive 0", { max_positive: 0 }));
registerMethod(meritMethod("sweep_p2", "MERIT, max_positive 2", { max_positive: 2 }));
registerMethod(meritMethod("merit_k5", "MERIT with five positives", { max_positive: 5 }));

let fixture: ScenarioFixture | undefined;
beforeAll(async () => {
  fixture = await openScenario("method-args-grid");
}, budget(120_000));
afterAll(() => closeScenario(fixture));

/** The scenario's config; every run of one test shares it (and so its call cache). */
function config(name: string, retrieval: Record<string, unknown> = {}) {
  const f = fixture!;
  return parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: f.cachePath, call_cache: join(f.root, `${name}-calls.sqlite`), retrieval });
}

/** A scripted backend that throws at its `failAt`-th call (1-based): the grid stops as a killed run would. */
function failingAt(failAt: number): ChatBackend {
  const inner = new ScriptedBackend(scenarioScript(fixture!.dataset));
  let calls = 0;
  return {
    identity: inner.identity,
    async generate(request: GenerateRequest) {
      calls += 1;
      if (calls === failAt) throw new Error("interrupted");
      return inner.generate(request);
    },
    close: async () => {},
  };
}

async function grid(cfg: ReturnType<typeof config>, methods: string[], root: string, resume: boolean, backend: ChatBackend = new ScriptedBackend(scenarioScript(fixture!.dataset))) {
  return runGrid(cfg, planStreams(methods, [SCENARIO_SEED], root), { limit: SCENARIO_LIMIT, resume, services: { backend, embedder: new HashedEmbedder() } });
}

/** Every file of a run directory (relative path → bytes), manifest.json without its timestamps and status fields. */
function runBytes(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "latin1"));
    }
  };
  walk(dir);
  files.delete("stdout.log");
  const manifest = JSON.parse(files.get("manifest.json")!) as Record<string, unknown>;
  files.set("manifest.json", JSON.stringify(Object.fromEntries(Object.entries(manifest).filter(([k]) => !RESUMABLE_MANIFEST_FIELDS.has(k) || k === "status"))));
  return files;
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { method_parts: { hooks: { memory: { name: string; args: Record<string, unknown> } } }; status: string };

describe("a method's own memory args reach its runs", () => {
  it("a two-arm sweep differing only in max_positive retrieves differently, and each manifest records its arm's value", async () => {
    const root = join(fixture!.root, "sweep");
    await grid(config("sweep"), ["sweep_p0", "sweep_p2"], root, false);
    const [p0, p2] = ["sweep_p0", "sweep_p2"].map((m) => join(root, `${m}-s${SCENARIO_SEED}`));
    expect(manifestOf(p0).method_parts.hooks.memory.args.max_positive).toBe(0);
    expect(manifestOf(p2).method_parts.hooks.memory.args.max_positive).toBe(2);
    const [r0, r2] = [p0, p2].map((d) => readRun(d).retrievals);
    expect(r0.length).toBe(r2.length);
    // C's retrieval comes after A was repaired: the p2 arm gets A's positive entry, the p0 arm none
    const atC = (r: typeof r0) => r.filter((x) => x.query_id === C).flatMap((x) => x.retrieved_entry_ids).length;
    expect(atC(r2)).toBeGreaterThan(atC(r0));
    expect(r0.map((r) => r.retrieved_entry_ids)).not.toEqual(r2.map((r) => r.retrieved_entry_ids));
    expect(r2.flatMap((r) => r.retrieved_entry_ids).length).toBeGreaterThan(r0.flatMap((r) => r.retrieved_entry_ids).length);
  }, budget(180_000));

  it("a config setting that conflicts with the method's own arg is refused before any stream runs", async () => {
    const root = join(fixture!.root, "conflict");
    await expect(grid(config("conflict", { max_positive: 4 }), ["merit", "merit_k5"], root, false)).rejects.toThrow(/^method merit_k5 sets max_positive 5 itself \(its memory "merit_memory"\) but the config's retrieval\.max_positive is 4; drop retrieval\.max_positive/);
    expect(existsSync(root)).toBe(false);
  });

  for (const [name, method, retrieval] of [
    ["merit_k5, default config", "merit_k5", {}],
    ["merit, config max_positive 2", "merit", { max_positive: 2 }],
  ] as const) {
    it(`${name}: interrupted and resumed through the grid, ends byte-identical to an uninterrupted run`, async () => {
      const tag = method + Object.keys(retrieval).length;
      const cfg = config(tag, retrieval);
      const interrupted = join(fixture!.root, `${tag}-interrupted`);
      // the 5th call is B's second repair: 426 and A are committed, B is not
      await expect(grid(cfg, [method], interrupted, false, failingAt(5))).rejects.toThrow(/interrupted/);
      const dir = join(interrupted, `${method}-s${SCENARIO_SEED}`);
      expect(manifestOf(dir).status).toBe("running");
      expect(readRun(dir).trajectories.length).toBe(2);
      await grid(cfg, [method], interrupted, true);
      expect(manifestOf(dir).status).toBe("completed");
      const reference = join(fixture!.root, `${tag}-reference`);
      await grid(cfg, [method], reference, false);
      const refDir = join(reference, `${method}-s${SCENARIO_SEED}`);
      expect(manifestOf(refDir).method_parts.hooks.memory.args.max_positive).toBe(method === "merit_k5" ? 5 : 2);
      expect(runBytes(dir)).toEqual(runBytes(refDir));
    }, budget(180_000));
  }
});
