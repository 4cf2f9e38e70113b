/**
 * Data loading, official gold files (METHOD.md §1.1): reads Spider `dev_gold.sql` / BIRD `dev.sql`
 * (`SQL<TAB>db_id` per line) and checks that it lines up with the loaded examples.
 * @module
 */
import { readFileSync } from "node:fs";
import { InputFileError } from "../errors.ts";
import type { Example } from "./types.ts";

/** One line of a gold file. `line` is 1-based. */
export interface GoldLine {
  line: number;
  sql: string;
  dbId: string;
}

/** Parses a gold file; trailing empty lines are ignored, any other line without a TAB is an error. */
export function readGoldFile(file: string): GoldLine[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InputFileError(file, `cannot read gold file (${(error as NodeJS.ErrnoException).code ?? String(error)})`, "pass the official gold file (Spider dev_gold.sql, BIRD dev.sql) or run `merit data download`", error);
  }
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
  return lines.map((raw, index) => {
    const tab = raw.lastIndexOf("\t"); // the db_id is the last field; SQL may itself contain tabs
    if (tab < 0) throw new InputFileError(file, `line ${index + 1} has no TAB separator`, "each line must be `SQL<TAB>db_id`");
    return { line: index + 1, sql: raw.slice(0, tab).trim(), dbId: raw.slice(tab + 1).trim() };
  });
}

/**
 * Throws unless the gold file has one line per example, in order, with the same db_id and the same
 * SQL up to whitespace runs (the check is about alignment, not formatting).
 */
export function assertGoldAgrees(file: string, gold: readonly GoldLine[], examples: readonly Example[], examplesFile: string): void {
  const squash = (sql: string) => sql.replace(/\s+/g, " ").trim();
  const n = Math.min(gold.length, examples.length);
  for (let i = 0; i < n; i++) {
    const g = gold[i];
    const e = examples[i];
    if (g.dbId !== e.dbId) {
      throw new InputFileError(file, `line ${g.line} has db_id "${g.dbId}" but example ${i} of ${examplesFile} has "${e.dbId}"`, "use the gold file that belongs to this dev.json (same release, same order)");
    }
    if (squash(g.sql) !== squash(e.goldSql)) {
      throw new InputFileError(file, `line ${g.line} SQL differs from example ${i} of ${examplesFile} (${JSON.stringify(g.sql.slice(0, 80))} vs ${JSON.stringify(e.goldSql.slice(0, 80))})`, "use the gold file that belongs to this dev.json (same release, same order)");
    }
  }
  if (gold.length !== examples.length) {
    throw new InputFileError(file, `has ${gold.length} lines but ${examplesFile} has ${examples.length} examples`, "use the gold file that belongs to this dev.json (same release, same order)");
  }
}
