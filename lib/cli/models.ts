/**
 * `merit models download|check` (METHOD.md §6.4; what `make models` runs): fetch and verify the GGUF
 * files listed in models/models.json (against models/models.lock.json, a pinned hash, or the hub's
 * published LFS hash, which then writes the lock), or diagnose model files in one line each.
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.ts";
import { llamaRuntime } from "../llm/llama-runtime.ts";
import { checkModelFile } from "../llm/model-file.ts";
import { readModelLock } from "../llm/model-lock.ts";
import { checkAgainstLock, ensureModel, readModelManifest } from "../llm/models.ts";
import { parseFlags, type Command, type CommandIO } from "./command.ts";
import { assertWritableDir } from "../experiment/output-paths.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const USAGE = `usage: merit models download [ID...] [--dir models] [--manifest models/models.json]
       merit models check [ID...] [--dir models] [--manifest FILE] [--file PATH] [--no-load]

download  fetches each listed model (all when no ID is given) into DIR, resuming a .partial file,
          and checks its size and sha256 against models.lock.json (beside the manifest), else a
          sha256 pinned in the manifest, else the hub's published LFS sha256 and size at the entry's
          revision (hub: HF_ENDPOINT, default https://huggingface.co), then records commit, size and
          sha256 in models.lock.json. A bad download is deleted; a present, matching file is left
          alone. Exit 1 when a non-hub model has no hash to check (its computed hash is printed).
check     one line per model file: ok, missing, truncated, not a GGUF, or llama.cpp's load error;
          a manifest model with a models.lock.json entry must also match its size and sha256.
          --file checks any GGUF path instead of the manifest's; --no-load skips the llama.cpp load.`;

export const modelsCommand: Command = {
  name: "models",
  summary: "download and verify the GGUF models (make models), or check model files",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values, positionals } = parseFlags(
      argv,
      { dir: { type: "string" }, manifest: { type: "string" }, file: { type: "string" }, "no-load": { type: "boolean" } },
      USAGE,
      true,
    );
    const [action, ...ids] = positionals;
    const dir = values.dir ?? join(ROOT, "models");
    if (action === "check" && values.file !== undefined) {
      if (ids.length > 0) throw new UsageError(`give either model IDs or --file, not both`);
      return check([values.file], !values["no-load"], io);
    }
    const manifestFile = values.manifest ?? join(ROOT, "models/models.json");
    const manifest = readModelManifest(manifestFile);
    const lockFile = join(dirname(manifestFile), "models.lock.json");
    for (const id of ids) if (!(id in manifest)) throw new UsageError(`unknown model "${id}" (known: ${Object.keys(manifest).join(", ")})`);
    const chosen = ids.length > 0 ? ids : Object.keys(manifest);
    if (action === "download") {
      if (values.file !== undefined || values["no-load"]) throw new UsageError(`--file and --no-load apply to \`merit models check\` only`);
      assertWritableDir(dir, "--dir");
      let unverified = 0;
      for (const id of chosen) {
        const entry = manifest[id];
        let nextReport = 0;
        const result = await ensureModel(entry, {
          dir,
          lock: { id, file: lockFile },
          onVerified: (how) => {
            io.err(`${entry.file}: size and sha256 match ${how.source}`);
            if (how.locked) io.err(`${entry.file}: recorded revision ${how.revision}, size and sha256 in ${lockFile}; later downloads and \`merit models check\` verify against it`);
          },
          onProgress: (received, total) => {
            if (received < nextReport) return;
            io.err(`${entry.file}: ${total ? `${Math.floor((100 * received) / total)}% ` : ""}(${received}${total ? `/${total}` : ""} bytes)`);
            nextReport = received + (total ? total / 20 : 256 * 2 ** 20);
          },
        });
        if (result.status === "unverified") {
          unverified++;
          io.err(`${result.path}: UNVERIFIED — models.json pins no sha256; computed sha256 ${result.sha256} (${result.bytes} bytes). Check it against ${entry.source} and write it into the manifest.`);
        }
        io.out(`${id} ${result.status} ${result.path} sha256 ${result.sha256}`);
      }
      return unverified === 0 ? 0 : 1;
    }
    if (action === "check") {
      const lock = readModelLock(lockFile);
      const pins = new Map(chosen.filter((id) => lock[id] !== undefined).map((id) => [join(dir, manifest[id].file), lock[id]]));
      return check(chosen.map((id) => join(dir, manifest[id].file)), !values["no-load"], io, (path) => pins.get(path), lockFile);
    }
    throw new UsageError(`${action === undefined ? "missing action" : `unknown action "${action}"`} (expected download or check)`);
  },
};

async function check(paths: string[], load: boolean, io: CommandIO, pinOf: (path: string) => { bytes: number; sha256: string } | undefined = () => undefined, lockFile = ""): Promise<number> {
  const llama = load ? await llamaRuntime(false) : undefined;
  let bad = 0;
  for (const path of paths) {
    const result = await checkModelFile(path, { llama, load });
    const pin = pinOf(path);
    const lockProblem = result.problem === "ok" && pin ? await checkAgainstLock(path, pin, lockFile) : null;
    if (result.problem !== "ok" || lockProblem !== null) bad++;
    io.out(lockProblem ?? (result.problem === "ok" && pin ? `${result.message} (size and sha256 match ${lockFile})` : result.message));
  }
  return bad === 0 ? 0 : 1;
}
