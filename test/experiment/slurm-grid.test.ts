// SLOW: starts a real single-node Slurm cluster; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// The Slurm array of docs/guides/slurm.md (scripts/slurm/grid.sbatch) on a real single-node Slurm cluster
// (test/helpers/slurm.ts; issue 23 §1): a 4-task array over the tiny models (iterative, merit × stream
// seeds 0, 1; one stream per task), one task cancelled mid-run with scancel and requeued, then
// `merit cache merge` of the tasks' caches and `merit report`. The run directories, the merged call
// cache and the report equal the one-process grid's byte for byte (manifest timestamps aside): the
// requeued task resumed where it was cancelled and no call is missing or extra. Then the servers
// form: two CPU llama-servers (tiny GGUF, 127.0.0.1) started as a Slurm array by
// scripts/slurm/servers.sbatch, and a 2-task grid.sbatch whose base_urls come from their URL files,
// writing the in-process grid's run files. Skips with one line where Slurm is not installed (never in
// CI); the servers test also where llama-server is not built.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheCommand } from "../../lib/cli/cache.ts";
import { reportCommand } from "../../lib/cli/report.ts";
import { gridCommand } from "../../lib/cli/run.ts";
import { REPO, SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN, writeLlama3InitialCache } from "../helpers/run-fixture.ts";
import { cacheRows, snapshot } from "../helpers/run-snapshot.ts";
import { LLAMA_SERVER_SKIP, llamaServerBinary } from "../helpers/llama-server.ts";
import { SLURM_SKIP, startSlurmCluster, type SlurmCluster } from "../helpers/slurm.ts";
import { budget } from "../helpers/budget.ts";

const SCRIPT = join(REPO, "scripts", "slurm", "grid.sbatch");
const METHODS = "iterative,merit";
const SEEDS = "0,1";
// merit grid's stream order (methods × seeds); task i of 4 runs stream i.
const STREAMS = ["iterative-s0", "iterative-s1", "merit-s0", "merit-s1"];
// Long enough that the cancelled stream is still running when the signal lands: on an idle machine
// the slow episodes of iterative-s1 (3 model calls, 64-token outputs) take a few hundred ms each
// (with 16-token outputs and --limit 5, ~50 ms: the stream sometimes finished first).
const LIMIT = "8";
const PREEMPTED = 1;

function sink() {
  const lines: string[] = [];
  return { lines, io: { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) } };
}

