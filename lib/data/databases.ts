/**
 * Data loading, database resolution (METHOD.md §1.4): finds every `*.sqlite` under a database root,
 * groups the files by db_id (canonical `<db>/<db>.sqlite` first, test-suite variants kept), and hashes
 * them into the database manifest; `verifyDatabaseFiles` refuses an empty, garbage or truncated file.
 * @module
 */
import Database from "better-sqlite3";
import { closeSync, fstatSync, openSync, readSync, type Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { InputFileError, MeritError } from "../errors.ts";
import { contentHash } from "../hash.ts";
import { fileDigest } from "../file-hash.ts";
import type { DatabaseFiles } from "./types.ts";

/** One `*.sqlite` file of the manifest; `path` is relative to the root, POSIX separators. */
export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

/** What discovery found under one root. */
export interface DatabaseDiscovery {
  /** Absolute database root (it may not exist: then there are no databases). */
  root: string;
  databases: Map<string, DatabaseFiles>;
  /** Every `*.sqlite` file, sorted by relative POSIX path. */
  manifest: ManifestEntry[];
  /** content_hash of `manifest` (METHOD.md §1.4). */
  manifestHash: string;
}

/** Discovers and hashes the databases under `root`; a missing root yields no databases, not an error. */
export async function discoverDatabases(root: string): Promise<DatabaseDiscovery> {
  const absoluteRoot = resolve(root);
  const relativePaths = (await isDirectory(absoluteRoot)) ? (await listSqlite(absoluteRoot, [])).sort(comparePaths) : [];
  const manifest: ManifestEntry[] = [];
  for (const path of relativePaths) manifest.push({ path, ...(await fileDigest(join(absoluteRoot, ...path.split("/")))) });
  return {
    root: absoluteRoot,
    databases: groupByDbId(absoluteRoot, relativePaths),
    manifest,
    manifestHash: databaseManifestHash(manifest),
  };
}

/**
 * Discovers the databases of several roots as one set (Spider-DK: its own root, then Spider's). One
 * root is exactly `discoverDatabases`. With more, `root` is the first and manifest paths of later
 * roots are relative to it (`../spider/database/car_1/car_1.sqlite`), in root order; a db_id present
 * in two roots is refused, since which file scores it would be ambiguous.
 */
export async function discoverDatabaseRoots(roots: readonly string[]): Promise<DatabaseDiscovery> {
  if (roots.length === 0) throw new MeritError("discoverDatabaseRoots: no database root given");
  const [first, ...rest] = await Promise.all(roots.map((root) => discoverDatabases(root)));
  if (rest.length === 0) return first;
  const databases = new Map(first.databases);
  const manifest = [...first.manifest];
  for (const more of rest) {
    for (const [dbId, files] of more.databases) {
      if (databases.has(dbId)) {
        throw new InputFileError(join(more.root, dbId), `database "${dbId}" is also in ${join(first.root, dbId)} (or an earlier root)`, "keep one copy of each db_id across the dataset's database roots");
      }
      databases.set(dbId, files);
    }
    const prefix = relative(first.root, more.root).split(sep).join("/");
    for (const entry of more.manifest) manifest.push({ ...entry, path: `${prefix}/${entry.path}` });
  }
  return { root: first.root, databases, manifest, manifestHash: databaseManifestHash(manifest) };
}

/** content_hash of the manifest entry list (order as given: sorted by relative path). */
export function databaseManifestHash(manifest: readonly ManifestEntry[]): string {
  return contentHash(manifest.map((entry) => ({ path: entry.path, size: entry.size, sha256: entry.sha256 })));
}

/**
 * Groups sorted relative paths by db_id (first path component, or the file stem at top level) and
 * picks each db's canonical file: `<db>/<db>.sqlite` if present, else its only candidate.
 */
export function groupByDbId(root: string, relativePaths: readonly string[]): Map<string, DatabaseFiles> {
  const groups = new Map<string, string[]>();
  for (const path of relativePaths) {
    const parts = path.split("/");
    const dbId = parts.length === 1 ? parts[0].slice(0, -".sqlite".length) : parts[0];
    groups.set(dbId, [...(groups.get(dbId) ?? []), path]);
  }
  const databases = new Map<string, DatabaseFiles>();
  for (const [dbId, paths] of groups) {
    const conventional = `${dbId}/${dbId}.sqlite`;
    const canonical = paths.includes(conventional) ? conventional : paths.length === 1 ? paths[0] : undefined;
    if (canonical === undefined) {
      throw new InputFileError(join(root, dbId), `database "${dbId}" has ${paths.length} .sqlite files (${paths.join(", ")}) and none is the conventional ${conventional}`, `rename the canonical database to ${conventional} (test-suite variants may stay beside it)`);
    }
    const absolute = (path: string) => join(root, ...path.split("/"));
    databases.set(dbId, { dbId, canonicalPath: absolute(canonical), allPaths: paths.map(absolute) });
  }
  return databases;
}

/** Relative POSIX paths of every file named `*.sqlite` below `dir` (symlinks followed). */
async function listSqlite(dir: string, prefix: string[]): Promise<string[]> {
  const found: string[] = [];
  const entries: Dirent[] = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const full = join(dir, entry.name);
    const isLink = entry.isSymbolicLink();
    const isDir = entry.isDirectory() || (isLink && (await isDirectory(full)));
    if (isDir) found.push(...(await listSqlite(full, [...prefix, entry.name])));
    else if (entry.name.endsWith(".sqlite") && (entry.isFile() || isLink)) found.push([...prefix, entry.name].join("/"));
  }
  return found;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return false; // absent root or dangling link: no databases
    throw error;
  }
}

