// Tests lib/data/dataset.ts and lib/data/gold-file.ts on the real bundled data and on small temp layouts (METHOD.md §1).
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { InputFileError } from "../../lib/errors.ts";
import { loadDataset, missingDatabases } from "../../lib/data/dataset.ts";
import { assertGoldAgrees, readGoldFile } from "../../lib/data/gold-file.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const temp = mkdtempSync(join(tmpdir(), "merit-dataset-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Rows `| spider/database/<db>/<db>.sqlite | … | bytes | sha256 |` of data/PROVENANCE.md. */
function provenanceDatabases(): { path: string; size: number; sha256: string }[] {
  const rows = readFileSync(join(ROOT, "data/PROVENANCE.md"), "utf8").split("\n").filter((l) => l.startsWith("| spider/database/"));
  return rows.map((row) => {
    const cells = row.split("|").map((c) => c.trim());
    return { path: cells[1].slice("spider/database/".length), size: Number(cells[6]), sha256: cells[7] };
  });
}

describe("Spider dev (bundled)", async () => {
  const spider = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider") });

  it("has 1034 examples over 20 db_ids, 19 present, wta_1 missing with 62 examples", () => {
    expect(spider.examples).toHaveLength(1034);
    expect(spider.examples.map((e) => e.id)).toEqual(spider.examples.map((_, i) => String(i)));
    expect(new Set(spider.examples.map((e) => e.dbId)).size).toBe(20);
    expect(spider.databases.size).toBe(19);
    expect(missingDatabases(spider)).toEqual([{ dbId: "wta_1", examples: 62 }]);
    expect(spider.schemas.size).toBe(166);
    expect(spider.databases.get("pets_1")?.canonicalPath).toBe(join(ROOT, "data/spider/database/pets_1/pets_1.sqlite"));
  });

  it("has the dataset checksum of the pinned file hashes in data/PROVENANCE.md", () => {
    // content_hash({dataset_name, examples_sha256, tables_sha256}) with the dev.json / tables.json sha256s from PROVENANCE.md.
    const canonical = '{"dataset_name":"spider","examples_sha256":"30d64a3fccde493226df79687aed9e4a1c0129525baf44f29c0573d914d758a4","tables_sha256":"61bb20aa401f03164e2d7f3b16509b7b5f79cc9c943ca7bd159046df1159e2ed"}';
    expect(spider.datasetChecksum).toBe(sha256(canonical));
  });

  it("has the database manifest hash of the 19 files listed in data/PROVENANCE.md", () => {
    // Manifest = [{path, sha256, size}] sorted by relative path, canonical JSON (keys sorted, no spaces).
    const entries = provenanceDatabases().sort((a, b) => (a.path < b.path ? -1 : 1));
    expect(entries).toHaveLength(19);
    const canonical = "[" + entries.map((e) => `{"path":${JSON.stringify(e.path)},"sha256":"${e.sha256}","size":${e.size}}`).join(",") + "]";
    expect(spider.databaseManifestHash).toBe(sha256(canonical));
  });

  it("without schemas (merit eval): the same examples, databases and identities, no schema text", async () => {
    const bare = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider"), schemas: false });
    expect(bare.schemas.size).toBe(0);
    expect(bare.examples).toEqual(spider.examples);
    expect([...bare.databases.keys()]).toEqual([...spider.databases.keys()]);
    expect([bare.datasetChecksum, bare.databaseManifestHash]).toEqual([spider.datasetChecksum, spider.databaseManifestHash]);
  });

  it("loads to the same identities twice", async () => {
    const again = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider") });
    expect([again.datasetChecksum, again.databaseManifestHash]).toEqual([spider.datasetChecksum, spider.databaseManifestHash]);
  });

  it("agrees with dev_gold.sql, and a changed gold line is named", () => {
    const goldFile = join(ROOT, "data/spider/dev_gold.sql");
    const gold = readGoldFile(goldFile);
    expect(gold).toHaveLength(1034);
    expect(gold[0]).toEqual({ line: 1, sql: "SELECT count(*) FROM singer", dbId: "concert_singer" });
    expect(() => assertGoldAgrees(goldFile, gold, spider.examples, "dev.json")).not.toThrow();
    const broken = gold.map((g, i) => (i === 2 ? { ...g, dbId: "pets_1" } : g));
    expect(() => assertGoldAgrees(goldFile, broken, spider.examples, "dev.json")).toThrow(/line 3 has db_id "pets_1" but example 2 of dev.json has "concert_singer"/);
    expect(() => assertGoldAgrees(goldFile, gold.slice(0, 10), spider.examples, "dev.json")).toThrow(/has 10 lines but dev.json has 1034 examples/);
  });

  it("rejects a gold line without a TAB", () => {
    const file = join(temp, "gold.sql");
    writeFileSync(file, "SELECT 1\tdb\nSELECT 2 db\n\n");
    expect(() => readGoldFile(file)).toThrow(/line 2 has no TAB separator/);
  });
});

