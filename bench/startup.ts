/**
 * Benchmark, start-up of every `merit` command (issue 22 §2, re-measured for issue 30 §1's one load
 * path): the wall time of a whole process `node lib/bin.mjs <command> --help` (the command's module
 * graph is imported, nothing runs), `merit help`, and the baseline `node -e 1`, measured alternately
 * in one run (round-robin over the contenders, so machine load hits all alike). The commands are
 * lib/cli/index.ts COMMANDS. Each runs twice per round from this checkout: as `merit` runs (Node's
 * compile cache on, warm after the first round: lib/bin.mjs) and with NODE_DISABLE_COMPILE_CACHE=1
 * (every module stripped and compiled again, as on a first run). `--against DIR` adds a column: the same processes of another
 * checkout (e.g. the commit before, a `git worktree` with node_modules linked), run from DIR the way
 * it runs them, alternated with this checkout's process by process (farm-style A/B). Prints each
 * median, its excess over `node -e 1`, and the load (/proc/loadavg) before and after.
 * Target: ≤ 0.3 s over `node -e 1` for every command. Never asserted by tests.
 * `measureStartup` is the measurement (bench/cost.ts runs it too).
 * Run: node bench/startup.ts [--reps N] [--against DIR]   (default 7 reps, at least 5 advised)
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { COMMANDS } from "../lib/cli/index.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** "now": this checkout; "uncached": the same with Node's compile cache off; "against": the checkout of `--against DIR`. */
export type StartupPath = "now" | "uncached" | "against";
const PATH_ENV: Record<StartupPath, NodeJS.ProcessEnv> = { now: {}, uncached: { NODE_DISABLE_COMPILE_CACHE: "1" }, against: {} };

/** Medians of one start-up run: `node -e 1`, and each invocation on each path. */
export interface StartupResult {
  reps: number;
  paths: StartupPath[];
  /** `merit help`, then `merit <command> --help` for every command. */
  invocations: string[];
  /** Median seconds of `node -e 1`. */
  base: number;
  /** Median seconds by invocation, then path. */
  medians: Map<string, Map<StartupPath, number>>;
  /** /proc/loadavg before and after the run (os.loadavg where there is none). */
  loadBefore: string;
  loadAfter: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The machine's load: /proc/loadavg's line (1, 5, 15 min averages, running/all tasks, last pid). */
export function procLoad(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").trim();
  } catch {
    return loadavg().map((x) => x.toFixed(2)).join(" ");
  }
}

/**
 * Whole-process wall times, round-robin over `node -e 1` and every invocation on every path (this
 * checkout, and `against` when given), `reps` rounds.
 */
export async function measureStartup(opts: { reps: number; against?: string | null; paths?: StartupPath[] }): Promise<StartupResult> {
  const { reps } = opts;
  const against = opts.against ?? null;
  const invocations: { name: string; argv: string[] }[] = [
    { name: "merit help", argv: ["help"] },
    ...Object.keys(COMMANDS).map((command) => ({ name: `merit ${command} --help`, argv: [command, "--help"] })),
  ];
  const paths = (opts.paths ?? (["now", "uncached", "against"] as StartupPath[])).filter((path) => path !== "against" || against !== null);
  const contenders: { name: string; path?: StartupPath; argv: string[]; cwd: string }[] = [
    { name: "node -e 1", argv: ["-e", "1"], cwd: ROOT },
    ...invocations.flatMap((i) =>
      paths.map((path) => {
        const cwd = path === "against" ? against! : ROOT;
        return { name: `${i.name} (${path})`, path, argv: [join(cwd, "lib/bin.mjs"), ...i.argv], cwd };
      }),
    ),
  ];
  const baseEnv: NodeJS.ProcessEnv = { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true", NO_COLOR: "1" };
  for (const name of ["MERIT_TSX", "MERIT_BUNDLE", "NODE_DISABLE_COMPILE_CACHE"]) delete baseEnv[name]; // MERIT_*: the old checkout's switches (its default path)
  const times = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const loadBefore = procLoad();
  for (let rep = 0; rep < reps; rep++) {
    for (const c of contenders) {
      const start = process.hrtime.bigint();
      const env = { ...baseEnv, ...(c.path ? PATH_ENV[c.path] : {}) };
      const r = spawnSync(process.execPath, c.argv, { cwd: c.cwd, env, stdio: ["ignore", "ignore", "pipe"] });
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr.toString().split("\n")[0]}`);
      times.get(c.name)!.push(seconds);
    }
  }
  const medians = new Map(invocations.map((i) => [i.name, new Map(paths.map((path) => [path, median(times.get(`${i.name} (${path})`)!)]))]));
  return { reps, paths, invocations: invocations.map((i) => i.name), base: median(times.get("node -e 1")!), medians, loadBefore, loadAfter: procLoad() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repsFlag = process.argv.indexOf("--reps");
  const REPS = repsFlag > 0 ? Number(process.argv[repsFlag + 1]) : 7;
  if (!Number.isInteger(REPS) || REPS < 1) throw new Error("--reps must be a positive integer");
  const againstFlag = process.argv.indexOf("--against");
  const AGAINST = againstFlag > 0 ? resolve(process.argv[againstFlag + 1]) : null;
  const r = await measureStartup({ reps: REPS, against: AGAINST });
  console.log(`start-up, whole process, median of ${REPS} (alternating${AGAINST !== null ? ", this checkout and --against process by process" : ""}); node ${process.version}`);
  console.log(`/proc/loadavg before: ${r.loadBefore}; after: ${r.loadAfter}`);
  console.log(`node -e 1: ${r.base.toFixed(3)} s`);
  if (AGAINST !== null) console.log(`against: ${AGAINST}`);
  const label = (path: StartupPath) => ({ now: "this checkout", uncached: "compile cache off", against: "--against" })[path];
  console.log(`| process | ${r.paths.map((h) => `${label(h)} s | over node -e 1`).join(" | ")} | ≤ 0.3 s over? |`);
  console.log(`| --- | ${r.paths.map(() => "--- | ---").join(" | ")} | --- |`);
  for (const name of r.invocations) {
    const medians = r.paths.map((path) => r.medians.get(name)!.get(path)!);
    console.log(`| ${name} | ${medians.map((m) => `${m.toFixed(3)} | ${(m - r.base).toFixed(3)}`).join(" | ")} | ${medians[0] - r.base <= 0.3 ? "yes" : `no (+${(medians[0] - r.base - 0.3).toFixed(3)})`} |`);
  }
}
