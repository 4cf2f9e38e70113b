// Tests Google Drive's confirmation form (lib/data/download.ts), pinned sizes, and `merit data download`'s
// first-use verification of an archive without a published hash (lib/data/verify-contents.ts) with its
// lock file (lib/data/download-lock.ts), plus dev-only extraction of a test-suite archive, against a
// local HTTP server (127.0.0.1, stopped after the tests) and real SQLite databases.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { discoverDatabases } from "../../lib/data/databases.ts";
import { confirmationUrl, DownloadError, fetchArchive } from "../../lib/data/download.ts";
import type { ArchiveEntry } from "../../lib/data/downloads.ts";
import { storedZip } from "./zip-fixture.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");
const temp = mkdtempSync(join(tmpdir(), "merit-download-verify-"));
const archive = storedZip({ "release/dev.json": "[]\n" });
const CONCERT = readFileSync(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite"));
const spiderTables = JSON.parse(readFileSync(join(ROOT, "data/spider/tables.json"), "utf8")) as Array<{ db_id: string }>;
const TABLES = JSON.stringify([spiderTables.find((t) => t.db_id === "concert_singer")]);
const question = (id: number, sql: string) => ({ question_id: id, db_id: "concert_singer", question: `q${id}`, evidence: "", SQL: sql, difficulty: "simple" });
const DEV = JSON.stringify([question(0, "SELECT count(*) FROM singer"), question(1, "SELECT name FROM stadium ORDER BY capacity DESC LIMIT 1")]);

/** A BIRD-like dev.zip: release files plus a nested dev_databases.zip holding a real SQLite database. */
function birdArchive(dev: string): Buffer {
  return storedZip({
    "dev_x/dev.json": dev,
    "dev_x/dev_tables.json": TABLES,
    "dev_x/dev.sql": "SELECT 1\tconcert_singer\n",
    "dev_x/dev_databases.zip": storedZip({ "dev_databases/concert_singer/concert_singer.sqlite": CONCERT }),
  });
}

const served = new Map<string, Buffer>();
const requests: IncomingMessage[] = [];
let server: Server;
let base = "";
const FORM = (action: string, uuid: string) => `<!DOCTYPE html><html><head><title>Google Drive - Virus scan warning</title></head><body>
<p>Google Drive can't scan this file for viruses.</p>
<form id="download-form" action="${action}" method="get">
  <input type="submit" id="uc-download-link" class="goog-inline-block jfk-button" value="Download anyway"/>
  <input type="hidden" name="id" value="FILEID">
  <input type="hidden" name="export" value="download">
  <input type="hidden" name="confirm" value="t">
  <input type="hidden" name="uuid" value="${uuid}">
</form></body></html>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req);
    const url = new URL(req.url ?? "/", base);
    const html = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
    if (url.pathname === "/drive/download") return html(FORM(`${base}/drive/confirmed`, "5f0e-aa&amp;b"));
    if (url.pathname === "/drive/confirmed") {
      const ok = url.searchParams.get("id") === "FILEID" && url.searchParams.get("confirm") === "t" && url.searchParams.get("uuid") === "5f0e-aa&b" && url.searchParams.get("export") === "download";
      if (!ok) return html("<html>wrong confirmation</html>");
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
      const start = range ? Number(range[1]) : 0;
      res.writeHead(range ? 206 : 200, { "content-type": "application/octet-stream", "content-length": archive.length - start }).end(archive.subarray(start));
      return;
    }
    if (url.pathname === "/quota/download") return html(FORM("/quota/confirmed", "u1")); // relative action
    if (url.pathname === "/quota/confirmed") return html("<html><p>Too many users have viewed or downloaded this file recently.</p></html>");
    const body = served.get(url.pathname);
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/zip", "content-length": body.length }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  setTimeout(() => server.close(), 120_000).unref();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  rmSync(temp, { recursive: true, force: true });
});

let counter = 0;
const caseDir = () => join(temp, `case-${++counter}`);
const entryOf = (over: Partial<ArchiveEntry>): ArchiveEntry => ({
  page: "https://example.org/dataset",
  url: `${base}/drive/download?id=FILEID&export=download`,
  file: "a.zip",
  sha256: sha256(archive),
  archive_root: "release",
  nested_archives: [],
  install: ["dev.json"],
  extract_to: "x",
  ...over,
});

describe("Google Drive's confirmation page", () => {
  it("parses the form: action, hidden fields as the query, entities decoded; null without a form", () => {
    expect(confirmationUrl(FORM("https://drive.usercontent.google.com/download", "a&amp;b"), "https://drive.google.com/uc?id=FILEID")).toBe(
      "https://drive.usercontent.google.com/download?id=FILEID&export=download&confirm=t&uuid=a%26b",
    );
    expect(confirmationUrl(FORM("/next", "u"), "http://h/x/page")).toBe("http://h/next?id=FILEID&export=download&confirm=t&uuid=u");
    expect(confirmationUrl("<html><form method=post><input type=hidden name=confirm value=t></form></html>", "http://h/")).toBeNull();
    expect(confirmationUrl("<html>Sorry, the file you have requested does not exist.</html>", "http://h/")).toBeNull();
  });

  it("follows the form to the file, and resumes a partial file through it", async () => {
    const downloads = join(caseDir(), "_downloads");
    const before = requests.length;
    const path = await fetchArchive(entryOf({}), { downloadsDir: downloads });
    expect(readFileSync(path).equals(archive)).toBe(true);
    expect(requests.slice(before).map((r) => new URL(r.url ?? "", base).pathname)).toEqual(["/drive/download", "/drive/confirmed"]);

    const again = join(caseDir(), "_downloads");
    mkdirSync(again, { recursive: true });
    writeFileSync(join(again, "a.zip.partial"), archive.subarray(0, 40));
    const mark = requests.length;
    expect(readFileSync(await fetchArchive(entryOf({}), { downloadsDir: again })).equals(archive)).toBe(true);
    expect(requests.slice(mark).map((r) => r.headers.range)).toEqual(["bytes=40-", "bytes=40-"]);
  });

  it("a page that stays HTML after the form is one clear line, and nothing is kept as the archive", async () => {
    const downloads = join(caseDir(), "_downloads");
    const error = await fetchArchive(entryOf({ url: `${base}/quota/download` }), { downloadsDir: downloads }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    const message = (error as Error).message;
    expect(message).toBe(`${base}/quota/download returned an HTML page instead of a.zip even after its confirmation form (download quota exceeded or access denied); download it in a browser from https://example.org/dataset into ${join(downloads, "a.zip")}, then re-run to verify and extract`);
    expect(existsSync(join(downloads, "a.zip"))).toBe(false);
  });

  it("a pinned size that differs is refused before hashing, and the download deleted", async () => {
    const downloads = join(caseDir(), "_downloads");
    await expect(fetchArchive(entryOf({ bytes: archive.length + 1 }), { downloadsDir: downloads })).rejects.toThrow(`has ${archive.length} bytes but data/downloads.json expects ${archive.length + 1}; the corrupt download was deleted`);
    expect(existsSync(join(downloads, "a.zip"))).toBe(false);
    expect(existsSync(join(downloads, "a.zip.partial"))).toBe(false);
  });
});

