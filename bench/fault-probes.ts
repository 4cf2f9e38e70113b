/**
 * Issue 39's fault and bad-input probes rerun in one place (its "Must show": "the probe set rerun:
 * every case holds"), items 1–12 and 17–23: hooks that throw, return what JSON cannot hold, write to
 * their read-only view, hang past the deadline or write a 5 MB note; mistyped bounds; duplicate,
 * identical and no-effect arms and an unknown regime; a plugin executor and timer left open; a plugin
 * imported by its own study and then edited; a failed run that blocks a study; noisy feedback's Table
 * 5, plan bound and verdicts; an empty or too-old Node in the hand-over cache; add-ons loaded by the
 * wrong Node; a full disk under `merit report`. And the seams added after it (the "item" column
 * names the seam): a `propose` hook (lib/repair/proposal.ts) that returns a non-string, "", 4 MB of
 * SQL or two statements, throws or hangs, whose `execute` is given writing, endless, non-string or
 * 400 statements, whose `model.sample` draws an undeclared, greedy or over-bound kind, and a sampled
 * kind's temperature out of range; config `memory_source` (lib/experiment/memory-source.ts) naming
 * no folder, a running run, another dataset's run, another memory's run, a damaged or edited run, or
 * the run itself; study arms' args of the wrong type, an unknown ranker, ranker_args not an object,
 * an arm of an arm; `merit grid`/`merit methods --plugin` with note data JSON cannot hold or a kit
 * method's name. Each probe is a whole `merit` process (`node
 * lib/bin.mjs …`, the simulated engine, the bundled Spider, a few queries) in a temporary folder and
 * states what must happen: a one-line refusal naming the thing and the fix with a non-zero exit, or
 * the correct output with exit 0. A stack trace, a second stderr line in a refusal, a hang (each
 * command has a time limit) or another exit code fails the probe. The unit tests of each item
 * (test/methods/hook-faults.test.ts, test/cli/mistakes.test.ts, …) check the same at the function
 * level; this reruns them as a user meets them.
 *
 * Run from the repository root: `node bench/fault-probes.ts [--only ID,ID] [--keep]`. Prints one
 * Markdown row per probe and "N held, M failed" (skipped probes — a tmpfs needs root — are counted
 * apart); exits 1 when any probe failed. About a minute on two idle cores. The printed table is in
 * bench/README.md "Fault probes".
 * @module
 */
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const only = args.includes("--only") ? new Set(args[args.indexOf("--only") + 1].split(",")) : null;
const keep = args.includes("--keep");
const TMP = mkdtempSync(join(tmpdir(), "merit-probes-"));
const kit = (p: string) => JSON.stringify(join(ROOT, p));
/** A Node older than 24 on this machine (the hand-over probes), if any. */
const OLD_NODE = ["/usr/bin/node", "/bin/node", "/usr/local/bin/node"].find((p) => existsSync(p) && spawnSync(p, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout?.trim().split(".")[0] < "24");

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
  timedOut: boolean;
}

/** `merit ARGS` (or `node FILE` with `node`) in the repository root. */
function merit(argv: string[], opts: { env?: Record<string, string>; timeoutS?: number; node?: string } = {}): Result {
  const start = performance.now();
  const r = spawnSync(opts.node ?? process.execPath, argv[0]?.endsWith(".mjs") ? argv : [join(ROOT, "lib/bin.mjs"), ...argv], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: process.env.MERIT_THREADS ?? "1", ...opts.env },
    timeout: (opts.timeoutS ?? 300) * 1000,
    killSignal: "SIGKILL",
    maxBuffer: 256 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "", seconds: (performance.now() - start) / 1000, timedOut: r.error !== undefined || r.signal !== null };
}

/** What a probe found: null when it held, else what went wrong; `shown` is the line it printed. */
interface Finding {
  problem: string | null;
  shown: string;
  seconds: number;
  code: number | null;
}

const STACK = /^\s+at .+:\d+:\d+\)?$/m;
const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");

/** Runs `probe` with `dir` a 256 KiB tmpfs (unmounted after); null — the probe skipped — when the user cannot mount one. */
function onFullDisk<T>(dir: string, probe: (dir: string) => T): T | null {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return null;
  }
  try {
    return probe(dir);
  } finally {
    execFileSync("umount", [dir]);
  }
}

/** A refusal: exit `code` (default 2), one stderr line matching every pattern, no stack trace. */
function refused(r: Result, patterns: RegExp[], code = 2): Finding {
  // The refusal is stderr's last line; what came before it is the command's progress and notices.
  const last = lines(r.stderr.replace(/\r/g, "\n")).at(-1) ?? "";
  const problems: string[] = [];
  if (r.timedOut) problems.push(`did not finish within its limit (${r.seconds.toFixed(0)} s)`);
  else if (r.code !== code) problems.push(`exit ${r.code}, expected ${code}`);
  if (STACK.test(r.stderr)) problems.push("stack trace on stderr");
  if (!/^(merit|make install)[\w -]*: /.test(last)) problems.push("the last stderr line is not a refusal naming the command");
  for (const p of patterns) if (!p.test(last)) problems.push(`refusal does not match ${p}`);
  return { problem: problems.length ? problems.join("; ") : null, shown: last || lines(r.stdout).at(-1) || "", seconds: r.seconds, code: r.code };
}

/** Success: exit 0, no stack trace, then `check` (a problem or null); `shown` is the line matching `key`, else the last stdout line. */
function held(r: Result, key: RegExp | null, check: () => string | null = () => null): Finding {
  const problems: string[] = [];
  if (r.timedOut) problems.push(`did not finish within its limit (${r.seconds.toFixed(0)} s)`);
  else if (r.code !== 0) problems.push(`exit ${r.code}: ${lines(r.stderr).at(-1) ?? ""}`);
  if (STACK.test(r.stderr)) problems.push("stack trace on stderr");
  const text = `${r.stdout}\n${r.stderr}`;
  const shown = (key ? lines(text).find((l) => key.test(l)) : undefined) ?? lines(r.stdout).at(-1) ?? "";
  if (key && !lines(text).some((l) => key.test(l))) problems.push(`no line matching ${key}`);
  if (problems.length === 0) {
    const p = check();
    if (p) problems.push(p);
  }
  return { problem: problems.length ? problems.join("; ") : null, shown, seconds: r.seconds, code: r.code };
}

