// Tests examples/merit-reflexion.ts from outside lib/: the plugin's method is MERIT's memory plus the
// reflect step, and `merit grid --plugin examples/merit-reflexion.ts --methods merit_reflexion` on a
// tiny slice with the tiny test models both retrieves from the memory and writes reflections.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../lib/cli/run.ts";
import { getMethod, loadPlugins } from "../lib/methods/index.ts";
import { readJsonl, tempDir, writeTinyGridConfig } from "../test/helpers/run-fixture.ts";
import { budget } from "../test/helpers/budget.ts";

const PLUGIN = "examples/merit-reflexion.ts";

describe("merit_reflexion", () => {
  const root = tempDir("merit-reflexion");
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let config: string;
  beforeAll(async () => {
    await loadPlugins([PLUGIN]);
    config = await writeTinyGridConfig(root);
  }, budget(120_000));

  it("is MERIT's memory with Reflexion's step", () => {
    const method = getMethod("merit_reflexion");
    const merit = getMethod("merit").record.hooks!;
    const reflexion = getMethod("reflexion").record.hooks!;
    expect(method.record).toEqual({ repairs: true, hooks: { memory: merit.memory, step: reflexion.step, calls: reflexion.calls } });
    expect(method.memory).not.toBeNull();
  });

  it("runs through merit grid --plugin: retrieval from the memory and reflections in one episode loop", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const dir = join(root, "runs");
    expect(await gridCommand.run(["--config", config, "--plugin", PLUGIN, "--methods", "merit_reflexion", "--seeds", "0", "--limit", "6", "--out", dir], { out: (l) => out.push(l), err: (l) => err.push(l) }), err.join("\n")).toBe(0);
    const run = join(dir, "merit_reflexion-s0");
    const manifest = JSON.parse(readFileSync(join(run, "manifest.json"), "utf8"));
    expect(manifest.method).toBe("merit_reflexion");
    const trajectories = readJsonl<{ reflections: string[]; repair_steps?: number }>(join(run, "trajectories.jsonl"));
    expect(trajectories.some((t) => t.reflections.length > 0)).toBe(true);
    expect(readJsonl(join(run, "retrieval_log.jsonl")).length).toBeGreaterThan(0);
  }, budget(300_000));
});
