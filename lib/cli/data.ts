/**
 * `merit data` (METHOD.md §1): `download` fetches, verifies and installs an official archive;
 * `info` loads a dataset and prints its size, missing databases and identities.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.ts";
import { loadDataset, missingDatabases } from "../data/dataset.ts";
import { fetchArchive } from "../data/download.ts";
import { readArchiveEntry } from "../data/downloads.ts";
import { assertUnzipAvailable, extractArchive } from "../data/extract.ts";
import type { DatasetName } from "../data/types.ts";
import { parseFlags, type Command, type CommandIO } from "./command.ts";
import { assertWritableDir } from "./output-paths.ts";

const DEFAULT_MANIFEST = fileURLToPath(new URL("../../data/downloads.json", import.meta.url));

const USAGE = `usage: merit data download spider|bird [--dir data] [--manifest FILE]
       merit data info spider|bird [--data DIR]

download  fetch the official archive into DIR/_downloads/ (resumable), verify its sha256 against
          data/downloads.json, unzip it and move the release files into DIR/<dataset>/ (existing
          files are never overwritten). Offline: copy the archive into DIR/_downloads/ and re-run.
info      load DIR (default data/<dataset>) and print examples, databases found and missing,
          dataset checksum and database manifest hash.`;

export const dataCommand: Command = {
  name: "data",
  summary: "download official Spider/BIRD archives; show what a dataset directory holds",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values, positionals } = parseFlags(argv, { dir: { type: "string" }, manifest: { type: "string" }, data: { type: "string" } }, USAGE, true);
    const [action, name, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (action !== "download" && action !== "info") {
      throw new UsageError(`${action === undefined ? "missing action" : `unknown action "${action}"`} (expected download or info)`);
    }
    const misplaced = action === "download" ? values.data && "--data" : (values.dir && "--dir") || (values.manifest && "--manifest");
    if (misplaced) throw new UsageError(`${misplaced} does not apply to \`merit data ${action}\``);
    if (action === "download") {
      assertWritableDir(values.dir ?? "data", "--dir");
      return download(datasetName(name), values.dir ?? "data", values.manifest ?? DEFAULT_MANIFEST, io);
    }
    return info(datasetName(name), values.data ?? join("data", datasetName(name)), io);
  },
};

function datasetName(name: string | undefined): DatasetName {
  if (name === "spider" || name === "bird") return name;
  throw new UsageError(`${name === undefined ? "missing dataset" : `unknown dataset "${name}"`} (expected spider or bird)`);
}

async function download(name: DatasetName, dir: string, manifest: string, io: CommandIO): Promise<number> {
  const entry = readArchiveEntry(manifest, name);
  assertUnzipAvailable();
  const archive = await fetchArchive(entry, { downloadsDir: join(dir, "_downloads"), progress: io.err });
  io.err(`verified ${archive} (sha256 ${entry.sha256}); extracting`);
  const report = await extractArchive(archive, entry, dir);
  for (const file of report.keptExisting) io.err(`kept existing ${join(dir, entry.extract_to, file)} (the archive's copy differs; the committed file is pinned in data/PROVENANCE.md)`);
  io.out(`installed ${name} into ${join(dir, entry.extract_to)}: ${report.added.length} added, ${report.identical.length} identical, ${report.keptExisting.length} kept`);
  return 0;
}

async function info(name: DatasetName, dir: string, io: CommandIO): Promise<number> {
  const dataset = await loadDataset({ name, dir });
  const missing = missingDatabases(dataset);
  const dbIds = new Set(dataset.examples.map((example) => example.dbId));
  const noDatabase = missing.reduce((sum, m) => sum + m.examples, 0);
  for (const m of missing) io.err(`missing database ${m.dbId}: ${m.examples} example(s) will be NO_DATABASE`);
  io.out(`dataset_checksum ${dataset.datasetChecksum}`);
  io.out(`database_manifest_hash ${dataset.databaseManifestHash}`);
  io.out(`${name} ${dir}: ${dataset.examples.length} examples, ${dbIds.size} db_ids, ${dbIds.size - missing.length} databases present, ${missing.length} missing, ${dataset.examples.length - noDatabase} executable examples`);
  return 0;
}