function put(rel: string, text: string): string {
  const file = join(TMP, rel);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** A study file TMP/NAME/study.ts on the simulated engine and the single databases. */
function study(name: string, body: string, header = ""): string {
  return put(
    `${name}/study.ts`,
    `import { defineStudy, simulatedModels, realModels } from ${kit("lib/experiment/study.ts")};
${header}
void realModels; void simulatedModels;
export default defineStudy({
  name: ${JSON.stringify(name)},
  datasets: ["spider"],
  seeds: [0],
  subset: { rule: "initially_failed", initially_correct: 2 },
${body}
});
`,
  );
}
const SIM = `  models: simulatedModels(),\n  databases: "single",`;
const runsOf = (name: string) => join(TMP, "runs", name);
const outOf = (name: string) => join(TMP, "results", name);
const studyFile = (name: string) => join(TMP, name, "study.ts");
const studyRun = (name: string, extra: string[] = []) => ["study", "run", studyFile(name), "--runs", runsOf(name), "--out", outOf(name), "--no-html", ...extra];
const studyPlan = (name: string) => ["study", "plan", studyFile(name), "--runs", runsOf(name)];
const trajectories = (dir: string) =>
  readFileSync(join(dir, "trajectories.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

// ---------------------------------------------------------------------------------------------------
// The plugin of misbehaving hooks: one method per fault, each run by `merit run` over a base study's
// config (8 queries, K = 2) with hook_deadline_s 2.

const HOOKS = put(
  "plugins/hooks.ts",
  `import { registerMethod, type MemoryHook } from ${kit("lib/plugin.ts")};
const memory = (over: Partial<MemoryHook>): MemoryHook => ({ name: "probe", heading: "PROBE", write: () => [], retrieve: () => [], ...over });
const keep = (text: string) => [{ kind: "lesson", text }];
const one = (name: string, hooks: Parameters<typeof registerMethod>[0]["hooks"]) => registerMethod({ name, description: "fault probe " + name, hooks });
const cycle: Record<string, unknown> = { a: 1 };
cycle.self = cycle;
one("probe_throw_retrieve", { memory: memory({ write: () => keep("n"), retrieve: () => { throw new Error("boom"); } }) });
one("probe_throw_write", { memory: memory({ write: () => { throw new RangeError("bad index"); } }) });
one("probe_throw_classify", { classify: { name: "labels", types: ["a"], classify: () => { throw new TypeError("x is undefined"); } } });
one("probe_data_function", { memory: memory({ write: () => [{ kind: "lesson", text: "t", data: { f: () => 1 } as never }] }) });
one("probe_data_cycle", { memory: memory({ write: () => [{ kind: "lesson", text: "t", data: cycle as never }] }) });
one("probe_data_bigint", { memory: memory({ write: () => [{ kind: "lesson", text: "t", data: { n: 2n ** 63n } as never }] }) });
one("probe_data_date", { memory: memory({ write: () => [{ kind: "lesson", text: "t", data: { at: new Date(0) } as never }] }) });
one("probe_data_map", { memory: memory({ write: () => [{ kind: "lesson", text: "t", data: { m: new Map([["a", 1]]) } as never }] }) });
one("probe_view_write", { memory: memory({ write: () => keep("n"), retrieve: (_r, mem) => ((mem as unknown as unknown[]).push(mem[0]), []) }) });
one("probe_hang_retrieve", { memory: memory({ write: () => keep("n"), retrieve: () => new Promise(() => {}) }) });
one("probe_huge_note", { memory: memory({ write: () => keep("x".repeat(5 * 1024 * 1024)) }) });
one("probe_dup_pick", { memory: memory({ write: (e) => keep("note of " + e.queryId), retrieve: (_r, mem) => (mem.length ? [{ note: mem[0], score: 0.5 }, { note: mem[0], score: 0.1 }] : []) }) });
one("probe_stringify", { memory: memory({ write: (e) => keep(JSON.stringify(e).slice(0, 2000)) }) });
one("probe_long_prompt", { calls: { distill: { most: 1 } }, memory: memory({ write: async (_e, model) => keep((await model.generate("distill", "Summarise: " + "word ".repeat(40_000))).slice(0, 200)) }) });
`,
);

const BASE = "base";
/** The base study's config for `merit run`, with a hook deadline of 2 s. */
let baseConfig = "";
function hookRun(method: string, plugin = HOOKS, timeoutS = 120, config: Record<string, unknown> = {}): Result {
  const cfgFile = Object.keys(config).length === 0 ? baseConfig : put(`hook-configs/${method}.json`, JSON.stringify({ ...JSON.parse(readFileSync(baseConfig, "utf8")), ...config }, null, 2));
  return merit(["run", "--config", cfgFile, "--method", method, "--seed", "0", "--plugin", plugin, "--out", join(TMP, "hook-runs", method), "--engine", "simulated", "--allow-single-db"], { timeoutS });
}
const hookRefusal = (method: string, hook: string, what: RegExp, plugin = HOOKS) => () => refused(hookRun(method, plugin), [new RegExp(`^merit run: method "${method}": ${hook.replace(".", "\\.")}`), what]);

// The plugin of misbehaving propose hooks (lib/repair/proposal.ts): each logs what its tools returned
// to TMP/probe-log/NAME.jsonl, so a probe can check what the hook saw.
const PROPOSE = put(
  "plugins/propose.ts",
  `import { appendFileSync, mkdirSync } from "node:fs";
import { registerMethod, type ProposeHook } from ${kit("lib/plugin.ts")};
const LOG = ${JSON.stringify(join(TMP, "probe-log"))};
mkdirSync(LOG, { recursive: true });
const log = (name: string, value: unknown) => appendFileSync(LOG + "/" + name + ".jsonl", JSON.stringify(value) + "\\n");
const one = (name: string, propose: ProposeHook["propose"], calls?: Parameters<typeof registerMethod>[0]["hooks"]["calls"]) => registerMethod({ name, description: "fault probe " + name, hooks: { ...(calls ? { calls } : {}), propose: { name: "p", propose } } });
one("probe_propose_number", () => 42 as never);
one("probe_propose_empty", () => "");
one("probe_propose_huge", (r) => "SELECT 1 WHERE " + "1 = 1 AND ".repeat(400_000) + "1 = 1");
one("probe_propose_throw", () => { throw new TypeError("no vote"); });
one("probe_propose_hang", () => new Promise(() => {}));
const WRITES = ["INSERT INTO sqlite_master VALUES ('table', 'x', 'x', 0, '')", "DROP TABLE IF EXISTS singer", "ATTACH DATABASE 'probe-attached.sqlite' AS a", "PRAGMA writable_schema = ON", "CREATE TABLE probe_t (x)", "SELECT 1; DELETE FROM singer", "PRAGMA journal_mode = DELETE", "VACUUM", "REPLACE INTO sqlite_sequence VALUES ('x', 1)", "WITH a AS (SELECT 1) DELETE FROM singer"];
one("probe_exec_write", async (r, t) => { for (const sql of WRITES) log("exec_write", { sql, ...(await t.execute(sql)) }); return r.greedy; });
one("probe_exec_hang", async (r, t) => { log("exec_hang", await t.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")); return r.greedy; });
one("probe_exec_many", async (r, t) => { for (let i = 0; i < 400; i++) await t.execute("SELECT " + i); log("exec_many", 400); return r.greedy; });
one("probe_sample_undeclared", async (r, t) => (await t.model.sample("vote", r.prompt)).text);
one("probe_sample_greedy", async (r, t) => (await t.model.sample("vote", r.prompt)).text, { vote: { most: 1 } });
one("probe_two_statements", (r) => (r.greedy === "" ? "SELECT 1" : r.greedy) + "; DROP TABLE IF EXISTS singer; DELETE FROM singer");
one("probe_exec_nonstring", async (r, t) => { await t.execute(undefined as never); return r.greedy; });
one("probe_sample_over", async (r, t) => { for (let i = 0; i < 3; i++) await t.model.sample("s", r.prompt); return r.greedy; }, { s: { most: { per_repair: 1 }, per: "repair_episode", temperature: 0.7 } });
one("probe_sample_index", async (r, t) => (await t.model.sample("s", r.prompt, { index: -1 })).text, { s: { most: { per_repair: 1 }, per: "repair_episode", temperature: 0.7 } });
one("probe_sample_replay", async (r, t) => { const a = await t.model.sample("s", r.prompt, { index: 0 }); const b = await t.model.sample("s", r.prompt, { index: 0 }); log("sample_replay", { same: a.text === b.text }); return r.greedy; }, { s: { most: { per_repair: 2 }, per: "repair_episode", temperature: 0.7 } });
`,
);
const readProbeLog = (name: string): { executed?: boolean; error?: string | null }[] => {
  const file = join(TMP, "probe-log", `${name}.jsonl`);
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
};
/** The SQL scored at each repair step of a run (every attempt after the initial one). */
const proposedSqls = (method: string): string[] => trajectories(join(TMP, "hook-runs", method)).flatMap((t) => (t.attempts as string[]).slice(1));
/** sha256 of every .sqlite file under data/ (what a writing execution would change). */
function databaseHashes(): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of listFiles(join(ROOT, "data"))) if (/\.(sqlite|db)(-journal|-wal)?$/.test(p)) out.set(p, createHash("sha256").update(readFileSync(p)).digest("hex"));
  return out;
}

// memory_source (lib/experiment/memory-source.ts): a finished MERIT run and a finished notes run as sources.
let meritSourceDir = "";
function meritSource(): string {
  if (meritSourceDir === "") {
    meritSourceDir = join(TMP, "sources", "merit");
    const r = merit(["run", "--config", baseConfig, "--method", "merit", "--seed", "0", "--out", meritSourceDir, "--engine", "simulated", "--allow-single-db"]);
    if (r.code !== 0) throw new Error(`the MERIT source run failed: ${lines(r.stderr).at(-1)}`);
  }
  return meritSourceDir;
}
function notesSource(): string {
  const dir = join(TMP, "sources", "notes");
  if (!existsSync(join(dir, "manifest.json"))) {
    const r = merit(["run", "--config", baseConfig, "--method", "probe_dup_pick", "--seed", "0", "--plugin", HOOKS, "--out", dir, "--engine", "simulated", "--allow-single-db"]);
    if (r.code !== 0) throw new Error(`the notes source run failed: ${lines(r.stderr).at(-1)}`);
  }
  return dir;
}
/** A MERIT run on the bundled Spider-DK (a study of its own), or the finding of its failure. */
function otherDatasetSource(): string | Finding {
  put("dksrc/study.ts", `import { defineStudy, simulatedModels } from ${kit("lib/experiment/study.ts")};\nexport default defineStudy({ name: "dksrc", datasets: ["spider-dk"], seeds: [0], subset: { rule: "initially_failed", initially_correct: 2 }, methods: ["iterative", "merit"], reference: "merit", queries: 8, max_repair_steps: 2, models: simulatedModels(), databases: "single" });\n`);
  const r = merit(studyRun("dksrc"));
  if (r.code !== 0) return held(r, null);
  return join(runsOf("dksrc"), "spider-dk", "merit-s0");
}
/** A copy of a finished run (to damage). */
function copyRun(from: string, name: string): string {
  const to = join(TMP, "sources", name);
  cpSync(from, to, { recursive: true });
  return to;
}
/** `merit run` of `method` over the base config with memory_source SOURCE. */
function sourcedRun(method: string, source: string, out = `${method}-${source.split("/").at(-1)}`, plugin?: string): Result {
  const cfgFile = put(`sourced/${out}.json`, JSON.stringify({ ...JSON.parse(readFileSync(baseConfig, "utf8")), memory_source: source }, null, 2));
  return merit(["run", "--config", cfgFile, "--method", method, "--seed", "0", "--out", join(TMP, "sourced", out), "--engine", "simulated", "--allow-single-db", ...(plugin ? ["--plugin", plugin] : [])]);
}
/** `study plan` of a study with arm merit_x = ARM (ARM may carry further arms after a comma). */
function armPlan(name: string, arm: string, patterns: RegExp[], methods = ["merit", "merit_x"]): Finding {
  study(name, `  methods: ${JSON.stringify(methods)},\n  arms: {\n    merit_x: ${arm},\n  },\n  reference: "merit",\n  queries: 4,\n  max_repair_steps: 2,\n${SIM}`);
  return refused(merit(studyPlan(name)), patterns);
}

interface Probe {
  id: string;
  item: string;
  what: string;
  expect: string;
  run: () => Finding | null;
}

const probes: Probe[] = [
  // --- hooks (items 12, 19, 20, 21) ---
  { id: "hook-throws-retrieve", item: "19", what: "retrieve throws Error", expect: "exit 2, one line: method, hook, the error", run: hookRefusal("probe_throw_retrieve", "memory.retrieve", /threw Error: boom; fix the hook/) },
  { id: "hook-throws-write", item: "19", what: "write throws RangeError", expect: "exit 2, one line: method, hook, the error", run: hookRefusal("probe_throw_write", "memory.write", /threw RangeError: bad index/) },
  { id: "hook-throws-classify", item: "19", what: "classify throws TypeError", expect: "exit 2, one line: method, hook, the error", run: hookRefusal("probe_throw_classify", "classify.classify", /threw TypeError: x is undefined/) },
  { id: "note-data-function", item: "19", what: "note data holds a function", expect: "exit 2, one line naming the field", run: hookRefusal("probe_data_function", "memory.write's note 1", /data\.f is a function/) },
  { id: "note-data-cycle", item: "19", what: "note data holds a cycle", expect: "exit 2, one line naming the cycle", run: hookRefusal("probe_data_cycle", "memory.write's note 1", /data\.self refers back .*cycle/) },
  { id: "note-data-bigint", item: "19", what: "note data holds BigInt 2^63", expect: "exit 2, refused (JSON cannot hold it exactly)", run: hookRefusal("probe_data_bigint", "memory.write's note 1", /data\.n is a BigInt/) },
  { id: "note-data-date", item: "19", what: "note data holds a Date", expect: "exit 2, refused with the fix (toISOString)", run: hookRefusal("probe_data_date", "memory.write's note 1", /data\.at is a Date.*toISOString/) },
  { id: "note-data-map", item: "19", what: "note data holds a Map", expect: "exit 2, refused with the fix (Object.fromEntries)", run: hookRefusal("probe_data_map", "memory.write's note 1", /data\.m is a Map.*Object\.fromEntries/) },
  { id: "view-write", item: "19", what: "retrieve pushes into the frozen memory array", expect: "exit 2, one line: a write to the read-only view", run: hookRefusal("probe_view_write", "memory.retrieve", /wrote to the read-only view/) },
  { id: "hook-hangs", item: "20", what: "retrieve never returns (hook_deadline_s 2)", expect: "exit 2 within seconds, one line naming the deadline setting", run: hookRefusal("probe_hang_retrieve", "memory.retrieve", /did not return within 2 s.*hook_deadline_s/) },
  { id: "huge-note", item: "21", what: "write returns a 5 MB note", expect: "exit 2, one line: the note's size and the 64 KiB bound", run: hookRefusal("probe_huge_note", "memory.write's note 1", /a note holds at most 65536 bytes/) },
  {
    id: "retrieve-twice",
    item: "19",
    what: "retrieve picks one note twice",
    expect: "exit 0; the note shown and logged once",
    run: () =>
      held(hookRun("probe_dup_pick"), /EX /, () => {
        const log = readFileSync(join(TMP, "hook-runs", "probe_dup_pick", "retrieval_log.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
        const dup = log.find((r) => new Set(r.retrieved_entry_ids).size !== r.retrieved_entry_ids.length);
        if (!log.some((r) => r.retrieved_entry_ids.length > 0)) return "no retrieval picked a note: the probe tested nothing";
        return dup ? `a retrieval logged a note twice: ${JSON.stringify(dup.retrieved_entry_ids)}` : null;
      }),
  },
  { id: "hook-json-rows", item: "12", what: "write JSON.stringify's the episode view (SQL rows included)", expect: "exit 0 (rows reach hooks JSON-safe)", run: () => held(hookRun("probe_stringify"), /EX /) },
  {
    id: "long-hook-prompt",
    item: "21",
    what: "a hook prompt of 200,000 characters",
    expect: "exit 0; the cut said on stderr per method and call kind, counted in the trajectories",
    run: () =>
      held(hookRun("probe_long_prompt"), /prompts cut to max_input_tokens: .*distill/, () => {
        const cut = trajectories(join(TMP, "hook-runs", "probe_long_prompt")).reduce((n, t) => n + t.accounting.truncations, 0);
        return cut > 0 ? null : "the trajectories count no cut prompt";
      }),
  },
  {
    id: "embeds-notes-missing",
    item: "11",
    what: "a hook calling model.embed without memory.embedsNotes",
    expect: "exit 2 at `study plan` (registration), naming embedsNotes",
    run: () => {
      put(
        "embeds/plugin.ts",
        `import { registerMethod } from ${kit("lib/plugin.ts")};
registerMethod({ name: "probe_embeds", description: "embeds without declaring it", hooks: { memory: { name: "e", heading: "E", write: async (e, model) => [{ kind: "k", text: String((await model.embed(e.question)).length) }], retrieve: () => [] } } });
`,
      );
      study("embeds", `  methods: ["iterative", "probe_embeds"],\n  reference: "probe_embeds",\n  queries: 4,\n  max_repair_steps: 1,\n  plugins: ["./plugin.ts"],\n${SIM}`);
      return refused(merit(studyPlan("embeds")), [/embedsNotes/]);
    },
  },
  // --- bounds (item 20) ---
  { id: "resamples-1e9", item: "20", what: "merit report --resamples 1e9", expect: "exit 2, one line naming the bound", run: () => refused(merit(["report", "--runs", join(runsOf(BASE), "spider"), "--out", join(TMP, "r-resamples"), "--resamples", "1e9"]), [/--resamples/]) },
  { id: "curve-resamples-1e9", item: "20", what: "merit report --curve-resamples 1e9", expect: "exit 2, one line (no RangeError stack)", run: () => refused(merit(["report", "--runs", join(runsOf(BASE), "spider"), "--out", join(TMP, "r-curve"), "--curve-resamples", "1e9"]), [/--curve-resamples/]) },
  { id: "max-repair-steps-huge", item: "20", what: "merit grid --max-repair-steps 99999999999", expect: "exit 2, one line naming the bound", run: () => refused(merit(["grid", "--config", baseConfig, "--methods", "iterative", "--seeds", "0", "--out", join(TMP, "g-huge"), "--engine", "simulated", "--allow-single-db", "--max-repair-steps", "99999999999"]), [/max-repair-steps/]) },
  {
    id: "study-k-huge",
    item: "20",
    what: "study max_repair_steps: 99999999999",
    expect: "exit 2, one line naming the field",
    run: () => {
      study("k-huge", `  methods: ["iterative", "reflexion"],\n  reference: "iterative",\n  queries: 4,\n  max_repair_steps: 99999999999,\n${SIM}`);
      return refused(merit(studyPlan("k-huge")), [/max_repair_steps/]);
    },
  },
  // --- arms (item 23) ---
  {
    id: "arms-duplicate-name",
    item: "23",
    what: "two arms of one name in the study file",
    expect: "exit 2 at plan, one line",
    run: () => {
      study("dup-arms", `  methods: ["merit", "merit_judge"],\n  arms: {\n    merit_judge: { method: "merit", feedback: "llm_judge" },\n    merit_judge: { method: "merit", feedback: "dbms_only" },\n  },\n  reference: "merit",\n  queries: 4,\n  max_repair_steps: 1,\n${SIM}`);
      return refused(merit(studyPlan("dup-arms")), [/merit_judge/, /arm/i]);
    },
  },
  {
    id: "arms-identical",
    item: "23",
    what: "two arms that are the same run",
    expect: "exit 2 at plan, one line naming both",
    run: () => {
      study("same-arms", `  methods: ["merit", "merit_a", "merit_b"],\n  arms: {\n    merit_a: { method: "merit", feedback: "dbms_only" },\n    merit_b: { method: "merit", feedback: "dbms_only" },\n  },\n  reference: "merit",\n  queries: 4,\n  max_repair_steps: 1,\n${SIM}`);
      return refused(merit(studyPlan("same-arms")), [/merit_a/, /merit_b/]);
    },
  },
  {
    id: "arm-no-effect",
    item: "23",
    what: "an arm whose only change is its method's own (K = 2 when K is 2)",
    expect: "exit 2 at plan, one line",
    run: () => {
      study("noop-arm", `  methods: ["iterative", "iterative_k2"],\n  arms: { iterative_k2: { method: "iterative", max_repair_steps: 2 } },\n  reference: "iterative",\n  queries: 4,\n  max_repair_steps: 2,\n${SIM}`);
      return refused(merit(studyPlan("noop-arm")), [/iterative_k2/]);
    },
  },
  {
    id: "arm-unknown-regime",
    item: "23",
    what: "an arm naming an unknown feedback regime, `study run`",
    expect: "exit 2 before any grid (no run folder written)",
    run: () => {
      study("bad-regime", `  methods: ["merit", "merit_x"],\n  arms: { merit_x: { method: "merit", feedback: "oracle_noisy" } },\n  reference: "merit",\n  queries: 4,\n  max_repair_steps: 1,\n${SIM}`);
      const f = refused(merit(studyRun("bad-regime")), [/oracle_noisy/]);
      if (f.problem === null && existsSync(join(runsOf("bad-regime"), "spider"))) f.problem = "a grid started before the refusal (runs/…/spider exists)";
      return f;
    },
  },
  // --- noisy feedback (items 1, 5, 6, 7) ---
  {
    id: "noisy-table5",
    item: "1",
    what: "merit under noisy_oracle (30 %) beside merit; report of the noisy arm alone",
    expect: "study run exit 0; the arm's Table 5 = the study's (composition of the shared initial failures)",
    run: () => {
      const r = merit(["report", "--runs", join(runsOf("noisy"), "spider", "merit_noisy-s0"), "--out", join(TMP, "noisy-arm")]);
      const row = (dir: string) => readFileSync(join(dir, "tables", "table5.md"), "utf8").split("\n").find((l) => l.startsWith("| Spider |"));
      return held(r, REPORT_DONE, () => (row(join(TMP, "noisy-arm")) === row(outOf("noisy")) ? null : `arm alone ${row(join(TMP, "noisy-arm"))} vs study ${row(outOf("noisy"))}`));
    },
  },
  {
    id: "noisy-plan-bound",
    item: "5",
    what: "study plan's most model calls against the calls the noisy study computed",
    expect: "computed ≤ planned",
    run: () => {
      const planned = Number(/most model calls: ([\d,]+)/.exec(noisyPlan)?.[1].replace(/,/g, "") ?? NaN);
      const made = readdirSync(join(runsOf("noisy"), "spider")).reduce((n, d) => n + modelCalls(join(runsOf("noisy"), "spider", d)), 0);
      return { problem: Number.isFinite(planned) && made > 0 && made <= planned ? null : `made ${made} model calls, planned at most ${planned}`, shown: `planned at most ${planned}, made ${made} (cached or not)`, seconds: 0, code: 0 };
    },
  },
  {
    id: "noisy-no-accept-unexecuted",
    item: "6",
    what: "noisy_oracle's verdicts of SQL that did not execute",
    expect: "never told correct (the noise flips only executed SQL's denotation verdict)",
    run: () => {
      const dir = join(runsOf("noisy"), "spider", "merit_noisy-s0");
      let bad = 0;
      let unexecuted = 0;
      for (const t of trajectories(dir))
        (t.statuses as string[]).forEach((status, i) => {
          if (status === "CORRECT" || status === "DENOTATION_MISMATCH" || status === "WRONG_RESULT") return;
          unexecuted++;
          if (t.feedback?.accepted?.[i] === true) bad++;
        });
      if (unexecuted === 0) return { problem: "no attempt failed to execute: the probe tested nothing", shown: "", seconds: 0, code: 0 };
      const md = readFileSync(join(outOf("noisy"), "tables", "feedback-confusion.md"), "utf8");
      return { problem: bad > 0 ? `${bad} unexecuted attempts told correct` : null, shown: `${unexecuted} attempts that did not execute, ${bad} told correct; ${lines(md).find((l) => /merit_noisy/.test(l))?.slice(0, 160) ?? ""}`, seconds: 0, code: 0 };
    },
  },
  { id: "plan-finished-arms", item: "7", what: "study plan of the finished noisy study (arms)", expect: "exit 0, \"none left to compute\"", run: () => held(merit(studyPlan("noisy")), /none left to compute/) },
  // --- reports and studies (items 2, 3, 4, 8, 9) ---
  {
    id: "plugin-imported-by-study",
    item: "2",
    what: "study.ts imports a constant from its own plugin; then the plugin is edited",
    expect: "run: exit 0, manifests record the plugin; after the edit: exit 2 naming the folder to delete (no --out)",
    run: () => {
      put("imports/plugin.ts", `import { registerMethod } from ${kit("lib/plugin.ts")};\nexport const SHOWN = 2;\nregisterMethod({ name: "probe_imported", description: "imported by its study", hooks: { memory: { name: "imp", heading: "IMP", write: (e) => [{ kind: "k", text: "seen " + e.queryId }], retrieve: (_r, mem) => mem.slice(0, SHOWN).map((note) => ({ note })) } } });\n`);
      study("imports", `  methods: ["iterative", "probe_imported"],\n  reference: "probe_imported",\n  queries: 6,\n  max_repair_steps: 1,\n  plugins: ["./plugin.ts"],\n${SIM}`, `import { SHOWN } from "./plugin.ts";\nvoid SHOWN;`);
      const first = held(merit(studyRun("imports")), REPORT_DONE, () => {
        const m = readFileSync(join(runsOf("imports"), "spider", "probe_imported-s0", "manifest.json"), "utf8");
        return m.includes("plugin.ts") ? null : "the run's manifest records no plugin";
      });
      if (first.problem) return first;
      appendFileSync(join(TMP, "imports/plugin.ts"), "// edited\n");
      const second = refused(merit(studyRun("imports")), [/probe_imported-s0: was run with another version of .*plugin\.ts.*delete the run directory/]);
      if (second.problem === null && /--out/.test(second.shown)) second.problem = "the refusal suggests --out, which study run does not take";
      return second;
    },
  },
  {
    id: "report-shows-plugin-method",
    item: "3",
    what: "merit report over iterative + a plugin method, no --methods",
    expect: "exit 0; the plugin method in Table 1",
    run: () => held(merit(["report", "--runs", join(runsOf("classify"), "spider"), "--out", join(TMP, "r-all"), "--plugin", join(ROOT, "examples/error-taxonomy.ts")]), REPORT_DONE, () => (readFileSync(join(TMP, "r-all", "tables", "table1.md"), "utf8").includes("merit_fine_types") ? null : "Table 1 leaves merit_fine_types out")),
  },
  {
    id: "real-models-single-db",
    item: "4",
    what: "a Spider study with realModels() and no test-suite databases",
    expect: "exit 2, one line: `make data-spider` or databases: \"single\"",
    run: () => {
      study("real", `  methods: ["iterative", "merit"],\n  reference: "merit",\n  queries: 4,\n  models: realModels(),`);
      return refused(merit(studyPlan("real")), [/make data-spider/, /databases: "single"/]);
    },
  },
  {
    id: "classify-hook-beside-merit",
    item: "8",
    what: "merit_fine_types (classify hook) reported beside merit and iterative",
    expect: "exit 0; Table 5 shows the hook's labels in columns of their own",
    run: () => held(classifyRun, REPORT_DONE, () => (/Mismatch: aggregation/.test(readFileSync(join(outOf("classify"), "tables", "table5.md"), "utf8")) ? null : "Table 5 has no column of the hook's labels")),
  },
  {
    id: "failed-run-resumes",
    item: "9",
    what: "a study whose plugin run fails once (PROBE_FAIL=1), then runs again unchanged",
    expect: "first exit 2 in one line (no --out); the second run resumes the failed folder, exit 0",
    run: () => {
      put("flaky/plugin.ts", `import { registerMethod } from ${kit("lib/plugin.ts")};\nregisterMethod({ name: "probe_flaky", description: "fails while PROBE_FAIL is set", hooks: { memory: { name: "fl", heading: "FL", write: (e) => { if (process.env.PROBE_FAIL === "1" && e.streamPosition === 3) throw new Error("planned failure"); return [{ kind: "k", text: "q " + e.queryId }]; }, retrieve: () => [] } } });\n`);
      study("flaky", `  methods: ["iterative", "probe_flaky"],\n  reference: "probe_flaky",\n  queries: 6,\n  max_repair_steps: 1,\n  plugins: ["./plugin.ts"],\n${SIM}`);
      const first = refused(merit(studyRun("flaky"), { env: { PROBE_FAIL: "1" } }), [/planned failure/]);
      if (first.problem) return first;
      if (/--out/.test(first.shown)) return { ...first, problem: "the refusal suggests --out" };
      return held(merit(studyRun("flaky")), REPORT_DONE);
    },
  },
  // --- endings (item 10) ---
  {
    id: "plugin-executor-open",
    item: "10",
    what: "a plugin opens an executor and a 1 s interval timer and never closes them",
    expect: "exit 0 (no hang); one warning naming what still holds the event loop",
    run: () => {
      const plugin = put("open/plugin.ts", `import { createExecutor, registerMethod } from ${kit("lib/plugin.ts")};\nexport const open = createExecutor("sqlite", {});\nsetInterval(() => {}, 1000);\nregisterMethod({ name: "probe_open", description: "leaves things open", hooks: { memory: { name: "op", heading: "OP", write: () => [], retrieve: () => [] } } });\n`);
      const r = hookRun("probe_open", plugin, 90);
      return held(r, /Timeout|timer|event loop/i);
    },
  },
  // --- the Node hand-over and the install (items 17, 18) ---
  {
    id: "handover-empty-node",
    item: "17",
    what: `an empty bin/node in ~/.cache/merit-kit/node-v24.99.0-linux-x64 (HOME moved), \`merit help\` under ${OLD_NODE ? "Node " + execFileSync(OLD_NODE, ["-p", "process.versions.node"], { encoding: "utf8" }).trim() : "an old Node (none here)"}`,
    expect: "exit 2, one line naming the binary and the fix",
    run: () => {
      if (!OLD_NODE) return null;
      const home = join(TMP, "home-empty");
      const bin = join(home, ".cache", "merit-kit", "node-v24.99.0-linux-x64", "bin");
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, "node"), "");
      chmodSync(join(bin, "node"), 0o755);
      return refused(merit(["help"], { node: OLD_NODE, env: { HOME: home }, timeoutS: 30 }), [/does not run as Node 24\.3 or later/, /make install/]);
    },
  },
  {
    id: "handover-old-node",
    item: "17",
    what: "a node-v24.99.0 folder whose binary is the old Node itself",
    expect: "exit 2, one line (no hand-over loop)",
    run: () => {
      if (!OLD_NODE) return null;
      const home = join(TMP, "home-old");
      const bin = join(home, ".cache", "merit-kit", "node-v24.99.0-linux-x64", "bin");
      mkdirSync(bin, { recursive: true });
      symlinkSync(OLD_NODE, join(bin, "node"));
      return refused(merit(["help"], { node: OLD_NODE, env: { HOME: home }, timeoutS: 30 }), [/it is Node 2[0-3]\./]);
    },
  },
  {
    id: "addons-wrong-node",
    item: "18",
    what: "scripts/check-addons.mjs (the end of `make install`) under the old Node, add-ons built for Node 24",
    expect: "exit 1, one line naming the add-on and the fix",
    run: () => {
      if (!OLD_NODE) return null;
      return refused(merit([join(ROOT, "scripts/check-addons.mjs")], { node: OLD_NODE, timeoutS: 60 }), [/better-sqlite3|hnswlib-node/], 1);
    },
  },
  {
    id: "addons-right-node",
    item: "18",
    what: "scripts/check-addons.mjs under the Node that runs the kit",
    expect: "exit 0",
    run: () => held(merit([join(ROOT, "scripts/check-addons.mjs")], { timeoutS: 60 }), null),
  },
  // --- full disk (item 22) ---
  {
    id: "report-full-disk",
    item: "22",
    what: "merit report --out on a 256 KiB tmpfs",
    expect: "exit 2, one line naming the file and the fix; no partial file left",
    run: () => {
      return onFullDisk(join(TMP, "full"), (dir) => {
        const f = refused(merit(["report", "--runs", join(runsOf("classify"), "spider"), "--out", join(dir, "out"), "--plugin", join(ROOT, "examples/error-taxonomy.ts")]), [/space|ENOSPC|full/i]);
        const partial = listFiles(join(dir, "out")).filter((p) => /\.tmp/.test(p) || (p.endsWith(".png") && !pngWhole(p)));
        if (f.problem === null && partial.length) f.problem = `partial files left: ${partial.join(", ")}`;
        return f;
      });
    },
  },
  {
    id: "study-full-disk",
    item: "22",
    what: "study run (tiny models: the call cache is copied first) with --runs on a 256 KiB tmpfs",
    expect: "exit 2, one line naming the --runs disk and suggesting --runs (not --resume, which study run rejects)",
    run: () => {
      return onFullDisk(join(TMP, "full-runs"), (dir) => {
        study("tiny-full", `  methods: ["iterative", "reflexion"],\n  reference: "iterative",\n  queries: 4,\n  max_repair_steps: 1,`);
        const f = refused(merit(["study", "run", studyFile("tiny-full"), "--runs", dir, "--out", outOf("tiny-full")]), [/space/i, /--runs/]);
        if (f.problem === null && /--resume/.test(f.shown)) f.problem = "the refusal suggests --resume, which study run rejects";
        return f;
      });
    },
  },
  // --- newer seams (2026-12-07 afternoon): the propose hook, memory_source, study arms' args, plugins ---
  { id: "propose-number", item: "propose", what: "propose returns a number (42)", expect: "exit 2, one line: method, hook, what it returned", run: hookRefusal("probe_propose_number", "propose", /returned 42.*must return the SQL/, PROPOSE) },
  { id: "propose-empty", item: "propose", what: "propose returns \"\" (no SQL)", expect: "exit 0; each proposed attempt scored as giving no SQL", run: () => held(hookRun("probe_propose_empty", PROPOSE), /EX /, () => proposedSqls("probe_propose_empty").every((s) => s === "") ? null : "an attempt of a step that proposed \"\" was scored with SQL") },
  {
    id: "propose-huge",
    item: "propose",
    what: "propose returns a 4 MB SQL",
    expect: "exit 2 within seconds, one line naming the size and the bound (fixed: was scored, then the run's edit distance by step ran for hours)",
    run: hookRefusal("probe_propose_huge", "propose", /returned 4000020 bytes of SQL.*at most 65536 bytes/, PROPOSE),
  },
  { id: "propose-throws", item: "propose", what: "propose throws TypeError", expect: "exit 2, one line: method, hook, the error", run: hookRefusal("probe_propose_throw", "propose", /threw TypeError: no vote/, PROPOSE) },
  { id: "propose-hangs", item: "propose", what: "propose never returns (hook_deadline_s 2)", expect: "exit 2 within seconds, one line naming hook_deadline_s", run: hookRefusal("probe_propose_hang", "propose", /did not return within 2 s.*hook_deadline_s/, PROPOSE) },
  {
    id: "execute-writes",
    item: "propose",
    what: "execute given 10 writing statements (INSERT, DROP TABLE, ATTACH, PRAGMA writable_schema and journal_mode, CREATE TABLE, SELECT; DELETE, VACUUM, REPLACE, WITH … DELETE)",
    expect: "exit 0; each an execution error (the hook sees executed: false), every database file byte-identical",
    run: () => {
      const before = databaseHashes();
      const f = held(hookRun("probe_exec_write", PROPOSE), /EX /, () => {
        const after = databaseHashes();
        const changed = [...before].filter(([p, h]) => after.get(p) !== h).map(([p]) => p);
        if (changed.length) return `database files changed: ${changed.join(", ")}`;
        if (after.size !== before.size) return `database files appeared or vanished (${before.size} → ${after.size})`;
        const seen = readProbeLog("exec_write");
        if (seen.length === 0) return "the hook executed nothing: the probe tested nothing";
        const ran = seen.filter((v) => v.executed);
        return ran.length ? `${ran.length} writing statements executed: ${JSON.stringify(ran[0])}` : null;
      });
      return f;
    },
  },
  { id: "execute-hangs", item: "propose", what: "execute given a query that never ends (recursive CTE), sql_timeout_s 1", expect: "exit 0 within the SQL deadline per execution; the hook sees TIMEOUT", run: () => held(hookRun("probe_exec_hang", PROPOSE, 120, { sql_timeout_s: 1 }), /EX /, () => (readProbeLog("exec_hang").some((v) => v.error === "TIMEOUT") ? null : `no execution timed out: ${JSON.stringify(readProbeLog("exec_hang").slice(0, 1))}`)) },
  {
    id: "execute-many",
    item: "propose",
    what: "execute called 400 times in one propose call",
    expect: "exit 0; every execution counted in the attempts' db_executions",
    run: () =>
      held(hookRun("probe_exec_many", PROPOSE), /EX /, () => {
        const calls = readProbeLog("exec_many").length;
        const counted = trajectories(join(TMP, "hook-runs", "probe_exec_many")).reduce((n, t) => n + (t.accounting.db_executions as number), 0);
        if (calls === 0) return "propose was never called: the probe tested nothing";
        return counted >= calls * 400 ? null : `${calls} propose calls × 400 executions, ${counted} db_executions counted`;
      }),
  },
  ...[
    ["temp-negative", "-0.5"],
    ["temp-nan", "NaN"],
    ["temp-huge", "1e9"],
  ].map(([id, t]) => ({ id, item: "propose", what: `calls.sample.temperature ${t}`, expect: "exit 2 at registration, one line naming the field and its range", run: () => refused(merit(["methods", "--plugin", put(`temps/${id}.ts`, `import { registerMethod } from ${kit("lib/plugin.ts")};\nregisterMethod({ name: "probe_${id.replace("-", "_")}", description: "bad temperature", hooks: { calls: { sample: { most: 1, temperature: ${t} } }, propose: { name: "p", propose: (r) => r.greedy } } });\n`)]), [/calls\.sample\.temperature must be a number in \(0, 2\]/]) })),
  { id: "sample-undeclared", item: "propose", what: "model.sample on a kind the method does not declare", expect: "exit 2, one line naming the kind and the fix", run: () => refused(hookRun("probe_sample_undeclared", PROPOSE), [/^merit run: method "probe_sample_undeclared": .*kind "vote", which it does not declare; add it to the method's hooks\.calls/]) },
  { id: "sample-greedy-kind", item: "propose", what: "model.sample on a declared greedy kind (no temperature)", expect: "exit 2, one line: declare temperature or call model.reply", run: () => refused(hookRun("probe_sample_greedy", PROPOSE), [/^merit run: method "probe_sample_greedy": .*model\.sample with kind "vote", which declares no temperature; declare hooks\.calls\.vote\.temperature/]) },
  {
    id: "propose-two-statements",
    item: "propose",
    what: "propose returns \"SQL; DROP TABLE …; DELETE …\"",
    expect: "exit 0; scored as no SQL (METHOD.md §2.7: more than one statement is \"\"), every database file byte-identical",
    run: () => {
      const before = databaseHashes();
      return held(hookRun("probe_two_statements", PROPOSE), /EX /, () => {
        const after = databaseHashes();
        if ([...before].some(([p, h]) => after.get(p) !== h)) return "a database file changed";
        const stored = proposedSqls("probe_two_statements").filter((q) => q !== "");
        return stored.length ? `a scored attempt keeps SQL: ${stored[0].slice(0, 80)}` : null;
      });
    },
  },
  { id: "execute-non-string", item: "propose", what: "execute given undefined", expect: "exit 2, one line: give it the SQL text", run: () => refused(hookRun("probe_exec_nonstring", PROPOSE), [/^merit run: method "probe_exec_nonstring": .*execute was given undefined; give it the SQL text/]) },
  { id: "sample-over-bound", item: "propose", what: "model.sample 3 times per step of a kind declared { per_repair: 1 }", expect: "exit 2, one line naming the kind and its declared bound", run: () => refused(hookRun("probe_sample_over", PROPOSE), [/probe_sample_over/, /"s"|kind s|\bs\b/, /most|bound|declare/]) },
  { id: "sample-negative-index", item: "propose", what: "model.sample with index -1", expect: "exit 2, one line: a non-negative integer", run: () => refused(hookRun("probe_sample_index", PROPOSE), [/probe_sample_index/, /index .* is -1; give a non-negative integer/]) },
  { id: "sample-same-index", item: "propose", what: "model.sample twice with index 0 at one step", expect: "exit 0; the same text both times (one seed)", run: () => held(hookRun("probe_sample_replay", PROPOSE), /EX /, () => { const seen = readProbeLog("sample_replay") as { same?: boolean }[]; if (seen.length === 0) return "propose was never called: the probe tested nothing"; return seen.every((v) => v.same) ? null : "index 0 drew two different samples"; }) },
  // memory_source
  { id: "source-missing", item: "source", what: "memory_source names a folder that does not exist", expect: "exit 2, one line naming memory_source and the path (fixed: named only DIR/manifest.json)", run: () => refused(sourcedRun("merit", join(TMP, "no-such-run")), [/^merit run: config memory_source \S*no-such-run: does not exist/]) },
  {
    id: "source-running",
    item: "source",
    what: "memory_source names a run still running (its manifest status \"running\")",
    expect: "exit 2, one line: not a completed run, finish it",
    run: () => {
      const dir = copyRun(meritSource(), "src-running");
      const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
      writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...m, status: "running" }));
      return refused(sourcedRun("merit", dir), [/memory_source/, /not a completed run/]);
    },
  },
  {
    id: "study-no-databases",
    item: "source",
    what: "a BIRD study (the source of a transfer) without BIRD's databases (no `make data-bird`)",
    expect: "exit 2 at `study plan`, one line naming the dataset and the download (fixed: plan said 0 queries, run failed with \"runMetrics: the run has no trajectories\")",
    run: () => {
      if (existsSync(join(ROOT, "data", "bird", "dev_databases"))) return null;
      put("birdsrc/study.ts", `import { defineStudy, simulatedModels } from ${kit("lib/experiment/study.ts")};\nexport default defineStudy({ name: "birdsrc", datasets: ["bird"], seeds: [0], subset: { rule: "initially_failed", initially_correct: 2 }, methods: ["iterative", "merit"], reference: "merit", queries: 8, max_repair_steps: 2, models: simulatedModels(), databases: "single" });\n`);
      return refused(merit(studyPlan("birdsrc")), [/dataset bird .*none of its \d+ queries can be scored.*make data-bird/]);
    },
  },
  {
    id: "source-other-dataset",
    item: "source",
    what: "a MERIT source made on Spider-DK for a Spider MERIT run (transfer)",
    expect: "exit 0; manifest.json memory_source records dataset spider-dk and its entries, all shown",
    run: () => {
      const src = otherDatasetSource();
      if (typeof src !== "string") return src;
      return held(sourcedRun("merit", src, "src-dk-used"), /EX /, () => {
        const m = JSON.parse(readFileSync(join(TMP, "sourced", "src-dk-used", "manifest.json"), "utf8")).memory_source;
        return m?.dataset === "spider-dk" && m.entries_in_force > 0 && m.entries_shown === m.entries_in_force ? null : `manifest memory_source: ${JSON.stringify(m)}`;
      });
    },
  },
  { id: "source-notes-for-merit", item: "source", what: "a notes run (hook \"probe\") as the source of a MERIT run", expect: "exit 2, one line: the source's hook is not MERIT's memory", run: () => refused(sourcedRun("merit", notesSource()), [/memory_source/, /not MERIT's memory/]) },
  { id: "source-merit-for-notes", item: "source", what: "a MERIT run as the source of a notes method's run", expect: "exit 2, one line: not the same hook's notes", run: () => refused(sourcedRun("probe_dup_pick", meritSource(), "x", HOOKS), [/memory_source/, /memory hook "merit_memory"|not "probe"/]) },
  { id: "source-no-memory", item: "source", what: "memory_source for iterative (a method without memory)", expect: "exit 2, one line: leave memory_source out", run: () => refused(sourcedRun("iterative", meritSource()), [/memory_source/, /no memory hook/]) },
  {
    id: "source-memory-damaged",
    item: "source",
    what: "the source's memory/ entries file cut mid-line",
    expect: "exit 2, one line naming the file and the fix",
    run: () => {
      const dir = copyRun(meritSource(), "src-damaged");
      const file = listFiles(join(dir, "memory")).find((p) => p.endsWith(".jsonl"));
      if (!file) return { problem: `no memory/*.jsonl in the source run (${listFiles(join(dir, "memory")).join(", ")})`, shown: "", seconds: 0, code: null };
      const text = readFileSync(file, "utf8");
      writeFileSync(file, text.slice(0, Math.floor(text.length / 2)));
      return refused(sourcedRun("merit", dir), [/memory_source|memory/, /restore the source run|name another/]);
    },
  },
  {
    id: "source-trajectories-edited",
    item: "source",
    what: "the source's trajectories.jsonl edited after the run (a db_error's text changed, still valid)",
    expect: "exit 2, one line: the file changed since the run completed (trajectories_sha256)",
    run: () => {
      const dir = copyRun(meritSource(), "src-edited");
      const file = join(dir, "trajectories.jsonl");
      const text = readFileSync(file, "utf8");
      const edited = text.replace(/"db_errors":\["[^"]/, (m) => m.slice(0, -1) + "X");
      if (edited === text) return { problem: "no db_error to edit: the probe tested nothing", shown: "", seconds: 0, code: null };
      writeFileSync(file, edited);
      return refused(sourcedRun("merit", dir), [/trajectories|sha256|changed|edited/i]);
    },
  },
  {
    id: "source-is-own-out",
    item: "source",
    what: "memory_source names the run's own --out (a finished run), then --resume",
    expect: "exit 2, one line: a run cannot be its own source",
    run: () => {
      const dir = copyRun(meritSource(), "src-self");
      const cfgFile = put("sourced/self-config.json", JSON.stringify({ ...JSON.parse(readFileSync(baseConfig, "utf8")), memory_source: dir }, null, 2));
      return refused(merit(["run", "--config", cfgFile, "--method", "merit", "--seed", "0", "--out", dir, "--resume", "--engine", "simulated", "--allow-single-db"]), [/memory_source|own/]);
    },
  },
  // study arms' args
  { id: "arm-arg-string", item: "arms", what: "arm args { max_positive: \"5\" } (a string for a number)", expect: "exit 2 at plan, one line naming the arm and the arg", run: () => armPlan("arm-string", `{ method: "merit", args: { max_positive: "5" } }`, [/merit_x/, /max_positive/]) },
  { id: "arm-arg-nested", item: "arms", what: "arm args { max_positive: { n: 5 } } (an object for a number)", expect: "exit 2 at plan, one line naming the arm and the arg", run: () => armPlan("arm-nested", `{ method: "merit", args: { max_positive: { n: 5 } } }`, [/merit_x/, /max_positive/]) },
  { id: "arm-ranker-unknown", item: "arms", what: "arm args { ranker: \"bm99\" }", expect: "exit 2 at plan, one line naming the known rankers", run: () => armPlan("arm-ranker", `{ method: "merit", args: { ranker: "bm99" } }`, [/merit_x/, /bm99/, /hybrid/]) },
  { id: "arm-ranker-args-number", item: "arms", what: "arm args { ranker_args: 5 }", expect: "exit 2 at plan, one line: ranker_args must be an object", run: () => armPlan("arm-ranker-args", `{ method: "merit", args: { ranker_args: 5 } }`, [/merit_x/, /ranker_args/]) },
  { id: "arm-ranker-args-unknown", item: "arms", what: "arm args { ranker_args: { alpha_typo: 1 } }", expect: "exit 2 at plan, one line naming the unknown ranker arg", run: () => armPlan("arm-ranker-typo", `{ method: "merit", args: { ranker_args: { alpha_typo: 1 } } }`, [/merit_x/, /alpha_typo/]) },
  { id: "arm-args-no-factory", item: "arms", what: "arm args { top_k: 2 } for iterative (a method built from no factory)", expect: "exit 2 at plan, one line naming the arm and that iterative takes no args", run: () => armPlan("arm-no-factory", `{ method: "iterative", args: { top_k: 2 } }`, [/merit_x/, /iterative/, /top_k|args/]) },
  { id: "arm-ranker-nested-type", item: "arms", what: "arm args in the nested form { ranker: { dense_weight: \"high\" } }", expect: "exit 2 at plan, one line naming the ranker arg and its type", run: () => armPlan("arm-ranker-nested", `{ method: "merit", args: { ranker: { dense_weight: "high" } } }`, [/merit_x/, /dense_weight/, /number/]) },
  { id: "arm-args-array", item: "arms", what: "arm args an array ([1, 2])", expect: "exit 2 at plan, one line naming args", run: () => armPlan("arm-args-array", `{ method: "merit", args: [1, 2] as never }`, [/merit_x/, /args/]) },
  { id: "arm-of-arm", item: "arms", what: "an arm whose method is another arm", expect: "exit 2 at plan, one line: name a registered method, not an arm", run: () => armPlan("arm-of-arm", `{ method: "merit_y", max_repair_steps: 1 },\n    merit_y: { method: "merit", feedback: "dbms_only" }`, [/merit_x/, /merit_y/], ["merit", "merit_x", "merit_y"]) },
  // plugins
  { id: "grid-plugin-cycle", item: "plugin", what: "merit grid --plugin whose memory hook writes note data with a cycle", expect: "exit 2, one line naming the cycle (no JSON stack)", run: () => refused(merit(["grid", "--config", baseConfig, "--methods", "probe_data_cycle", "--seeds", "0", "--plugin", HOOKS, "--out", join(TMP, "g-cycle"), "--engine", "simulated", "--allow-single-db"]), [/probe_data_cycle/, /cycle/]) },
  { id: "grid-plugin-function", item: "plugin", what: "merit grid --plugin whose memory hook writes note data with a function", expect: "exit 2, one line naming the field", run: () => refused(merit(["grid", "--config", baseConfig, "--methods", "probe_data_function", "--seeds", "0", "--plugin", HOOKS, "--out", join(TMP, "g-function"), "--engine", "simulated", "--allow-single-db"]), [/probe_data_function/, /data\.f is a function/]) },
  { id: "methods-plugin-kit-name", item: "plugin", what: "merit methods --plugin that registers \"merit\" (a kit method's name)", expect: "exit 2, one line naming the plugin and the clash", run: () => refused(merit(["methods", "--plugin", put("clash/plugin.ts", `import { registerMethod } from ${kit("lib/plugin.ts")};\nregisterMethod({ name: "merit", description: "clash", hooks: { memory: { name: "c", heading: "C", write: () => [], retrieve: () => [] } } });\n`)]), [/"merit"/, /plugin|already|registered/]) },
  { id: "grid-plugin-kit-name", item: "plugin", what: "merit grid --plugin that registers \"iterative\"", expect: "exit 2, one line naming the clash; no run folder", run: () => { const f = refused(merit(["grid", "--config", baseConfig, "--methods", "iterative", "--seeds", "0", "--plugin", put("clash2/plugin.ts", `import { registerMethod } from ${kit("lib/plugin.ts")};\nregisterMethod({ name: "iterative", description: "clash", hooks: { memory: { name: "c", heading: "C", write: () => [], retrieve: () => [] } } });\n`), "--out", join(TMP, "g-clash"), "--engine", "simulated", "--allow-single-db"]), [/"iterative"/]); if (f.problem === null && existsSync(join(TMP, "g-clash"))) f.problem = "a run folder was written before the refusal"; return f; } },
];

const REPORT_DONE = /^\{"runs":\d+,"tables":/;
let noisyPlan = "";
let classifyRun: Result;

/** The model calls a run made (repairs, reflections, hook calls; the initial SQL came from a predictions file). */
function modelCalls(runDir: string): number {
  return trajectories(runDir).reduce((n, t) => n + (t.call_kinds as string[]).filter((k) => k !== "initial_cache").length, 0);
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).map((p) => join(dir, p)).filter((p) => statSync(p).isFile());
}
/** A PNG ends with its IEND chunk. */
const pngWhole = (p: string) => readFileSync(p).subarray(-8).toString("latin1").startsWith("IEND");

// ---------------------------------------------------------------------------------------------------
const started = performance.now();
console.log(`Fault probes (issue 39 items 1-12, 17-23; propose, memory_source, arms, plugins): ${new Date().toISOString().slice(0, 16)} UTC, Node ${process.version}, load average ${readLoad()}`);
// Shared setup: the base study (its config serves the hook probes), the noisy study, the classify study.
study(BASE, `  methods: ["iterative", "reflexion"],\n  reference: "iterative",\n  queries: 8,\n  max_repair_steps: 2,\n${SIM}`);
const setup: [string, Result][] = [];
setup.push(["base study run", merit(studyRun(BASE))]);
setupFailed();
const cfg = JSON.parse(readFileSync(join(runsOf(BASE), "configs", "spider.json"), "utf8"));
baseConfig = put("base-config.json", JSON.stringify({ ...cfg, hook_deadline_s: 2 }, null, 2));
study("noisy", `  methods: ["merit", "merit_noisy"],\n  arms: { merit_noisy: { method: "merit", feedback: "noisy_oracle", feedback_noise: 0.3 } },\n  reference: "merit",\n  queries: 12,\n  max_repair_steps: 3,\n${SIM}`);
const plan = merit(studyPlan("noisy"));
noisyPlan = plan.stdout;
setup.push(["noisy study plan", plan]);
setup.push(["noisy study run", merit(studyRun("noisy"))]);
study("classify", `  methods: ["iterative", "merit", "merit_fine_types"],\n  reference: "merit_fine_types",\n  queries: 8,\n  max_repair_steps: 1,\n  plugins: [${kit("examples/error-taxonomy.ts")}],\n${SIM}`);
classifyRun = merit(studyRun("classify"));
setup.push(["classify study run", classifyRun]);
setupFailed();
function setupFailed(): void {
  for (const [what, r] of setup) {
    if (r.code !== 0) {
      console.log(`setup failed: ${what}: exit ${r.code}: ${lines(r.stderr).at(-1) ?? ""}`);
      if (!keep) rmSync(TMP, { recursive: true, force: true });
      process.exit(1);
    }
  }
}
console.log(`setup: ${setup.map(([w, r]) => `${w} ${r.code} (${r.seconds.toFixed(1)} s)`).join(", ")}`);
console.log("");
console.log("| # | item | probe | expected | exit | s | what it printed | outcome |");
console.log("| ---: | --- | --- | --- | ---: | ---: | --- | --- |");
const cell = (s: string) => s.replaceAll(TMP, "$TMP").replace(/\|/g, "\\|").replace(/\s+/g, " ").slice(0, 320);
let nHeld = 0;
let nFailed = 0;
let nSkipped = 0;
let n = 0;
for (const p of probes) {
  if (only && !only.has(p.id)) continue;
  n++;
  let f: Finding | null;
  try {
    f = p.run();
  } catch (e) {
    f = { problem: `the probe's own code failed: ${(e as Error).message}`, shown: "", seconds: 0, code: null };
  }
  if (f === null) {
    nSkipped++;
    console.log(`| ${n} | ${p.item} | ${cell(p.what)} | ${cell(p.expect)} | — | — | — | skipped (needs root or an old Node) |`);
    continue;
  }
  if (f.problem) nFailed++;
  else nHeld++;
  console.log(`| ${n} | ${p.item} | ${cell(p.what)} | ${cell(p.expect)} | ${f.code ?? "—"} | ${f.seconds.toFixed(1)} | ${cell(f.shown)} | ${f.problem ? `**FAILED**: ${cell(f.problem)}` : "held"} |`);
}
console.log("");
console.log(`${nHeld} held, ${nFailed} failed${nSkipped ? `, ${nSkipped} skipped` : ""} (${((performance.now() - started) / 1000).toFixed(0)} s; load average ${readLoad()})`);
if (!keep) rmSync(TMP, { recursive: true, force: true });
else console.log(`kept ${TMP}`);
process.exit(nFailed === 0 ? 0 : 1);

function readLoad(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}
