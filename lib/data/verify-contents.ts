/**
 * Data acquisition (METHOD.md §1.1): verifies the extracted contents of an archive whose hash no
 * publisher states (BIRD's dev.zip) before its hash is recorded on first use: release files compared
 * with the bundled copies (a difference is reported as a different release, with its hash), and every
 * gold query of the release executed on its databases. The data layer does not import the oracle:
 * the caller passes what executes the gold queries (`goldRunner`; `merit data download` passes the
 * Oracle, lib/cli/data.ts).
 * @module
 */
import { join } from "node:path";
import { MeritError } from "../errors.ts";
import { fileDigest } from "../file-hash.ts";
import { loadDataset } from "./dataset.ts";
import type { ArchiveEntry } from "./downloads.ts";
import { exists } from "./download.ts";
import type { Dataset, Example } from "./types.ts";

/** What executes a release's gold queries on its databases (lib/oracle/oracle.ts `Oracle` is one). */
export interface GoldRunner {
  /** The gold query's rows, or null when it does not execute. */
  goldRows(example: Example): Promise<unknown>;
  /** A query scored against the gold (here: the gold itself, for the error text of one that fails). */
  score(example: Example, sql: string): Promise<{ status: string; dbError: string | null }>;
  close(): Promise<void>;
}

/** What the verification found: facts for the lock file and warning lines for the user. */
export interface ContentsReport {
  contents: Record<string, string | number | boolean>;
  warnings: string[];
}

export interface VerifyContentsOptions {
  /** The archive, named in messages. */
  archive: string;
  /** SQL worker processes. */
  jobs: number;
  /** Per-statement deadline for gold queries. */
  timeoutMs: number;
  progress?: (line: string) => void;
  /** Opens the runner of the gold queries on the loaded release (needed when the archive's checks include `gold_executes`). */
  goldRunner: (dataset: Dataset, opts: { timeoutMs: number; jobs: number }) => GoldRunner;
}

/** Checks the staged release in `root` (= `<staging>/<archive_root>`); throws MeritError when it cannot be trusted. */
export async function verifyContents(root: string, entry: ArchiveEntry, opts: VerifyContentsOptions): Promise<ContentsReport> {
  const checks = entry.verify_contents;
  const report: ContentsReport = { contents: {}, warnings: [] };
  if (checks === undefined) return report;
  for (const [path, bundled] of Object.entries(checks.same_as_bundled).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const file = join(root, path);
    if (!(await exists(file))) throw new MeritError(`${opts.archive} has no ${entry.archive_root}/${path}; it is not the expected release: delete it and download it again from ${entry.page}`);
    const { sha256 } = await fileDigest(file);
    report.contents[`${path} sha256`] = sha256;
    report.contents[`${path} same as bundled`] = sha256 === bundled;
    if (sha256 !== bundled) {
      report.warnings.push(`${opts.archive}: ${path} has sha256 ${sha256}, not the bundled copy's ${bundled}: a different release of the dataset (the bundled file is kept; see data/PROVENANCE.md)`);
    }
  }
  if (checks.gold_executes !== undefined) {
    const dataset = await loadDataset({ name: checks.gold_executes, dir: root });
    const oracle = opts.goldRunner(dataset, { timeoutMs: opts.timeoutMs, jobs: opts.jobs });
    const failures: string[] = [];
    let done = 0;
    try {
      opts.progress?.(`executing the ${dataset.examples.length} gold queries of ${opts.archive} on its databases`);
      await Promise.all(
        dataset.examples.map(async (example) => {
          if ((await oracle.goldRows(example)) === null) {
            const verdict = await oracle.score(example, example.goldSql); // once more, for the error text
            failures.push(`example ${example.id} (${example.dbId}): ${verdict.dbError ?? verdict.status}`);
          }
          if (++done % 250 === 0) opts.progress?.(`gold queries: ${done}/${dataset.examples.length}`);
        }),
      );
    } finally {
      await oracle.close();
    }
    if (failures.length > 0) {
      failures.sort();
      throw new MeritError(`${failures.length} of ${dataset.examples.length} gold queries of ${opts.archive} do not execute (first: ${failures[0]}); the archive is not trusted and no hash was recorded: delete it and download it again from ${entry.page}`);
    }
    report.contents["gold queries executed"] = dataset.examples.length;
    report.contents.databases = dataset.databases.size;
  }
  return report;
}
