// config memory_source naming no run directory (bench/fault-probes.ts "source-missing"): the refusal
// named only DIR/manifest.json ("is missing or not JSON"), not the config field, so a user read it as
// a fault of the run's own --out; a damaged file of the source (manifest, trajectories, memory/) was
// refused with its file's line only ("re-run it into a fresh --out"). Now every refusal of the source
// starts with "config memory_source PATH".
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readMemorySource } from "../../lib/experiment/memory-source.ts";
import { getMethod } from "../../lib/methods/index.ts";

const root = mkdtempSync(join(tmpdir(), "memory-source-paths-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const read = (path: string) => () => readMemorySource(path, getMethod("merit"), "spider", new Set());

describe("config memory_source that names no run", () => {
  it("a path that does not exist", () => {
    const path = join(root, "no-such-run");
    expect(read(path)).toThrow(`config memory_source ${path}: does not exist; name the directory of a finished \`merit run\``);
  });

  it("a file", () => {
    const path = join(root, "a-file");
    writeFileSync(path, "x");
    expect(read(path)).toThrow(`config memory_source ${path}: is a file, not a run directory`);
  });

  it("a manifest.json that is not JSON: the file's line, said to be the source's", () => {
    const path = join(root, "bad-manifest");
    mkdirSync(path);
    writeFileSync(join(path, "manifest.json"), "{");
    expect(read(path)).toThrow(`config memory_source ${path}: ${join(path, "manifest.json")}: is missing or not JSON; name a run directory written by \`merit run\``);
  });

  it("a directory without manifest.json", () => {
    const path = join(root, "empty");
    mkdirSync(path);
    expect(read(path)).toThrow(`config memory_source ${path}: holds no manifest.json, so it is no run directory`);
  });
});
