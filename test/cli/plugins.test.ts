// Every seam from outside lib/ (issue 21 §1, lib/cli/plugin-flag.ts): each of the 12 commands that reads
// a config, a dataset, a method, an executor or an engine, run as a real CLI child process on a
// dataset that only a plugin registers. Without the plugin each fails with one line that names the
// unknown dataset and hints at `--plugin` (the plugin file lies in examples/); with `--plugin`, or
// with the config's `plugins` list, or (commands reading run directories) from the plugins the run's
// manifest records, each succeeds. Then a run's identity: only the plugins a run uses are in its
// manifest, so editing a method plugin refuses resuming that method's run and leaves the other
// resumable; and the executor chosen by `--executor` / `oracle.executor` is recorded.
import { spawn } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN } from "../helpers/run-fixture.ts";

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `merit ARGS` in a child process with working folder `cwd`. */
function merit(args: string[], cwd: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, "lib", "bin.mjs"), ...args], { cwd, env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

const root = tempDir("cli-plugins");
const MINI = join(root, "mini");
const PLUGIN = "examples/mini.ts"; // relative to root, the children's working folder
const EXTRA = "examples/extra.ts";
const HINT = /; load the plugin that registers it with --plugin FILE\.ts \(found: examples\/mini\.ts\)/;

beforeAll(() => {
  // a four-question dataset on one Spider database, registered only by the plugin
  const dev = (JSON.parse(readFileSync(join(SPIDER_DIR, "dev.json"), "utf8")) as { db_id: string }[]).slice(0, 4);
  const tables = (JSON.parse(readFileSync(join(SPIDER_DIR, "tables.json"), "utf8")) as { db_id: string }[]).filter((t) => t.db_id === "concert_singer");
  mkdirSync(join(MINI, "database", "concert_singer"), { recursive: true });
  writeFileSync(join(MINI, "dev.json"), JSON.stringify(dev));
  writeFileSync(join(MINI, "tables.json"), JSON.stringify(tables));
  copyFileSync(join(SPIDER_DIR, "database", "concert_singer", "concert_singer.sqlite"), join(MINI, "database", "concert_singer", "concert_singer.sqlite"));
  const gold = (dev as unknown as { query: string }[]).map((e) => e.query);
  writeFileSync(join(root, "preds.sql"), [gold[0], "SELECT nope FROM singer", gold[2], "SELECT count(*) FROM stadium"].join("\n") + "\n");

  mkdirSync(join(root, "examples"));
  writeFileSync(join(root, "package.json"), '{ "type": "module" }\n'); // plugin files are ES modules, as in the repository
  writeFileSync(
    join(root, PLUGIN),
    `import { registerDataset } from ${JSON.stringify(join(REPO, "lib", "plugin.ts"))};\n` +
      `import { spider } from ${JSON.stringify(join(REPO, "lib", "data", "datasets", "spider.ts"))};\n` +
      `registerDataset({ ...spider, name: "mini-spider", title: "four Spider questions", layout: { examples: "dev.json", tables: "tables.json", databaseRoot: "database" } });\n`,
  );
  writeFileSync(
    join(root, EXTRA),
    `import { registerExecutor, registerMethod } from ${JSON.stringify(join(REPO, "lib", "plugin.ts"))};\n` +
      `import { createExecutor } from ${JSON.stringify(join(REPO, "lib", "oracle", "executors.ts"))};\n` +
      `registerMethod({ name: "zeroshot_copy", description: "zeroshot under another name", repairs: false });\n` +
      `registerExecutor("sqlite-copy", (opts) => { const inner = createExecutor("sqlite", opts); return { engine: "sqlite-copy", timeoutMs: inner.timeoutMs, execute: (r) => inner.execute(r), close: () => inner.close() }; });\n`,
  );
  const config = { dataset: "mini-spider", data_dir: MINI, initial_cache: join(root, "initial_cache.json"), call_cache: join(root, "calls.sqlite"), protocol: "merit", max_repair_steps: 1, model: { backend: "llama", path: TINY_QWEN, threads: 1 }, embedder: { backend: "llama", path: TINY_BGE } };
  writeFileSync(join(root, "plain.json"), JSON.stringify(config));
  writeFileSync(join(root, "listed.json"), JSON.stringify({ ...config, plugins: [PLUGIN] }));
  writeFileSync(join(root, "demo.json"), JSON.stringify({ ...config, model: { backend: "llama", path: "missing.gguf" } }));
  writeFileSync(join(root, "demo-listed.json"), JSON.stringify({ ...config, plugins: [PLUGIN], model: { backend: "llama", path: "missing.gguf" } }));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** One command: its argv without the plugin, and what shows it succeeded with it. */
interface Case {
  command: string;
  args: string[];
  /** The argv that loads the plugin from a config's `plugins` (commands reading a config). */
  listed?: string[];
  ok: (o: Outcome) => void;
}

const exLine = (o: Outcome) => expect(o.stdout.trim().split("\n").at(-1)).toMatch(/^EX 50\.00 \(2\/4\)$/);

// in order: `initial` writes the initial cache `run` and `grid` read; `run` writes the run the
// run-directory commands read
const CASES: Case[] = [
  { command: "initial", args: ["initial", "--config", "plain.json", "--from-pred", "preds.sql"], listed: ["initial", "--config", "listed.json", "--from-pred", "preds.sql"], ok: (o) => expect(o.stdout).toMatch(/initial EX 50\.00 \(2\/4\)/) },
  { command: "eval", args: ["eval", "--dataset", "mini-spider", "--data", MINI, "--pred", "preds.sql", "--out", "eval"], ok: exLine },
  { command: "stream-order", args: ["stream-order", "--dataset", "mini-spider", "--data", MINI, "--seed", "0"], ok: (o) => expect(JSON.parse(o.stdout).sort()).toEqual([0, 1, 2, 3]) },
  { command: "data info", args: ["data", "info", "mini-spider", "--data", MINI], ok: (o) => expect(o.stdout).toMatch(/mini-spider .*: 4 examples, 1 db_ids, 1 databases present/) },
  { command: "run", args: ["run", "--config", "plain.json", "--method", "zeroshot", "--seed", "0", "--out", "runs/zeroshot-s0"], listed: ["run", "--config", "listed.json", "--method", "zeroshot", "--seed", "1", "--out", "runs/zeroshot-s1"], ok: (o) => expect(o.stdout).toMatch(/zeroshot seed \d: EX 50\.00 \(initial 50\.00\), repaired 0, n 4/) },
  { command: "grid", args: ["grid", "--config", "plain.json", "--methods", "zeroshot", "--seeds", "2", "--out", "runs"], listed: ["grid", "--config", "listed.json", "--methods", "zeroshot", "--seeds", "3", "--out", "runs"], ok: (o) => expect(o.stdout).toMatch(/zeroshot seed \d: EX 50\.00/) },
  { command: "methods", args: ["methods", "--json"], ok: (o) => expect(Object.keys(JSON.parse(o.stdout))).toContain("merit") },
  { command: "preflight", args: ["preflight", "--config", "plain.json"], listed: ["preflight", "--config", "listed.json"], ok: (o) => expect(o.stdout).toMatch(/^all inputs present for /) },
  // --full with an absent model file stops right after the config is parsed: that line shows the dataset was known
  { command: "demo", args: ["demo", "--full", "--config", "demo.json"], listed: ["demo", "--full", "--config", "demo-listed.json"], ok: () => undefined },
];

describe("every command loads plugins: a dataset only a plugin registers", () => {
  for (const c of CASES) {
    it(`${c.command}: fails with a --plugin hint without it, succeeds with --plugin${c.listed ? " and with the config's plugins" : ""}`, async () => {
      if (c.command !== "methods") {
        const without = await merit(c.args, root);
        expect(without.code).toBe(2);
        expect(without.stderr).toMatch(/unknown dataset "mini-spider"|--dataset must be one of .*got "mini-spider"/);
        expect(without.stderr).toMatch(HINT);
        expect(without.stderr.trim().split("\n")).toHaveLength(1);
      }
      for (const args of [[...c.args, "--plugin", PLUGIN], ...(c.listed ? [c.listed] : [])]) {
        const loaded = await merit(args, root);
        if (c.command === "demo") {
          expect(loaded.stderr).toMatch(/^merit demo: missing\.gguf is not present: run `make models`/);
          continue;
        }
        expect(loaded.stderr).not.toMatch(/error|warning/i);
        expect(loaded.code).toBe(0);
        c.ok(loaded);
      }
    });
  }

  it("run and grid record the plugin in the manifest; eval records the executor", () => {
    for (const dir of ["zeroshot-s0", "zeroshot-s1", "zeroshot-s2", "zeroshot-s3"]) {
      const manifest = JSON.parse(readFileSync(join(root, "runs", dir, "manifest.json"), "utf8"));
      expect(manifest.plugins).toEqual([{ path: PLUGIN, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
      expect(manifest.executor).toBe("sqlite");
      expect(manifest.dataset.name).toBe("mini-spider");
    }
    expect(JSON.parse(readFileSync(join(root, "eval", "summary.json"), "utf8")).executor).toBe("sqlite");
  });

  // audit, report and annotate read run directories: the plugins the manifest records are loaded
  // (from root); run from another folder, where the recorded path is absent, they need --plugin
  const RUN_DIR_CASES: Case[] = [
    { command: "audit", args: ["audit", join(root, "runs", "zeroshot-s0")], ok: (o) => expect(o.stdout.trim().split("\n").at(-1)).toBe("violations 0") },
    { command: "report", args: ["report", join(root, "runs"), "--out", join(root, "report"), "--no-figures", "--resamples", "50"], ok: (o) => expect(JSON.parse(o.stdout.trim().split("\n").at(-1)!).runs).toBe(4) },
    { command: "annotate", args: ["annotate", "--run", join(root, "runs", "zeroshot-s0"), "--sample", "2", "--seed", "0", "--out", join(root, "cases.csv")], ok: (o) => expect(JSON.parse(o.stdout).sampled).toBe(2) },
  ];
  for (const c of RUN_DIR_CASES) {
    it(`${c.command}: loads the run's recorded plugin; elsewhere it needs --plugin`, async () => {
      const recorded = await merit(c.args, root);
      expect(recorded.stderr).not.toMatch(/error|warning|no per-difficulty breakdown/i);
      expect(recorded.code).toBe(0);
      c.ok(recorded);
      const elsewhere = await merit(c.args, REPO);
      expect(elsewhere.stderr).toMatch(/warning: .* was made with the plugin examples\/mini\.ts, which is not here/);
      if (c.command === "report") {
        expect(elsewhere.stderr).toMatch(/no per-difficulty breakdown for mini-spider: dataset "mini-spider" has no known file layout/);
      } else {
        expect(elsewhere.code).toBe(2);
        expect(elsewhere.stderr).toMatch(/unknown dataset "mini-spider"/);
      }
      const withFlag = await merit([...c.args, "--plugin", join(root, PLUGIN)], REPO);
      expect(withFlag.stderr).not.toMatch(/error|no per-difficulty breakdown/i);
      expect(withFlag.code).toBe(0);
    });
  }
});

describe("a run's identity holds only the plugins it uses", () => {
  it("editing a method plugin refuses resuming its method's run and leaves the others resumable", async () => {
    const grid = await merit(["grid", "--config", "listed.json", "--plugin", EXTRA, "--methods", "zeroshot,zeroshot_copy", "--seeds", "0", "--limit", "2", "--out", "identity"], root);
    expect(grid.stderr).not.toMatch(/error/i);
    expect(grid.code).toBe(0);
    const pluginsOf = (dir: string) => JSON.parse(readFileSync(join(root, "identity", dir, "manifest.json"), "utf8")).plugins.map((p: { path: string }) => p.path);
    expect(pluginsOf("zeroshot-s0")).toEqual([PLUGIN]);
    expect(pluginsOf("zeroshot_copy-s0")).toEqual([EXTRA, PLUGIN]); // in load order: --plugin files, then the config's

    appendFileSync(join(root, EXTRA), "// edited\n");
    const resumeFor = (method: string) => merit(["run", "--config", "listed.json", "--plugin", EXTRA, "--method", method, "--seed", "0", "--limit", "2", "--out", `identity/${method}-s0`, "--resume"], root);
    const unused = await resumeFor("zeroshot");
    expect(unused.stderr).not.toMatch(/error|refus/i);
    expect(unused.code).toBe(0);
    const used = await resumeFor("zeroshot_copy");
    expect(used.code).toBe(2);
    expect(used.stderr).toMatch(/the run was started with another version of a plugin file it uses: plugins is /);
  });

  it("the executor is chosen by --executor and oracle.executor, and recorded", async () => {
    const unknown = await merit(["eval", "--dataset", "spider", "--pred", join(REPO, "data", "predictions", "spider_dev__Deepseek-Coder-7B.sql"), "--executor", "sqlite-copy"], root);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--executor must be one of sqlite, got "sqlite-copy"; load the plugin that registers it with --plugin FILE\.ts \(found: examples\/extra\.ts\)/);
    const evaluated = await merit(["eval", "--plugin", `${PLUGIN},${EXTRA}`, "--dataset", "mini-spider", "--data", MINI, "--pred", "preds.sql", "--executor", "sqlite-copy", "--out", "eval-copy"], root);
    expect(evaluated.code).toBe(0);
    exLine(evaluated);
    expect(JSON.parse(readFileSync(join(root, "eval-copy", "summary.json"), "utf8")).executor).toBe("sqlite-copy");

    const config = JSON.parse(readFileSync(join(root, "listed.json"), "utf8"));
    writeFileSync(join(root, "copy.json"), JSON.stringify({ ...config, plugins: [PLUGIN, EXTRA], oracle: { executor: "sqlite-copy" } }));
    const run = await merit(["run", "--config", "copy.json", "--method", "zeroshot", "--seed", "0", "--limit", "2", "--out", "copy-run"], root);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(root, "copy-run", "manifest.json"), "utf8"));
    expect(manifest.executor).toBe("sqlite-copy");
    expect(manifest.plugins.map((p: { path: string }) => p.path)).toEqual([PLUGIN, EXTRA]);
    const report = await merit(["report", "copy-run", "--out", "copy-report", "--no-figures", "--resamples", "20"], root);
    expect(report.code).toBe(0);
    expect(JSON.parse(readFileSync(join(root, "copy-report", "manifest.json"), "utf8")).executors).toEqual(["sqlite-copy"]);
    expect(readFileSync(join(root, "copy-report", "tables", "table1.md"), "utf8")).toMatch(/SQL executor: sqlite-copy/);
    expect(existsSync(join(root, "copy-run", "config.json"))).toBe(true);
  });
});
