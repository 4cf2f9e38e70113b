/**
 * `merit preflight` (first step of `make reproduce`): checks that every input of the configs is on
 * disk — model files, then databases — and stops at the first missing one with one line naming it
 * and the command that gets it (exit 2). See lib/experiment/preflight.ts.
 * @module
 */
import { MeritError } from "../errors.ts";
import { firstMissingInput, missingInputLine } from "../experiment/preflight.ts";
import { parseFlags, type Command, type CommandIO } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";

const DEFAULT_CONFIGS = "configs/spider.json,configs/bird.json";

const USAGE = `usage: merit preflight [--config FILE,FILE,...] [--plugin FILE.ts ...]
  Checks that the inputs of the configs are present before \`make reproduce\` starts: the model
  files (make models), then each config's databases (make data-spider, make data-bird). Stops at the
  first missing input with one line naming it and the command that gets it (exit code 2).
  --config  comma-separated config files (default ${DEFAULT_CONFIGS}); their \`plugins\` are loaded
${PLUGIN_USAGE}`;

export const preflightCommand: Command = {
  name: "preflight",
  summary: "check that the inputs of make reproduce (models, databases) are present",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values } = parseFlags(argv, { config: { type: "string" }, ...PLUGIN_FLAG }, USAGE);
    const files = (values.config ?? DEFAULT_CONFIGS).split(",").filter((f) => f !== "");
    await loadCommandPlugins(values.plugin, { configs: files }); // first: a plugin may register a config's dataset
    const missing = firstMissingInput(files);
    if (missing) throw new MeritError(missingInputLine(missing));
    io.out(`all inputs present for ${files.join(", ")}`);
    return 0;
  },
};
