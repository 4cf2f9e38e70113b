/**
 * A real single-node Slurm cluster for tests (issue 23 §1): munged, slurmctld and slurmd from Debian's
 * packages (slurm-wlm, munge), started as this user with everything of theirs in one temp folder —
 * a generated munge key and munged's own socket (a system munged is left alone), a generated
 * `slurm.conf` (this machine's cores, controller and node on 127.0.0.1 at free ports, no cgroups,
 * no accounting; partition `test`, the default, and `shared`, up to 4 jobs per core), state, spool,
 * logs and PID files. `stop()` cancels the cluster's jobs, ends each daemon by its PID and removes
 * the folder; it is safe to call twice. Tests skip with `SLURM_SKIP` when the binaries are absent or the tests do not run as root,
 * except in CI (`CI` set), where missing binaries are an error (CI runs as root).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, hostname, tmpdir, userInfo } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "./llama-server.ts";
import { budget } from "./budget.ts";

const BINARIES = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo"];

function locate(name: string): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/sbin", "/usr/bin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return null;
}

const missing = BINARIES.filter((b) => locate(b) === null);
/** Why the Slurm tests are skipped (null when every binary is there). */
export const SLURM_SKIP =
  missing.length > 0
    ? `Slurm is not installed (${missing.join(", ")} missing): apt-get install slurm-wlm munge to run the Slurm tests`
    : process.getuid?.() !== 0
      ? "the Slurm tests start slurmd and munged as root (SlurmUser=root): run them as root, as .ci/run does"
      : null;
if (SLURM_SKIP && process.env.CI) throw new Error(`${SLURM_SKIP} (.ci/run installs them; CI never skips these tests)`);
if (SLURM_SKIP) console.warn(`SKIPPED: ${SLURM_SKIP}`);

/** One array task (or plain job) as `scontrol show job` reports it. */
export interface SlurmTask {
  jobId: string;
  arrayTaskId: string | null;
  state: string;
  exitCode: string;
  restarts: number;
}

export interface SlurmCluster {
  /** The cluster's temp folder (slurm.conf, logs, munge). */
  dir: string;
  /** CPUs of the node (this machine's cores). */
  cpus: number;
  /** Environment for the client commands (SLURM_CONF); jobs inherit it through sbatch. */
  env: NodeJS.ProcessEnv;
  /** Runs a Slurm client command; throws with its output when it fails. */
  client(command: string, args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }): string;
  /** `sbatch --parsable ARGS`: the job id. */
  sbatch(args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }): string;
  /** Every task of a job that slurmctld still knows. */
  tasks(jobId: string): SlurmTask[];
  /** Waits until no task of the job is pending, running or completing; returns its tasks. */
  waitForJob(jobId: string, timeoutMs: number, poll?: () => void): Promise<SlurmTask[]>;
  /** The daemons' logs (for failure messages). */
  logs(): string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readPid(path: string): number | null {
  if (!existsSync(path)) return null;
  const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** Sends SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
async function endProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) process.kill(pid, "SIGKILL");
  while (alive(pid)) await sleep(50);
}

