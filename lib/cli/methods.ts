/**
 * `merit methods` (DESIGN.md §1): prints the method registry — every method with its parts (args
 * that differ from the defaults) and description as a Markdown table, then each part with its
 * default args; `--json` prints every method's full record (`method_parts`, as manifests hold it).
 * Methods ported from other papers are listed again with their source and whether their memory
 * needs ground truth (`citation`, `ground_truth` in `--json`), and the settings of the methods built
 * from a factory (the peers' top-k, caps, windows; `method_parts.settings` in `--json`).
 * `--plugin FILE.ts` loads a plugin first, so its methods are listed too.
 * @module
 */
import { canonicalJson, type JsonValue } from "../hash.ts";
import { getMethod, methodDefinition, methodNames, methodRecord, methodTable, PARTS, settingsTable, sourcesTable } from "../methods/index.ts";
import { parseFlags, type Command } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";

const USAGE = `usage: merit methods [--json] [--plugin FILE.ts ...]
  Prints every registered method: its parts (pool planner, ranker, memory writer, episode steps)
  and description, then the methods ported from other papers (source; whether their memory needs
  ground truth) and their settings (a study arm's args.settings changes them), then every part
  with its default args.
  --json    one JSON object: method name -> { description, method_parts, citation?, sight, ground_truth }
${PLUGIN_USAGE}`;

export const methodsCommand: Command = {
  name: "methods",
  summary: "list the registered methods and their parts (with --plugin files)",
  usage: USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, { json: { type: "boolean" }, ...PLUGIN_FLAG }, USAGE);
    await loadCommandPlugins(values.plugin);
    if (values.json) {
      const all = Object.fromEntries(
        methodNames().map((name) => {
          const { citation } = methodDefinition(name);
          const method = getMethod(name);
          return [name, { description: method.description, method_parts: methodRecord(method), ...(citation === undefined ? {} : { citation }), sight: method.sight, ground_truth: method.sight === "oracle" }];
        }),
      );
      io.out(JSON.stringify(JSON.parse(canonicalJson(all as JsonValue)), null, 2));
      return 0;
    }
    for (const line of methodTable()) io.out(line);
    io.out("");
    const sources = sourcesTable();
    if (sources.length > 0) {
      for (const line of sources) io.out(line);
      io.out("");
    }
    const settings = settingsTable();
    if (settings.length > 0) {
      for (const line of settings) io.out(line);
      io.out("");
    }
    io.out("| role | part | default args | what it does |");
    io.out("| --- | --- | --- | --- |");
    for (const [role, registry] of Object.entries(PARTS)) {
      for (const [name, factory] of registry.entries()) io.out(`| ${role} | \`${name}\` | ${canonicalJson(factory.defaults)} | ${factory.summary} |`);
    }
    return 0;
  },
};
