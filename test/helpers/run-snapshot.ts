/**
 * Byte-for-byte comparisons of grids (test/experiment/grid-shard.test.ts, slurm-grid.test.ts): every
 * file of a folder of run directories with the manifests' timestamps masked, and the rows of a call
 * cache in key order.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { openCacheDatabase } from "../../lib/llm/call-cache.ts";

/** Every file under `dir` but stdout.log, relative path → content; manifest timestamps masked. */
export function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== "stdout.log") {
        let text = readFileSync(p, "utf8");
        if (name === "manifest.json") text = text.replace(/"(started_at|finished_at|updated_at|created_at|written_at)": "[^"]*"/g, '"$1": "<time>"').replace(/"timing": \{[^}]*\}/g, '"timing": "<measured>"');
        files.set(relative(dir, p), text);
      }
    }
  };
  walk(dir);
  return files;
}

/** Every row of a call cache (key, output, token counts, row hash) as JSON, in key order. */
export function cacheRows(path: string): string[] {
  const db = openCacheDatabase(path, { readonly: true });
  try {
    return (db.prepare("SELECT key, text, prompt_tokens, output_tokens, truncated_prompt_tokens, row_hash FROM calls ORDER BY key").all() as Array<Record<string, unknown>>).map((r) => JSON.stringify(r));
  } finally {
    db.close();
  }
}
