/**
 * Data loading, schema serialization (METHOD.md §1.3): turns one tables-file entry into the prompt's
 * schema text (original names, one line per column, PK/FK attributes), never CREATE TABLE.
 * @module
 */
import { z } from "zod";
import { MeritError } from "../errors.ts";
import { datasetAdapter } from "./datasets/index.ts";
import type { DatasetName } from "./types.ts";

/** A primary-key item: a column index, or (BIRD composite keys) a nested list of them. */
export type PrimaryKeyItem = number | PrimaryKeyItem[];

const ColumnIndex = z.number().int().min(0);
const PrimaryKeyItemSchema: z.ZodType<PrimaryKeyItem> = z.lazy(() => z.union([ColumnIndex, z.array(PrimaryKeyItemSchema)]));

/**
 * One entry of Spider `tables.json` / BIRD `dev_tables.json`. Only the fields the renderer reads are
 * checked; the rest (`column_names`, `table_names`, …) pass through untouched.
 */
export const TablesEntrySchema = z
  .object({
    db_id: z.string().trim().min(1),
    table_names_original: z.array(z.string()),
    /** `[table index, column name]`; table index −1 is the `*` pseudo-column. */
    column_names_original: z.array(z.tuple([z.number().int().min(-1), z.string()])),
    /** Parallel to `column_names_original`; an absent, null or empty type renders as `text`. */
    column_types: z.array(z.string().nullable()).default([]),
    primary_keys: z.array(PrimaryKeyItemSchema).default([]),
    /** `[source column, target column]` pairs. */
    foreign_keys: z.array(z.tuple([ColumnIndex, ColumnIndex])).default([]),
  })
  .passthrough();

export type TablesEntry = z.infer<typeof TablesEntrySchema>;

const isInt = (v: unknown, min: number): boolean => typeof v === "number" && Number.isInteger(v) && v >= min;
const isPair = (v: unknown, first: number, second: (x: unknown) => boolean): boolean => Array.isArray(v) && v.length === 2 && isInt(v[0], first) && second(v[1]);
const isPrimaryKeyItem = (v: unknown): boolean => isInt(v, 0) || (Array.isArray(v) && v.every(isPrimaryKeyItem));
const optionalArrayOf = (v: unknown, item: (x: unknown) => boolean): boolean => v === undefined || (Array.isArray(v) && v.every(item));

/**
 * `TablesEntrySchema.safeParse(raw)`, with a hand-written check first: an entry it accepts is one the
 * schema accepts, and the result is the one the schema gives (db_id trimmed, absent lists as []);
 * anything else goes through the schema itself, so every refusal (and its message) is zod's. The
 * schema costs ≈ 0.5 ms an entry, most of a dataset load; the check ≈ 10 µs.
 */
export function parseTablesEntry(raw: unknown): z.SafeParseReturnType<unknown, TablesEntry> {
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const r = raw as Record<string, unknown>;
    if (
      typeof r.db_id === "string" &&
      r.db_id.trim().length >= 1 &&
      Array.isArray(r.table_names_original) &&
      r.table_names_original.every((t) => typeof t === "string") &&
      Array.isArray(r.column_names_original) &&
      r.column_names_original.every((c) => isPair(c, -1, (name) => typeof name === "string")) &&
      optionalArrayOf(r.column_types, (t) => t === null || typeof t === "string") &&
      optionalArrayOf(r.primary_keys, isPrimaryKeyItem) &&
      optionalArrayOf(r.foreign_keys, (pair) => isPair(pair, 0, (target) => isInt(target, 0)))
    ) {
      const data = { ...r, db_id: r.db_id.trim(), column_types: r.column_types ?? [], primary_keys: r.primary_keys ?? [], foreign_keys: r.foreign_keys ?? [] } as TablesEntry;
      return { success: true, data };
    }
  }
  return TablesEntrySchema.safeParse(raw);
}

/** A tables entry the renderer cannot serialize (bad index, nested Spider PK); the loader adds the file name. */
export class SchemaEntryError extends MeritError {
  readonly dbId: string;
  constructor(dbId: string, problem: string) {
    super(`tables entry "${dbId}": ${problem}`);
    this.name = "SchemaEntryError";
    this.dbId = dbId;
  }
}

/**
 * The schema text of METHOD.md §1.3, e.g.
 * `Database: pets_1\n\nTable: Student\n  - StuID (number, PRIMARY KEY)\n  - …`.
 * Datasets without composite keys (Spider; adapter `compositePrimaryKeys`) must have flat primary keys;
 * BIRD composite keys are flattened recursively. When a
 * column has several foreign-key pairs only the last one is rendered (reference behaviour, §10.25).
 */
export function renderSchema(entry: TablesEntry, dataset: DatasetName): string {
  const columns = entry.column_names_original;
  const tables = entry.table_names_original;
  const checkColumn = (index: number, what: string): void => {
    if (index >= columns.length) throw new SchemaEntryError(entry.db_id, `${what} refers to column ${index}, but there are only ${columns.length} columns`);
  };

  const primaryKeys = new Set<number>();
  const flatKeys = !datasetAdapter(dataset).compositePrimaryKeys;
  for (const item of entry.primary_keys) {
    if (Array.isArray(item) && flatKeys) {
      throw new SchemaEntryError(entry.db_id, `nested primary key ${JSON.stringify(item)} in a ${datasetAdapter(dataset).title} schema (only BIRD has composite-key lists)`);
    }
    for (const index of flatten(item)) {
      checkColumn(index, "primary_keys");
      primaryKeys.add(index);
    }
  }
  const foreignKeys = new Map<number, number>();
  for (const [source, target] of entry.foreign_keys) {
    checkColumn(source, "foreign_keys");
    checkColumn(target, "foreign_keys");
    foreignKeys.set(source, target); // later pairs overwrite earlier ones: last wins
  }

  const byTable: string[][] = tables.map(() => []);
  columns.forEach(([tableIndex, name], index) => {
    if (tableIndex === -1) return; // the `*` pseudo-column
    if (tableIndex >= tables.length) throw new SchemaEntryError(entry.db_id, `column ${index} ("${name}") belongs to table ${tableIndex}, but there are only ${tables.length} tables`);
    const attributes = [entry.column_types[index] || "text"];
    if (primaryKeys.has(index)) attributes.push("PRIMARY KEY");
    const target = foreignKeys.get(index);
    if (target !== undefined) attributes.push(`FOREIGN KEY -> ${targetName(entry, target)}`);
    byTable[tableIndex].push(`  - ${name} (${attributes.join(", ")})`);
  });

  const lines = [`Database: ${entry.db_id}`, ""];
  tables.forEach((table, index) => lines.push(`Table: ${table}`, ...byTable[index], ""));
  return lines.join("\n").trim();
}

function targetName(entry: TablesEntry, column: number): string {
  const [tableIndex, name] = entry.column_names_original[column];
  const table = entry.table_names_original[tableIndex];
  if (table === undefined) throw new SchemaEntryError(entry.db_id, `foreign key target column ${column} ("${name}") has no table`);
  return `${table}.${name}`;
}

function flatten(item: PrimaryKeyItem): number[] {
  return Array.isArray(item) ? item.flatMap(flatten) : [item];
}
