// Tests lib/data/download.ts, lib/data/extract.ts and `merit data download` against a local HTTP server (bounded, stops itself).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { DownloadError, fetchArchive, UnpinnedHashError } from "../../lib/data/download.ts";
import type { ArchiveEntry } from "../../lib/data/downloads.ts";
import { extractArchive } from "../../lib/data/extract.ts";
import { storedZip } from "./zip-fixture.ts";

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");
const temp = mkdtempSync(join(tmpdir(), "merit-download-"));
const archive = storedZip({
  "release/dev.json": "[]\n",
  "release/notes.txt": "not installed",
  "release/dev_databases.zip": storedZip({ "dev_databases/a/a.sqlite": "db-a", "dev_databases/b/b.sqlite": "db-b" }),
});
const requests: IncomingMessage[] = [];
let server: Server;
let base = "";
let closedPort = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req);
    if (req.url === "/cut.zip") {
      // Announces the whole archive, sends 200 bytes, then drops the connection.
      res.writeHead(200, { "content-type": "application/zip", "content-length": archive.length });
      res.write(archive.subarray(0, 200), () => setTimeout(() => res.destroy(), 50));
      return;
    }
    if (req.url === "/page.zip") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html>confirm</html>");
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    if (req.url === "/archive.zip" && range) {
      const start = Number(range[1]);
      res.writeHead(206, { "content-type": "application/zip", "content-length": archive.length - start }).end(archive.subarray(start));
      return;
    }
    if (req.url === "/archive.zip" || req.url === "/norange.zip") {
      res.writeHead(200, { "content-type": "application/zip", "content-length": archive.length }).end(archive);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  setTimeout(() => server.close(), 60_000).unref(); // bounded even if afterAll never runs
  // A port that was just released: connecting to it is refused, as when the machine is offline.
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((done) => probe.close(done));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  rmSync(temp, { recursive: true, force: true });
});

let counter = 0;
function setup(overrides: Partial<ArchiveEntry> = {}) {
  const dir = join(temp, `case-${++counter}`);
  const entry: ArchiveEntry = {
    page: "https://example.org/dataset",
    url: `${base}/archive.zip`,
    file: "dev.zip",
    sha256: sha256(archive),
    archive_root: "release",
    nested_archives: ["dev_databases.zip"],
    install: ["dev.json", "dev_databases"],
    extract_to: "bird",
    ...overrides,
  };
  return { dir, downloads: join(dir, "_downloads"), entry };
}

