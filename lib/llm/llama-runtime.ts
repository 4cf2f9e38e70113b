/**
 * The node-llama-cpp runtime shared by the chat backend, the embedder and model checks (METHOD.md
 * §6.4): one `Llama` per GPU setting per process, prebuilt binaries only, explicit thread counts,
 * and llama.cpp's log lines routed to listeners so a failed load can name its real reason.
 *
 * Threads: node-llama-cpp's default (4 on a 2-core machine) is ~250× slower here (DESIGN.md §3), so
 * every context gets an explicit count: the `threads` option, else env `MERIT_THREADS`, else the
 * physical cores llama.cpp counts for math (`cpuMathCores`; the embedder) or, for the chat backend's
 * concurrently decoding contexts, the available cores divided among them (`chooseThreads`).
 * @module
 */
import os from "node:os";
import type { Llama, LlamaGpuType, LlamaLogLevel } from "node-llama-cpp";
import { MeritError, missingPackageError } from "../errors.ts";

/** `"auto"` picks CUDA/Vulkan/Metal when present, `false` forces CPU, or name one GPU type. */
export type GpuSetting = "auto" | LlamaGpuType;

/** One llama.cpp log line. */
export interface LlamaLogLine {
  level: LlamaLogLevel;
  message: string;
}

type LogListener = (line: LlamaLogLine) => void;
const listeners = new Set<LogListener>();
const runtimes = new Map<string, Promise<Llama>>();

/** Subscribes to llama.cpp log lines (warn and above); returns the unsubscribe function. */
export function onLlamaLog(listener: LogListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * A new `Llama`. node-llama-cpp is imported here, on first use, not with this module: it takes about
 * 0.5 s, which `merit help` and every command's start-up skip (issue 22 §2).
 */
async function startLlama(gpu: GpuSetting): Promise<Llama> {
  const { getLlama, LlamaLogLevel } = await import("node-llama-cpp").catch((error: unknown) => {
    throw missingPackageError(error) ?? error; // not installed: one line naming it and `npm ci`
  });
  return getLlama({
    gpu,
    // Never build llama.cpp from source or download it: the prebuilt binaries ship inside npm
    // packages (install with NODE_LLAMA_CPP_SKIP_DOWNLOAD=true, DESIGN.md §3).
    build: "never",
    skipDownload: true,
    progressLogs: false,
    // Contexts always pass `threads` explicitly; this cap only stops llama.cpp oversubscribing.
    maxThreads: os.cpus().length,
    logLevel: LlamaLogLevel.warn,
    logger: (level, message) => {
      for (const listener of listeners) listener({ level, message: message.trimEnd() });
    },
  });
}

/** The shared `Llama` for a GPU setting (created on first use, kept for the process lifetime). */
export function llamaRuntime(gpu: GpuSetting = false): Promise<Llama> {
  const key = String(gpu);
  let runtime = runtimes.get(key);
  if (!runtime) {
    runtime = startLlama(gpu).catch((error: unknown) => {
      runtimes.delete(key);
      if (error instanceof MeritError) throw error;
      throw new MeritError(
        `node-llama-cpp could not start with gpu=${key}: ${error instanceof Error ? error.message : String(error)}; ` +
          `reinstall with NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci (prebuilt binaries ship in @node-llama-cpp/* packages) or use gpu: false`,
        { cause: error },
      );
    });
    runtimes.set(key, runtime);
  }
  return runtime;
}

/**
 * Thread count for a context: explicit option, else env `MERIT_THREADS`, else physical math cores.
 * @throws MeritError when `MERIT_THREADS` is not a positive integer.
 */
export function resolveThreads(llama: Llama, explicit?: number): number {
  return explicitThreads(explicit) ?? Math.max(1, llama.cpuMathCores);
}

/** The `threads` option, else env `MERIT_THREADS`, else undefined. @throws MeritError on a bad value */
function explicitThreads(explicit?: number): number | undefined {
  if (explicit !== undefined) {
    if (!Number.isInteger(explicit) || explicit < 1) throw new MeritError(`threads must be a positive integer, got ${explicit}`);
    return explicit;
  }
  const fromEnv = process.env.MERIT_THREADS;
  if (fromEnv !== undefined && fromEnv !== "") {
    const n = Number(fromEnv);
    if (!Number.isInteger(n) || n < 1) throw new MeritError(`MERIT_THREADS must be a positive integer, got "${fromEnv}"; unset it or set e.g. MERIT_THREADS=2`);
    return n;
  }
  return undefined;
}

/** How many threads each context of a chat backend gets, and why. */
export interface ThreadChoice {
  threads: number;
  /** Contexts that decode at the same time (slots in deterministic mode, 1 in throughput mode). */
  contexts: number;
  /** Cores this process may use (`os.availableParallelism()`). */
  cores: number;
  source: "option" | "MERIT_THREADS" | "cores / contexts";
}

/**
 * Threads per context for `contexts` contexts decoding concurrently: the explicit option, else env
 * `MERIT_THREADS`, else ⌊available cores / contexts⌋ (at least 1), so by default contexts × threads
 * never exceeds the cores — llama.cpp's threads spin-wait for each other, and one oversubscribed
 * core collapses a context's speed (measured: 2 threads/context ~1 tok/s vs 1 thread ~7 tok/s on a
 * 2-core machine with another process busy). Outputs do not depend on the thread count.
 * @throws MeritError when `MERIT_THREADS` is not a positive integer.
 */
export function chooseThreads(contexts: number, explicit?: number, cores = os.availableParallelism()): ThreadChoice {
  const given = explicitThreads(explicit);
  if (given !== undefined) return { threads: given, contexts, cores, source: explicit !== undefined ? "option" : "MERIT_THREADS" };
  return { threads: Math.max(1, Math.floor(cores / Math.max(1, contexts))), contexts, cores, source: "cores / contexts" };
}

/** Waits until llama.cpp's asynchronously delivered log lines for a just-finished call have arrived. */
export async function drainLlamaLogs(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 15));
}
