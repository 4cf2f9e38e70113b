// Tests lib/analysis/model-identity.ts: the model line and the test-model banner from run manifests' identities, and the verified hashes of models/models.json and models/models.lock.json.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultModelsDir, figureSubtitle, modelIdentity, modelNotes, verifiedHashes } from "../../lib/analysis/model-identity.ts";

const dir = mkdtempSync(join(tmpdir(), "merit-models-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const QWEN = { kind: "llama.cpp", model: "Qwen2.5-7B-Instruct-Q4_K_M.gguf", modelHash: "a".repeat(64) };
const BGE = { kind: "llama.cpp-embedding", model: "bge-large-en-v1.5-f16.gguf", modelHash: "b".repeat(64) };
const TINY = { kind: "llama.cpp", model: "tiny-random-qwen2.5-instruct.gguf", modelHash: "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f" };

describe("verifiedHashes", () => {
  it("collects every sha256 of models.json and models.lock.json, ignoring nulls and other fields", () => {
    writeFileSync(join(dir, "models.json"), JSON.stringify({ models: { q: { sha256: "A".repeat(64), bytes: 1 }, e: { sha256: null } } }));
    writeFileSync(join(dir, "models.lock.json"), JSON.stringify({ files: [{ revision: "r", sha256: "b".repeat(64) }, { sha256: "not-a-hash" }] }));
    expect([...verifiedHashes(dir)].sort()).toEqual(["a".repeat(64), "b".repeat(64)]);
    expect(verifiedHashes(join(dir, "absent")).size).toBe(0);
  });
  it("the kit's own models.json verifies nothing while its hashes are null", () => {
    for (const h of verifiedHashes(defaultModelsDir())) expect(h).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("modelIdentity", () => {
  it("verified models: a model line and no banner", () => {
    const id = modelIdentity([QWEN, QWEN], [BGE, null], new Set([QWEN.modelHash, BGE.modelHash]));
    expect(id.line).toBe("Model: Qwen2.5-7B-Instruct-Q4_K_M.gguf (llama.cpp, sha256 aaaaaaaaaaaa…); embedder bge-large-en-v1.5-f16.gguf (llama.cpp-embedding, sha256 bbbbbbbbbbbb…).");
    expect(id.banner).toBeNull();
    expect(modelNotes(id)).toEqual([id.line]);
    expect(figureSubtitle(id)).toEqual(["Model: Qwen2.5-7B-Instruct-Q4_K_M.gguf"]);
  });
  it("a test fixture, a scripted double or a missing identity: TEST MODEL", () => {
    expect(modelIdentity([TINY], [], new Set()).banner).toBe("TEST MODEL — numbers are meaningless: tiny-random-qwen2.5-instruct.gguf is a random-weight test fixture.");
    expect(modelIdentity([{ kind: "test-scripted", model: "scripted", modelHash: "none" }], [], new Set()).banner).toBe("TEST MODEL — numbers are meaningless: scripted is a test double (test-scripted).");
    const none = modelIdentity([null, null], [], new Set());
    expect(none.line).toBe("Model: not recorded.");
    expect(none.banner).toBe("TEST MODEL — numbers are meaningless: 2 run manifest(s) record no model identity.");
    expect(figureSubtitle(none)).toEqual(["TEST MODEL — numbers are meaningless", "Model: not recorded"]);
  });
  it("a real model whose hash is not verified (even when the chat model is): UNVERIFIED MODEL", () => {
    const id = modelIdentity([QWEN], [BGE], new Set([QWEN.modelHash]));
    expect(id.banner).toBe("UNVERIFIED MODEL — numbers are meaningless until the model is verified: bge-large-en-v1.5-f16.gguf (bbbbbbbbbbbb…) is not a verified entry of models/models.json or models/models.lock.json.");
    expect(modelNotes(id)).toEqual([id.banner, id.line]);
  });
});
