/**
 * Benchmark, start-up of every `merit` command (issue 22 §2): the wall time of a whole process
 * `node lib/bin.mjs <command> --help` (the command's module graph is imported, nothing runs),
 * `merit help`, and the baseline `node -e 1`, measured alternately in one run (round-robin over
 * the contenders, so machine load hits all alike). Each merit process runs twice per round: from the
 * ahead-of-time compiled tree (.build/, lib/compiled.mjs; brought up to date first) and from the
 * sources through tsx (MERIT_TSX=1). Prints each median, its excess over `node -e 1` and the ratio.
 * `--against DIR` adds a third column: the same processes of another checkout (e.g. the commit
 * before, as `git archive` unpacked with node_modules linked), run from DIR the way it runs them.
 * Target: ≤ 0.3 s over `node -e 1` for every command (compiled). Never asserted by tests.
 * Run: npx tsx bench/startup.ts [--reps N] [--against DIR]   (default 7 reps)
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { COMMANDS } from "../lib/cli/index.ts";
import { buildLib, staleSources } from "../lib/compiled.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const repsFlag = process.argv.indexOf("--reps");
const REPS = repsFlag > 0 ? Number(process.argv[repsFlag + 1]) : 7;
if (!Number.isInteger(REPS) || REPS < 1) throw new Error("--reps must be a positive integer");
const againstFlag = process.argv.indexOf("--against");
const AGAINST = againstFlag > 0 ? resolve(process.argv[againstFlag + 1]) : null;

const stale = staleSources();
if (stale === null || stale.changed.length > 0 || stale.removed.length > 0) console.log(`compiled ${await buildLib(stale?.changed)} files of lib/ first`);

const invocations: { name: string; argv: string[] }[] = [
  { name: "merit help", argv: ["help"] },
  ...Object.keys(COMMANDS).map((command) => ({ name: `merit ${command} --help`, argv: [command, "--help"] })),
];
const PATHS = { compiled: {}, tsx: { MERIT_TSX: "1" }, against: {} } as const;
type Path = keyof typeof PATHS;
const paths = (Object.keys(PATHS) as Path[]).filter((path) => path !== "against" || AGAINST !== null);
const contenders: { name: string; path?: Path; argv: string[]; cwd: string }[] = [
  { name: "node -e 1", argv: ["-e", "1"], cwd: ROOT },
  ...invocations.flatMap((i) =>
    paths.map((path) => {
      const cwd = path === "against" ? AGAINST! : ROOT;
      return { name: `${i.name} (${path})`, path, argv: [join(cwd, "lib/bin.mjs"), ...i.argv], cwd };
    }),
  ),
];

const baseEnv: NodeJS.ProcessEnv = { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true", NO_COLOR: "1" };
delete baseEnv.MERIT_TSX;
const times = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
const loadBefore = loadavg()[0];
for (let rep = 0; rep < REPS; rep++) {
  for (const c of contenders) {
    const env = { ...baseEnv, ...(c.path ? PATHS[c.path] : {}) };
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, c.argv, { cwd: c.cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr.toString().split("\n")[0]}`);
    times.get(c.name)!.push(seconds);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times.get("node -e 1")!);
console.log(`start-up, whole process, median of ${REPS} (alternating); load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after`);
console.log(`node -e 1: ${base.toFixed(3)} s`);
if (AGAINST !== null) console.log(`against: ${AGAINST}`);
const heads = paths;
console.log(`| process | ${heads.map((h) => `${h} s | over node -e 1`).join(" | ")} | compiled ≤ 0.3 s over? |`);
console.log(`| --- | ${heads.map(() => "--- | ---").join(" | ")} | --- |`);
for (const i of invocations) {
  const medians = paths.map((path) => median(times.get(`${i.name} (${path})`)!));
  console.log(`| ${i.name} | ${medians.map((m) => `${m.toFixed(3)} | ${(m - base).toFixed(3)}`).join(" | ")} | ${medians[0] - base <= 0.3 ? "yes" : "no"} |`);
}
