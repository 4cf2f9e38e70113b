// Tests lib/data/databases.ts: discovery, canonical choice, test-suite layout and manifest hashing (METHOD.md §1.4).
import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { discoverDatabases } from "../../lib/data/databases.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const sha256 = (data: string) => createHash("sha256").update(data).digest("hex");
const temp = mkdtempSync(join(tmpdir(), "merit-databases-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function tree(name: string, files: Record<string, string>): string {
  const root = join(temp, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe("discoverDatabases", () => {
  it("groups a test-suite layout by first path component and prefers <db>/<db>.sqlite", async () => {
    const root = tree("suite", {
      "shop/shop_v2.sqlite": "v2",
      "shop/shop.sqlite": "canonical",
      "shop/shop_v1.sqlite": "v1",
      "solo/other.sqlite": "only",
      "top.sqlite": "top",
      "shop/notes.txt": "ignored",
    });
    const found = await discoverDatabases(root);
    expect([...found.databases.keys()].sort()).toEqual(["shop", "solo", "top"]);
    expect(found.databases.get("shop")).toEqual({
      dbId: "shop",
      canonicalPath: join(root, "shop/shop.sqlite"),
      allPaths: ["shop/shop.sqlite", "shop/shop_v1.sqlite", "shop/shop_v2.sqlite"].map((p) => join(root, p)),
    });
    expect(found.databases.get("solo")?.canonicalPath).toBe(join(root, "solo/other.sqlite"));
    expect(found.databases.get("top")?.canonicalPath).toBe(join(root, "top.sqlite"));
    // Known answer: manifest sorted by relative path, keys sorted, sizes in bytes ("canonical" = 9 bytes).
    const entry = (path: string, content: string) => `{"path":"${path}","sha256":"${sha256(content)}","size":${content.length}}`;
    const canonical = `[${entry("shop/shop.sqlite", "canonical")},${entry("shop/shop_v1.sqlite", "v1")},${entry("shop/shop_v2.sqlite", "v2")},${entry("solo/other.sqlite", "only")},${entry("top.sqlite", "top")}]`;
    expect(found.manifest.map((m) => m.path)).toEqual(["shop/shop.sqlite", "shop/shop_v1.sqlite", "shop/shop_v2.sqlite", "solo/other.sqlite", "top.sqlite"]);
    expect(found.manifestHash).toBe(sha256(canonical));
  });

  it("refuses a folder with several .sqlite files and no canonical one", async () => {
    const root = tree("ambiguous", { "amb/x.sqlite": "x", "amb/y.sqlite": "y" });
    await expect(discoverDatabases(root)).rejects.toThrow(/database "amb" has 2 \.sqlite files \(amb\/x\.sqlite, amb\/y\.sqlite\) and none is the conventional amb\/amb\.sqlite/);
  });

  it("returns nothing for a missing root", async () => {
    const found = await discoverDatabases(join(temp, "does-not-exist"));
    expect(found.databases.size).toBe(0);
    expect(found.manifestHash).toBe(sha256("[]"));
  });

  it("changes the manifest hash when a database file changes (copy of concert_singer)", async () => {
    const root = join(temp, "copy");
    const file = join(root, "concert_singer/concert_singer.sqlite");
    mkdirSync(dirname(file), { recursive: true });
    copyFileSync(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite"), file);
    const before = (await discoverDatabases(root)).manifestHash;
    expect((await discoverDatabases(root)).manifestHash).toBe(before); // cached, unchanged

    appendFileSync(file, "x"); // size changes
    const appended = (await discoverDatabases(root)).manifestHash;
    expect(appended).not.toBe(before);

    // Same size, different bytes, explicitly different mtime: the in-process cache must not hide it.
    writeFileSync(file, Buffer.alloc(36865, 7));
    utimesSync(file, new Date(2001, 0, 1), new Date(2001, 0, 1));
    const rewritten = await discoverDatabases(root);
    expect(rewritten.manifest[0]).toEqual({ path: "concert_singer/concert_singer.sqlite", size: 36865, sha256: createHash("sha256").update(Buffer.alloc(36865, 7)).digest("hex") });
    expect(rewritten.manifestHash).not.toBe(appended);
  });
});
