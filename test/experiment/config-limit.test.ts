// Tests a config's `limit` (issue 39 §13: a study's saved config planned all 972 episodes unless
// --limit was added): `limit` is the default --limit of `merit run` and `merit grid` (and --plan),
// taken out of the parsed config so it is never part of a run's identity; --limit still wins. A
// study's saved config (RUNS/configs/<dataset>.json) carries the study's `queries` there
// (test/cli/study-diagnostics.test.ts checks the file a study run writes).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { configHash, loadConfigFile, parseConfig } from "../../lib/experiment/config.ts";
import { budget } from "../helpers/budget.ts";
import { SPIDER_DIR } from "../helpers/run-fixture.ts";
import { closeScenario, openScenario, type ScenarioFixture } from "../helpers/scripted-scenario.ts";

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("config-limit");
}, budget(120_000));
afterAll(() => closeScenario(fx));

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("a config's limit", () => {
  const base = () => ({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, call_cache: join(fx.root, "calls.sqlite") });
  it("is read beside the config, never inside it (the config's hash is the same with or without it)", () => {
    const file = join(fx.root, "with-limit.json");
    writeFileSync(file, JSON.stringify({ ...base(), limit: 5 }));
    const { config, limit } = loadConfigFile(file);
    expect(limit).toBe(5);
    expect("limit" in config).toBe(false);
    expect(configHash(config)).toBe(configHash(parseConfig(base())));
    expect(() => parseConfig({ ...base(), limit: 0 })).toThrow(/limit: /);
  });

  it("merit grid --plan plans the config's limit by default; --limit wins", async () => {
    const file = join(fx.root, "grid-limit.json");
    writeFileSync(file, JSON.stringify({ ...base(), limit: 5 }));
    const episodes = async (...extra: string[]) => {
      const r = await merit(["grid", "--config", file, "--methods", "iterative", "--seeds", "0", "--plan", "--json", "--out", join(fx.root, "grid"), ...extra]);
      expect(r.code, r.err.join("\n")).toBe(0);
      return (JSON.parse(r.out.join("\n")) as { methods: { episodes: number }[] }).methods[0].episodes;
    };
    expect(await episodes()).toBe(5);
    expect(await episodes("--limit", "3")).toBe(3);
    writeFileSync(file, JSON.stringify(base()));
    expect(await episodes()).toBeGreaterThan(900); // every query of the stream
  }, budget(120_000));
});