async function freePorts(): Promise<number> {
  // Two consecutive free ports on loopback (servers.sbatch listens at MERIT_SERVER_PORT + task).
  const free = (port: number) => new Promise<boolean>((resolve) => {
    const probe = createServer().once("error", () => resolve(false)).listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
  for (let tries = 0; tries < 50; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    if ((await free(port)) && (await free(port + 1))) return port;
  }
  throw new Error("no two consecutive free ports on 127.0.0.1");
}

function lineCount(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "").length : 0;
}

/** A folder's files (snapshot) with `dir` written as <dir>, for reports that name their inputs. */
function reportSnapshot(dir: string, runs: string): Map<string, string> {
  return new Map([...snapshot(dir)].map(([file, text]) => [file, text.split(runs).join("<runs>")]));
}

describe("the sbatch script of docs/guides/slurm.md", () => {
  it("is the file the page quotes", () => {
    const page = readFileSync(join(REPO, "docs", "guides", "slurm.md"), "utf8");
    const block = /```bash\n(#!\/bin\/bash\n# One `merit grid` as a Slurm array[\s\S]*?)```/.exec(page);
    expect(block, "docs/guides/slurm.md quotes scripts/slurm/grid.sbatch in a ```bash block").not.toBeNull();
    expect(block![1]).toBe(readFileSync(SCRIPT, "utf8"));
  });
});

describe.skipIf(SLURM_SKIP !== null)("scripts/slurm/grid.sbatch on a real Slurm cluster", () => {
  let cluster: SlurmCluster;
  let root: string;
  let config: string;
  let base: Record<string, unknown>;
  const nodeCache = () => join(root, "node-local", "calls.sqlite");

  beforeAll(async () => {
    root = tempDir("slurm-grid");
    cluster = await startSlurmCluster();
    const initialCache = join(root, "initial.json");
    await writeLlama3InitialCache(initialCache);
    config = join(root, "config.json");
    // The call cache stands for a node-local disk: the same path for the one-process grid and every task.
    base = { dataset: "spider", data_dir: SPIDER_DIR, initial_cache: initialCache, call_cache: nodeCache(), protocol: "merit", max_repair_steps: 2, decoding: { max_output_tokens: 64 }, model: { backend: "llama", path: TINY_QWEN, threads: 1 }, embedder: { backend: "llama", path: TINY_BGE } };
    writeFileSync(config, JSON.stringify(base, null, 2));
    const whole = sink();
    expect(await gridCommand.run(["--config", config, "--methods", METHODS, "--seeds", SEEDS, "--limit", LIMIT, "--out", join(root, "whole")], whole.io), whole.lines.join("\n")).toBe(0);
    renameSync(nodeCache(), join(root, "whole.sqlite"));
  }, budget(240_000));
  afterAll(async () => {
    await cluster?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  }, budget(120_000));

  it("a 4-task array with one task cancelled and requeued merges into the one-process grid, byte for byte", async () => {
    const out = join(root, "array");
    const caches = join(root, "caches");
    const log = (task: number) => join(root, `task-${task}.log`);
    const env = { MERIT_CONFIG: config, MERIT_METHODS: METHODS, MERIT_SEEDS: SEEDS, MERIT_OUT: out, MERIT_CACHES: caches, MERIT_GRID_ARGS: `--limit ${LIMIT}`, MERIT_THREADS: "1" };
    // This machine has no GPUs and few cores: the command line overrides the script's #SBATCH lines.
    const job = cluster.sbatch(["--array=0-3", "--gres=none", "--cpus-per-task=1", `--output=${join(root, "task-%a.log")}`, SCRIPT], { cwd: REPO, env });
    const preempted = `${job}_${PREEMPTED}`;
    const trajectories = join(out, STREAMS[PREEMPTED], "trajectories.jsonl");

    // Cancel the task once its stream has committed an episode, then requeue it (what preemption with
    // PreemptMode=REQUEUE does in one step); Slurm holds a requeued job for its requeue delay, which
    // StartTime=now skips.
    const deadline = Date.now() + budget(150_000);
    while (lineCount(trajectories) < 1) {
      if (Date.now() > deadline) throw new Error(`${trajectories} has no episode after 150 s\n${cluster.logs()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    cluster.client("scancel", [preempted]);
    const cancelledAt = lineCount(trajectories);
    const task = () => cluster.tasks(preempted)[0];
    while (task()?.state !== "CANCELLED") {
      if (Date.now() > deadline) throw new Error(`task ${preempted} is ${task()?.state}, not CANCELLED\n${cluster.logs()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Slurm reports CANCELLED as soon as it signals the task; the script's trap may still be saving
    // its calls (the cache merge line): wait for the first attempt's log to say so before requeueing.
    const saved = `merged 1 cache(s) into ${join(caches, `cache-${PREEMPTED}.sqlite`)}`;
    let firstAttempt = readFileSync(log(PREEMPTED), "utf8");
    while (!firstAttempt.includes(saved) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      firstAttempt = readFileSync(log(PREEMPTED), "utf8");
    }
    cluster.client("scontrol", ["requeue", preempted]);
    cluster.client("scontrol", ["update", `JobId=${preempted}`, "StartTime=now"]);
    const tasks = await cluster.waitForJob(job, budget(200_000));
    const logs = [0, 1, 2, 3].map((i) => readFileSync(log(i), "utf8"));
    for (const t of tasks) expect([t.state, t.exitCode], `task ${t.arrayTaskId}:\n${logs[Number(t.arrayTaskId)]}`).toEqual(["COMPLETED", "0:0"]);
    expect(tasks.map((t) => [t.arrayTaskId, t.restarts]).sort(), logs.join("\n")).toEqual([["0", 0], ["1", 1], ["2", 0], ["3", 0]]);

    // The cancelled attempt stopped mid-stream and saved its calls; the requeued one resumed there.
    const why = `cancelled at ${cancelledAt} episode(s); task ${PREEMPTED}'s log:\n${logs[PREEMPTED]}`;
    expect(cancelledAt, why).toBeGreaterThanOrEqual(1);
    expect(cancelledAt, `cancelled before the stream finished: ${why}`).toBeLessThan(Number(LIMIT));
    expect(firstAttempt, why).toMatch(/CANCELLED AT/);
    expect(firstAttempt, why).toContain(saved);
    const second = logs[PREEMPTED].slice(firstAttempt.length);
    const resumed = new RegExp(`resuming (\\S+) at stream position (\\d+)/${LIMIT}`).exec(second);
    expect(resumed?.[1], why).toBe(join(out, STREAMS[PREEMPTED]));
    expect(Number(resumed?.[2]), why).toBeGreaterThanOrEqual(cancelledAt);
    for (const [i, text] of logs.entries()) expect(text, `task ${i}`).toContain(`shard ${i}/4: 1 of 4 stream(s)`);

    // merit cache merge of the tasks' caches: exactly the one-process grid's calls, none missing or extra.
    const merged = join(root, "merged.sqlite");
    const m = sink();
    expect(await cacheCommand.run(["merge", ...[0, 1, 2, 3].map((i) => join(caches, `cache-${i}.sqlite`)), "--into", merged], m.io), m.lines.join("\n")).toBe(0);
    const wholeRows = cacheRows(join(root, "whole.sqlite"));
    expect(wholeRows.length).toBeGreaterThan(0);
    expect(cacheRows(merged)).toEqual(wholeRows);

    // The run directories and the report equal the one-process grid's.
    expect(readdirSync(out).sort()).toEqual(STREAMS);
    const a = snapshot(join(root, "whole"));
    const b = snapshot(out);
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [file, text] of a) expect(b.get(file), file).toBe(text);
    const reports: Array<Map<string, string>> = [];
    for (const runs of [join(root, "whole"), out]) {
      const dir = `${runs}-report`;
      mkdirSync(dir);
      const r = sink();
      expect(await reportCommand.run([runs, "--out", dir, "--resamples", "200"], r.io), r.lines.join("\n")).toBe(0);
      reports.push(reportSnapshot(dir, runs));
    }
    expect([...reports[1].keys()]).toEqual([...reports[0].keys()]);
    for (const [file, text] of reports[0]) expect(reports[1].get(file), file).toBe(text);
  }, budget(300_000));

  it.skipIf(LLAMA_SERVER_SKIP !== null)("the grid calls llama-servers started as Slurm jobs (scripts/slurm/servers.sbatch) and writes the in-process grid's runs", async () => {
    const port = await freePorts();
    const servers = join(root, "servers");
    // The servers and the grid share the node's cores (partition shared): they mostly wait on each other.
    const onNode = ["--partition=shared", "--gres=none", "--cpus-per-task=1"];
    const serverJob = cluster.sbatch([...onNode, "--array=0-1", "--time=10", `--output=${join(root, "server-%a.log")}`, join(REPO, "scripts", "slurm", "servers.sbatch")], {
      cwd: REPO,
      env: {
        MERIT_SERVER_MODEL: TINY_QWEN, MERIT_SERVERS: servers, MERIT_SERVER_HOST: "127.0.0.1", MERIT_SERVER_PORT: String(port), MERIT_LLAMA_SERVER: llamaServerBinary()!,
        MERIT_SERVER_ARGS: "-fa off -t 1 -tb 1 -ngl 0 -np 2 --no-kv-unified -c 9216 --cache-ram 0 --no-webui --no-warmup",
      },
    });
    const served = join(root, "served");
    const caches = join(root, "served-caches");
    const openaiConfig = join(root, "openai.json");
    writeFileSync(openaiConfig, JSON.stringify({ ...base, call_cache: join(root, "node-local-openai", "calls.sqlite"), model: { backend: "openai", engine: "llama.cpp", path: TINY_QWEN, requests_per_url: 2 } }, null, 2));
    const gridJob = cluster.sbatch([...onNode, "--array=0-1", `--dependency=after:${serverJob}`, `--output=${join(root, "served-%a.log")}`, SCRIPT], {
      cwd: REPO,
      env: { MERIT_CONFIG: openaiConfig, MERIT_METHODS: METHODS, MERIT_SEEDS: SEEDS, MERIT_OUT: served, MERIT_CACHES: caches, MERIT_GRID_ARGS: `--limit ${LIMIT}`, MERIT_THREADS: "1", MERIT_BASE_URLS_FROM: servers, MERIT_SERVER_COUNT: "2", MERIT_SERVER_WAIT: "120" },
    });
    const serverLogs = () => [0, 1].map((i) => (existsSync(join(root, `server-${i}.log`)) ? readFileSync(join(root, `server-${i}.log`), "utf8").slice(-3000) : "")).join("\n");
    const gridTasks = await cluster.waitForJob(gridJob, budget(200_000));
    const logs = [0, 1].map((i) => readFileSync(join(root, `served-${i}.log`), "utf8"));
    for (const t of gridTasks) expect([t.state, t.exitCode], `task ${t.arrayTaskId}:\n${logs[Number(t.arrayTaskId)]}\n${serverLogs()}`).toEqual(["COMPLETED", "0:0"]);
    const urls = [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`];
    expect(readdirSync(servers).sort()).toEqual(["server-0.url", "server-1.url"]);
    cluster.client("scancel", [serverJob]);
    const serverTasks = await cluster.waitForJob(serverJob, budget(60_000));
    expect(serverTasks.map((t) => t.state)).toEqual(["CANCELLED", "CANCELLED"]);
    expect(readdirSync(servers), "the servers removed their URL files").toEqual([]);

    // Every stream's run files equal the in-process grid's; the identity differs only in model (backend, base_urls).
    expect(readdirSync(served).sort()).toEqual(STREAMS);
    const a = snapshot(join(root, "whole"));
    const b = snapshot(served);
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [file, text] of a) {
      if (/(^|\/)(config|manifest)\.json$/.test(file)) continue;
      expect(b.get(file), file).toBe(text);
    }
    for (const stream of STREAMS) {
      const run = JSON.parse(readFileSync(join(served, stream, "config.json"), "utf8"));
      const local = JSON.parse(readFileSync(join(root, "whole", stream, "config.json"), "utf8"));
      expect(run.config.model.base_urls).toEqual(urls);
      expect({ ...run.config, model: null, call_cache: null }).toEqual({ ...local.config, model: null, call_cache: null });
    }
    // The merged cache holds each call of the in-process grid once (other keys: the backend is part of them).
    const merged = join(root, "served.sqlite");
    const m = sink();
    expect(await cacheCommand.run(["merge", join(caches, "cache-0.sqlite"), join(caches, "cache-1.sqlite"), "--into", merged], m.io), m.lines.join("\n")).toBe(0);
    const texts = (rows: string[]) => rows.map((r) => JSON.parse(r) as Record<string, unknown>).map((r) => JSON.stringify([r.text, r.prompt_tokens, r.output_tokens])).sort();
    expect(texts(cacheRows(merged))).toEqual(texts(cacheRows(join(root, "whole.sqlite"))));
  }, budget(300_000));
});
