// Tests lib/memory/jsonl-store.ts: on-disk format of METHOD.md §4.5, identical reload, and crash safety (simulated at every commit phase, and a real SIGKILL).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { InputFileError } from "../../lib/errors.ts";
import { canonicalJson, sha256Hex } from "../../lib/hash.ts";
import type { Embedder } from "../../lib/llm/types.ts";
import { COMMIT_MARKER, encodeVectors, JsonlMemoryStore, MEMORY_FILES, type CommitPhase } from "../../lib/memory/jsonl-store.ts";
import { HashedBagEmbedder, makeEntry } from "./fixtures.ts";
import { budget } from "../helpers/budget.ts";

const tmpDirs: string[] = [];
afterAll(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function freshDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "merit-jsonl-"));
  tmpDirs.push(dir);
  return dir;
}
const read = (dir: string, name: string) => fs.readFileSync(path.join(dir, name), "utf8");
const DELTA = "SELECT a FROM t => SELECT b FROM t";

describe("JsonlMemoryStore files", () => {
  it("writes polarity files in row order with canonical lines, row ids, vectors and metadata v3", async () => {
    const dir = freshDir();
    const store = JsonlMemoryStore.open(dir, { dimension: 8 });
    const embedder = new HashedBagEmbedder(8);
    const p1 = makeEntry({ polarity: "positive", queryId: "q1", position: 1, delta: "a => b", question: "Quelle équipe ?" });
    const n1 = makeEntry({ polarity: "negative", queryId: "q2", position: 2, delta: "c => d" });
    const p2 = makeEntry({ polarity: "positive", queryId: "q3", position: 3, delta: "e => f" });
    for (const e of [p1, n1, p2]) await store.insert(e, embedder);

    expect(read(dir, MEMORY_FILES.positive)).toBe(canonicalJson(p1 as never) + "\n" + canonicalJson(p2 as never) + "\n");
    expect(read(dir, MEMORY_FILES.negative)).toBe(canonicalJson(n1 as never) + "\n");
    expect(read(dir, MEMORY_FILES.positive)).toContain("Quelle équipe ?"); // non-ASCII kept, not \u-escaped
    expect(read(dir, MEMORY_FILES.positive).split("\n")[0].startsWith('{"applicability_scope":"global","attempted_sql_delta":"a => b",')).toBe(true);
    expect(JSON.parse(read(dir, MEMORY_FILES.rowToEntryId))).toEqual([p1.entry_id, n1.entry_id, p2.entry_id]);
    const vectorBytes = fs.readFileSync(path.join(dir, MEMORY_FILES.vectors));
    expect(vectorBytes.byteLength).toBe(3 * 8 * 4);
    expect(Buffer.from(encodeVectors(store.vectors(), 8)).equals(vectorBytes)).toBe(true);
    const meta = JSON.parse(read(dir, MEMORY_FILES.metadata));
    expect(meta).toMatchObject({ format_version: 3, entry_count: 3, positive_count: 2, negative_count: 1, embedding_dimension: 8, vector_hash: sha256Hex(vectorBytes) });
    expect(Object.keys(meta).sort()).toEqual(["embedding_dimension", "entry_count", "format_version", "index_backend", "negative_count", "positive_count", "vector_hash"]);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp") || f === COMMIT_MARKER)).toEqual([]);
  });

  it("a merge that flips polarity moves the entry to the other file but keeps its row", async () => {
    const dir = freshDir();
    const store = JsonlMemoryStore.open(dir, { dimension: 8 });
    const embedder = new HashedBagEmbedder(8);
    await store.insert(makeEntry({ delta: "x => y", queryId: "q0" }), embedder);
    await store.insert(makeEntry({ polarity: "positive", delta: DELTA, queryId: "q1", position: 1 }), embedder);
    await store.insert(makeEntry({ polarity: "negative", delta: DELTA, queryId: "q2", position: 2 }), embedder); // 1:1 stays positive
    expect(read(dir, MEMORY_FILES.negative)).toBe("");
    await store.insert(makeEntry({ polarity: "negative", delta: DELTA, queryId: "q3", position: 3 }), embedder); // 1:2 → negative
    expect(read(dir, MEMORY_FILES.positive).trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(read(dir, MEMORY_FILES.negative)).source_query_id).toBe("q3");
    expect(JSON.parse(read(dir, MEMORY_FILES.rowToEntryId))[1]).toBe(store.entries()[1].entry_id);
  });

  it("reload gives identical entries, vectors and episode lookups", async () => {
    const dir = freshDir();
    const store = JsonlMemoryStore.open(dir, { dimension: 8 });
    const embedder = new HashedBagEmbedder(8);
    for (let i = 0; i < 6; i++) await store.insert(makeEntry({ queryId: `q${i}`, position: i, delta: `S${i % 4} => T`, polarity: i % 2 ? "negative" : "positive" }), embedder);
    const again = JsonlMemoryStore.open(dir, { dimension: 8 });
    expect(again.entries()).toEqual(store.entries());
    expect(again.vectors().map((v) => Array.from(v))).toEqual(store.vectors().map((v) => Array.from(v)));
    expect(again.hasEpisode(makeEntry({ queryId: "q5", position: 5 }).source_episode_id)).toBe(true);
    const skip = await again.insert(makeEntry({ queryId: "q4", position: 4, delta: "S0 => T" }), embedder);
    expect(skip.kind).toBe("skip");
  });

  it("dimension 0 (a ranker that reads no vectors): never calls the embedder, an empty vector file, reopens identically", async () => {
    const dir = freshDir();
    const store = JsonlMemoryStore.open(dir, { dimension: 0 });
    const refusing: Embedder = { identity: new HashedBagEmbedder(8).identity, dimension: 8, embed: async () => { throw new Error("embedded although the store keeps no vectors"); }, close: async () => undefined };
    const inserted = await store.insert(makeEntry({ queryId: "q1", position: 1 }), refusing);
    expect(inserted).toMatchObject({ kind: "insert", embeddingCalls: 0 });
    await store.insert(makeEntry({ polarity: "negative", queryId: "q2", position: 2, delta: "c => d" }), refusing);
    expect(fs.readFileSync(path.join(dir, MEMORY_FILES.vectors)).byteLength).toBe(0);
    const meta = JSON.parse(read(dir, MEMORY_FILES.metadata));
    expect(meta).toMatchObject({ entry_count: 2, embedding_dimension: 0, vector_hash: sha256Hex(new Uint8Array(0)) });
    expect(meta.index_backend).toMatch(/^none: /);
    const again = JsonlMemoryStore.open(dir, { dimension: 0 });
    expect(again.entries()).toEqual(store.entries());
    expect(again.vectors().map((v) => v.length)).toEqual([0, 0]);
    expect(() => JsonlMemoryStore.open(dir, { dimension: 8 })).toThrow(/embedding_dimension 0 but this method's ranker reads 8-dimensional vectors/);
  });

  it("refuses a different embedding dimension and a corrupt vector file", async () => {
    const dir = freshDir();
    await JsonlMemoryStore.open(dir, { dimension: 8 }).insert(makeEntry(), new HashedBagEmbedder(8));
    expect(() => JsonlMemoryStore.open(dir, { dimension: 16 })).toThrow(/embedding_dimension 8 but the embedder has 16/);
    fs.appendFileSync(path.join(dir, MEMORY_FILES.vectors), Buffer.alloc(4));
    expect(() => JsonlMemoryStore.open(dir, { dimension: 8 })).toThrow(InputFileError);
  });
});

describe("JsonlMemoryStore crash safety", () => {
  const PHASES: CommitPhase[] = ["staged", "committed", ...Object.values(MEMORY_FILES).map((f) => `renamed:${f}` as CommitPhase), "done"];
  for (const phase of PHASES) {
    it(`a crash at '${phase}' leaves a readable store that keeps every committed entry`, async () => {
      const dir = freshDir();
      const embedder = new HashedBagEmbedder(8);
      const first = makeEntry({ queryId: "q1", position: 1, delta: "a => b" });
      await JsonlMemoryStore.open(dir, { dimension: 8 }).insert(first, embedder);
      const crashing = JsonlMemoryStore.open(dir, {
        dimension: 8,
        onCommitPhase: (p) => {
          if (p === phase) throw new Error(`simulated crash at ${p}`);
        },
      });
      const second = makeEntry({ queryId: "q2", position: 2, delta: "c => d", polarity: "negative" });
      await expect(crashing.insert(second, embedder)).rejects.toThrow(/simulated crash/);
      if (phase === "staged") expect(fs.readdirSync(dir).some((f) => f.endsWith(".tmp"))).toBe(true);
      // the crashed instance refuses further writes (its memory may lag the disk) until reopened
      await expect(crashing.insert(makeEntry({ queryId: "q3", position: 3, delta: "e => f" }), embedder)).rejects.toThrow(/reopen the store/);

      const reopened = JsonlMemoryStore.open(dir, { dimension: 8 });
      // before the commit marker the write never happened; from the marker on it is rolled forward
      const expectedIds = phase === "staged" ? [first.entry_id] : [first.entry_id, second.entry_id];
      expect(reopened.entries().map((e) => e.entry_id)).toEqual(expectedIds);
      expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp") || f === COMMIT_MARKER)).toEqual([]);
      expect(JSON.parse(read(dir, MEMORY_FILES.metadata)).entry_count).toBe(expectedIds.length);
    });
  }

  it("a real SIGKILL during a write never loses a committed entry", async () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const dir = freshDir();
    const committed = new Set<string>();
    for (const killAfter of [6]) {
      const child = spawn(process.execPath, [path.join(root, "test/memory/crash-writer.ts"), dir], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      let buffer = "";
      let count = 0;
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
      child.stdout.on("data", (d: Buffer) => {
        buffer += d.toString();
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          committed.add(line.split(" ")[2]);
          count += 1;
          // kill mid-write: the writer is already inside its next insert when this line arrives
          if (count === killAfter) child.kill("SIGKILL");
        }
      });
      await exited;
      expect(count, stderr).toBeGreaterThanOrEqual(killAfter);
      const store = JsonlMemoryStore.open(dir, { dimension: 32 });
      for (const episode of committed) expect(store.hasEpisode(episode)).toBe(true);
    }
  }, budget(60_000));
});
