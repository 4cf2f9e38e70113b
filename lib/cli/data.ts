/**
 * `merit data` (METHOD.md §1): `download` fetches, verifies and installs an official archive;
 * `info` loads a dataset and prints its size, missing databases and identities.
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nearestName, UsageError } from "../errors.ts";
import { loadDataset, missingDatabases } from "../data/dataset.ts";
import { discoverDatabases } from "../data/databases.ts";
import { DATASETS, datasetNames } from "../data/datasets/index.ts";
import { fetchArchive } from "../data/download.ts";
import { readDownloadLock, writeDownloadLockEntry, type LockEntry } from "../data/download-lock.ts";
import { readArchiveEntry } from "../data/downloads.ts";
import { assertUnzipAvailable, extractArchive } from "../data/extract.ts";
import { fileDigest } from "../file-hash.ts";
import type { DatasetName } from "../data/types.ts";
import { verifyContents, type ContentsReport } from "../data/verify-contents.ts";
import { Oracle } from "../oracle/oracle.ts";
import { parseFlags, type Command, type CommandIO } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";
import { defaultJobs } from "../experiment/services.ts";
import { assertWritableDir } from "../experiment/output-paths.ts";

const DEFAULT_MANIFEST = fileURLToPath(new URL("../../data/downloads.json", import.meta.url));

/** Archives of data/downloads.json (`spider-testsuite`: the Spider test-suite databases, METHOD.md §1.1). */
const ARCHIVES = ["spider", "spider-testsuite", "bird"] as const;

const USAGE = `usage: merit data download spider|spider-testsuite|bird [--dir data] [--manifest FILE]
       merit data info DATASET [--data DIR] [--plugin FILE.ts ...]   (DATASET: ${datasetNames().join(", ")}, or a plugin's)

download  fetch the official archive into DIR/_downloads/ (resumable; Google Drive's confirmation
          page is followed), verify its size and sha256 against data/downloads.json, unzip it and
          move the release files into DIR (existing files are never overwritten); the hash and the
          installed database tree hash are recorded in downloads.lock.json beside the manifest. An
          archive without a published hash (bird) has its contents verified first, then its hash is
          recorded there on first use and checked on every later download.
          spider-testsuite = the test-suite databases (canonical + variants) of the 20 dev databases,
          into DIR/spider_test_suite/database. Offline: copy the archive into DIR/_downloads/ and re-run.
info      load DIR (default data/<dataset>) and print examples, databases found and missing,
          dataset checksum and database manifest hash.
${PLUGIN_USAGE}`;

export const dataCommand: Command = {
  name: "data",
  summary: "download official Spider/BIRD archives; show what a dataset directory holds",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values, positionals } = parseFlags(argv, { dir: { type: "string" }, manifest: { type: "string" }, data: { type: "string" }, ...PLUGIN_FLAG }, USAGE, true);
    const [action, name, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (action !== "download" && action !== "info") {
      throw new UsageError(`${action === undefined ? "missing action" : `unknown action "${action}"`} (expected download or info)`);
    }
    const misplaced = action === "download" ? (values.data && "--data") || (values.plugin && "--plugin") : (values.dir && "--dir") || (values.manifest && "--manifest");
    if (misplaced) throw new UsageError(`${misplaced} does not apply to \`merit data ${action}\``);
    if (action === "download") {
      assertWritableDir(values.dir ?? "data", "--dir");
      return download(archiveName(name), values.dir ?? "data", values.manifest ?? DEFAULT_MANIFEST, io);
    }
    await loadCommandPlugins(values.plugin); // first: a plugin may register the dataset
    return info(datasetName(name), values.data ?? join("data", datasetName(name)), io);
  },
};

function archiveName(name: string | undefined): string {
  if (name !== undefined && (ARCHIVES as readonly string[]).includes(name)) return name;
  throw new UsageError(`${name === undefined ? "missing archive" : `unknown archive "${name}"`} (expected ${ARCHIVES.join(", ")})\n${USAGE}`);
}

function datasetName(name: string | undefined): DatasetName {
  if (name !== undefined && DATASETS.has(name)) return name;
  const near = name === undefined ? undefined : nearestName(name, datasetNames());
  throw new UsageError(`${name === undefined ? "missing dataset" : `unknown dataset "${name}"`} (expected ${datasetNames().join(", ")})${near ? ` (did you mean "${near}"?)` : ""}`);
}

async function download(name: string, dir: string, manifest: string, io: CommandIO): Promise<number> {
  const entry = readArchiveEntry(manifest, name);
  const lockFile = join(dirname(manifest), "downloads.lock.json");
  const locked = readDownloadLock(lockFile)[name];
  assertUnzipAvailable();
  // The publisher's hash, else the one recorded on first use, else (verify_contents) none yet.
  const sha256 = entry.sha256 ?? locked?.sha256 ?? null;
  const firstUse = sha256 === null && entry.verify_contents !== undefined;
  const archive = await fetchArchive(
    { ...entry, sha256, bytes: entry.bytes ?? (entry.sha256 === null ? locked?.bytes : undefined) },
    { downloadsDir: join(dir, "_downloads"), progress: io.err, pinSource: entry.sha256 !== null ? "data/downloads.json" : lockFile, allowUnpinned: firstUse },
  );
  const digest = await fileDigest(archive);
  io.err(firstUse ? `${archive} (sha256 ${digest.sha256}) has no published hash; verifying its contents before trusting it` : `verified ${archive} (sha256 ${digest.sha256}); extracting`);
  let contents: ContentsReport | undefined;
  const report = await extractArchive(archive, entry, dir, {
    verify: firstUse
      ? async (root) => {
          contents = await verifyContents(root, entry, {
            archive,
            jobs: defaultJobs(),
            timeoutMs: 300_000,
            progress: io.err,
            goldRunner: (dataset, o) => new Oracle({ dataset: dataset.name, databases: dataset.databases, ...o }),
          });
        }
      : undefined,
  });
  for (const warning of contents?.warnings ?? []) io.err(`WARNING: ${warning}`);
  for (const file of report.keptExisting) io.err(`kept existing ${join(dir, entry.extract_to, file)} (the archive's copy differs; the committed file is pinned in data/PROVENANCE.md)`);
  const lock: LockEntry = { file: entry.file, bytes: digest.size, sha256: digest.sha256, pinned_by: entry.sha256 !== null ? "downloads.json" : (locked?.pinned_by ?? "first use") };
  const contentsFacts = contents?.contents ?? locked?.contents;
  if (contentsFacts !== undefined) lock.contents = contentsFacts;
  if (entry.databases !== undefined) {
    const tree = await discoverDatabases(join(dir, entry.databases));
    lock.installed_databases = { root: entry.databases, databases: tree.databases.size, files: tree.manifest.length, manifest_hash: tree.manifestHash };
    io.err(`${join(dir, entry.databases)}: ${tree.databases.size} databases, ${tree.manifest.length} .sqlite files, database manifest hash ${tree.manifestHash}`);
  }
  writeDownloadLockEntry(lockFile, name, lock);
  if (firstUse) {
    io.err("!".repeat(100));
    io.err(`!!  FIRST USE: ${entry.file} has no published sha256; its contents were verified and its sha256 ${digest.sha256} (${digest.size} bytes)`);
    io.err(`!!  is now recorded in ${lockFile}. Later downloads must match it. Commit that file, or compare the hash with a colleague's copy.`);
    io.err("!".repeat(100));
  }
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
