// A user's template folder (config `prompts_dir`, prompts/README.md): a run renders its repair
// prompts from that folder, and the manifest extras record the folder and the hash of its templates.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import { runManifestExtras } from "../../lib/experiment/provenance.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { PROMPTS_DIR, templateSetHash } from "../../lib/prompts.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { closeScenario, openScenario, runScenario, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

let dataset: Dataset;
let oracle: Oracle;
let cache: InitialCache;
let cachePath: string;
let root: string;
let fixture: ScenarioFixture | undefined;

beforeAll(async () => {
  fixture = await openScenario("prompts-dir");
  ({ root, dataset, oracle, cache, cachePath } = fixture);
}, budget(120_000));
afterAll(() => closeScenario(fixture));

it("repair prompts come from prompts_dir; the manifest extras name the folder and its hash", async () => {
  const dir = join(root, "my-prompts");
  cpSync(PROMPTS_DIR, dir, { recursive: true });
  const file = join(dir, "spider-repair-v4.txt");
  writeFileSync(file, readFileSync(file, "utf8").replace("write a repaired query.", "write a repaired query (custom wording)."));
  await runScenario({ method: "iterative", dataset, oracle, cache, cachePath, outDir: join(root, "custom"), config: { prompts_dir: dir } });
  await runScenario({ method: "iterative", dataset, oracle, cache, cachePath, outDir: join(root, "kit") });
  const custom = readRun(join(root, "custom")).prompts;
  const kit = readRun(join(root, "kit")).prompts;
  expect(custom.length).toBeGreaterThan(0);
  expect(custom.every((p) => p.prompt.includes("(custom wording)"))).toBe(true);
  expect(kit.some((p) => p.prompt.includes("(custom wording)"))).toBe(false);
  const backend = new ScriptedBackend(new Map());
  const extras = await runManifestExtras(backend, dir);
  expect(extras.prompts_dir).toBe(dir);
  expect(extras.prompt_template_set_hash).toBe(templateSetHash(dir));
  expect(extras.prompt_template_set_hash).not.toBe(templateSetHash());
  expect((await runManifestExtras(backend)).prompts_dir).toBeNull();
}, budget(120_000));