function run(binary: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): { status: number | null; out: string } {
  const r = spawnSync(locate(binary) ?? binary, args, { cwd: options.cwd, env: options.env, encoding: "utf8", timeout: budget(60_000) });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

/** Parses `scontrol -o show job` output (one line per task). */
function parseTasks(text: string): SlurmTask[] {
  return text.split("\n").filter((l) => l.includes("JobId=")).map((line) => {
    const field = (name: string) => new RegExp(`(?:^| )${name}=(\\S*)`).exec(line)?.[1] ?? "";
    return { jobId: field("JobId"), arrayTaskId: field("ArrayTaskId") || null, state: field("JobState"), exitCode: field("ExitCode"), restarts: Number(field("Restarts") || 0) };
  });
}

/** Starts munged, slurmctld and slurmd and waits until the node is idle. */
export async function startSlurmCluster(): Promise<SlurmCluster> {
  if (SLURM_SKIP) throw new Error(SLURM_SKIP);
  const dir = mkdtempSync(join(tmpdir(), "merit-slurm-"));
  const node = hostname().split(".")[0];
  const cpus = availableParallelism();
  const munge = join(dir, "munge");
  for (const d of ["munge", "state", "spool", "log"]) mkdirSync(join(dir, d));
  chmodSync(munge, 0o700);
  const key = join(munge, "munge.key");
  writeFileSync(key, randomBytes(1024), { mode: 0o400 });
  const socket = join(munge, "munge.socket");
  const pidFiles = { munged: join(munge, "munged.pid"), slurmctld: join(dir, "slurmctld.pid"), slurmd: join(dir, "slurmd.pid") };
  const logFiles = [join(munge, "munged.log"), join(dir, "log", "slurmctld.log"), join(dir, "log", "slurmd.log")];
  const conf = join(dir, "slurm.conf");
  const env: NodeJS.ProcessEnv = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SLURM_"))), SLURM_CONF: conf };
  const logs = () => logFiles.filter(existsSync).map((f) => `== ${f}\n${readFileSync(f, "utf8").slice(-4000)}`).join("\n");
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Jobs first (their slurmstepd outlive slurmd), then the daemons, each by its PID.
    if (alive(readPid(pidFiles.slurmctld) ?? -1)) {
      run("scancel", ["--full", "--user", String(process.getuid?.() ?? 0)], { env });
      const deadline = Date.now() + budget(40_000);
      while (Date.now() < deadline && run("squeue", ["-h", "-o", "%i"], { env }).out.trim() !== "") await sleep(200);
    }
    for (const name of ["slurmd", "slurmctld", "munged"] as const) {
      const pid = readPid(pidFiles[name]);
      if (pid !== null) await endProcess(pid);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const m = run("munged", ["--force", `--socket=${socket}`, `--key-file=${key}`, `--pid-file=${pidFiles.munged}`, `--log-file=${logFiles[0]}`, `--seed-file=${join(munge, "munged.seed")}`]);
    if (m.status !== 0) throw new Error(`munged did not start: ${m.out}`);
    const [ctldPort, dPort] = [await freePort(), await freePort()];
    writeFileSync(conf, [
      "ClusterName=merit-test",
      `SlurmctldHost=${node}(127.0.0.1)`,
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${dPort}`,
      `SlurmUser=${userInfo().username}`,
      "AuthType=auth/munge",
      "CredType=cred/munge",
      `AuthInfo=socket=${socket}`,
      "ProctrackType=proctrack/linuxproc",
      "TaskPlugin=task/none",
      "JobAcctGatherType=jobacct_gather/none",
      "AccountingStorageType=accounting_storage/none",
      "SelectType=select/cons_tres",
      "SelectTypeParameters=CR_Core",
      "SchedulerType=sched/backfill",
      "MpiDefault=none",
      "ReturnToService=2",
      "JobRequeue=1",
      "MinJobAge=3600",
      "KillWait=30",
      "SlurmdParameters=config_overrides",
      `StateSaveLocation=${join(dir, "state")}`,
      `SlurmdSpoolDir=${join(dir, "spool")}`,
      `SlurmctldPidFile=${pidFiles.slurmctld}`,
      `SlurmdPidFile=${pidFiles.slurmd}`,
      `SlurmctldLogFile=${logFiles[1]}`,
      `SlurmdLogFile=${logFiles[2]}`,
      `NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} State=UNKNOWN`,
      `PartitionName=test Nodes=${node} Default=YES MaxTime=INFINITE State=UP`,
      // Up to 4 jobs per core, for jobs that mostly wait (servers, grids calling them).
      `PartitionName=shared Nodes=${node} MaxTime=INFINITE State=UP OverSubscribe=FORCE:4`,
      "",
    ].join("\n"));
    for (const daemon of ["slurmctld", "slurmd"]) {
      const r = run(daemon, ["-f", conf], { env });
      if (r.status !== 0) throw new Error(`${daemon} did not start: ${r.out}\n${logs()}`);
    }
    const deadline = Date.now() + budget(60_000);
    for (;;) {
      const state = run("sinfo", ["-h", "-n", node, "-o", "%T"], { env }).out.trim();
      if (state === "idle") break;
      if (Date.now() > deadline) throw new Error(`the Slurm node is ${state || "unknown"}, not idle, after 60 s\n${logs()}`);
      await sleep(200);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const client = (command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) => {
    const r = run(command, args, { cwd: options.cwd, env: { ...env, ...options.env } });
    if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}): ${r.out}`);
    return r.out;
  };
  const tasks = (jobId: string) => parseTasks(run("scontrol", ["-o", "show", "job", jobId], { env }).out);
  return {
    dir,
    cpus,
    env,
    client,
    sbatch: (args, options) => client("sbatch", ["--parsable", ...args], options).trim().split(";")[0],
    tasks,
    async waitForJob(jobId, timeoutMs, poll) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        poll?.();
        const all = tasks(jobId);
        if (all.length > 0 && all.every((t) => !/^(PENDING|RUNNING|COMPLETING|CONFIGURING|REQUEUED|RESIZING|SUSPENDED)$/.test(t.state))) return all;
        if (Date.now() > deadline) throw new Error(`Slurm job ${jobId} not finished after ${timeoutMs / 1000} s: ${JSON.stringify(all)}\n${logs()}`);
        await sleep(200);
      }
    },
    logs,
    stop,
  };
}
