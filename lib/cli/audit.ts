/**
 * `merit audit RUN_DIR`: the causal audit of a run directory (lib/experiment/audit.ts). Prints the
 * violations and, as the last line, `violations N`; exits 1 when N > 0.
 * @module
 */
import { loadDataset } from "../data/index.ts";
import { UsageError } from "../errors.ts";
import { auditRun } from "../experiment/audit.ts";
import { executorOf, parseConfig } from "../experiment/config.ts";
import { readRunJson, readTrajectories, runFile } from "../experiment/run-dir.ts";
import { Oracle } from "../oracle/oracle.ts";
import { parseFlags, type Command } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugins.ts";

const USAGE = `usage: merit audit RUN_DIR [--plugin FILE.ts ...]
  Checks every logged prompt and retrieval of a run: no gold SQL or gold rows in any prompt, no memory
  from the current or a later stream position, no entry of the current query, and no entry shown
  that its retrieval did not return. Last line: \`violations N\` (exit 1 when N > 0). The plugins the
run's manifest records are loaded (a run on a plugin's dataset needs it).
${PLUGIN_USAGE}`;

export const auditCommand: Command = {
  name: "audit",
  summary: "causal audit of a run directory (prints the number of violations)",
  usage: USAGE,
  async run(argv, io) {
    const { values, positionals } = parseFlags(argv, { ...PLUGIN_FLAG }, USAGE, true);
    if (positionals.length !== 1) throw new UsageError(`expected one RUN_DIR`);
    const runDir = positionals[0];
    await loadCommandPlugins(values.plugin, { runDirs: [runDir] }, io); // first: the run's dataset may be a plugin's
    const configPath = runFile(runDir, "config");
    const spec = readRunJson(runDir, "config", { missing: "missing or not JSON", invalid: "missing or not JSON", fix: "pass a directory written by `merit run`" }) as { config: unknown };
    const config = parseConfig(spec.config, configPath);
    const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir });
    const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, timeoutMs: config.sql_timeout_s * 1000, engine: executorOf(config) });
    try {
      const queried = new Set(readTrajectories(runDir, "pass a directory written by `merit run`").map((t) => t.query_id));
      const goldRows = new Map<string, unknown[][]>();
      for (const example of dataset.examples) {
        if (!queried.has(example.id)) continue;
        const rows = await oracle.goldRows(example);
        if (rows) goldRows.set(example.id, rows);
      }
      const report = auditRun(runDir, dataset, goldRows);
      for (const v of report.violations.slice(0, 50)) io.out(`${v.kind}\tquery ${v.queryId}\tposition ${v.streamPosition}\t${v.detail}`);
      if (report.violations.length > 50) io.out(`... and ${report.violations.length - 50} more`);
      io.err(`audited ${report.prompts} prompts and ${report.retrievals} retrievals`);
      io.out(`violations ${report.violations.length}`);
      return report.violations.length === 0 ? 0 : 1;
    } finally {
      await oracle.close();
    }
  },
};
