/**
 * Experiment runs, what a follow-up study file says (README "Write a follow-up study"): the models a
 * study runs on (`tinyModels()`, `simulatedModels()`, `realModels()`, `server({...})`), its arms (a
 * registered method under other conditions or with other factory args) and `defineStudy`, which checks
 * the whole definition in one line per fault. study.ts reads it.
 * @module
 */
import { z } from "zod";
import { datasetAdapter, datasetNames } from "../data/datasets/index.ts";
import { MeritError } from "../errors.ts";
import { SubsetSchema } from "./config.ts";
import { ORDER_KINDS, type OrderKind } from "./stream-order.ts";

/** The tiny random test models (test/fixtures/models): real mechanics, meaningless numbers. */
export interface TinyModels {
  kind: "tiny";
}

/** Local GGUFs (`make models`; models/README.md). */
export interface RealModels {
  kind: "real";
  /** Chat GGUF. @default "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf" */
  chat: string;
  /** Embedder GGUF. @default "models/bge-large-en-v1.5-f16.gguf" */
  embedder: string;
  /** GPU use of the llama backend. @default "auto" */
  gpu: "auto" | false | "cuda" | "vulkan" | "metal";
}

/** OpenAI-compatible servers (vLLM, llama.cpp server) for the chat model and, optionally, the embedder. */
export interface ServerModels {
  kind: "server";
  /** Chat servers' base URLs, e.g. ["http://gpu1:8000/v1"]. */
  base_urls: string[];
  /** Served chat model name. @default "Qwen/Qwen2.5-7B-Instruct" */
  model_name: string;
  /** GGUF whose tokenizer builds the prompt ids (config `model.path`, prompt_format tokens). */
  tokenizer: string;
  /** Embedding servers; empty = the local bge GGUF. */
  embedder_urls: string[];
}

/**
 * The simulated engine (docs/METHOD.md "Simulated engine"): a frozen model played by a response model
 * with planted effects, and its hashed-bag embedder; no model file, every report under the SIMULATED
 * ENGINE banner. For trying a study's whole pipeline, and its power, on a world whose effects are known.
 */
export interface SimulatedModels {
  kind: "simulated";
  /** The parameters file (relative to the working folder). @default "configs/simulated-engine.json" */
  parameters: string;
}

/** The tiny random test models of test/fixtures/models — what a fresh clone can run (the default). */
export function tinyModels(): TinyModels {
  return { kind: "tiny" };
}

/** The simulated engine with the parameters file `parameters` (default configs/simulated-engine.json): planted effects, not measurements. */
export function simulatedModels(opts: Partial<Omit<SimulatedModels, "kind">> = {}): SimulatedModels {
  return { kind: "simulated", parameters: opts.parameters ?? "configs/simulated-engine.json" };
}

/** The real GGUFs of models/ (`make models`), locally through node-llama-cpp. */
export function realModels(opts: Partial<Omit<RealModels, "kind">> = {}): RealModels {
  return { kind: "real", chat: opts.chat ?? "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", embedder: opts.embedder ?? "models/bge-large-en-v1.5-f16.gguf", gpu: opts.gpu ?? "auto" };
}

/** OpenAI-compatible servers (README "Run on servers"). */
export function server(opts: { base_urls: string[] } & Partial<Omit<ServerModels, "kind" | "base_urls">>): ServerModels {
  return { kind: "server", base_urls: opts.base_urls, model_name: opts.model_name ?? "Qwen/Qwen2.5-7B-Instruct", tokenizer: opts.tokenizer ?? "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", embedder_urls: opts.embedder_urls ?? [] };
}

const ModelsSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("tiny") }).strict(),
  z.object({ kind: z.literal("simulated"), parameters: z.string().min(1) }).strict(),
  z.object({ kind: z.literal("real"), chat: z.string().min(1), embedder: z.string().min(1), gpu: z.union([z.literal("auto"), z.literal(false), z.enum(["cuda", "vulkan", "metal"])]) }).strict(),
  z.object({ kind: z.literal("server"), base_urls: z.array(z.string().url()).min(1), model_name: z.string().min(1), tokenizer: z.string().min(1), embedder_urls: z.array(z.string().url()) }).strict(),
]);

