/**
 * Data acquisition (METHOD.md §1.1): unpacks a verified archive with the system `unzip` into a staging
 * folder, unpacks nested archives, and moves the listed release files into the dataset directory
 * without ever overwriting a file that is already there.
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFile, mkdir, readdir, rename, rm, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { MeritError } from "../errors.ts";
import { exists } from "./download.ts";
import type { ArchiveEntry } from "./downloads.ts";
import { fileDigest } from "../file-hash.ts";

/** What installing an archive did. Paths are relative to the dataset directory. */
export interface InstallReport {
  /** Files moved into place. */
  added: string[];
  /** Files already present with identical bytes. */
  identical: string[];
  /** Files already present with different bytes: the existing (committed, pinned) copy was kept. */
  keptExisting: string[];
}

export interface ExtractOptions {
  /** Called on the staged `<archive_root>` before anything is installed; a throw installs nothing. */
  verify?: (root: string) => Promise<void>;
}

/** Extracts `archive` and installs `entry.install` into `<dataDir>/<entry.extract_to>`; staging is removed afterwards. */
export async function extractArchive(archive: string, entry: ArchiveEntry, dataDir: string, opts: ExtractOptions = {}): Promise<InstallReport> {
  const staging = `${archive}.extract`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    const members = entry.extract_only_install ? entry.install.flatMap((item) => [`${entry.archive_root}/${item}`, `${entry.archive_root}/${item}/*`]) : [];
    await unzip(archive, staging, members);
    const root = join(staging, entry.archive_root);
    if (!(await isDirectory(root))) {
      const found = (await readdir(staging)).join(", ");
      throw new MeritError(`${archive} has no top-level folder ${entry.archive_root}/ (found: ${found || "nothing"}); the release layout changed: update archive_root in data/downloads.json`);
    }
    for (const nested of entry.nested_archives) await unzip(join(root, nested), dirname(join(root, nested)));
    await opts.verify?.(root);
    const report: InstallReport = { added: [], identical: [], keptExisting: [] };
    const destination = join(dataDir, entry.extract_to);
    for (const item of entry.install) {
      const source = join(root, item);
      if (!(await exists(source))) throw new MeritError(`${archive} has no ${entry.archive_root}/${item}; the release layout changed: update "install" in data/downloads.json`);
      await installTree(source, join(destination, item), item, report);
    }
    return report;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Throws a MeritError naming the fix when the system `unzip` is missing (checked before a long download). */
export function assertUnzipAvailable(): void {
  const probe = spawnSync("unzip", ["-v"], { stdio: "ignore" });
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    throw new MeritError("the system `unzip` command is not installed; install it (e.g. `apt-get install unzip`) and re-run");
  }
}

/**
 * Runs `unzip -q -o ARCHIVE [MEMBER...] -d DIR`; a missing `unzip` binary or a failed extraction is a
 * MeritError. With members, patterns that match nothing are not an error (exit code 11): the caller
 * reports what is missing.
 */
export function unzip(archive: string, dir: string, members: readonly string[] = []): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn("unzip", ["-q", "-o", archive, ...members, "-d", dir], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") fail(new MeritError(`the system \`unzip\` command is not installed; install it (e.g. \`apt-get install unzip\`) or extract ${archive} by hand into ${dir}`, { cause: error }));
      else fail(error);
    });
    child.on("close", (code) => {
      if (code === 0 || (code === 11 && members.length > 0)) done();
      else fail(new MeritError(`unzip failed on ${archive} (exit code ${code}: ${stderr.trim().split("\n").pop() ?? ""}); delete it and re-run to download it again`));
    });
  });
}

async function installTree(source: string, target: string, relative: string, report: InstallReport): Promise<void> {
  if (await isDirectory(source)) {
    await mkdir(target, { recursive: true });
    for (const name of (await readdir(source)).sort()) await installTree(join(source, name), join(target, name), `${relative}/${name}`, report);
    return;
  }
  if (await exists(target)) {
    const [a, b] = await Promise.all([fileDigest(source), fileDigest(target)]);
    (a.sha256 === b.sha256 ? report.identical : report.keptExisting).push(relative);
    return;
  }
  await mkdir(dirname(target), { recursive: true });
  try {
    await rename(source, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    await copyFile(source, `${target}.partial`); // staging and destination on different file systems
    await rename(`${target}.partial`, target);
    await unlink(source);
  }
  report.added.push(relative);
}

async function isDirectory(path: string): Promise<boolean> {
  return (await exists(path)) && (await stat(path)).isDirectory();
}
