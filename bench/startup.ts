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
 * `measureStartup` is the measurement (bench/cost.ts runs it too).
 * Run: npx tsx bench/startup.ts [--reps N] [--against DIR]   (default 7 reps)
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { COMMANDS } from "../lib/cli/index.ts";
import { buildLib, staleSources } from "../lib/compiled.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PATHS = { compiled: {}, tsx: { MERIT_TSX: "1" }, against: {} } as const;
export type StartupPath = keyof typeof PATHS;

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
  loadBefore: number;
  loadAfter: number;
  /** Lines about what was done first (the compiled tree brought up to date). */
  notes: string[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Whole-process wall times, round-robin over `node -e 1` and every invocation on every path, `reps`
 * rounds; the compiled tree is brought up to date first. `paths` defaults to compiled and tsx
 * (`against` is added with `against`).
 */
export async function measureStartup(opts: { reps: number; against?: string | null; paths?: StartupPath[] }): Promise<StartupResult> {
  const { reps } = opts;
  const against = opts.against ?? null;
  const notes: string[] = [];
  const stale = staleSources();
  if (stale === null || stale.changed.length > 0 || stale.removed.length > 0) notes.push(`compiled ${await buildLib(stale?.changed)} files of lib/ first`);
  const invocations: { name: string; argv: string[] }[] = [
    { name: "merit help", argv: ["help"] },
    ...Object.keys(COMMANDS).map((command) => ({ name: `merit ${command} --help`, argv: [command, "--help"] })),
  ];
  const paths = (opts.paths ?? (["compiled", "tsx", "against"] as StartupPath[])).filter((path) => path !== "against" || against !== null);
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
  delete baseEnv.MERIT_TSX;
  const times = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const loadBefore = loadavg()[0];
  for (let rep = 0; rep < reps; rep++) {
    for (const c of contenders) {
      const env = { ...baseEnv, ...(c.path ? PATHS[c.path] : {}) };
      const start = process.hrtime.bigint();
      const r = spawnSync(process.execPath, c.argv, { cwd: c.cwd, env, stdio: ["ignore", "ignore", "pipe"] });
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr.toString().split("\n")[0]}`);
      times.get(c.name)!.push(seconds);
    }
  }
  const medians = new Map(invocations.map((i) => [i.name, new Map(paths.map((path) => [path, median(times.get(`${i.name} (${path})`)!)]))]));
  return { reps, paths, invocations: invocations.map((i) => i.name), base: median(times.get("node -e 1")!), medians, loadBefore, loadAfter: loadavg()[0], notes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repsFlag = process.argv.indexOf("--reps");
  const REPS = repsFlag > 0 ? Number(process.argv[repsFlag + 1]) : 7;
  if (!Number.isInteger(REPS) || REPS < 1) throw new Error("--reps must be a positive integer");
  const againstFlag = process.argv.indexOf("--against");
  const AGAINST = againstFlag > 0 ? resolve(process.argv[againstFlag + 1]) : null;
  const r = await measureStartup({ reps: REPS, against: AGAINST });
  for (const line of r.notes) console.log(line);
  console.log(`start-up, whole process, median of ${REPS} (alternating); load average ${r.loadBefore.toFixed(2)} before, ${r.loadAfter.toFixed(2)} after`);
  console.log(`node -e 1: ${r.base.toFixed(3)} s`);
  if (AGAINST !== null) console.log(`against: ${AGAINST}`);
  console.log(`| process | ${r.paths.map((h) => `${h} s | over node -e 1`).join(" | ")} | compiled ≤ 0.3 s over? |`);
  console.log(`| --- | ${r.paths.map(() => "--- | ---").join(" | ")} | --- |`);
  for (const name of r.invocations) {
    const medians = r.paths.map((path) => r.medians.get(name)!.get(path)!);
    console.log(`| ${name} | ${medians.map((m) => `${m.toFixed(3)} | ${(m - r.base).toFixed(3)}`).join(" | ")} | ${medians[0] - r.base <= 0.3 ? "yes" : "no"} |`);
  }
}