describe("merit data download: first use of an archive without a published hash", () => {
  const run = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };
  /** A data dir with a downloads.json naming one archive `bird` served at /<name>.zip. */
  const setup = (name: string, zip: Buffer, over: Partial<ArchiveEntry> = {}) => {
    const dir = caseDir();
    served.set(`/${name}.zip`, zip);
    const entry: ArchiveEntry = {
      page: "https://example.org/bird",
      url: `${base}/${name}.zip`,
      file: "dev.zip",
      sha256: null,
      archive_root: "dev_x",
      nested_archives: ["dev_databases.zip"],
      install: ["dev.json", "dev_tables.json", "dev.sql", "dev_databases"],
      extract_to: "bird",
      databases: "bird/dev_databases",
      verify_contents: { same_as_bundled: { "dev.json": sha256(DEV), "dev_tables.json": sha256(TABLES) }, gold_executes: "bird" },
      ...over,
    };
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "downloads.json"), JSON.stringify({ bird: entry }));
    return { dir, manifest: join(dir, "downloads.json"), lock: join(dir, "downloads.lock.json") };
  };
  const lockOf = (file: string) => JSON.parse(readFileSync(file, "utf8")).archives.bird;

  it("verifies the contents, installs, and records the hash loudly; a later download must match it", async () => {
    const zip = birdArchive(DEV);
    const { dir, manifest, lock } = setup("good", zip);
    const first = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest]);
    expect(first.code).toBe(0);
    expect(first.out).toEqual([`installed bird into ${join(dir, "bird")}: 4 added, 0 identical, 0 kept`]);
    expect(first.err.some((l) => l.includes(`FIRST USE: dev.zip has no published sha256; its contents were verified and its sha256 ${sha256(zip)}`))).toBe(true);
    const tree = await discoverDatabases(join(dir, "bird/dev_databases"));
    expect(lockOf(lock)).toEqual({
      file: "dev.zip",
      bytes: zip.length,
      sha256: sha256(zip),
      pinned_by: "first use",
      contents: { "dev.json sha256": sha256(DEV), "dev.json same as bundled": true, "dev_tables.json sha256": sha256(TABLES), "dev_tables.json same as bundled": true, "gold queries executed": 2, databases: 1 },
      installed_databases: { root: "bird/dev_databases", databases: 1, files: 1, manifest_hash: tree.manifestHash },
    });
    const lockText = readFileSync(lock, "utf8");

    // The archive is replaced by other bytes: the recorded hash refuses it and the lock stays as it was.
    writeFileSync(join(dir, "_downloads/dev.zip"), birdArchive(DEV.replace("q0", "changed")));
    const second = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest]);
    expect(second.code).toBe(2);
    expect(second.err.filter((l) => l.startsWith("merit data:"))).toHaveLength(1);
    expect(second.err.at(-1)).toMatch(new RegExp(`dev\\.zip has \\d+ bytes but ${lock.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} expects ${zip.length}|dev\\.zip has sha256 [0-9a-f]{64} but .*downloads\\.lock\\.json expects ${sha256(zip)}`));
    expect(readFileSync(lock, "utf8")).toBe(lockText);

    // The right bytes again: accepted by the lock, no new verification, the lock unchanged.
    writeFileSync(join(dir, "_downloads/dev.zip"), zip);
    const third = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest]);
    expect(third.code).toBe(0);
    expect(third.err.some((l) => l.includes("FIRST USE"))).toBe(false);
    expect(readFileSync(lock, "utf8")).toBe(lockText);
  });

  it("a different dev.json is reported as a different release with its hash", async () => {
    const other = JSON.stringify([question(7, "SELECT count(*) FROM concert")]);
    const { dir, manifest, lock } = setup("other", birdArchive(other));
    const result = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest]);
    expect(result.code).toBe(0);
    expect(result.err).toContain(`WARNING: ${join(dir, "_downloads/dev.zip")}: dev.json has sha256 ${sha256(other)}, not the bundled copy's ${sha256(DEV)}: a different release of the dataset (the bundled file is kept; see data/PROVENANCE.md)`);
    expect(lockOf(lock).contents["dev.json same as bundled"]).toBe(false);
  });

  it("a gold query that does not execute: nothing installed, no hash recorded, one line", async () => {
    const broken = JSON.stringify([question(0, "SELECT count(*) FROM singer"), question(1, "SELECT nope FROM singer")]);
    const { dir, manifest, lock } = setup("broken", birdArchive(broken));
    const result = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest]);
    expect(result.code).toBe(2);
    expect(result.err.at(-1)).toMatch(/^merit data: 1 of 2 gold queries of .*dev\.zip do not execute \(first: example 1 \(concert_singer\): .*no such column: nope.*\); the archive is not trusted and no hash was recorded: delete it and download it again from https:\/\/example\.org\/bird$/);
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(join(dir, "bird"))).toBe(false);
  });

  it("a damaged lock file is one line naming it, and nothing is downloaded", async () => {
    const { dir, manifest, lock } = setup("damaged", birdArchive(DEV));
    writeFileSync(lock, '{"archives": {"bird": {"sha256": "nope"}}}');
    const before = requests.length;
    const result = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest]);
    expect(result.code).toBe(2);
    expect(result.err).toEqual([expect.stringMatching(new RegExp(`^merit data: ${lock.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: archives\\.bird\\.file: .*; restore it from git, or delete the bad entry`))]);
    expect(requests.length).toBe(before);
  });

  it("an unpinned archive without verify_contents is still refused", async () => {
    const { dir, manifest } = setup("plain", birdArchive(DEV), { verify_contents: undefined });
    const result = await run(["data", "download", "bird", "--dir", dir, "--manifest", manifest]);
    expect(result.code).toBe(2);
    expect(result.err.at(-1)).toMatch(/pins no sha256 for it, so it is not trusted/);
  });
});