describe("BIRD dev (bundled, no databases)", async () => {
  const bird = await loadDataset({ name: "bird", dir: join(ROOT, "data/bird") });

  it("has 1534 examples with ids = question_id strings, 11 db_ids, no databases", () => {
    const raw = JSON.parse(readFileSync(join(ROOT, "data/bird/dev.json"), "utf8")) as { question_id: number }[];
    expect(bird.examples).toHaveLength(1534);
    expect(bird.examples.map((e) => e.id)).toEqual(raw.map((r) => String(r.question_id)));
    expect(new Set(bird.examples.map((e) => e.dbId)).size).toBe(11);
    expect(bird.databases.size).toBe(0);
    expect(missingDatabases(bird)).toHaveLength(11);
    expect(missingDatabases(bird).reduce((s, m) => s + m.examples, 0)).toBe(1534);
    expect(bird.databaseManifestHash).toBe(sha256("[]")); // empty manifest
    expect(new Set(bird.examples.map((e) => e.difficulty))).toEqual(new Set(["simple", "moderate", "challenging"]));
  });
});

describe("input file errors", () => {
  const layout = (name: string, dev: string, tables: string) => {
    const dir = join(temp, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "dev.json"), dev);
    writeFileSync(join(dir, "tables.json"), tables);
    return dir;
  };
  const tables = JSON.stringify([{ db_id: "a", table_names_original: ["t"], column_names_original: [[-1, "*"], [0, "c"]], column_types: ["text", "text"], primary_keys: [], foreign_keys: [] }]);

  it("names the file, line and column of malformed JSON", async () => {
    // Text "[\n {\"db_id\": \"a\",}\n]": the `}` at character 17 is line 2, column 17 - 1 = 16.
    const dir = layout("malformed", '[\n {"db_id": "a",}\n]', tables);
    const error = await loadDataset({ name: "spider", dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as Error).message).toContain(join(dir, "dev.json"));
    expect((error as Error).message).toContain("malformed JSON at line 2, column 16");
  });

  it("reports a db_id that the tables file does not know", async () => {
    const dev = JSON.stringify([
      { db_id: "a", question: "q", query: "SELECT 1" },
      { db_id: "nope", question: "q", query: "SELECT 1" },
    ]);
    const dir = layout("unknown-db", dev, tables);
    await expect(loadDataset({ name: "spider", dir })).rejects.toThrow(`unknown db_id "nope" (example id 1 and 0 more) is not in ${join(dir, "tables.json")}`);
    // Without schemas too (merit eval), and a tables file that is not a list of entries with a db_id is refused.
    await expect(loadDataset({ name: "spider", dir, schemas: false })).rejects.toThrow(`unknown db_id "nope" (example id 1 and 0 more) is not in ${join(dir, "tables.json")}`);
    const noList = layout("tables-not-list", dev, "{}");
    await expect(loadDataset({ name: "spider", dir: noList, schemas: false })).rejects.toThrow("expected a JSON list of schema entries");
    const noId = layout("tables-no-db-id", dev, "[{}]");
    await expect(loadDataset({ name: "spider", dir: noId, schemas: false })).rejects.toThrow("entry 0: db_id: expected a string");
  });

  it("treats a missing database root as no databases, not an error", async () => {
    const dir = layout("no-db", JSON.stringify([{ db_id: "a", question: "q", query: "SELECT 1" }]), tables);
    const dataset = await loadDataset({ name: "spider", dir });
    expect(missingDatabases(dataset)).toEqual([{ dbId: "a", examples: 1 }]);
  });

  it("names a missing examples file and the download command", async () => {
    await expect(loadDataset({ name: "bird", dir: join(temp, "absent") })).rejects.toThrow(/dev\.json: cannot read \(ENOENT\); .*merit data download bird/);
  });
});

describe("merit data info", () => {
  it("prints the counts, identities and missing databases of bundled Spider", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const dir = join(ROOT, "data/spider");
    const code = await main(["data", "info", "spider", "--data", dir], { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect(code).toBe(0);
    expect(err).toEqual(["missing database wta_1: 62 example(s) will be NO_DATABASE"]);
    // 1034 − 62 = 972 executable examples.
    expect(out.at(-1)).toBe(`spider ${dir}: 1034 examples, 20 db_ids, 19 databases present, 1 missing, 972 executable examples`);
  });
});