/** A study name: a folder name and a path segment of runs/studies/ and results/studies/. */
export const STUDY_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** The bundled real predictions each dataset's initial cache is built from when the study names none. */
export const DEFAULT_PREDICTIONS: Readonly<Record<string, string>> = { spider: "data/predictions/spider_dev__Deepseek-Coder-7B.sql" };

/**
 * The args of the method's factory an arm changes (JSON values): MERIT's memory's (`max_positive`,
 * `type_filter`, `ranker_args`, … — `merit methods` lists them) or a peer's settings (`top_k`, caps,
 * windows). The nested form of earlier kits (`planner`/`ranker`/`writer`/`settings` objects) is read
 * too: its args are laid flat, a `ranker` object's under `ranker_args`.
 */
const ArmArgsSchema = z.record(z.any());

/** An arm's args as overrides of its method's factory args (the nested form of earlier kits laid flat). */
export function armOverrides(args: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  for (const [key, value] of Object.entries(args ?? {})) {
    if ((key === "planner" || key === "writer" || key === "settings") && isObject(value)) Object.assign(out, value);
    else if (key === "ranker" && isObject(value)) out.ranker_args = { ...(isObject(out.ranker_args) ? out.ranker_args : {}), ...value };
    else out[key] = value;
  }
  return out;
}

/**
 * An arm: a registered method run under other conditions or with other part args (issue 29 §5) —
 * `{ method: "merit", feedback: "llm_judge" }`, `{ method: "merit", args: { max_positive: 5 } }` —
 * or with other settings of a peer built from a factory (issue 37 §1): `{ method: "reasoning_bank", args: { top_k: 2 } }`.
 * Its name is a method name of the study (listed in `methods`, compared like any method) and part of
 * every run's identity; its conditions are its runs' config, its args its method's factory args.
 */
export const ArmSchema = z
  .object({
    /** The registered method the arm runs (not another arm). */
    method: z.string().min(1),
    /** Feedback regime (lib/methods/feedback.ts): denotation_confirmed/oracle, dbms_only, llm_judge, noisy_oracle, a plugin's. */
    feedback: z.preprocess((v) => (v === "oracle" ? "denotation_confirmed" : v), z.string().regex(/^[a-z][a-z0-9_]{0,39}$/)).optional(),
    /** noisy_oracle's flip probability. */
    feedback_noise: z.number().min(0).max(1).optional(),
    /** K for this arm (the study's otherwise). */
    max_repair_steps: z.number().int().nonnegative().optional(),
    /** Factory args that differ from the method's (each must be an arg of its factory). */
    args: ArmArgsSchema.optional(),
    /** One line for tables and manifests; default: the method's, with the arm's changes. */
    description: z.string().min(1).optional(),
  })
  .strict();

export type Arm = z.infer<typeof ArmSchema>;

