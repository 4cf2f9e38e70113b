// Tests lib/analysis/memory-growth.ts and run-directory.ts readEntryBirths: growth curves by hand (step points, mean over seeds), births from memory files, SVG/PNG with text.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderSvg, svgToPng } from "../../lib/analysis/figure-render.ts";
import { memoryGrowth, memoryGrowthFigure, type RunMemory } from "../../lib/analysis/memory-growth.ts";
import { readEntryBirths } from "../../lib/analysis/run-directory.ts";

// merit, stream of 10 episodes. seed 0: positive entries born at positions 1 and 4, negative at 2.
// seed 1: positive at 4, no negative.
const runs: RunMemory[] = [
  { dataset: "spider", method: "merit", stream_seed: 0, stream_length: 10, births: [{ polarity: "positive", position: 4 }, { polarity: "negative", position: 2 }, { polarity: "positive", position: 1 }] },
  { dataset: "spider", method: "merit", stream_seed: 1, stream_length: 10, births: [{ polarity: "positive", position: 4 }] },
];

describe("memoryGrowth", () => {
  it("steps at every birth (episodes finished = position + 1), mean over seeds", () => {
    const pts = memoryGrowth(runs).map((p) => `${p.polarity} ${p.episodes}:${p.entries}`);
    expect(pts).toEqual([
      // positive: x ∈ {0, 2, 5, 10}; seed 0 counts 0,1,2,2; seed 1 counts 0,0,1,1 → means 0, 0.5, 1.5, 1.5
      "positive 0:0",
      "positive 2:0.5",
      "positive 5:1.5",
      "positive 10:1.5",
      // negative: x ∈ {0, 3, 10}; seed 0 0,1,1; seed 1 0,0,0 → 0, 0.5, 0.5
      "negative 0:0",
      "negative 3:0.5",
      "negative 10:0.5",
    ]);
  });
  it("renders to SVG and a PNG with drawn text", async () => {
    const svg = await renderSvg(memoryGrowthFigure(runs, { labels: { merit: "MERIT", spider: "Spider" } }));
    for (const text of ["MERIT", "positive", "negative", "Memory entries", "Polarity", "Spider"]) expect(svg).toContain(`>${text}</text>`);
    const png = svgToPng(svg);
    expect([...png.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    expect(Buffer.compare(png, svgToPng(svg.replace(/<text[^>]*>[^<]*<\/text>/g, "")))).not.toBe(0);
  });
});

describe("readEntryBirths", () => {
  it("takes the earliest position over an entry's provenance_history, per polarity file", () => {
    const dir = mkdtempSync(join(tmpdir(), "merit-births-"));
    try {
      expect(readEntryBirths(dir)).toBeNull();
      mkdirSync(join(dir, "memory"));
      // a merged positive entry whose representative is from position 9 but was first observed at 3
      const pos = { polarity: "positive", source_stream_position: 9, provenance_history: [{ source_stream_position: 9 }, { source_stream_position: 3 }] };
      const neg = { polarity: "negative", source_stream_position: 5, provenance_history: [{ source_stream_position: 5 }] };
      writeFileSync(join(dir, "memory", "memory_positive.jsonl"), JSON.stringify(pos) + "\n");
      writeFileSync(join(dir, "memory", "memory_negative.jsonl"), JSON.stringify(neg) + "\n\n");
      expect(readEntryBirths(dir)).toEqual([{ polarity: "positive", position: 3 }, { polarity: "negative", position: 5 }]);
      writeFileSync(join(dir, "memory", "memory_negative.jsonl"), "{not json\n");
      expect(() => readEntryBirths(dir)).toThrow(/line 1 is not JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
