// Test helper process (not a test): inserts entries into a JsonlMemoryStore forever, printing "committed <entry_id>" after each insert resolves, until killed.
import { JsonlMemoryStore } from "../../lib/memory/jsonl-store.ts";
import { HashedBagEmbedder, makeEntry } from "./fixtures.ts";

const dir = process.argv[2];
const store = JsonlMemoryStore.open(dir, { dimension: 32 });
const embedder = new HashedBagEmbedder(32);
for (let i = store.size; ; i++) {
  // every third entry re-uses a delta, so merges (rewrites of existing rows) happen too
  const entry = makeEntry({ queryId: `q${i}`, position: i, delta: i % 3 === 2 ? `SELECT ${i - 1} => SELECT 0` : `SELECT ${i} => SELECT 0`, polarity: i % 2 === 0 ? "positive" : "negative" });
  const result = await store.insert(entry, embedder);
  process.stdout.write(`committed ${result.kind} ${entry.source_episode_id}\n`);
}
