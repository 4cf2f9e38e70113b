/**
 * Benchmark, start-up of every `merit` command (issue 22 §2): the wall time of a whole process
 * `node lib/bin.mjs <command> --help` (the command's module graph is imported, nothing runs),
 * `merit help`, and the baseline `node -e 1`, measured alternately in one run (round-robin over
 * the contenders, so machine load hits all alike). Prints each median, its excess over `node -e 1`
 * and the ratio. Target: ≤ 0.3 s over `node -e 1` for every command. Never asserted by tests.
 * Run: npx tsx bench/startup.ts [--reps N]   (default 7)
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { COMMANDS } from "../lib/cli/index.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const repsFlag = process.argv.indexOf("--reps");
const REPS = repsFlag > 0 ? Number(process.argv[repsFlag + 1]) : 7;
if (!Number.isInteger(REPS) || REPS < 1) throw new Error("--reps must be a positive integer");

const contenders: { name: string; argv: string[] }[] = [
  { name: "node -e 1", argv: ["-e", "1"] },
  { name: "merit help", argv: ["lib/bin.mjs", "help"] },
  ...Object.keys(COMMANDS).map((command) => ({ name: `merit ${command} --help`, argv: ["lib/bin.mjs", command, "--help"] })),
];

const env = { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true", NO_COLOR: "1" };
const times = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
const loadBefore = loadavg()[0];
for (let rep = 0; rep < REPS; rep++) {
  for (const c of contenders) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, c.argv, { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr.toString().split("\n")[0]}`);
    times.get(c.name)!.push(seconds);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times.get("node -e 1")!);
console.log(`start-up, whole process, median of ${REPS} (alternating); load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after`);
console.log("| process | median s | over node -e 1 (s) | ratio | ≤ 0.3 s over? |");
console.log("| --- | --- | --- | --- | --- |");
for (const c of contenders) {
  const m = median(times.get(c.name)!);
  const over = m - base;
  console.log(`| ${c.name} | ${m.toFixed(3)} | ${c.name === "node -e 1" ? "—" : over.toFixed(3)} | ${(m / base).toFixed(2)} | ${c.name === "node -e 1" ? "—" : over <= 0.3 ? "yes" : "no"} |`);
}
