/**
 * `merit stream-order` (DESIGN.md §2; METHOD.md §7, §11.4): prints the stream order of a dataset for a
 * seed as one JSON array of dataset indices over ALL examples of `DIR/dev.json` (before unavailable
 * databases are dropped).
 * @module
 */
import { join } from "node:path";
import { assertAllValid, datasetNames, layoutOf, parseExamples, readJsonFile, type DatasetName } from "../data/index.ts";
import { InputFileError, UsageError } from "../errors.ts";
import { ORDER_KINDS, streamOrder, structuredOrder, type OrderKind } from "../experiment/stream-order.ts";
import { oneOfFlag, parseFlags, required, type Command } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";

const USAGE = `usage: merit stream-order --dataset NAME --seed S [--order KIND] [--data DIR] [--plugin FILE.ts ...]
  NAME: a registered dataset (${datasetNames().join(", ")}, or a plugin's)

Prints random.Random(S).shuffle(list(range(n))) as one JSON array, where n is the number of
records in DIR/dev.json (--data defaults to data/<dataset>). S is any non-negative integer
(the paper's runs use 0, 1, 2).
--order KIND  the structured order of that kind instead (the config's \`order\`, METHOD.md §7):
              ${ORDER_KINDS.join(", ")}; random (the default) is the shuffle above. The
              structured kinds read each record's database and difficulty.
${PLUGIN_USAGE}`;

export const streamOrderCommand: Command = {
  name: "stream-order",
  summary: "print the CPython-exact stream order of a dataset for a seed (JSON array of indices)",
  usage: USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, { dataset: { type: "string" }, data: { type: "string" }, seed: { type: "string" }, order: { type: "string" }, ...PLUGIN_FLAG }, USAGE);
    const order = parseOrder(values.order);
    await loadCommandPlugins(values.plugin); // first: a plugin may register the dataset
    const dataset: DatasetName = oneOfFlag(required(values.dataset, "dataset", USAGE), "dataset", datasetNames());
    const seed = parseSeed(required(values.seed, "seed", USAGE));
    const dir = values.data ?? join("data", dataset);
    const n = countRecords(dir, dataset);
    io.err(`stream-order: dataset=${dataset} n=${n} seed=${seed}${order === "random" ? "" : ` order=${order}`}`);
    if (order === "random") io.out(JSON.stringify(streamOrder(n, seed)));
    else {
      const file = join(dir, layoutOf(dataset).examples);
      const examples = assertAllValid(parseExamples(readJsonFile(file, `pass --data the ${dataset} directory`).value, dataset, file), file);
      io.out(JSON.stringify(structuredOrder(examples, seed, order)));
    }
    return 0;
  },
};

/**
 * A stream order kind from `--order` (`merit stream-order`, `merit run`, `merit grid`): undefined
 * when the flag is absent, else one of ORDER_KINDS, refused in one line naming them.
 */
export function parseOrderFlag(text: string | undefined): OrderKind | undefined {
  return text === undefined ? undefined : oneOfFlag(text, "order", ORDER_KINDS);
}

function parseOrder(text: string | undefined): OrderKind {
  return parseOrderFlag(text) ?? "random";
}

/** A non-negative decimal integer of any size (bigint keeps seeds above 2^53 exact). */
function parseSeed(text: string): bigint {
  if (!/^\d+$/.test(text)) throw new UsageError(`--seed must be a non-negative integer, got "${text}"`);
  return BigInt(text);
}

/** Number of records of the dataset's examples file (`DIR/dev.json`): a JSON array of objects. */
function countRecords(dir: string, dataset: DatasetName): number {
  const { examples } = layoutOf(dataset);
  const file = join(dir, examples);
  const { value } = readJsonFile(file, `pass --data the ${dataset} directory that holds ${examples} (e.g. data/${dataset})`);
  if (!Array.isArray(value)) {
    throw new InputFileError(file, `expected a JSON array of examples, got ${value === null ? "null" : typeof value}`, "point --data at the dataset directory whose dev.json is the list of questions");
  }
  const bad = value.findIndex((record) => record === null || typeof record !== "object" || Array.isArray(record));
  if (bad >= 0) throw new InputFileError(file, `record ${bad} is not a JSON object`, "repair the file: every element of the array must be one example object");
  return value.length;
}
