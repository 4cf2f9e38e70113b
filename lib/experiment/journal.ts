/**
 * Experiment runs, the append-only journal (METHOD.md §11; DESIGN.md §1): JSONL files written one
 * complete line per `write` and fsynced, so a kill leaves at most one torn last line, which `recover`
 * cuts off. The trajectory line is the commit point of an episode.
 * @module
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";

/** An append-only JSONL file. */
export class JsonlJournal {
  readonly path: string;
  #fd: number | null = null;

  constructor(path: string) {
    this.path = path;
  }

  /**
   * Cuts a torn last line (no trailing newline) and keeps only the first `keep` complete lines when
   * given. Returns the parsed complete lines that remain.
   */
  recover(keep?: number): unknown[] {
    if (!existsSync(this.path)) return [];
    const text = readFileSync(this.path, "utf8");
    let end = text.lastIndexOf("\n") + 1; // bytes of complete lines (as UTF-16 index; fixed below)
    let lines = text.slice(0, end).split("\n");
    lines.pop();
    if (keep !== undefined && lines.length > keep) {
      lines = lines.slice(0, keep);
      end = lines.reduce((n, l) => n + l.length + 1, 0);
    }
    const bytes = Buffer.byteLength(text.slice(0, end), "utf8");
    if (bytes !== Buffer.byteLength(text, "utf8")) truncateSync(this.path, bytes);
    return lines.map((l, i) => {
      try {
        return JSON.parse(l);
      } catch (error) {
        throw new Error(`${this.path}: line ${i + 1} is not valid JSON although it is complete; the run directory is damaged`, { cause: error });
      }
    });
  }

  /** Appends complete lines in one write and makes them durable. */
  append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    if (this.#fd === null) this.#fd = openSync(this.path, "a");
    writeSync(this.#fd, Buffer.from(lines.map((l) => l + "\n").join(""), "utf8"));
    fsyncSync(this.#fd);
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
