// Tests lib/llm/embedding-cache.ts and its admin (lib/llm/cache-admin.ts, cache-merge.ts, `merit
// cache`): a warm cache serves bit-identical vectors without loading the embedder; keys follow the
// embedder identity and the text; damaged rows are refused; merge unites embedding rows by the call
// rows' rules. Also once with the tiny BGE GGUF: its identity read from the header equals the loaded one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { cacheStats, pruneCache, verifyCache } from "../../lib/llm/cache-admin.ts";
import { mergeCaches } from "../../lib/llm/cache-merge.ts";
import { CallCache } from "../../lib/llm/call-cache.ts";
import { EmbeddingCache, embeddingKey, embeddingRowHash, vectorBytes, type EmbeddingCacheSource } from "../../lib/llm/embedding-cache.ts";
import { createLlamaEmbedder, readLlamaEmbedderIdentity } from "../../lib/llm/llama-embedder.ts";
import type { BackendIdentity, Embedder } from "../../lib/llm/types.ts";
import { TINY_BGE } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "./fixtures/scripted-backend.ts";
import { budget } from "../helpers/budget.ts";

const dir = mkdtempSync(join(tmpdir(), "merit-embcache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = () => join(dir, `cache-${n++}.sqlite`);

const IDENTITY: BackendIdentity = { kind: "test-embedding", model: "counting", modelHash: "ab".repeat(32), params: { maxTokens: 512, normalize: "l2" } };

/** Test double: deterministic vectors from the text's char codes (irrational-looking floats), counting texts embedded. */
class CountingEmbedder implements Embedder {
  readonly identity: BackendIdentity;
  readonly dimension = 8;
  embedded: string[] = [];
  closed = false;
  constructor(identity: BackendIdentity = IDENTITY) {
    this.identity = identity;
  }
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.embedded.push(...texts);
    await new Promise((resolve) => setImmediate(resolve));
    return texts.map((t) => Float32Array.from({ length: 8 }, (_, i) => Math.sin(1 + i * 0.7 + [...t].reduce((s, c) => s + c.codePointAt(0)!, 0) / 3)));
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A source over `inner` that counts loads, or throws on load when `inner` is null. */
function source(inner: Embedder | null, identity = IDENTITY, dimension = 8): EmbeddingCacheSource & { loads: number } {
  const s = {
    identity,
    dimension,
    loads: 0,
    load: async () => {
      s.loads++;
      if (inner === null) throw new Error("the embedder must not be loaded: every vector is cached");
      return inner;
    },
  };
  return s;
}

const bytes = (vs: Float32Array[]) => vs.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex"));
const TEXTS = ["singer table", "concert in 2014 é", "", "singer table", "multi\nline"];

function captureIO() {
  const io = { out: [] as string[], err: [] as string[] };
  return { io, sink: { out: (l: string) => io.out.push(l), err: (l: string) => io.err.push(l) } };
}

describe("EmbeddingCache over a counting embedder", () => {
  it("a warm cache never loads the embedder and returns the computed vectors bit for bit", async () => {
    const file = freshFile();
    const inner = new CountingEmbedder();
    const cold = new EmbeddingCache(source(inner), file);
    expect(cold.loaded).toBe(false);
    const first = await cold.embed(TEXTS);
    expect(inner.embedded).toEqual(["singer table", "concert in 2014 é", "", "multi\nline"]); // the repeat in one batch is embedded once
    expect(cold.stats()).toEqual({ hits: 1, computed: 4 });
    expect(cold.loaded).toBe(true);
    expect(bytes(first)).toEqual(bytes(await new CountingEmbedder().embed(TEXTS)));
    await cold.close();
    expect(inner.closed).toBe(false); // whoever supplied `load` owns the embedder

    const throwing = source(null);
    const warm = new EmbeddingCache(throwing, file);
    const second = await warm.embed(TEXTS);
    expect(throwing.loads).toBe(0);
    expect(warm.loaded).toBe(false);
    expect(warm.stats()).toEqual({ hits: 5, computed: 0 });
    expect(bytes(second)).toEqual(bytes(first));
    second[0][0] = 42; // callers get fresh arrays
    expect(bytes(await warm.embed(["singer table"]))).toEqual(bytes([first[0]]));
    // A text the file lacks loads the embedder then (and here that refuses).
    await expect(warm.embed(["a new text"])).rejects.toThrow(/must not be loaded/);
    await warm.close();
  });

  it("the same text asked for twice at once is embedded once", async () => {
    const inner = new CountingEmbedder();
    const cache = new EmbeddingCache(source(inner), freshFile());
    const [a, b] = await Promise.all([cache.embed(["x", "y"]), cache.embed(["y", "x"])]);
    expect(inner.embedded).toEqual(["x", "y"]);
    expect(bytes(b)).toEqual(bytes([a[1], a[0]]));
    expect(cache.stats()).toEqual({ hits: 2, computed: 2 });
    await cache.close();
  });

  it("keys follow the embedder identity (model hash, params) and the exact text", () => {
    const key = embeddingKey(IDENTITY, "singer table");
    expect(embeddingKey({ ...IDENTITY }, "singer table")).toBe(key);
    expect(embeddingKey({ ...IDENTITY, modelHash: "cd".repeat(32) }, "singer table")).not.toBe(key);
    expect(embeddingKey({ ...IDENTITY, params: { maxTokens: 256, normalize: "l2" } }, "singer table")).not.toBe(key);
    expect(embeddingKey(IDENTITY, "singer table ")).not.toBe(key);
  });

  it("another identity misses: its vectors are computed, not served", async () => {
    const file = freshFile();
    const a = new EmbeddingCache(source(new CountingEmbedder()), file);
    await a.embed(["singer table"]);
    await a.close();
    const other = { ...IDENTITY, modelHash: "cd".repeat(32) };
    const inner = new CountingEmbedder(other);
    const b = new EmbeddingCache(source(inner, other), file);
    await b.embed(["singer table"]);
    expect(inner.embedded).toEqual(["singer table"]);
    await b.close();
  });

  it("refuses a loaded embedder whose identity or dimension is not the one the keys use", async () => {
    const cache = new EmbeddingCache(source(new CountingEmbedder({ ...IDENTITY, params: { maxTokens: 128, normalize: "l2" } })), freshFile());
    await expect(cache.embed(["x"])).rejects.toThrow(/reports identity .*maxTokens":128.* read from its file before loading/);
    await cache.close();
    const wide = new EmbeddingCache(source(new CountingEmbedder(), IDENTITY, 16), freshFile());
    await expect(wide.embed(["x"])).rejects.toThrow(/dimension 8.*dimension 16/);
    await wide.close();
  });

  it("a changed vector fails its row hash on the hit; verify lists it", async () => {
    const file = freshFile();
    const cache = new EmbeddingCache(source(new CountingEmbedder()), file);
    await cache.embed(["a", "b"]);
    await cache.close();
    const db = new Database(file);
    const key = embeddingKey(IDENTITY, "b");
    const row = db.prepare("SELECT vector FROM embeddings WHERE key = ?").get(key) as { vector: Buffer };
    row.vector[3] ^= 1; // one bit of one float
    db.prepare("UPDATE embeddings SET vector = ? WHERE key = ?").run(row.vector, key);
    db.close();
    const warm = new EmbeddingCache(source(null), file);
    expect((await warm.embed(["a"])).length).toBe(1);
    await expect(warm.embed(["b"])).rejects.toThrow(/cached embedding [0-9a-f]{12} fails its row_hash check/);
    await warm.close();
    const { rows, embeddingRows, corrupt } = verifyCache(file);
    expect([rows, embeddingRows]).toEqual([0, 2]);
    expect(corrupt).toEqual([{ key, reason: "row_hash does not match the dimension and vector bytes", table: "embeddings" }]);
    const { io, sink } = captureIO();
    expect(await main(["cache", "verify", "--cache", file], sink)).toBe(1);
    expect(io.err).toEqual([`corrupt embedding row ${key}: row_hash does not match the dimension and vector bytes`]);
    expect(io.out).toEqual([`0 row(s) and 2 embedding row(s) checked, 1 corrupt in ${file}`]);
  });

  it("shares the call cache's file: stats lists both tables, prune --keep-embedder trims embeddings only", async () => {
    const file = freshFile();
    const calls = new CallCache(new ScriptedBackend(), file);
    await calls.generate({ prompt: "q1", maxOutputTokens: 8 });
    const other = { ...IDENTITY, model: "other" };
    const a = new EmbeddingCache(source(new CountingEmbedder()), file);
    const b = new EmbeddingCache(source(new CountingEmbedder(other), other), file);
    await a.embed(["x", "y"]);
    await b.embed(["x"]);
    await Promise.all([calls.close(), a.close(), b.close()]);
    const stats = cacheStats(file);
    expect(stats.rows).toBe(1);
    expect(stats.embeddings.rows).toBe(3);
    expect(stats.embeddings.identities.map((g) => [g.model, g.rows])).toEqual([["counting", 2], ["other", 1]]);
    const { io, sink } = captureIO();
    expect(await main(["cache", "stats", "--cache", file], sink)).toBe(0);
    expect(io.out.at(-1)).toBe(`3 embedding row(s), 2 embedder identities in ${file}`);
    expect(io.out.filter((l) => / embedding row\(s\)  test-embedding  counting /.test(l))).toHaveLength(1);
    expect(pruneCache(file, { keepEmbedderHash: stats.embeddings.identities[0].identityHash })).toBe(1);
    expect(cacheStats(file)).toMatchObject({ rows: 1, embeddings: { rows: 2 } });
    expect(pruneCache(file, { olderThanDays: 0, now: new Date(Date.now() + 86_400_000) })).toBe(3);
  });

  it("reads a call cache written before the embeddings table existed", async () => {
    const file = freshFile();
    const calls = new CallCache(new ScriptedBackend(), file);
    await calls.generate({ prompt: "q1", maxOutputTokens: 8 });
    await calls.close();
    const db = new Database(file);
    db.exec("DROP TABLE embeddings");
    db.close();
    expect(cacheStats(file).embeddings).toEqual({ rows: 0, identities: [] });
    expect(verifyCache(file)).toEqual({ rows: 1, embeddingRows: 0, corrupt: [] });
    const merged = mergeCaches([file], freshFile());
    expect([merged.rows, merged.embeddingRows]).toEqual([1, 0]);
  });
});

describe("merit cache merge with embedding rows", () => {
  async function cacheWith(texts: string[]): Promise<string> {
    const file = freshFile();
    const cache = new EmbeddingCache(source(new CountingEmbedder()), file);
    await cache.embed(texts);
    await cache.close();
    return file;
  }
  const vectorsOf = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT key, identity_hash, text, dimension, hex(vector) AS v, row_hash FROM embeddings ORDER BY key").all();
    } finally {
      db.close();
    }
  };

  it("unites the embedding rows of two shards, skipping the ones already present", async () => {
    const a = await cacheWith(["x", "y"]);
    const b = await cacheWith(["y", "z"]);
    const whole = await cacheWith(["x", "y", "z"]);
    const into = join(dir, "merged-ok.sqlite");
    const { io, sink } = captureIO();
    expect(await main(["cache", "merge", a, b, "--into", into], sink)).toBe(0);
    expect(io.err).toEqual([`${a}: 0 row(s), 0 added, 0 already present; 2 embedding row(s), 2 added, 0 already present`, `${b}: 0 row(s), 0 added, 0 already present; 2 embedding row(s), 1 added, 1 already present`]);
    expect(io.out).toEqual([`merged 2 cache(s) into ${into}: 0 row(s), 3 embedding row(s)`]);
    expect(vectorsOf(into).map((r) => ({ ...(r as object), created_at: undefined }))).toEqual(vectorsOf(whole).map((r) => ({ ...(r as object), created_at: undefined })));
    // The merged file serves every vector without an embedder.
    const warm = new EmbeddingCache(source(null), into);
    expect(bytes(await warm.embed(["z", "x"]))).toEqual(bytes(await new CountingEmbedder().embed(["z", "x"])));
    await warm.close();
  });

  it("a corrupt embedding row or a conflicting vector stops the merge with nothing written", async () => {
    const good = await cacheWith(["x"]);
    const bad = await cacheWith(["x", "y"]);
    const db = new Database(bad);
    db.prepare("UPDATE embeddings SET row_hash = ? WHERE text = 'y'").run("0".repeat(64));
    db.close();
    const fresh = join(dir, "merged-bad.sqlite");
    expect(() => mergeCaches([good, bad], fresh)).toThrow(/embedding row .* is corrupt \(row_hash does not match/);
    expect(() => new Database(fresh, { fileMustExist: true })).toThrow(); // a failed merge into a new file leaves none

    // Same key, a different but self-consistent vector (row hash recomputed): a conflict.
    const forged = await cacheWith(["x", "w"]);
    const f = new Database(forged);
    const key = embeddingKey(IDENTITY, "x");
    const vector = vectorBytes(Float32Array.from({ length: 8 }, (_, i) => i / 8));
    f.prepare("UPDATE embeddings SET vector = ?, row_hash = ? WHERE key = ?").run(vector, embeddingRowHash(key, 8, vector), key);
    f.close();
    expect(verifyCache(forged).corrupt).toEqual([]);
    const into = join(dir, "merged-conflict.sqlite");
    mergeCaches([good], into);
    const before = vectorsOf(into);
    expect(() => mergeCaches([forged], into)).toThrow(/embedding [0-9a-f]{16}… has a different vector .* nothing was merged/);
    expect(vectorsOf(into)).toEqual(before); // the "w" row was not written either
  });
});

describe("with the tiny BGE GGUF", () => {
  it("the identity read from the header is the loaded embedder's, and cached vectors equal computed ones", async () => {
    const declared = await readLlamaEmbedderIdentity({ modelPath: TINY_BGE });
    const real = await createLlamaEmbedder({ modelPath: TINY_BGE, threads: 1 });
    try {
      expect(declared).toEqual({ identity: real.identity, dimension: real.dimension });
      const file = freshFile();
      const texts = ["singer table", "how many heads of departments are older than 56", "word ".repeat(600), ""];
      const computed = await real.embed(texts);
      let loads = 0;
      const load = () => (loads++, createLlamaEmbedder({ modelPath: TINY_BGE, threads: 1, modelHash: declared.identity.modelHash }));
      const cold = new EmbeddingCache({ ...declared, load }, file);
      expect(bytes(await cold.embed(texts))).toEqual(bytes(computed));
      await cold.close();
      await (await cold.loadedEmbedder())?.close();
      expect(loads).toBe(1);
      const warm = new EmbeddingCache({ ...declared, load }, file);
      expect(bytes(await warm.embed(texts))).toEqual(bytes(computed));
      expect(loads).toBe(1); // the model was not loaded again
      expect(warm.stats()).toEqual({ hits: 4, computed: 0 });
      await warm.close();
    } finally {
      await real.close();
    }
  }, budget(120_000));

  it("a missing or non-embedding model file is one line naming it", async () => {
    await expect(readLlamaEmbedderIdentity({ modelPath: join(dir, "nope.gguf") })).rejects.toThrow(/nope\.gguf.*missing/);
  });
});
