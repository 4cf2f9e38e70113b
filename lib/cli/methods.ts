/**
 * `merit methods` (DESIGN.md §1): prints the method registry — every method with its hooks (each
 * factory's args that differ from the defaults) and description as a Markdown table, then the kit's
 * hook factories with their default args; `--json` prints every method's full record (`method_parts`,
 * as manifests hold it).
 * Methods ported from other papers are listed again with their source and whether their memory
 * needs ground truth (`citation`, `ground_truth` in `--json`), and the settings of the methods built
 * from a factory (the peers' top-k, caps, windows; `method_parts.settings` in `--json`).
 * `--plugin FILE.ts` loads a plugin first, so its methods are listed too.
 * @module
 */
import { canonicalJson, type JsonValue } from "../hash.ts";
import { getMethod, MERIT_MEMORY, MERIT_MEMORY_DEFAULTS, methodDefinition, methodNames, methodRecord, methodTable, RANKERS, REFLECT, settingsTable, sourcesTable } from "../methods/index.ts";
import { parseFlags, type Command } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";

const USAGE = `usage: merit methods [--json] [--plugin FILE.ts ...]
  Prints every registered method: its hooks (MERIT's memory with the args that differ from MERIT's,
  Reflexion's reflect step, a plugin's memory, classifier, step and call kinds) and description, then
  the methods ported from other papers (source; what their hooks may read) and their settings (a
  study arm's args change them), then the kit's hook factories and rankers with their default args.
  --json    one JSON object: method name -> { description, method_parts, citation?, sight, ground_truth }
${PLUGIN_USAGE}`;

export const methodsCommand: Command = {
  name: "methods",
  summary: "list the registered methods and their hooks (with --plugin files)",
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
    io.out("| hook | factory | default args | what it does |");
    io.out("| --- | --- | --- | --- |");
    io.out(`| memory | \`${MERIT_MEMORY}\` | ${canonicalJson(MERIT_MEMORY_DEFAULTS as JsonValue)} | MERIT's dual-polarity entry memory: pools, type filter, ranker, what an episode stores (METHOD.md §4.3, §5.4–5.6) |`);
    io.out(`| step | \`${REFLECT}\` | {} | a verbal reflection after the initial failure and after every failed repair, kind reflection (Reflexion, METHOD.md §6.2) |`);
    for (const [name, factory] of RANKERS.entries()) io.out(`| ranker (memory arg \`ranker\`) | \`${name}\` | ${canonicalJson(factory.defaults)} | ${factory.summary} |`);
    return 0;
  },
};
