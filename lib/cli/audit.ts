/**
 * `merit audit RUN_DIR`: the causal audit of a run directory (lib/experiment/audit.ts). Prints the
 * violations and, as the last line, `violations N`; exits 1 when N > 0.
 * @module
 */
import { UsageError } from "../errors.ts";
import { auditLines, auditRunDir } from "../experiment/audit.ts";
import { parseFlags, type Command } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";

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
    const report = await auditRunDir(runDir);
    const lines = auditLines(report);
    for (const line of lines.slice(0, -1)) io.out(line);
    io.err(`audited ${report.prompts} prompts and ${report.retrievals} retrievals`);
    io.out(lines.at(-1)!);
    return report.violations.length === 0 ? 0 : 1;
  },
};
