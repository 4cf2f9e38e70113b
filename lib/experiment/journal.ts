/**
 * Experiment runs, the append-only journal (METHOD.md §11; DESIGN.md §1): JSONL files written one
 * batch of complete lines per `append`, every byte checked and fsynced, so a kill leaves at most one
 * torn last line, which `recover` cuts off. A write that fails part-way (ENOSPC, a short write) is
 * cut back to the previous end of the file before the error is raised, so a failed append never
 * leaves a partial line that a later append would extend. The trajectory line is the commit point of
 * an episode.
 * @module
 */
import { existsSync, fstatSync, readFileSync, truncateSync } from "node:fs";
import { dirname } from "node:path";
import { InputFileError } from "../errors.ts";
import { fsLayer, syncDir, writeFully } from "../atomic-file.ts";

/** An append-only JSONL file. */
export class JsonlJournal {
  readonly path: string;
  #fd: number | null = null;

  constructor(path: string) {
    this.path = path;
  }

  /** Complete lines now in the file (0 when absent), without changing it. */
  completeLines(): number {
    if (!existsSync(this.path)) return 0;
    const bytes = readFileSync(this.path);
    let n = 0;
    for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
    return n;
  }

  /**
   * Cuts a torn last line (no trailing newline) and keeps only the first `keep` complete lines when
   * given. Returns the parsed complete lines that remain. A complete line that is not JSON (damage in
   * the middle of the file) is refused with one line naming the file and the line.
   */
  recover(keep?: number): unknown[] {
    if (!existsSync(this.path)) return [];
    const lines = this.parse(keep);
    const text = readFileSync(this.path, "utf8");
    const kept = lines.texts.reduce((n, l) => n + Buffer.byteLength(l, "utf8") + 1, 0);
    if (kept !== Buffer.byteLength(text, "utf8")) truncateSync(this.path, kept);
    return lines.values;
  }

  /** What `recover(keep)` would return, without changing the file. */
  parse(keep?: number): { texts: string[]; values: unknown[] } {
    if (!existsSync(this.path)) return { texts: [], values: [] };
    const text = readFileSync(this.path, "utf8");
    let texts = text.slice(0, text.lastIndexOf("\n") + 1).split("\n");
    texts.pop();
    if (keep !== undefined && texts.length > keep) texts = texts.slice(0, keep);
    const values = texts.map((l, i) => {
      try {
        return JSON.parse(l) as unknown;
      } catch (error) {
        throw new InputFileError(this.path, `line ${i + 1} of ${texts.length} is not valid JSON although it is complete (the file was damaged)`, "the run cannot be resumed safely; start it again in a fresh --out", error);
      }
    });
    return { texts, values };
  }

  /** Appends complete lines in one write and makes them durable; on failure the file is unchanged. */
  append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    if (this.#fd === null) {
      const created = !existsSync(this.path);
      this.#fd = fsLayer.openSync(this.path, "a");
      if (created) syncDir(dirname(this.path));
    }
    const fd = this.#fd;
    const start = fstatSync(fd).size;
    try {
      writeFully(fd, Buffer.from(lines.map((l) => l + "\n").join(""), "utf8"), this.path);
      fsLayer.fsyncSync(fd);
    } catch (error) {
      try {
        fsLayer.ftruncateSync(fd, start);
      } catch {
        // The next recover() cuts whatever torn line remains (appends are whole lines only).
      }
      throw error;
    }
  }

  close(): void {
    const fd = this.#fd;
    this.#fd = null;
    if (fd !== null) fsLayer.closeSync(fd);
  }
}
