/**
 * The ten follow-up studies of issue 39, rerun as a newcomer runs them (issue 39 "Must show": "the
 * ten studies' situations rerun from a fresh clone: exit codes and what each prints"). Each situation
 * is a few real CLI commands (`node lib/bin.mjs …`: study plan / study run, run, report, audit,
 * classify) on the simulated engine (configs/simulated-engine.json; docs/guides/simulated-engine.md)
 * and the bundled data, with small query counts, in a temporary folder; study files and the plugins
 * they need are written there (a study file imports the kit from this checkout). Every command's exit
 * code, seconds and the key line it printed are checked against what the situation expects: exit 0
 * and the line that shows it worked, or a one-line refusal (exit 2) where the kit cannot do it yet.
 * A stack trace on stderr, a missing key line or an unexpected exit code is a failure.
 *
 * Run from the repository root (a fresh clone with `npm ci` done): `node bench/follow-up-situations.ts`
 * [--only NAME,NAME] [--keep] (keep the temporary folder and print its path). Prints one Markdown row
 * per situation, then "N held, M failed"; exits 1 when any situation did not go as expected.
 * About a minute on two idle cores. bench/README.md "Follow-up situations" holds the printed table.
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const only = args.includes("--only") ? new Set(args[args.indexOf("--only") + 1].split(",")) : null;
const keep = args.includes("--keep");
const TMP = mkdtempSync(join(tmpdir(), "merit-situations-"));
/** A path of this checkout, for a study file written in TMP. */
const kit = (p: string) => JSON.stringify(join(ROOT, p));

/** One CLI command of a situation and what it must give. */
interface Step {
  label: string;
  argv: () => string[];
  /** The exit code it must give. */
  exit: number;
  /** The line that shows the outcome (first match of stdout + stderr). */
  key: RegExp;
  /** Further checks after it ran: a reason it failed, or null. */
  check?: () => string | null;
  /** What the checks found, appended to the key line. */
  info?: () => string;
  /** Stdout is large (a report): the key line is looked up in this file instead, when given. */
  keyFile?: () => string;
}

interface Situation {
  name: string;
  /** What it runs, for the table. */
  what: string;
  setup?: () => void;
  steps: Step[];
}

interface Outcome {
  label: string;
  code: number | null;
  seconds: number;
  key: string;
  problem: string | null;
}

const STACK = /^\s+at .+(:\d+:\d+\)?|\(node:)/m;

function run(step: Step): Outcome {
  const start = performance.now();
  const argv = step.argv();
  const r = spawnSync(process.execPath, [join(ROOT, "lib/bin.mjs"), ...argv], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: process.env.MERIT_THREADS ?? "1" },
    timeout: 600_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  const seconds = (performance.now() - start) / 1000;
  const text = `${r.stdout ?? ""}\n${r.stderr ?? ""}`;
  const source = step.keyFile && existsSync(step.keyFile()) ? readFileSync(step.keyFile(), "utf8") : text;
  const line = source.split("\n").find((l) => step.key.test(l));
  const problems: string[] = [];
  if (r.error) problems.push(`did not finish: ${r.error.message}`);
  if (r.status !== step.exit) problems.push(`exit ${r.status}, expected ${step.exit}: ${lastLine(text)}`);
  if (STACK.test(r.stderr ?? "")) problems.push(`stack trace on stderr: ${(r.stderr ?? "").split("\n").find((l) => STACK.test(l))?.trim()}`);
  if (step.exit !== 0 && (r.stderr ?? "").trim().split("\n").filter((l) => l.trim() !== "").length > 1) problems.push(`refusal is not one line: ${JSON.stringify((r.stderr ?? "").slice(0, 300))}`);
  if (!line) problems.push(`no line matching ${step.key}; last: ${lastLine(text)}`);
  if (problems.length === 0 && step.check) {
    const p = step.check();
    if (p) problems.push(p);
  }
  let key = (line ?? lastLine(text)).trim();
  if (problems.length === 0 && step.info) key += ` [${step.info()}]`;
  return { label: step.label, code: r.status, seconds, key: key.replaceAll(TMP, "$TMP"), problem: problems.length ? problems.join("; ").replaceAll(TMP, "$TMP") : null };
}

const lastLine = (text: string) => text.trim().split("\n").filter((l) => l.trim() !== "").at(-1) ?? "";

