// bench/gguf.ts and bench/make-model.ts: the GGUF header writer reproduces a real file's header byte
// for byte, and the benchmark shapes have Qwen2.5's tensor list and sizes.
import { openSync, readSync, closeSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { encodeGgufHeader, readGgufHeader } from "../../bench/gguf.ts";
import { expectedSize, planMetadata, planTensors } from "../../bench/make-model.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const QWEN = `${ROOT}test/fixtures/models/tiny-random-qwen2.5-instruct.gguf`;

describe("GGUF v3 reader/writer", () => {
  it("re-encodes the tiny Qwen fixture's header byte for byte", () => {
    const header = readGgufHeader(QWEN);
    const encoded = encodeGgufHeader(header.metadata, header.tensors);
    const original = Buffer.alloc(encoded.length);
    const fd = openSync(QWEN, "r");
    readSync(fd, original, 0, original.length, 0);
    closeSync(fd);
    expect(encoded.equals(original)).toBe(true);
  });
});

describe("benchmark model shapes", () => {
  it("0.5b: Qwen2.5-0.5B's tensors (tied embeddings), Q8_0, ~531 MB, the fixture's tokenizer and template", () => {
    const tensors = planTensors("0.5b", "q8_0");
    expect(tensors).toHaveLength(2 + 24 * 12);
    expect(tensors.find((t) => t.name === "blk.23.attn_k.weight")?.dims).toEqual([896, 128]);
    expect(tensors.find((t) => t.name === "blk.0.ffn_down.weight")?.dims).toEqual([4864, 896]);
    expect(tensors.some((t) => t.name === "output.weight")).toBe(false);
    expect(expectedSize("0.5b", "q8_0") / 1e6).toBeCloseTo(531.1, 0);
    const meta = planMetadata("0.5b", "q8_0");
    const fixture = readGgufHeader(QWEN).metadata;
    expect(meta.get("tokenizer.chat_template")).toEqual(fixture.get("tokenizer.chat_template"));
    expect(meta.get("tokenizer.ggml.merges")).toEqual(fixture.get("tokenizer.ggml.merges"));
    expect(meta.get("qwen2.attention.head_count_kv")?.value).toBe(2);
  });

  it("7b: 28 layers, hidden 3584, 4 KV heads, FFN 18944, untied output, vocabulary padded to 152,064", () => {
    const tensors = planTensors("7b", "q4_0");
    expect(tensors).toHaveLength(3 + 28 * 12);
    expect(tensors.find((t) => t.name === "output.weight")?.dims).toEqual([3584, 152064]);
    expect(tensors.find((t) => t.name === "blk.0.attn_v.weight")?.dims).toEqual([3584, 512]);
    expect((planMetadata("7b", "q4_0").get("tokenizer.ggml.tokens")?.value as string[]).length).toBe(152064);
    expect(expectedSize("7b", "q4_0") / 1e9).toBeGreaterThan(4.2);
  });
});
