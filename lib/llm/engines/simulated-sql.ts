/**
 * The simulated engine's SQL (METHOD.md "Simulated engine"): from a query's gold SQL, a rewrite the
 * oracle scores correct whose text is not the gold's (the first table name quoted as an identifier,
 * sometimes `count(1)` for `count(*)` or `<>` for `!=`), and a wrong query written to produce one
 * failure type of the classifier (METHOD.md §3) — a misspelt table (Schema Linking), a stray comma
 * before FROM (Syntax), an aggregate in WHERE (Aggregation), a plausible slip that executes (Result
 * Mismatch: a flipped ORDER BY direction, min for max, a flipped comparison, one row too many, else
 * a count of the rows asked for).
 * Pure string work: the oracle, not this file, scores every attempt, so a wrong rewrite can, rarely,
 * score correct — as a real model's slip can.
 * @module
 */
import type { SimulatedWrongType } from "./simulated-params.ts";

/** Whitespace folded and lower-cased, as `merit audit` compares SQL text. */
export function normalizeSqlText(sql: string): string {
  return sql.replace(/;\s*$/, "").replace(/\s+/g, " ").trim().toLowerCase();
}

const FIRST_TABLE = /\bFROM\s+([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()/i;

/** The gold without a trailing semicolon or surrounding blanks. */
function bare(gold: string): string {
  return gold.trim().replace(/;\s*$/, "").trim();
}

/**
 * The correct rewrites of `gold`, in a fixed order: the first table quoted, then also `count(1)` /
 * `<>` where they apply. Each differs from the gold's text (whitespace and case aside) unless the gold
 * has neither a FROM table nor a plain SELECT, when it is `SELECT ALL …` or, last, the gold itself.
 */
export function correctVariants(gold: string): string[] {
  const sql = bare(gold);
  const quoted = FIRST_TABLE.test(sql) ? sql.replace(FIRST_TABLE, (_m, t: string) => `FROM "${t}"`) : /^SELECT\s+(?!DISTINCT\b|ALL\b)/i.test(sql) ? sql.replace(/^SELECT\s+/i, "SELECT ALL ") : sql;
  const out = [quoted];
  const second = quoted.replace(/\bcount\s*\(\s*\*\s*\)/gi, "count(1)").replace(/!=/g, "<>");
  if (second !== quoted) out.push(second);
  return out;
}

/** The correct rewrite drawn by `u` ∈ [0, 1). */
export function correctSql(gold: string, u: number): string {
  const variants = correctVariants(gold);
  return variants[Math.min(variants.length - 1, Math.floor(u * variants.length))];
}

const MISSPELLINGS = ["_records", "s", "_info", "_list"];

/** Where a clause can be inserted before GROUP BY / ORDER BY / LIMIT, or the end. */
function tailIndex(sql: string): number {
  const m = /\s(GROUP\s+BY|ORDER\s+BY|LIMIT|HAVING)\b/i.exec(sql);
  return m ? m.index : sql.length;
}

/**
 * A wrong query of failure type `type` from `gold`; `u` ∈ [0, 1) picks among its forms. When the
 * gold has no form of that type (no FROM table to misspell), a Syntax slip is written instead.
 */
export function wrongSql(gold: string, type: SimulatedWrongType, u: number): string {
  const sql = bare(gold);
  const pick = <T>(xs: readonly T[]) => xs[Math.min(xs.length - 1, Math.floor(u * xs.length))];
  switch (type) {
    case "Schema Linking": {
      if (!FIRST_TABLE.test(sql)) return wrongSql(gold, "Syntax", u);
      const suffix = pick(MISSPELLINGS);
      return sql.replace(FIRST_TABLE, (_m, t: string) => `FROM ${t}${suffix}`);
    }
    case "Syntax": {
      const from = /\sFROM\s/i.exec(sql);
      if (from && u < 0.5) return `${sql.slice(0, from.index)},${sql.slice(from.index)}`;
      const open = sql.lastIndexOf(")");
      if (open > 0 && u >= 0.5) return sql.slice(0, open) + sql.slice(open + 1);
      return `${sql} WHERE`;
    }
    case "Aggregation": {
      const where = /\bWHERE\s/i.exec(sql);
      if (where) return `${sql.slice(0, where.index)}WHERE count(*) > 1 AND ${sql.slice(where.index + where[0].length)}`;
      const at = tailIndex(sql);
      return `${sql.slice(0, at)} WHERE count(*) > 1${sql.slice(at)}`;
    }
    case "Result Mismatch": {
      const base = correctVariants(gold)[0];
      const slips: ((s: string) => string | null)[] = [
        (s) => (/\bLIMIT\b/i.test(s) && /\bDESC\b/i.test(s) ? s.replace(/\bDESC\b/i, "ASC") : /\bLIMIT\b/i.test(s) && /\bASC\b/i.test(s) ? s.replace(/\bASC\b/i, "DESC") : null),
        (s) => (/\bmax\s*\(/i.test(s) ? s.replace(/\bmax\s*\(/i, "min(") : /\bmin\s*\(/i.test(s) ? s.replace(/\bmin\s*\(/i, "max(") : null),
        (s) => (/ > /.test(s) ? s.replace(/ > /, " < ") : / < /.test(s) ? s.replace(/ < /, " > ") : null),
        (s) => (/\bLIMIT\s+(\d+)\b/i.test(s) ? s.replace(/\bLIMIT\s+(\d+)\b/i, (_m, n: string) => `LIMIT ${Number(n) + 1}`) : null),
      ];
      const start = Math.floor(u * slips.length);
      for (let i = 0; i < slips.length; i++) {
        const out = slips[(start + i) % slips.length](base);
        if (out !== null && out !== base) return out;
      }
      // no slip applies: a count where rows were asked for, or (for a count) its row left out
      return /\bcount\s*\(/i.test(base) ? `${base} LIMIT -1 OFFSET 1` : `SELECT count(*) FROM (${base})`;
    }
  }
}
