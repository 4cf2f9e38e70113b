/**
 * Tests lib/file-hash.ts (METHOD.md §1.4, §6.4): the streamed SHA-256 agrees with a one-shot hash
 * across chunk boundaries, and the cached digest notices a changed file and forgets a failed read.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileDigest, sha256File } from "../../lib/file-hash.ts";

const dir = mkdtempSync(join(tmpdir(), "file-hash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

describe("sha256File", () => {
  it("hashes an empty file and a file of several read chunks like a one-shot hash", async () => {
    const empty = join(dir, "empty");
    writeFileSync(empty, "");
    expect(await sha256File(empty)).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const big = Buffer.alloc((1 << 22) * 2 + 12345);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >>> 13)) & 0xff;
    const file = join(dir, "big");
    writeFileSync(file, big);
    expect(await sha256File(file)).toBe(sha256(big));
  });

  it("rejects for a missing file", async () => {
    await expect(sha256File(join(dir, "missing"))).rejects.toThrow(/ENOENT/);
  });
});

describe("fileDigest", () => {
  it("returns size and hash, and hashes again after the file changes", async () => {
    const file = join(dir, "db.sqlite");
    writeFileSync(file, "first");
    expect(await fileDigest(file)).toEqual({ size: 5, sha256: sha256("first") });
    writeFileSync(file, "second!");
    utimesSync(file, new Date(2001, 1, 1), new Date(2001, 1, 1)); // a different mtime even on coarse clocks
    expect(await fileDigest(file)).toEqual({ size: 7, sha256: sha256("second!") });
  });

  it("does not remember a failed read", async () => {
    const file = join(dir, "later");
    await expect(fileDigest(file)).rejects.toThrow(/ENOENT/);
    writeFileSync(file, "now here");
    expect((await fileDigest(file)).sha256).toBe(sha256("now here"));
  });
});