/** Writes `text` to TMP/`rel` (folders made) and returns the absolute path. */
function put(rel: string, text: string): string {
  const file = join(TMP, rel);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** A study file in TMP/`name`/study.ts on the simulated engine, single databases, seed 0. */
function study(name: string, body: string): string {
  return put(
    `${name}/study.ts`,
    `import { defineStudy, simulatedModels, realModels } from ${kit("lib/experiment/study.ts")};
void realModels;
export default defineStudy({
  name: ${JSON.stringify(name)},
${body}
});
`,
  );
}

const runs = (name: string) => join(TMP, "runs", name);
const out = (name: string) => join(TMP, "results", name);
const file = (name: string) => join(TMP, name, "study.ts");
const studyRun = (name: string, extra: string[] = []) => ["study", "run", file(name), "--runs", runs(name), "--out", out(name), "--no-html", ...extra];
const studyPlan = (name: string) => ["study", "plan", file(name), "--runs", runs(name)];
const REPORT_DONE = /^\{"runs":\d+,"tables":/;
const SIM = `  models: simulatedModels(),\n  databases: "single",`;

/** Table 5's Markdown of a report folder. */
const table5 = (dir: string) => readFileSync(join(dir, "tables", "table5.md"), "utf8");

const situations: Situation[] = [
  {
    name: "feedback-noise sweep",
    what: "merit under the oracle and noisy_oracle at 10 % and 30 % (arms); plan, run, plan of the finished study, report of one noisy arm alone",
    setup: () =>
      study(
        "noise",
        `  datasets: ["spider"],
  methods: ["merit", "merit_noise10", "merit_noise30"],
  arms: {
    merit_noise10: { method: "merit", feedback: "noisy_oracle", feedback_noise: 0.1 },
    merit_noise30: { method: "merit", feedback: "noisy_oracle", feedback_noise: 0.3 },
  },
  seeds: [0],
  reference: "merit",
  queries: 12,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 3,
${SIM}`,
      ),
    steps: [
      { label: "study plan", argv: () => studyPlan("noise"), exit: 0, key: /^most model calls/ },
      { label: "study run", argv: () => studyRun("noise"), exit: 0, key: REPORT_DONE },
      { label: "study plan (finished)", argv: () => studyPlan("noise"), exit: 0, key: /none left to compute/ },
      {
        label: "report (one noisy arm)",
        argv: () => ["report", "--runs", join(runs("noise"), "spider", "merit_noise30-s0"), "--out", join(TMP, "noise-arm")],
        exit: 0,
        key: /^\| Spider \|/,
        keyFile: () => join(TMP, "noise-arm", "tables", "table5.md"),
        // Item 1: the initial failures' composition is the shared initial cache's, whatever the feedback said.
        check: () => {
          const row = (md: string) => md.split("\n").find((l) => l.startsWith("| Spider |"));
          return row(table5(join(TMP, "noise-arm"))) === row(table5(out("noise"))) ? null : `Table 5 of the noisy arm alone (${row(table5(join(TMP, "noise-arm")))}) differs from the study's (${row(table5(out("noise")))})`;
        },
        info: () => "Table 5 row equals the whole study's",
      },
    ],
  },
  {
    name: "five-way classifier",
    what: "merit_fine_types (examples/error-taxonomy.ts, a classify hook) beside merit and iterative; classify a predictions file with the hook",
    setup: () =>
      study(
        "fine-types",
        `  datasets: ["spider"],
  methods: ["iterative", "merit", "merit_fine_types"],
  seeds: [0],
  reference: "merit_fine_types",
  queries: 10,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 2,
  plugins: [${kit("examples/error-taxonomy.ts")}],
${SIM}`,
      ),
    steps: [
      { label: "study run", argv: () => studyRun("fine-types"), exit: 0, key: REPORT_DONE },
      {
        label: "audit; Table 5 header",
        argv: () => ["audit", join(runs("fine-types"), "spider", "merit_fine_types-s0")],
        exit: 0,
        key: /^\| Dataset/,
        keyFile: () => join(out("fine-types"), "tables", "table5.md"),
        check: () => (/merit_fine_types/.test(table5(out("fine-types"))) && /aggregation|join|filter|projection/i.test(table5(out("fine-types"))) ? null : "Table 5 does not show the classify hook's labels"),
      },
    ],
  },
  {
    name: "GeoQuery with hooks",
    what: "a plugin dataset `geoquery` ({ ...spider, name }: Spider's bundled files under another name; no GeoQuery data is bundled) run with memp_memory (hooks) and iterative",
    setup: () => {
      put(
        "geoquery/geoquery.ts",
        `import { registerDataset, spider } from ${kit("lib/plugin.ts")};
registerDataset({ ...spider, name: "geoquery", title: "GeoQuery (Spider's files)" });
`,
      );
      study(
        "geoquery",
        `  datasets: ["geoquery"],
  data: { geoquery: ${kit("data/spider")} },
  methods: ["iterative", "memp_memory"],
  seeds: [0],
  reference: "memp_memory",
  queries: 10,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 2,
  plugins: ["./geoquery.ts", ${kit("examples/memp-memory.ts")}],
${SIM}`,
      );
    },
    steps: [
      { label: "study run", argv: () => studyRun("geoquery"), exit: 0, key: REPORT_DONE },
      {
        label: "audit",
        argv: () => ["audit", join(runs("geoquery"), "geoquery", "memp_memory-s0"), "--plugin", join(TMP, "geoquery/geoquery.ts"), "--plugin", join(ROOT, "examples/memp-memory.ts")],
        exit: 0,
        key: /violation/i,
        check: () => {
          const init = readFileSync(join(runs("geoquery"), "initial", "geoquery.json"), "utf8");
          return init.includes("geoquery-test-suite-merit-v1") && !init.includes("spider-test-suite") ? null : "the GeoQuery initial cache does not carry its own protocol id";
        },
        info: () => "initial cache protocol geoquery-test-suite-merit-v1",
      },
    ],
  },
  {
    name: "peers, budget control, structured order",
    what: "merit, reasoning_bank, dynamic_cheatsheet, iterative and iterative_budget (an arm: K = 6 against 3) over seed 0 and the by_database order",
    setup: () =>
      study(
        "peers",
        `  datasets: ["spider"],
  methods: ["merit", "reasoning_bank", "dynamic_cheatsheet", "iterative", "iterative_budget"],
  arms: { iterative_budget: { method: "iterative", max_repair_steps: 6 } },
  orders: [0, "by_database"],
  reference: "merit",
  queries: 10,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 3,
${SIM}`,
      ),
    steps: [
      { label: "study plan", argv: () => studyPlan("peers"), exit: 0, key: /^runs: / },
      { label: "study run", argv: () => studyRun("peers"), exit: 0, key: REPORT_DONE },
      {
        label: "audit; peers table note",
        argv: () => ["audit", join(runs("peers"), "spider", "reasoning_bank-s0")],
        exit: 0,
        key: /Holm families/,
        keyFile: () => join(out("peers"), "tables", "peers.md"),
        check: () => (existsSync(join(out("peers"), "order-by_database", "tables", "table1.md")) ? null : "no report of the by_database order"),
      },
    ],
  },
  {
    name: "full-size power plan",
    what: "study plan of merit vs iterative and reasoning_bank on all of Spider dev, seeds 0-2, realModels(): with the test-suite databases absent (refused), then on the single databases",
    setup: () => {
      const body = (dbs: string) => `  datasets: ["spider"],
  methods: ["merit", "iterative", "reasoning_bank"],
  seeds: [0, 1, 2],
  reference: "merit",
  queries: null,
  models: realModels(),${dbs}`;
      study("power", body(""));
      study("power-single", body(`\n  databases: "single",`));
    },
    steps: [
      { label: "study plan (test-suite dbs absent)", argv: () => studyPlan("power"), exit: 2, key: /make data-spider/ },
      { label: "study plan (single dbs)", argv: () => studyPlan("power-single"), exit: 0, key: /^GPU time/ },
    ],
  },
  {
    name: "MemP-style memory",
    what: "memp_memory (examples/memp-memory.ts: procedures revised or retired) beside merit; report --diagnostics; audit",
    setup: () =>
      study(
        "memp",
        `  datasets: ["spider", "spider-dk"],
  methods: ["merit", "memp_memory"],
  seeds: [0],
  reference: "memp_memory",
  queries: 16,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 3,
  plugins: [${kit("examples/memp-memory.ts")}],
${SIM}`,
      ),
    steps: [
      { label: "study run --diagnostics", argv: () => studyRun("memp", ["--diagnostics"]), exit: 0, key: REPORT_DONE },
      { label: "audit", argv: () => ["audit", join(runs("memp"), "spider", "memp_memory-s0"), "--plugin", join(ROOT, "examples/memp-memory.ts")], exit: 0, key: /violation/i },
    ],
  },
  {
    name: "Mem0-style operations",
    what: "a hand-written plugin: ADD a fact per episode, UPDATE (supersedes) the fact of the same database, DELETE (retire) a fact an episode followed and still failed",
    setup: () => {
      put(
        "mem0/mem0.ts",
        `import { registerMethod, type NoteDraft } from ${kit("lib/plugin.ts")};
registerMethod({
  name: "mem0_ops",
  description: "Mem0-style operations: one fact per database, updated by later episodes, deleted when it misled",
  hooks: {
    memory: {
      name: "mem0_facts",
      heading: "FACTS FROM EARLIER EPISODES",
      write: (episode, _model, memory) => {
        const last = episode.attempts[episode.attempts.length - 1];
        const same = memory.filter((n) => n.key === episode.dbId);
        const followed = new Set(episode.retrieved.flat());
        const retire = episode.success ? [] : same.filter((n) => followed.has(n.note_id)).map((n) => n.note_id);
        const notes: NoteDraft[] = [];
        if (episode.success) {
          notes.push({ kind: "fact", key: episode.dbId, text: "On " + episode.dbId + ", this query was accepted: " + last.sql, polarity: "positive", supersedes: same.map((n) => n.note_id) });
        }
        return { notes, retire };
      },
      retrieve: (request, memory) => memory.filter((n) => n.key === request.dbId).map((note) => ({ note })),
    },
  },
});
`,
      );
      study(
        "mem0",
        `  datasets: ["spider"],
  methods: ["iterative", "mem0_ops"],
  orders: [0, "by_database"],
  reference: "mem0_ops",
  queries: 16,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 3,
  plugins: ["./mem0.ts"],
${SIM}`,
      );
    },
    steps: [
      { label: "study run", argv: () => studyRun("mem0", ["--diagnostics"]), exit: 0, key: REPORT_DONE },
      {
        label: "audit",
        argv: () => ["audit", join(runs("mem0"), "order-by_database", "spider", "mem0_ops-s0"), "--plugin", join(TMP, "mem0/mem0.ts")],
        exit: 0,
        key: /violation/i,
        check: () => {
          const lines = readFileSync(join(runs("mem0"), "order-by_database", "spider", "mem0_ops-s0", "trajectories.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
          const superseded = lines.flatMap((t) => (t.memory_writes ?? []).flatMap((n: { supersedes?: string[] }) => n.supersedes ?? [])).length;
          return superseded > 0 ? null : "no note superseded another: the UPDATE operation was never exercised";
        },
        info: () => {
          const lines = readFileSync(join(runs("mem0"), "order-by_database", "spider", "mem0_ops-s0", "trajectories.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
          const written = lines.reduce((n, t) => n + (t.memory_writes ?? []).length, 0);
          const superseding = lines.reduce((n, t) => n + (t.memory_writes ?? []).filter((w: { supersedes?: string[] }) => w.supersedes).length, 0);
          const retired = lines.reduce((n, t) => n + (t.memory_retires ?? []).length, 0);
          return `by_database run: ${written} facts written, ${superseding} of them updates, ${retired} notes left the memory`;
        },
      },
    ],
  },
  {
    name: "self-consistency",
    what: "self_consistency (examples/self-consistency.ts: a propose hook, 5 samples at T = 0.7 per repair step, execution-majority vote) beside iterative; study run; audit",
    setup: () =>
      study(
        "self-consistency",
        `  datasets: ["spider"],
  methods: ["iterative", "self_consistency"],
  seeds: [0],
  reference: "self_consistency",
  queries: 8,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 2,
  plugins: [${kit("examples/self-consistency.ts")}],
${SIM}`,
      ),
    steps: [
      { label: "study run", argv: () => studyRun("self-consistency"), exit: 0, key: REPORT_DONE },
      {
        label: "audit",
        argv: () => ["audit", join(runs("self-consistency"), "spider", "self_consistency-s0"), "--plugin", join(ROOT, "examples/self-consistency.ts")],
        exit: 0,
        key: /violation/i,
        check: () => {
          const lines = readFileSync(join(runs("self-consistency"), "spider", "self_consistency-s0", "trajectories.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
          const samples = lines.reduce((n, t) => n + t.call_kinds.filter((k: string) => k === "sample").length, 0);
          return samples > 0 ? null : "no sample call was made: the propose hook never ran";
        },
        info: () => {
          const lines = readFileSync(join(runs("self-consistency"), "spider", "self_consistency-s0", "trajectories.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
          const samples = lines.reduce((n, t) => n + t.call_kinds.filter((k: string) => k === "sample").length, 0);
          const executions = lines.reduce((n, t) => n + t.accounting.db_executions, 0);
          return `${samples} sample calls, ${executions} database executions`;
        },
      },
    ],
  },
  {
    name: "memory transfer",
    what: "memp_memory's Spider memory (the MemP situation's run) shown to a Spider-DK run, and MERIT's Spider entries to a Spider-DK MERIT run: merit run with config memory_source, then audit",
    setup: () => undefined,
    steps: [
      {
        label: "run (memory_source)",
        argv: () => {
          const config = JSON.parse(readFileSync(join(runs("memp"), "configs", "spider-dk.json"), "utf8"));
          config.memory_source = join(runs("memp"), "spider", "memp_memory-s0");
          const path = put("transfer/spider-dk.json", JSON.stringify(config, null, 2));
          return ["run", "--config", path, "--method", "memp_memory", "--seed", "0", "--plugin", join(ROOT, "examples/memp-memory.ts"), "--out", join(TMP, "transfer", "run"), "--engine", "simulated", "--allow-single-db"];
        },
        exit: 0,
        key: /EX|episodes|done/i,
        check: () => {
          const m = JSON.parse(readFileSync(join(TMP, "transfer", "run", "manifest.json"), "utf8"));
          return m.memory_source?.notes_shown > 0 ? null : `manifest memory_source shows no notes: ${JSON.stringify(m.memory_source)}`;
        },
        info: () => {
          const m = JSON.parse(readFileSync(join(TMP, "transfer", "run", "manifest.json"), "utf8")).memory_source;
          return `manifest memory_source: ${m.dataset} ${m.method}, ${m.notes_in_force} notes in force, ${m.notes_shown} shown`;
        },
      },
      { label: "audit", argv: () => ["audit", join(TMP, "transfer", "run"), "--plugin", join(ROOT, "examples/memp-memory.ts")], exit: 0, key: /violation/i },
      {
        label: "run merit (memory_source: MERIT's entries)",
        argv: () => {
          const config = JSON.parse(readFileSync(join(runs("memp"), "configs", "spider-dk.json"), "utf8"));
          config.memory_source = join(runs("memp"), "spider", "merit-s0");
          const path = put("transfer/spider-dk-merit.json", JSON.stringify(config, null, 2));
          return ["run", "--config", path, "--method", "merit", "--seed", "0", "--out", join(TMP, "transfer", "merit-run"), "--engine", "simulated", "--allow-single-db"];
        },
        exit: 0,
        key: /EX|episodes|done/i,
        check: () => {
          const m = JSON.parse(readFileSync(join(TMP, "transfer", "merit-run", "manifest.json"), "utf8"));
          return m.memory_source?.entries_shown > 0 ? null : `manifest memory_source shows no entries: ${JSON.stringify(m.memory_source)}`;
        },
        info: () => {
          const m = JSON.parse(readFileSync(join(TMP, "transfer", "merit-run", "manifest.json"), "utf8")).memory_source;
          return `manifest memory_source: ${m.dataset} ${m.method}, ${m.entries_in_force} entries, ${m.entries_shown} shown`;
        },
      },
      { label: "audit (merit)", argv: () => ["audit", join(TMP, "transfer", "merit-run")], exit: 0, key: /violation/i },
    ],
  },
  {
    name: "hand-written ReasoningBank",
    what: "a plugin re-implementing ReasoningBank (judge call, distill call, top-1 by question overlap) beside the kit's reasoning_bank",
    setup: () => {
      put(
        "rb/my-rb.ts",
        `import { registerMethod, type NoteDraft } from ${kit("lib/plugin.ts")};
const words = (t: string) => new Set(t.toLowerCase().match(/[a-z0-9]+/g) ?? []);
const overlap = (a: string, b: string) => { const x = words(a), y = words(b); const s = [...x].filter((w) => y.has(w)).length; return s / Math.max(1, x.size + y.size - s); };
registerMethod({
  name: "my_reasoning_bank",
  description: "ReasoningBank by hand: the model judges the episode, distills items, the items of the most similar earlier question are shown",
  hooks: {
    calls: { judge: { most: 1 }, distill: { most: 1 } },
    memory: {
      name: "my_rb_items",
      heading: "MEMORY ITEMS",
      write: async (episode, model) => {
        const last = episode.attempts[episode.attempts.length - 1];
        const verdict = await model.generate("judge", "Question: " + episode.question + "\\nSQL: " + last.sql + "\\nDid this SQL answer the question? Reply Success or Failure.");
        const success = /success/i.test(verdict);
        const items = await model.generate("distill", "Question: " + episode.question + "\\nSQL: " + last.sql + "\\nThe attempt was judged a " + (success ? "success" : "failure") + ". Write up to 3 memory items, one per line.");
        const notes: NoteDraft[] = items.split("\\n").map((l) => l.trim()).filter((l) => l !== "").slice(0, 3).map((text) => ({ kind: success ? "strategy" : "pitfall", text, key: episode.question, polarity: success ? "positive" : "negative" }));
        return { notes, verdict: success };
      },
      retrieve: (request, memory) => {
        let best = "";
        let score = -1;
        for (const n of memory) { const s = overlap(request.question, n.key); if (s > score) { score = s; best = n.key; } }
        return memory.filter((n) => n.key === best).map((note) => ({ note, score }));
      },
    },
  },
});
`,
      );
      study(
        "rb",
        `  datasets: ["spider"],
  methods: ["reasoning_bank", "my_reasoning_bank"],
  seeds: [0],
  reference: "my_reasoning_bank",
  queries: 10,
  subset: { rule: "initially_failed", initially_correct: 2 },
  max_repair_steps: 2,
  plugins: ["./my-rb.ts"],
${SIM}`,
      );
    },
    steps: [
      { label: "study plan", argv: () => studyPlan("rb"), exit: 0, key: /^most model calls/ },
      { label: "study run", argv: () => studyRun("rb"), exit: 0, key: REPORT_DONE },
      { label: "audit", argv: () => ["audit", join(runs("rb"), "spider", "my_reasoning_bank-s0"), "--plugin", join(TMP, "rb/my-rb.ts")], exit: 0, key: /violation/i },
    ],
  },
];

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\s+/g, " ").slice(0, 360);
console.log(`Follow-up situations (issue 39): ${new Date().toISOString().slice(0, 16)} UTC, Node ${process.version}, load average ${readLoad()}, temporary folder ${keep ? TMP : "(removed at the end)"}`);
console.log("");
console.log("| situation | commands: exit (s) | key lines | outcome |");
console.log("| --- | --- | --- | --- |");
let held = 0;
let failed = 0;
const problems: string[] = [];
for (const s of situations) {
  if (only && !only.has(s.name)) continue;
  const outcomes: Outcome[] = [];
  try {
    s.setup?.();
    for (const step of s.steps) {
      const o = run(step);
      outcomes.push(o);
      if (o.problem) break;
    }
  } catch (e) {
    outcomes.push({ label: "setup", code: null, seconds: 0, key: "", problem: `the situation's own code failed: ${(e as Error).message}` });
  }
  const bad = outcomes.find((o) => o.problem);
  if (bad) {
    failed++;
    problems.push(`${s.name}: ${bad.label}: ${bad.problem}`);
  } else held++;
  const commands = outcomes.map((o) => `${o.label}: ${o.code ?? "—"} (${o.seconds.toFixed(1)})`).join("; ");
  const keys = outcomes.map((o) => `${o.label}: ${cell(o.key)}`).join(" ⏐ ");
  console.log(`| ${s.name} | ${cell(commands)} | ${keys} | ${bad ? "**FAILED**" : "as expected"} |`);
}
console.log("");
for (const p of problems) console.log(`FAILED ${cell(p)}`);
console.log(`${held} held, ${failed} failed (load average ${readLoad()})`);
if (!keep) rmSync(TMP, { recursive: true, force: true });
process.exit(failed === 0 ? 0 : 1);

function readLoad(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}
