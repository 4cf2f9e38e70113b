/**
 * Model-file diagnosis for the generation and embedding backends (METHOD.md §6.4): one clear line for
 * a missing file, a truncated copy, a non-GGUF file, or a GGUF that llama.cpp refuses to load (with
 * the reason llama.cpp logged), always naming the file and the fix (`make models`).
 * @module
 */
import { open, stat } from "node:fs/promises";
import type { Llama, LlamaModel, LlamaModelOptions } from "node-llama-cpp";
import { InputFileError } from "../errors.ts";
import { drainLlamaLogs, onLlamaLog } from "./llama-runtime.ts";

/** What is wrong with a model file; `ok` when it loads. */
export type ModelFileProblem = "ok" | "missing" | "not-gguf" | "truncated" | "load-failed";

export interface ModelFileCheck {
  path: string;
  problem: ModelFileProblem;
  /** One line: the file, what is wrong, and what to do. */
  message: string;
}

/** A model file that cannot be used; the message is the one line `checkModelFile` gives. */
export class ModelFileError extends InputFileError {
  readonly problem: Exclude<ModelFileProblem, "ok">;
  constructor(path: string, problem: Exclude<ModelFileProblem, "ok">, detail: string, cause?: unknown) {
    super(path, detail, FIX, cause);
    this.name = "ModelFileError";
    this.problem = problem;
  }
}

const FIX = "run `make models` (or `merit models download`) to fetch and verify it, see models/README.md";

/** [elements per block, bytes per block] of the GGML tensor types whose sizes are fixed (ggml.c type traits). */
const GGML_BLOCK: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 30: [1, 2],
};

/**
 * Checks a model file without trusting it: existence, GGUF magic, header, tensor data within the
 * file, then (unless `load: false`) a real llama.cpp load. Never throws for a bad file.
 */
export async function checkModelFile(path: string, opts: { llama?: Llama; load?: boolean } = {}): Promise<ModelFileCheck> {
  try {
    await inspectModelFile(path);
    if (opts.load !== false && opts.llama) {
      const model = await loadModelChecked(opts.llama, path, {});
      await model.dispose();
    }
    return { path, problem: "ok", message: `${path}: ok` };
  } catch (error) {
    if (error instanceof ModelFileError) return { path, problem: error.problem, message: error.message };
    throw error;
  }
}

/** The static checks (no llama.cpp load). @throws ModelFileError */
export async function inspectModelFile(path: string): Promise<void> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new ModelFileError(path, "missing", "is not a regular file");
    size = info.size;
  } catch (error) {
    if (error instanceof ModelFileError) throw error;
    throw new ModelFileError(path, "missing", "model file is missing", error);
  }
  const head = Buffer.alloc(4);
  const handle = await open(path, "r");
  try {
    await handle.read(head, 0, 4, 0);
  } finally {
    await handle.close();
  }
  if (size < 4 || head.toString("latin1") !== "GGUF") {
    throw new ModelFileError(path, "not-gguf", `not a GGUF file (first bytes ${head.subarray(0, Math.min(4, size)).toString("hex") || "none"}, expected 47475546 "GGUF"; ${size} bytes)`);
  }
  // node-llama-cpp on first use (start-up, issue 22 §2); outside the try: not installed is no bad file
  const { readGgufFileInfo } = await import("node-llama-cpp");
  let required: number;
  let headerEnd: number;
  try {
    const info = await readGgufFileInfo(path, { sourceType: "filesystem", logWarnings: false, spliceSplitFiles: false });
    // The reader does not stop at end of file, so a cut header "parses" into garbage: compare offsets.
    headerEnd = info.tensorInfo?.[0]?.fileOffset === undefined ? 0 : Number(info.tensorInfo[0].fileOffset);
    required = 0; // infoEndOffset includes alignment padding, which a tensor-less file may omit
    for (const tensor of info.tensorInfo ?? []) {
      const block = GGML_BLOCK[tensor.ggmlType];
      if (!block) continue; // unknown (IQ*) types: the bound stays a lower bound
      const elements = tensor.dimensions.reduce<number>((n, d) => n * Number(d), 1);
      required = Math.max(required, Number(tensor.fileOffset) + (elements / block[0]) * block[1]);
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ModelFileError(path, "truncated", `GGUF header cannot be read, the file is truncated or corrupt (${size} bytes; ${reason})`, error);
  }
  if (size < headerEnd) {
    throw new ModelFileError(path, "truncated", `GGUF header cannot be read, the file is truncated (${size} bytes, the header alone needs ${headerEnd})`);
  }
  if (size < required) {
    throw new ModelFileError(path, "truncated", `truncated GGUF file: ${size} bytes, tensor data needs at least ${required}`);
  }
}

/**
 * `llama.loadModel` whose failure becomes a ModelFileError carrying llama.cpp's own logged reason
 * (e.g. "missing tensor 'token_embd.weight'") instead of the bare "Failed to load model".
 */
export async function loadModelChecked(llama: Llama, path: string, options: Omit<LlamaModelOptions, "modelPath">): Promise<LlamaModel> {
  const errors: string[] = [];
  const stop = onLlamaLog((line) => {
    if (line.level === "error" || line.level === "fatal") errors.push(line.message);
  });
  try {
    return await llama.loadModel({ ...options, modelPath: path });
  } catch (error) {
    await inspectModelFile(path); // a missing/truncated/non-GGUF file gets its own clearer message
    await drainLlamaLogs();
    const reason = errors.map((e) => e.replace(/^llama_model_load: error loading model: /, "")).find((e) => !/failed to load model$/.test(e)) ?? errors[0];
    const message = error instanceof Error ? error.message : String(error);
    throw new ModelFileError(path, "load-failed", `${message}${reason ? `: ${reason}` : ""}`, error);
  } finally {
    stop();
  }
}
