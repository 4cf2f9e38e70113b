/**
 * Report stage, pure core (METHOD.md §4.1, §4.7): memory growth over the stream, from a run's final
 * memory files. An entry enters the memory at the earliest `source_stream_position` of itself and
 * its provenance history (merges never change an entry's id, so later observations only add evidence).
 * @module
 */
import type { MemoryEntry } from "../memory/entry.ts";
import type { MemoryGrowth } from "./report-data.ts";

/** Cumulative positive and negative entry counts after each stream position where an entry was created. */
export function memoryGrowth(entries: readonly MemoryEntry[]): Omit<MemoryGrowth, "run"> {
  const created = new Map<number, { positive: number; negative: number }>();
  for (const e of entries) {
    const first = Math.min(e.source_stream_position, ...e.provenance_history.map((h) => h.source_stream_position));
    const slot = created.get(first) ?? { positive: 0, negative: 0 };
    if (e.polarity === "positive") slot.positive += 1;
    else slot.negative += 1;
    created.set(first, slot);
  }
  const out: Omit<MemoryGrowth, "run"> = { position: [], positive: [], negative: [] };
  let positive = 0;
  let negative = 0;
  for (const position of [...created.keys()].sort((a, b) => a - b)) {
    const slot = created.get(position) as { positive: number; negative: number };
    positive += slot.positive;
    negative += slot.negative;
    out.position.push(position);
    out.positive.push(positive);
    out.negative.push(negative);
  }
  return out;
}