describe("merit data download: test-suite databases, dev folders only", () => {
  it("unzips only the listed db folders (canonical + variants) and records the installed tree hash", async () => {
    const dir = caseDir();
    const zip = storedZip({
      "database/concert_singer/concert_singer.sqlite": CONCERT,
      "database/concert_singer/concert_singer_1.sqlite": CONCERT,
      "database/geo/geo.sqlite": "not a dev database",
    });
    served.set("/testsuite.zip", zip);
    const entry: ArchiveEntry = {
      page: "https://example.org/test-suite",
      url: `${base}/testsuite.zip`,
      file: "testsuitedatabases.zip",
      sha256: sha256(zip),
      bytes: zip.length,
      archive_root: "database",
      nested_archives: [],
      install: ["concert_singer"],
      extract_to: "spider_test_suite/database",
      extract_only_install: true,
      databases: "spider_test_suite/database",
    };
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "downloads.json"), JSON.stringify({ "spider-testsuite": entry }));
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(["data", "download", "spider-testsuite", "--dir", dir, "--manifest", join(dir, "downloads.json")], { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect(err.filter((l) => l.startsWith("merit")), err.join("\n")).toEqual([]);
    expect(code).toBe(0);
    expect(existsSync(join(dir, "spider_test_suite/database/geo"))).toBe(false);
    const tree = await discoverDatabases(join(dir, "spider_test_suite/database"));
    expect(tree.manifest.map((m) => m.path)).toEqual(["concert_singer/concert_singer.sqlite", "concert_singer/concert_singer_1.sqlite"]);
    const lock = JSON.parse(readFileSync(join(dir, "downloads.lock.json"), "utf8")).archives["spider-testsuite"];
    expect(lock).toEqual({ file: "testsuitedatabases.zip", bytes: zip.length, sha256: sha256(zip), pinned_by: "downloads.json", installed_databases: { root: "spider_test_suite/database", databases: 1, files: 2, manifest_hash: tree.manifestHash } });
  });

  it("the repository's downloads.json pins spider_data.zip and the test-suite archive", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "data/downloads.json"), "utf8"));
    expect(manifest.spider).toMatchObject({ sha256: "00636695dabed6b5f4b8328a16b13e069a2f16591d5efcce57660669c85b121b", bytes: 205800266 });
    expect(manifest["spider-testsuite"]).toMatchObject({ file: "testsuitedatabases.zip", sha256: "9ec24ea8debc6bd04abfe137b5f1a739b5a8836f32c0464e4dfc94eb7f41da96", bytes: 1269456098 });
    expect(manifest["spider-testsuite"].url).toContain("id=1mkCx2GOFIqNesD4y8TDAO1yX1QZORP5w");
    const dev = JSON.parse(readFileSync(join(ROOT, "data/spider/dev.json"), "utf8")) as Array<{ db_id: string }>;
    expect(manifest["spider-testsuite"].install).toEqual([...new Set(dev.map((d) => d.db_id))].sort());
    expect(manifest.bird.verify_contents.same_as_bundled["dev.json"]).toBe(sha256(readFileSync(join(ROOT, "data/bird/dev.json"))));
  });
});