export const StudySchema = z
  .object({
    /** Folder name under studies/, runs/studies/ and results/studies/. */
    name: z.string().regex(STUDY_NAME, "lower-case letters, digits, - and _, starting with a letter or digit"),
    /** Registered dataset names (lib/data/datasets/). */
    datasets: z.array(z.string().min(1)).min(1).default(["spider"]),
    /** Every method the grid runs (the paper's and the study's own), each once. */
    methods: z.array(z.string().min(1)).min(2),
    /** Stream orders (the paper's: 0, 1, 2): seeds of the paper's shuffle. */
    seeds: z.array(z.number().int().nonnegative()).min(1).optional(),
    /**
     * Stream orders, instead of `seeds`: a number is a seed of the paper's shuffle, a name a structured
     * order (METHOD.md §7: by_database, easy_to_hard, hard_to_easy, drift; its seed-0 arrangement),
     * e.g. [0, 1, 2, "by_database"]. Each structured order is run and reported on its own (its runs
     * in RUNS/order-KIND/, its report in OUT/order-KIND/); at least one seed.
     */
    orders: z.array(z.union([z.number().int().nonnegative(), z.enum(ORDER_KINDS).refine((k) => k !== "random", "random is the paper's shuffle: give its seeds as numbers")])).min(1).optional(),
    /**
     * The databases Spider is scored on: `test-suite` (the paper's protocol: a prediction must match on
     * every variant database; `make data-spider`) or `single` (one database per db_id, not the paper's
     * EX). Default: test-suite, except for the tiny test models (single, as `merit demo`). A study
     * whose test-suite databases are absent is refused with this field as the way out.
     */
    databases: z.enum(["test-suite", "single"]).optional(),
    /** The method Table 2 compares with each other method (the paper's reference is merit). */
    reference: z.string().min(1),
    /** Table 2's pairs [a, b], Δ = EX(a) − EX(b); default: [reference, m] for every other method m. */
    comparisons: z.array(z.tuple([z.string().min(1), z.string().min(1)])).min(1).optional(),
    /** Queries per stream (null: the whole dataset). */
    queries: z.number().int().positive().nullable().default(null),
    /** Which queries `queries` keeps (config.ts SubsetSchema). */
    subset: SubsetSchema.optional(),
    /** K, repair generations per initially failed query. */
    max_repair_steps: z.number().int().nonnegative().default(7),
    models: ModelsSchema.default({ kind: "tiny" }),
    /** Plugin files registering the study's methods, parts, datasets (paths relative to the study file). */
    plugins: z.array(z.string().min(1)).default([]),
    /** Per dataset, the predictions file (one SQL per line) the shared initial cache is built from (paths relative to the study file). */
    initial: z.record(z.string().min(1)).default({}),
    /** Named arms: a method plus other conditions or part args (ArmSchema); each arm name must be listed in `methods`. */
    arms: z.record(ArmSchema).default({}),
    /** The study's feedback regime (every run; an arm may set its own): lib/methods/feedback.ts. Default: the oracle's. */
    feedback: z.preprocess((v) => (v === "oracle" ? "denotation_confirmed" : v), z.string().regex(/^[a-z][a-z0-9_]{0,39}$/)).optional(),
    /** noisy_oracle's flip probability for the study's runs. */
    feedback_noise: z.number().min(0).max(1).optional(),
    /** Per dataset, its data folder (METHOD.md §1.1 layout; relative to the study file); default data/<dataset>. */
    data: z.record(z.string().min(1)).default({}),
    /** A folder of prompt templates of the study's own (relative to the study file); default the kit's prompts/. */
    prompts_dir: z.string().min(1).optional(),
    /** The config's retrieval settings for every run (a method's own part args win only where the config is at METHOD.md's value; a conflict is refused). */
    retrieval: z.object({ max_positive: z.number().int().nonnegative().optional(), max_negative: z.number().int().nonnegative().optional(), min_typed_pool: z.number().int().nonnegative().optional(), type_bonus: z.number().nonnegative().optional() }).strict().optional(),
  })
  .strict();

/** A study as its file writes it (defaults optional). */
export type StudyInput = z.input<typeof StudySchema>;

/**
 * A validated study with every default filled in. `dir`: the study file's folder relative to the
 * working folder (set when the file is loaded), against which `data` and `prompts_dir` resolve.
 */
export type Study = Omit<z.infer<typeof StudySchema>, "seeds" | "orders"> & {
  comparisons: [string, string][];
  dir?: string;
  /** Seeds of the paper's shuffle (`seeds`, or the numbers of `orders`; default [0]). */
  seeds: number[];
  /** The structured orders of `orders` (each run at seed 0, reported apart); [] when none. */
  orderKinds: Exclude<OrderKind, "random">[];
};

/** Where the Spider test-suite databases are (configs/spider.json; `make data-spider`). */
export const TEST_SUITE_DATABASES = "data/spider_test_suite/database";

/** The database set a dataset of the study is scored on: null for a dataset with one database per db_id. */
export function studyDatabases(study: Study, dataset: string): "test-suite" | "single" | null {
  if (!datasetNames().includes(dataset) || !datasetAdapter(dataset).testSuiteDatabases) return null;
  return study.databases ?? (study.models.kind === "tiny" ? "single" : "test-suite");
}

/** A stream order of the study: the paper's shuffle over its seeds, or one structured order at seed 0. */
export interface StudyOrder {
  kind: OrderKind;
  seeds: number[];
}

/** The study's stream orders: the paper's shuffle first (its seeds), then each structured order. */
export function studyOrders(study: Study): StudyOrder[] {
  return [{ kind: "random", seeds: study.seeds }, ...study.orderKinds.map((kind): StudyOrder => ({ kind, seeds: [0] }))];
}