/** Code-point order, as Python's `sorted` orders the reference's relative paths. */
function comparePaths(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) ?? 0);
  const y = [...b].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** How a discovered database set is made up (METHOD.md §1.1): test-suite folders hold variants. */
export interface DatabaseSetShape {
  databases: number;
  files: number;
  /** db_ids whose folder holds only one `.sqlite` file (no test-suite variants), sorted. */
  withoutVariants: string[];
}

/** Counts databases and files, and names the databases without variants. */
export function databaseSetShape(databases: ReadonlyMap<string, DatabaseFiles>): DatabaseSetShape {
  let files = 0;
  const withoutVariants: string[] = [];
  for (const [dbId, db] of databases) {
    files += db.allPaths.length;
    if (db.allPaths.length < 2) withoutVariants.push(dbId);
  }
  return { databases: databases.size, files, withoutVariants: withoutVariants.sort() };
}

const SQLITE_MAGIC = Buffer.from("SQLite format 3\u0000", "latin1");

/**
 * What is wrong with a `.sqlite` file, or null when it passes a quick integrity check: the SQLite
 * header (magic, page size), a size that is a whole number of pages and, when the header's page
 * count is current, equal to it (a truncated copy), and a readable schema (a garbled first page).
 */
export function sqliteFileProblem(path: string): string | null {
  const fd = openSync(path, "r");
  let header: Buffer;
  let size: number;
  try {
    size = fstatSync(fd).size;
    header = Buffer.alloc(100);
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (size === 0) return "is empty (0 bytes)";
  if (size < 512 || !header.subarray(0, 16).equals(SQLITE_MAGIC)) return "is not an SQLite database (no SQLite header)";
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return `has an invalid SQLite header (page size ${raw})`;
  if (size % pageSize !== 0) return `is truncated (${size} bytes is not a whole number of ${pageSize}-byte pages)`;
  const pages = header.readUInt32BE(28);
  const countIsCurrent = header.readUInt32BE(24) === header.readUInt32BE(92);
  if (countIsCurrent && pages > 0 && pages * pageSize !== size) return `is truncated or padded (${size} bytes, but its header says ${pages} pages of ${pageSize} bytes)`;
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      db.prepare("SELECT count(*) FROM sqlite_master").get();
    } finally {
      db.close();
    }
  } catch (error) {
    return `cannot be read by SQLite (${(error as Error).message})`;
  }
  return null;
}

/** Refuses the first database file of `discovery` that fails `sqliteFileProblem`, naming it. */
export function verifyDatabaseFiles(discovery: DatabaseDiscovery): void {
  for (const entry of discovery.manifest) {
    const path = join(discovery.root, ...entry.path.split("/"));
    const problem = sqliteFileProblem(path);
    if (problem) throw new InputFileError(path, problem, "restore the file (re-download or re-extract the dataset's databases) or remove it, so its questions become NO_DATABASE");
  }
}
