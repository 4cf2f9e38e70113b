// Tests lib/memory/file-layout.ts (METHOD.md §4.5): after every insertion and merge (polarity flips
// included), the files patched by the planned changes equal the files written whole for the same rows,
// byte for byte; an insertion only appends (its changes start at the old end of each file, the row
// list's closing "]\n" aside); a file that is not in the canonical form is rewritten whole once.
import { describe, expect, it } from "vitest";
import type { MemoryEntry } from "../../lib/memory/entry.ts";
import { MEMORY_FILES, MemoryFileLayout, memoryFileBytes, type WritingPlan } from "../../lib/memory/file-layout.ts";
import type { FileChange } from "../../lib/memory/file-transaction.ts";
import { MemoryTable } from "../../lib/memory/memory-table.ts";
import { PyRandom } from "../../lib/random.ts";
import { HashedBagEmbedder, makeEntry } from "./fixtures.ts";

const DIM = 8;
type Files = Map<string, Buffer>;

function apply(files: Files, changes: readonly FileChange[]): void {
  for (const c of changes) {
    const old = files.get(c.file) ?? Buffer.alloc(0);
    const next = Buffer.alloc(c.size);
    old.copy(next, 0, 0, Math.min(old.length, c.size));
    Buffer.from(c.data).copy(next, c.offset);
    files.set(c.file, next);
  }
}

function expectFilesOf(files: Files, table: MemoryTable): void {
  const expected = memoryFileBytes(table.entries(), table.vectors(), DIM);
  for (const [key, name] of Object.entries(MEMORY_FILES)) {
    expect(files.get(name)?.toString("latin1"), name).toBe(Buffer.from(expected[key as keyof typeof MEMORY_FILES]).toString("latin1"));
  }
}

const empty = { exist: false, positive: new Uint8Array(0), negative: new Uint8Array(0), rowToEntryId: new Uint8Array(0), vectors: new Uint8Array(0) };

async function write(table: MemoryTable, layout: MemoryFileLayout, files: Files, entry: MemoryEntry, embedder: HashedBagEmbedder) {
  const plan = table.plan(entry);
  const vector = await table.embedPlan(plan, embedder);
  if (plan.kind === "skip" || vector === null) return { kind: plan.kind, changes: [] as FileChange[] };
  const before = new Map([...files].map(([name, bytes]) => [name, bytes.length]));
  const planned = layout.plan(plan as WritingPlan, vector, table.entries(), table.vectors());
  apply(files, planned.changes);
  planned.accept();
  table.apply(plan, vector);
  return { kind: plan.kind, changes: planned.changes, before };
}

describe("MemoryFileLayout", () => {
  it("patches the files to exactly the whole-file bytes after every insert and merge (300 seeded writes)", async () => {
    const rng = new PyRandom(5);
    const embedder = new HashedBagEmbedder(DIM);
    const table = new MemoryTable(DIM);
    const layout = new MemoryFileLayout([], [], empty, DIM);
    const files: Files = new Map();
    const kinds = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const entry = makeEntry({ queryId: `q${i}`, position: i, delta: `SELECT ${rng.randbelow(60)} => SELECT 0`, polarity: rng.random() < 0.5 ? "positive" : "negative", question: i % 7 === 0 ? "Quelle équipe ?" : undefined });
      const { kind, changes, before } = await write(table, layout, files, entry, embedder);
      kinds.add(kind);
      if (kind === "insert" && before !== undefined && i > 0) {
        for (const c of changes) {
          if (c.file === MEMORY_FILES.metadata) expect(c.offset).toBe(0);
          else if (c.file === MEMORY_FILES.rowToEntryId) expect(c.offset).toBe(before.get(c.file)! - 2);
          else expect(c.offset, c.file).toBe(before.get(c.file));
        }
      }
      expectFilesOf(files, table);
    }
    expect([...kinds].sort()).toEqual(["insert", "merge"]);
  });

  it("rewrites a file whole when the store on disk was not written in the canonical form", async () => {
    const embedder = new HashedBagEmbedder(DIM);
    const table = new MemoryTable(DIM);
    const files: Files = new Map();
    const seed = new MemoryFileLayout([], [], empty, DIM);
    for (let i = 0; i < 4; i++) await write(table, seed, files, makeEntry({ queryId: `q${i}`, position: i, delta: `S${i} => T`, polarity: i % 2 ? "negative" : "positive" }), embedder);
    // The same rows, but the positive file pretty-printed and the row list spaced out by another writer.
    const positive = Buffer.from(table.entries().filter((e) => e.polarity === "positive").map((e) => JSON.stringify(e, null, 0).replace(/,"/g, ', "') + "\n").join(""));
    const rowIds = Buffer.from(JSON.stringify(table.entries().map((e) => e.entry_id), null, 1) + "\n");
    files.set(MEMORY_FILES.positive, positive);
    files.set(MEMORY_FILES.rowToEntryId, rowIds);
    const disk = { exist: true, positive, negative: files.get(MEMORY_FILES.negative)!, rowToEntryId: rowIds, vectors: files.get(MEMORY_FILES.vectors)! };
    const layout = new MemoryFileLayout(table.entries(), table.vectors(), disk, DIM);
    const { changes } = await write(table, layout, files, makeEntry({ queryId: "q9", position: 9, delta: "S9 => T", polarity: "positive" }), embedder);
    expect(changes.find((c) => c.file === MEMORY_FILES.positive)!.offset).toBe(0);
    expect(changes.find((c) => c.file === MEMORY_FILES.rowToEntryId)!.offset).toBe(0);
    expectFilesOf(files, table);
    // once rewritten, the next insertion appends again
    const next = await write(table, layout, files, makeEntry({ queryId: "q10", position: 10, delta: "S10 => T", polarity: "positive" }), embedder);
    expect(next.changes.find((c) => c.file === MEMORY_FILES.positive)!.offset).toBe(next.before!.get(MEMORY_FILES.positive));
    expectFilesOf(files, table);
  });
});