/** The words for an order in plans, logs and notes. */
export function orderText(order: StudyOrder): string {
  return order.kind === "random" ? `the paper's shuffle, seed${order.seeds.length === 1 ? "" : "s"} ${order.seeds.join(", ")}` : `${order.kind} (seed ${order.seeds.join(", ")})`;
}

/** Validates a study (shape only; method and dataset names are checked by `checkStudyNames` once its plugins are loaded). */
export function defineStudy(input: StudyInput): Study {
  const parsed = StudySchema.safeParse(input);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new MeritError(`defineStudy: ${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}${parsed.error.issues.length > 1 ? ` (+${parsed.error.issues.length - 1} more)` : ""}; fix the study file (lib/experiment/study.ts lists every field)`);
  }
  const { orders, seeds: givenSeeds, ...rest } = parsed.data;
  if (orders !== undefined && givenSeeds !== undefined) throw new MeritError(`defineStudy: give the stream orders once, as seeds or as orders (orders: [0, 1, 2, "by_database"] holds both)`);
  const seeds = orders === undefined ? (givenSeeds ?? [0]) : orders.filter((o): o is number => typeof o === "number");
  const orderKinds = (orders ?? []).filter((o): o is Exclude<OrderKind, "random"> => typeof o === "string");
  if (seeds.length === 0) throw new MeritError(`defineStudy: orders lists no seed of the paper's shuffle; add one (e.g. orders: [0, ${orderKinds.map((k) => JSON.stringify(k)).join(", ")}]): Tables 1-3 are over the shuffled orders`);
  const kindTwice = orderKinds.find((k, i) => orderKinds.indexOf(k) !== i);
  if (kindTwice !== undefined) throw new MeritError(`defineStudy: orders lists "${kindTwice}" twice; name each order once`);
  const s = { ...rest, seeds, orderKinds };
  const comparisons = s.comparisons ?? s.methods.filter((m) => m !== s.reference).map((m): [string, string] => [s.reference, m]);
  const dup = (xs: readonly (string | number)[]) => xs.find((x, i) => xs.indexOf(x) !== i);
  const twice = dup(s.methods) ?? dup(s.seeds) ?? dup(s.datasets);
  if (twice !== undefined) throw new MeritError(`defineStudy: ${JSON.stringify(twice)} is listed twice; name each method, seed and dataset once`);
  for (const m of [s.reference, ...comparisons.flat()]) {
    if (!s.methods.includes(m)) throw new MeritError(`defineStudy: ${JSON.stringify(m)} is compared but not in methods (${s.methods.join(", ")}); add it to methods`);
  }
  if (s.subset !== undefined && s.queries === null) throw new MeritError(`defineStudy: subset chooses which \`queries\` a stream keeps, but queries is null (every query); set queries: N or drop subset`);
  for (const field of ["initial", "data"] as const) {
    const stray = Object.keys(s[field]).find((d) => !s.datasets.includes(d));
    if (stray !== undefined) throw new MeritError(`defineStudy: ${field} names "${stray}", which is not in datasets (${s.datasets.join(", ")})`);
  }
  const self = comparisons.find(([a, b]) => a === b);
  if (self) throw new MeritError(`defineStudy: the comparison [${self[0]}, ${self[1]}] compares a method with itself`);
  for (const [name, arm] of Object.entries(s.arms)) {
    if (!STUDY_NAME.test(name) || /[.-]/.test(name)) throw new MeritError(`defineStudy: arm name "${name}" must be lower_snake_case (a method name)`);
    if (!s.methods.includes(name)) throw new MeritError(`defineStudy: arm "${name}" is not in methods (${s.methods.join(", ")}); add it to methods to run it`);
    if (arm.method === name || s.arms[arm.method] !== undefined) throw new MeritError(`defineStudy: arm "${name}" runs "${arm.method}", which is ${arm.method === name ? "itself" : "another arm"}; an arm runs a registered method`);
    const changes = Object.keys(arm).filter((k) => k !== "method" && k !== "description");
    if (changes.length === 0) throw new MeritError(`defineStudy: arm "${name}" changes nothing of "${arm.method}" (give feedback, feedback_noise, max_repair_steps or args); list "${arm.method}" in methods instead`);
  }
  return { ...s, comparisons };
}

