// Tests lib/memory/file-transaction.ts (METHOD.md §4.5): a committed redo record repairs files a kill
// left half-applied (a torn last line, a file cut short, a stale tail) and is removed; an uncommitted
// one is discarded with the files untouched; a record of the earlier whole-file protocol still rolls
// forward; a malformed record is refused with one line naming it.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InputFileError } from "../../lib/errors.ts";
import { COMMIT_MARKER, commitChanges, recoverChanges, type FileChange } from "../../lib/memory/file-transaction.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function freshDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "merit-redo-"));
  dirs.push(dir);
  return dir;
}
const FILES = ["memory_a.jsonl", "memory_b.json"];
const text = (dir: string, name: string) => fs.readFileSync(path.join(dir, name), "utf8");
const change = (file: string, offset: number, data: string, size = offset + Buffer.byteLength(data)): FileChange => ({ file, offset, data: Buffer.from(data), size });

/** Commits `changes` but "crashes" right after the commit point, before any change is applied. */
function commitThenCrash(dir: string, changes: FileChange[]): void {
  expect(() =>
    commitChanges(dir, FILES, changes, (p) => {
      if (p === "committed") throw new Error("crash");
    }),
  ).toThrow("crash");
  expect(fs.existsSync(path.join(dir, COMMIT_MARKER))).toBe(true);
}

describe("commitChanges and recoverChanges", () => {
  it("appends, rewrites a tail and creates files; reports every file's phase in order", () => {
    const dir = freshDir();
    const phases: string[] = [];
    commitChanges(dir, FILES, [change("memory_a.jsonl", 0, '{"x":1}\n'), change("memory_b.json", 0, "[1]\n")], (p) => phases.push(p));
    expect(phases).toEqual(["staged", "committed", "renamed:memory_a.jsonl", "renamed:memory_b.json", "done"]);
    commitChanges(dir, FILES, [change("memory_a.jsonl", 8, '{"x":2}\n'), change("memory_b.json", 2, ",2]\n")], () => undefined);
    expect([text(dir, "memory_a.jsonl"), text(dir, "memory_b.json")]).toEqual(['{"x":1}\n{"x":2}\n', "[1,2]\n"]);
    commitChanges(dir, FILES, [change("memory_a.jsonl", 0, '{"x":11}\n')], () => undefined); // shorter: the file is cut
    expect(text(dir, "memory_a.jsonl")).toBe('{"x":11}\n');
    expect(fs.readdirSync(dir).sort()).toEqual(FILES.slice().sort());
  });

  it("a committed record repairs a torn last line, a file cut short and a stale tail", () => {
    const dir = freshDir();
    commitChanges(dir, FILES, [change("memory_a.jsonl", 0, '{"x":1}\n'), change("memory_b.json", 0, "[1,2,3]\n")], () => undefined);
    commitThenCrash(dir, [change("memory_a.jsonl", 8, '{"x":2}\n'), change("memory_b.json", 0, "[9]\n")]);
    fs.appendFileSync(path.join(dir, "memory_a.jsonl"), '{"x":'); // the kill tore the append
    fs.truncateSync(path.join(dir, "memory_b.json"), 3); // and cut the other file short
    recoverChanges(dir);
    expect([text(dir, "memory_a.jsonl"), text(dir, "memory_b.json")]).toEqual(['{"x":1}\n{"x":2}\n', "[9]\n"]);
    expect(fs.existsSync(path.join(dir, COMMIT_MARKER))).toBe(false);
    recoverChanges(dir); // idempotent
    expect(text(dir, "memory_a.jsonl")).toBe('{"x":1}\n{"x":2}\n');
  });

  it("an uncommitted (staged or torn) record is discarded and the files keep their old bytes", () => {
    const dir = freshDir();
    commitChanges(dir, FILES, [change("memory_a.jsonl", 0, "old\n")], () => undefined);
    expect(() =>
      commitChanges(dir, FILES, [change("memory_a.jsonl", 4, "new\n")], (p) => {
        if (p === "staged") throw new Error("crash");
      }),
    ).toThrow("crash");
    fs.writeFileSync(path.join(dir, `${COMMIT_MARKER}.tmp`), '{"format":"merit-memory-re'); // torn while staging
    recoverChanges(dir);
    expect(text(dir, "memory_a.jsonl")).toBe("old\n");
    expect(fs.readdirSync(dir)).toEqual(["memory_a.jsonl"]);
  });

  it("rolls forward a record of the whole-file protocol (staged <name>.tmp files)", () => {
    const dir = freshDir();
    fs.writeFileSync(path.join(dir, "memory_a.jsonl"), "old\n");
    fs.writeFileSync(path.join(dir, "memory_a.jsonl.tmp"), "new\n");
    fs.writeFileSync(path.join(dir, COMMIT_MARKER), JSON.stringify({ files: ["memory_a.jsonl"] }));
    recoverChanges(dir);
    expect(fs.readdirSync(dir)).toEqual(["memory_a.jsonl"]);
    expect(text(dir, "memory_a.jsonl")).toBe("new\n");
  });

  it("refuses a malformed record, naming it", () => {
    const dir = freshDir();
    fs.writeFileSync(path.join(dir, COMMIT_MARKER), JSON.stringify({ format: "merit-memory-redo-v1", files: ["memory_a.jsonl"], changes: [{ file: "../escape", offset: 0, size: 1, data: "" }] }));
    expect(() => recoverChanges(dir)).toThrow(InputFileError);
    expect(() => recoverChanges(dir)).toThrow(/memory_commit\.json: commit marker with a malformed change list/);
    fs.writeFileSync(path.join(dir, COMMIT_MARKER), "{not json");
    expect(() => recoverChanges(dir)).toThrow(/not valid JSON/);
  });
});