describe("fetchArchive", () => {
  it("downloads, verifies the pinned sha256 and renames into place", async () => {
    const { downloads, entry } = setup();
    const path = await fetchArchive(entry, { downloadsDir: downloads });
    expect(path).toBe(join(downloads, "dev.zip"));
    expect(readFileSync(path).equals(archive)).toBe(true);
    expect(existsSync(`${path}.partial`)).toBe(false);
  });

  it("resumes a partial file with a Range request", async () => {
    const { downloads, entry } = setup();
    mkdirSync(downloads, { recursive: true });
    writeFileSync(join(downloads, "dev.zip.partial"), archive.subarray(0, 100));
    const before = requests.length;
    const path = await fetchArchive(entry, { downloadsDir: downloads });
    expect(requests.slice(before).map((r) => r.headers.range)).toEqual(["bytes=100-"]);
    expect(readFileSync(path).equals(archive)).toBe(true);
  });

  it("keeps the partial file when the connection drops, then resumes it", async () => {
    const { downloads, entry } = setup({ url: `${base}/cut.zip` });
    await expect(fetchArchive(entry, { downloadsDir: downloads })).rejects.toThrow(/interrupted after \d+ bytes .*re-run the same command to resume/);
    const partial = join(downloads, "dev.zip.partial");
    expect(readFileSync(partial).equals(archive.subarray(0, 200))).toBe(true);
    const before = requests.length;
    await fetchArchive({ ...entry, url: `${base}/archive.zip` }, { downloadsDir: downloads });
    expect(requests.slice(before).map((r) => r.headers.range)).toEqual(["bytes=200-"]);
    expect(readFileSync(join(downloads, "dev.zip")).equals(archive)).toBe(true);
  });

  it("starts over when the server ignores Range", async () => {
    const { downloads, entry } = setup({ url: `${base}/norange.zip` });
    mkdirSync(downloads, { recursive: true });
    writeFileSync(join(downloads, "dev.zip.partial"), "garbage that must not stay in front");
    expect(readFileSync(await fetchArchive(entry, { downloadsDir: downloads })).equals(archive)).toBe(true);
  });

  it("rejects a wrong sha256 and deletes the corrupt download", async () => {
    const { downloads, entry } = setup({ sha256: "0".repeat(64) });
    const error = await fetchArchive(entry, { downloadsDir: downloads }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as Error).message).toContain(`has sha256 ${sha256(archive)} but data/downloads.json expects ${"0".repeat(64)}`);
    expect(existsSync(join(downloads, "dev.zip"))).toBe(false);
    expect(existsSync(join(downloads, "dev.zip.partial"))).toBe(false);
  });

  it("refuses an unpinned hash, printing the computed one, and does not download again", async () => {
    const { downloads, entry } = setup({ sha256: null });
    const first = await fetchArchive(entry, { downloadsDir: downloads }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(UnpinnedHashError);
    expect((first as UnpinnedHashError).actual).toBe(sha256(archive));
    expect((first as Error).message).toMatch(/pins no sha256 .* write it as "sha256" in data\/downloads.json/);
    const before = requests.length;
    await expect(fetchArchive(entry, { downloadsDir: downloads })).rejects.toBeInstanceOf(UnpinnedHashError);
    expect(requests.length).toBe(before);
  });

  it("verifies a manually copied archive without any request", async () => {
    const { downloads, entry } = setup({ url: `http://127.0.0.1:${closedPort}/dev.zip` });
    mkdirSync(downloads, { recursive: true });
    writeFileSync(join(downloads, "dev.zip"), archive);
    await expect(fetchArchive(entry, { downloadsDir: downloads })).resolves.toBe(join(downloads, "dev.zip"));
  });

  it("refuses an HTML page served instead of the archive", async () => {
    const { downloads, entry } = setup({ url: `${base}/page.zip` });
    await expect(fetchArchive(entry, { downloadsDir: downloads })).rejects.toThrow(/returned an HTML page instead of dev.zip/);
  });

  it("names the URL and the manual fix in one line when the network is unreachable", async () => {
    const { downloads, entry } = setup({ url: `http://127.0.0.1:${closedPort}/dev.zip` });
    const error = await fetchArchive(entry, { downloadsDir: downloads }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    const message = (error as DownloadError).message;
    expect(message).toContain(`cannot reach http://127.0.0.1:${closedPort}/dev.zip (connect ECONNREFUSED`);
    expect(message).toContain(`appears offline: copy dev.zip (from https://example.org/dataset) into ${join(downloads, "dev.zip")} manually`);
    expect(message).not.toContain("\n");
    expect((error as DownloadError).exitCode).toBe(2);
  });
});

describe("extractArchive", () => {
  it("unzips nested archives, installs the listed items, and never overwrites existing files", async () => {
    const { dir, entry } = setup();
    const file = join(temp, "extract.zip");
    writeFileSync(file, archive);
    mkdirSync(join(dir, "bird/dev_databases/b"), { recursive: true });
    writeFileSync(join(dir, "bird/dev.json"), "[1]\n"); // differs from the archive's "[]\n": kept
    writeFileSync(join(dir, "bird/dev_databases/b/b.sqlite"), "db-b"); // identical
    const report = await extractArchive(file, entry, dir);
    expect(report).toEqual({ added: ["dev_databases/a/a.sqlite"], identical: ["dev_databases/b/b.sqlite"], keptExisting: ["dev.json"] });
    expect(readFileSync(join(dir, "bird/dev.json"), "utf8")).toBe("[1]\n");
    expect(readFileSync(join(dir, "bird/dev_databases/a/a.sqlite"), "utf8")).toBe("db-a");
    expect(existsSync(join(dir, "bird/notes.txt"))).toBe(false);
    expect(existsSync(`${file}.extract`)).toBe(false);
  });

  it("names what it found when the archive root is wrong", async () => {
    const { dir, entry } = setup({ archive_root: "dev_20240627" });
    const file = join(temp, "wrong-root.zip");
    writeFileSync(file, archive);
    await expect(extractArchive(file, entry, dir)).rejects.toThrow(/has no top-level folder dev_20240627\/ \(found: release\)/);
  });
});

describe("merit data download", () => {
  const run = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };
  const manifest = (entry: ArchiveEntry, dir: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "downloads.json"), JSON.stringify({ $comment: "test", bird: entry }));
    return join(dir, "downloads.json");
  };

  it("exits 2 with one line when offline", async () => {
    const { dir, entry } = setup({ url: `http://127.0.0.1:${closedPort}/dev.zip` });
    const result = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest(entry, dir)]);
    expect(result.code).toBe(2);
    expect(result.err).toHaveLength(1);
    expect(result.err[0]).toMatch(/^merit data: cannot reach http:\/\/127\.0\.0\.1:\d+\/dev\.zip .*appears offline.*re-run to verify and extract$/);
  });

  it("downloads, verifies and installs end to end", async () => {
    const { dir, entry } = setup();
    const result = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest(entry, dir)]);
    expect(result.code).toBe(0);
    expect(result.out).toEqual([`installed bird into ${join(dir, "bird")}: 3 added, 0 identical, 0 kept`]);
    expect(readFileSync(join(dir, "bird/dev_databases/b/b.sqlite"), "utf8")).toBe("db-b");
  });

  it("rejects an unknown archive name with a suggestion", async () => {
    const { dir, entry } = setup();
    const result = await run(["data", "download", "spider", "--dir", dir, "--manifest", manifest(entry, dir)]);
    expect(result.code).toBe(2);
    expect(result.err[0]).toContain('no archive named "spider"');
  });
});
