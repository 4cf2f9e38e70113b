/**
 * The simulated engine (METHOD.md "Simulated engine"; config `model.backend: "simulated"`, `merit run
 * --engine simulated`): a ChatBackend that plays a frozen model whose behaviour is a small, documented
 * response model over what the prompt contains, with the parameters of a JSON file
 * (simulated-params.ts). Every answer is a function of (seed, prompt): a call is recognised by its
 * prompt (the kit's templates and the peers' headers), its query by the question the prompt shows,
 * and each random choice is a sha256 draw of the seed, the choice's name and the prompt.
 *
 * It plays the world, not the method: it reads the dataset's gold SQL (given by the run's data when the
 * services are built, never through a method) to write SQL the oracle scores correct with the drawn
 * probability — never the gold's text — or a wrong query of a drawn failure type (simulated-sql.ts).
 * Its embedder (SimulatedEmbedder) is a hashed bag of words, so a run on it needs no model file.
 * Outputs are planted effects, not measurements: every report made from it carries the SIMULATED
 * ENGINE banner (lib/analysis/model-identity.ts).
 * @module
 */
import { MeritError } from "../../errors.ts";
import { createHash } from "node:crypto";
import type { BackendIdentity, ChatBackend, Embedder, GenerateRequest, GenerateResult, Sampling } from "../types.ts";
import { SIMULATED_WRONG_TYPES, type LoadedSimulatedParams, type SimulatedParams, type SimulatedWrongType } from "./simulated-params.ts";
import { correctSql, correctVariants, normalizeSqlText, wrongSql } from "./simulated-sql.ts";

/** The chat backend's identity kind (lib/analysis/model-identity.ts banners runs that record it). */
/** A question of the world the engine plays: its database, text and gold SQL (a dataset's Example has these fields). */
export interface WorldQuestion {
  dbId: string;
  question: string;
  goldSql: string;
}

export const SIMULATED_KIND = "simulated";
/** The embedder's identity kind. */
export const SIMULATED_EMBEDDING_KIND = "simulated-embedding";
/** The banner every table, figure, notebook and page made from simulated runs carries. */
export const SIMULATED_HEADLINE = "SIMULATED ENGINE — effects are planted, not measured";

/** What the simulator knows of the world: the dataset's questions with their gold, and the initial SQL the oracle scored correct. */
export interface SimulatedWorld {
  examples: readonly WorldQuestion[];
  /** Rendered schema per db_id (tells two databases with the same question apart). */
  schemas?: ReadonlyMap<string, string>;
  /** Initial SQL the oracle scored correct (the initial cache), so a judge can be right about them. */
  knownCorrect?: readonly { dbId: string; sql: string }[];
  /**
   * The config's `decoding.max_input_tokens` and `truncate`: a prompt longer than that (counted at
   * 4 characters a token) is counted as cut, as a real engine cuts it (`left`), or refused (`error`).
   * The response model still reads the whole prompt. Absent: no limit.
   */
  maxInputTokens?: number;
  truncate?: "left" | "error";
}

/** The calls the response model tells apart. */
export type SimulatedCall = "initial" | "repair" | "reflection" | "judge" | "episode_judge" | "distill" | "curate" | "synthesize" | "induce" | "critique" | "unknown";

/** What the response model read in a repair prompt (exported for tests and METHOD.md's examples). */
export interface RepairFeatures {
  errorType: string;
  relevantPrecedents: number;
  misleadingPrecedents: number;
  negativePrecedents: number;
  reflections: number;
  lessons: number;
}

/** The response and what the model decided (for tests; the backend returns only the text). */
export interface SimulatedResponse {
  call: SimulatedCall;
  text: string;
  /** The answer ran past the output limit (cut there). */
  truncated: boolean;
  /** Hook calls (distill, curate, synthesize, induce, critique): which of the three answers was drawn. */
  form?: "well_formed" | "truncated" | "malformed";
  /** Repair and initial calls: the drawn probability and whether the answer is the correct rewrite. */
  probability?: number;
  /** Repair and initial calls: the answer is correct; judge calls: the judged SQL is. */
  correct?: boolean;
  /** Judge calls: the verdict given (true = correct / success). */
  verdict?: boolean;
  features?: RepairFeatures;
}

const HEADERS: readonly [RegExp, SimulatedCall][] = [
  [/^PROMPT_VERSION: [\w.-]*-repair-/, "repair"],
  [/^PROMPT_VERSION: [\w.-]*-reflection-/, "reflection"],
  [/^PROMPT_VERSION: [\w.-]*-initial-/, "initial"],
  [/^PROMPT_VERSION: merit-judge-/, "judge"],
  [/^RB-JUDGE\b/, "episode_judge"],
  [/^RB-DISTILL\b/, "distill"],
  [/^DC-CURATE\b/, "curate"],
  [/^DCRS-SYNTHESIZE\b/, "synthesize"],
  [/^AWM-INDUCE\b/, "induce"],
  [/^EXPEL-CRITIQUE\b/, "critique"],
];

/** The call a prompt is, by its first line (a template folder of one's own keeps the kit's section names: then by its sections). */
export function callOf(prompt: string): SimulatedCall {
  const head = prompt.trimStart();
  for (const [re, call] of HEADERS) if (re.test(head)) return call;
  if (/\nLOCAL ATTEMPT HISTORY:\n/.test(prompt) && /\nCurrent error type: /.test(prompt)) return "repair";
  if (/\nATTEMPTS AND OBSERVED OUTCOMES:\n/.test(prompt)) return "reflection";
  return "unknown";
}

/** A uniform draw in [0, 1) of (seed, name, prompt). */
export function draw(seed: number, name: string, text: string): number {
  const digest = createHash("sha256").update(`${seed}\u0000${name}\u0000${text}`).digest();
  return (digest.readUInt32BE(0) * 2 ** 21 + (digest.readUInt32BE(4) >>> 11)) / 2 ** 53;
}

const logistic = (x: number) => 1 / (1 + Math.exp(-x));
const logit = (p: number) => {
  const q = Math.min(1 - 1e-9, Math.max(1e-9, p));
  return Math.log(q / (1 - q));
};

/** A standard normal of (seed, name, text) (Box–Muller over two draws). */
function normalDraw(seed: number, name: string, text: string): number {
  const u1 = Math.max(draw(seed, `${name}/1`, text), 1e-300);
  const u2 = draw(seed, `${name}/2`, text);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** The failure types of the classifier, spelled as prompts show them. */
const TYPE_NAMES = ["Schema Linking", "Syntax", "Aggregation", "Filter/Value", "Execution", "Result Mismatch", "Unknown"];
const TYPE_IN_TEXT = new RegExp(`(?:failure type|type|Error type): (${TYPE_NAMES.map((t) => t.replace("/", "\\/")).join("|")})`, "g");

/** The question line after `QUESTION:` (the kit's templates), else after `Question: ` (the peers'). */
function questionOf(prompt: string): string | null {
  const upper = /(?:^|\n)QUESTION:\n([^\n]+)/.exec(prompt);
  if (upper) return upper[1].trim();
  const lower = /(?:^|\n)Question: ([^\n]+)/.exec(prompt);
  return lower ? lower[1].trim() : null;
}

/**
 * What the repair prompt holds (METHOD.md "Simulated engine", the response model's inputs): the
 * current failure type; confirmed successful precedents — MERIT's and dynamic RAG's `[Confirmed
 * successful repair n]` entries, and the peers' `experience` (accepted), `solved` and `error_fix`
 * notes — each relevant when it names the current failure type or the current database, misleading
 * otherwise; negative precedents (`[OBSERVED FAILED DIRECTION n]`, a not-accepted experience); local
 * reflections; and lessons (a ReasoningBank item, a cheatsheet, an insight list, an induced workflow).
 */
export function repairFeatures(prompt: string, dbId: string | null): RepairFeatures {
  const errorType = /\nCurrent error type: ([^\n]*)/.exec(prompt)?.[1].trim() ?? "Unknown";
  const f: RepairFeatures = { errorType, relevantPrecedents: 0, misleadingPrecedents: 0, negativePrecedents: 0, reflections: 0, lessons: 0 };
  const precedent = (relevant: boolean) => (relevant ? (f.relevantPrecedents += 1) : (f.misleadingPrecedents += 1));
  for (const m of prompt.matchAll(/\[Confirmed successful repair \d+\]\nEntry ID: [^\n]*\nError type: ([^\n]*)/g)) precedent(m[1].trim() === errorType);
  f.negativePrecedents += [...prompt.matchAll(/\[OBSERVED FAILED DIRECTION \d+\]/g)].length;
  f.reflections += [...prompt.matchAll(/\[Local reflection \d+\]/g)].length;
  // the peers' notes: `[kind n]` then `Note ID: …` then the note's text (lib/methods/hooks.ts renderNotes)
  const blocks = [...prompt.matchAll(/\[([a-z_]+) \d+\]\nNote ID: [^\n]*\n/g)];
  blocks.forEach((b, i) => {
    const end = i + 1 < blocks.length ? blocks[i + 1].index : prompt.indexOf("\n\nLOCAL REFLECTIONS", b.index) >= 0 ? prompt.indexOf("\n\nLOCAL REFLECTIONS", b.index) : prompt.length;
    const text = prompt.slice(b.index + b[0].length, end);
    const kind = b[1];
    const sameDb = dbId !== null && new RegExp(`(?:^|\\n)Database: ${dbId.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:\\n|$)`).test(text);
    const types = [...text.matchAll(TYPE_IN_TEXT)].map((m) => m[1]);
    const relevant = sameDb || types.includes(errorType);
    if (kind === "experience") {
      if (/Feedback: accepted\b|Outcome: status CORRECT\b/.test(text)) precedent(relevant);
      else f.negativePrecedents += 1;
    } else if (kind === "solved" || kind === "error_fix") precedent(relevant);
    else if (kind === "memory_item" || kind === "cheatsheet") f.lessons += 1;
    else if (kind === "insights" && !/^\(the insight list is empty\)/.test(text.trim())) f.lessons += 1;
    else if (kind === "workflows" && !/^\(no workflows induced yet\)/.test(text.trim())) f.lessons += 1;
  });
  // Dynamic Cheatsheet DC-RS shows its synthesized sheet as free text under its heading
  if (/(?:^|\n)CHEATSHEET SYNTHESIZED FROM SIMILAR EARLIER EPISODES:\n\S/.test(prompt)) f.lessons += 1;
  return f;
}

/** The log-odds shift of the features under `effects` (each effect counts once when its feature is present). */
export function effectOf(f: RepairFeatures, effects: SimulatedParams["repair"]["effects"]): number {
  return (
    (f.relevantPrecedents > 0 ? effects.relevant_precedent : 0) +
    (f.misleadingPrecedents > 0 ? effects.misleading_precedent : 0) +
    (f.negativePrecedents > 0 ? effects.negative_precedent : 0) +
    (f.reflections > 0 ? effects.reflection : 0) +
    (f.lessons > 0 ? effects.lesson : 0)
  );
}

/** One lesson per failure type, in the words the hook answers use. */
const LESSONS: Record<string, { title: string; when: string; what: string; avoid: string }> = {
  "Schema Linking": { title: "Copy names from the schema", when: "When the database reports no such table or column.", what: "Look every table and column up in the schema and copy its name exactly; join through the key columns the schema lists.", avoid: "Do not guess plural or abbreviated table names." },
  Syntax: { title: "Check the query's punctuation", when: "When the database reports a syntax error or incomplete input.", what: "Close every parenthesis and list the selected columns without a trailing comma before FROM.", avoid: "Do not leave a clause unfinished." },
  Aggregation: { title: "Filter aggregates with HAVING", when: "When a condition is on a count, sum or average.", what: "Put conditions on aggregates in HAVING after GROUP BY, never in WHERE.", avoid: "Do not use count() or sum() inside WHERE." },
  "Filter/Value": { title: "Match values as stored", when: "When a filter compares with a literal value.", what: "Compare with values in the form the column stores them (case, quotes, numbers as numbers).", avoid: "Do not compare numbers with quoted text." },
  Execution: { title: "Keep to one read-only query", when: "When the database refuses to run the query.", what: "Write a single SELECT over the tables of this database.", avoid: "Do not write to the database or chain statements." },
  "Result Mismatch": { title: "Re-read what the question asks for", when: "When the query runs but its answer is wrong.", what: "Check the requested columns, the ORDER BY direction for most/least and the LIMIT against the question's wording.", avoid: "Do not flip ASC and DESC or min and max." },
  Unknown: { title: "Compare the query with the question", when: "When the failure is not clear.", what: "Read the question clause by clause and check that each one has its part in the query.", avoid: "Do not repeat an earlier attempt." },
};

/** The failure types a hook prompt mentions, in order of first mention (the current type of a repair first); `Unknown` when none. */
function typesIn(prompt: string): string[] {
  const types = [...new Set([...prompt.matchAll(TYPE_IN_TEXT)].map((m) => m[1]))];
  return types.length > 0 ? types : ["Unknown"];
}

/** The workflows of an AWM induce prompt's successes: one per SQL pattern they use. */
function workflowsOf(prompt: string): string[] {
  const sqls = [...prompt.matchAll(/\nSQL: ([^\n]*)/g)].map((m) => m[1]);
  const has = (re: RegExp) => sqls.some((s) => re.test(s));
  const out: string[] = [];
  if (has(/\bJOIN\b/i)) out.push("Workflow: questions about two related things\n1. Find the table of each thing in the schema.\n2. Join them on the key column the schema lists.\n3. Select the requested columns and filter on the stated conditions.");
  if (has(/\bGROUP BY\b/i)) out.push("Workflow: questions asking for a number per group\n1. Find the column that defines the groups.\n2. GROUP BY it and aggregate the counted column.\n3. Put conditions on the aggregate in HAVING.");
  if (has(/\bORDER BY\b/i)) out.push("Workflow: questions asking for the most or least\n1. Find the column that is compared.\n2. ORDER BY it, DESC for most and ASC for least.\n3. LIMIT to the number of answers asked for.");
  if (has(/\bcount\s*\(/i)) out.push("Workflow: questions asking how many\n1. Find the table of the counted things.\n2. Apply the question's filters in WHERE.\n3. SELECT count(*).");
  if (out.length === 0) out.push("Workflow: questions asking for attributes of things\n1. Find the table of the things.\n2. Filter them on the stated conditions.\n3. Select the requested columns.");
  return out;
}

/** The identity of the engine with `loaded` parameters: its model hash is the parameters file's sha256. */
export function simulatedIdentity(loaded: LoadedSimulatedParams): BackendIdentity {
  return { kind: SIMULATED_KIND, model: `simulated-engine (${loaded.file})`, modelHash: loaded.sha256, params: { simulation: loaded.file, seed: loaded.params.seed } };
}

/** Characters per token of the simulated counts (prompt and output tokens). */
const CHARS_PER_TOKEN = 4;

/**
 * A response under an output limit of `limit` tokens: its text and output tokens (4 characters a token,
 * + EOS), and `cut` when it ran to the limit — a drawn truncation, or an answer longer than the limit —
 * (then no EOS, the text cut at the limit's characters).
 */
export function atLimit(r: Pick<SimulatedResponse, "text" | "truncated">, limit: number): { text: string; outputTokens: number; cut: boolean } {
  const outputTokens = Math.ceil(r.text.length / CHARS_PER_TOKEN) + 1;
  if (!r.truncated && outputTokens <= limit) return { text: r.text, outputTokens, cut: false };
  return { text: r.text.slice(0, limit * CHARS_PER_TOKEN), outputTokens: limit, cut: true };
}

/** The simulated engine as a chat backend (lib/llm/types.ts). */
export class SimulatedBackend implements ChatBackend {
  readonly identity: BackendIdentity;
  private readonly params: SimulatedParams;
  private readonly byQuestion = new Map<string, WorldQuestion[]>();
  private readonly schemas: ReadonlyMap<string, string>;
  private readonly knownCorrect = new Set<string>();
  private readonly wrongTypes: { type: SimulatedWrongType; weight: number }[];
  private readonly maxInputTokens: number;
  private readonly truncate: "left" | "error";

  constructor(loaded: LoadedSimulatedParams, world: SimulatedWorld) {
    this.maxInputTokens = world.maxInputTokens ?? Infinity;
    this.truncate = world.truncate ?? "left";
    this.identity = simulatedIdentity(loaded);
    this.params = loaded.params;
    for (const e of world.examples) {
      const key = e.question.trim();
      const list = this.byQuestion.get(key) ?? [];
      list.push(e);
      this.byQuestion.set(key, list);
      for (const v of [e.goldSql, ...correctVariants(e.goldSql)]) this.knownCorrect.add(`${e.dbId}\u0000${normalizeSqlText(v)}`);
    }
    for (const k of world.knownCorrect ?? []) this.knownCorrect.add(`${k.dbId}\u0000${normalizeSqlText(k.sql)}`);
    this.schemas = world.schemas ?? new Map();
    const weights = this.params.repair.wrong_types as Record<SimulatedWrongType, number>;
    const total = SIMULATED_WRONG_TYPES.reduce((s, t) => s + weights[t], 0);
    this.wrongTypes = SIMULATED_WRONG_TYPES.map((t) => ({ type: t, weight: weights[t] / total }));
  }

  /** The example a prompt is about: by its question, then (several databases ask it) by the database it names or the schema it shows. */
  exampleOf(prompt: string): WorldQuestion | null {
    const question = questionOf(prompt);
    const list = question === null ? undefined : this.byQuestion.get(question);
    if (list === undefined || list.length === 0) return null;
    if (list.length === 1) return list[0];
    const named = /(?:^|\n)Database: (\S+)/.exec(prompt)?.[1];
    return list.find((e) => e.dbId === named) ?? list.find((e) => { const s = this.schemas.get(e.dbId); return s !== undefined && s !== "" && prompt.includes(s); }) ?? list[0];
  }

  /** The query's difficulty on the log-odds scale (one normal draw per seed, database and question). */
  difficulty(e: Pick<WorldQuestion, "dbId" | "question">): number {
    return this.params.repair.difficulty_sd * normalDraw(this.params.seed, "difficulty", `${e.dbId}\u0000${e.question}`);
  }

  /** Whether `sql` is one the simulator knows correct for `dbId`: the gold, its correct rewrites, or a correct initial SQL. */
  isKnownCorrect(dbId: string, sql: string): boolean {
    return this.knownCorrect.has(`${dbId}\u0000${normalizeSqlText(sql)}`);
  }

  /**
   * The response model's answer to one prompt (before the output limit). A sampled call (`sampling`:
   * a method's declared temperature and the call's seed) draws every choice afresh for its seed — a
   * repair sample is correct with the same probability as the greedy repair, each seed an independent
   * draw — so N samples of one prompt are N draws of the response model; greedy calls draw as always.
   */
  respond(prompt: string, sampling?: Sampling): SimulatedResponse {
    const seed = this.params.seed;
    const call = callOf(prompt);
    const drawn = sampling ? `${prompt}\u0000sample ${sampling.seed}` : prompt;
    const u = (name: string) => draw(seed, name, drawn);
    switch (call) {
      case "initial":
      case "repair": {
        const example = this.exampleOf(prompt);
        if (example === null) return { call, text: "<answer>SELECT 1</answer>", truncated: false, probability: 0, correct: false };
        let p: number;
        let features: RepairFeatures | undefined;
        if (call === "initial") p = logistic(logit(this.params.initial_correct) + this.difficulty(example));
        else {
          features = repairFeatures(prompt, example.dbId);
          const base = (this.params.repair.base as Record<string, number>)[features.errorType] ?? this.params.repair.base.Unknown;
          p = logistic(logit(base) + this.difficulty(example) + effectOf(features, this.params.repair.effects));
        }
        const correct = u("correct") < p;
        const sql = correct ? correctSql(example.goldSql, u("variant")) : wrongSql(example.goldSql, this.wrongType(u("wrong_type")), u("variant"));
        const lead = call === "repair" ? `The last attempt failed (${features!.errorType}); a repaired query:` : "The query:";
        return { call, text: `${lead}\n<answer>\n${sql}\n</answer>`, truncated: false, probability: p, correct, ...(features ? { features } : {}) };
      }
      case "reflection": {
        const type = /\nCURRENT ERROR TYPE: ([^\n]*)/.exec(prompt)?.[1].trim() ?? "Unknown";
        const lesson = LESSONS[type] ?? LESSONS.Unknown;
        return { call, text: `<reflection>The attempts so far failed with ${type}. ${lesson.when} ${lesson.what}</reflection>`, truncated: false };
      }
      case "judge": {
        const example = this.exampleOf(prompt);
        const sql = /\nQUERY:\n([\s\S]*?)\n\nRESULT \(first rows\):/.exec(prompt)?.[1] ?? "";
        const truth = example !== null && this.isKnownCorrect(example.dbId, sql);
        const says = this.verdict(truth, u("judge"));
        return { call, text: `<verdict>${says ? "correct" : "incorrect"}</verdict>`, truncated: false, correct: truth, verdict: says };
      }
      case "episode_judge": {
        const example = this.exampleOf(prompt);
        // the SQL may span lines: it runs up to the result block (or the DBMS message) the prompt shows next
        const sql = /\nLast SQL query: ([\s\S]*?)\n(?:Result \(first rows|The query did not run)/.exec(prompt)?.[1] ?? "";
        // The judge sees no status (RB-JUDGE v2): whether the SQL is right is the world's knowledge.
        const truth = example !== null && this.isKnownCorrect(example.dbId, sql);
        const says = this.verdict(truth, u("judge"));
        return { call, text: `<reasoning>The query ${says ? "reads the tables the question names and its rows look like the answer" : "does not look like it answers the question as asked"}.</reasoning>\n<verdict>${says ? "success" : "failure"}</verdict>`, truncated: false, correct: truth, verdict: says };
      }
      case "distill":
      case "curate":
      case "synthesize":
      case "induce":
      case "critique":
        return this.hookAnswer(call, prompt, u("hook"));
      case "unknown":
        return { call, text: "(the simulated engine has no response model for this prompt)", truncated: false };
    }
  }

  private verdict(truth: boolean, u: number): boolean {
    return truth ? u < this.params.judge.sensitivity : !(u < this.params.judge.specificity);
  }

  private wrongType(u: number): SimulatedWrongType {
    let acc = 0;
    for (const w of this.wrongTypes) {
      acc += w.weight;
      if (u < acc) return w.type;
    }
    return this.wrongTypes.filter((w) => w.weight > 0).at(-1)!.type;
  }

  /** A hook call's answer: well formed, truncated (cut before its closing tag) or malformed (no tags), by one draw. */
  private hookAnswer(call: SimulatedCall, prompt: string, u: number): SimulatedResponse {
    const h = this.params.hooks;
    const full = this.wellFormed(call, prompt);
    if (u < h.well_formed) return { call, text: full, truncated: false, form: "well_formed" };
    if (u < h.well_formed + h.truncated) {
      const close = full.lastIndexOf("</");
      const cut = Math.max(1, Math.floor((close > 0 ? close : full.length) * 0.6));
      return { call, text: full.slice(0, cut), truncated: true, form: "truncated" };
    }
    const types = typesIn(prompt);
    return { call, text: `Some thoughts on this attempt: ${(LESSONS[types[0]] ?? LESSONS.Unknown).what}`, truncated: false, form: "malformed" };
  }

  private wellFormed(call: SimulatedCall, prompt: string): string {
    const lessons = typesIn(prompt).map((t) => LESSONS[t] ?? LESSONS.Unknown);
    switch (call) {
      case "distill": {
        const success = /taken to have SUCCEEDED/.test(prompt);
        return lessons
          .slice(0, 3)
          .map((l) => `<item><title>${l.title}</title><description>${l.when}</description><content>${success ? l.what : `${l.avoid} ${l.what}`}</content></item>`)
          .join("\n");
      }
      case "curate": {
        const previous = /\nCurrent cheatsheet:\n([\s\S]*?)\n\n/.exec(prompt)?.[1] ?? "(empty)";
        const lines = previous.trim() === "(empty)" ? [] : previous.split("\n").map((l) => l.trim()).filter((l) => l !== "");
        for (const l of lessons) if (!lines.includes(`- ${l.what}`)) lines.push(`- ${l.what}`);
        while (lines.join("\n").length > 1800) lines.shift();
        return `<cheatsheet>\n${lines.join("\n")}\n</cheatsheet>`;
      }
      case "synthesize":
        return `<cheatsheet>\n${lessons.map((l) => `- ${l.what}`).join("\n")}\n</cheatsheet>`;
      case "induce":
        return `<workflows>\n${workflowsOf(prompt).join("\n\n")}\n</workflows>`;
      case "critique": {
        const listed = [...(/\nCURRENT INSIGHTS \(\[importance\]\):\n([\s\S]*?)\n\n/.exec(prompt)?.[1] ?? "").matchAll(/^(\d+)\. \[\d+\] (.*)$/gm)].map((m) => ({ n: Number(m[1]), text: m[2].trim() }));
        return lessons
          .map((l) => {
            const same = listed.find((i) => i.text === l.what);
            return same ? `AGREE ${same.n}` : `ADD: ${l.what}`;
          })
          .join("\n");
      }
      default:
        return "";
    }
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const all = Math.ceil(request.prompt.length / CHARS_PER_TOKEN);
    const cut = Math.max(0, all - this.maxInputTokens);
    if (cut > 0 && this.truncate === "error") throw new MeritError(`simulated engine: prompt has ${all} tokens, more than max_input_tokens ${this.maxInputTokens}; shorten the prompt, raise decoding.max_input_tokens, or set decoding.truncate: "left"`);
    const { text, outputTokens } = atLimit(this.respond(request.prompt, request.sampling), request.maxOutputTokens);
    return { text, promptTokens: all - cut, outputTokens, truncatedPromptTokens: cut, cached: false };
  }

  async close(): Promise<void> {}
}

/** The simulated engine's embedder: a hashed bag of words (each [a-z0-9_]+ token adds 1 to bucket sha256(token) mod dimension), L2-normalised. */
export class SimulatedEmbedder implements Embedder {
  readonly identity: BackendIdentity;
  readonly dimension: number;
  private readonly buckets = new Map<string, number>();

  constructor(dimension = 256) {
    this.dimension = dimension;
    this.identity = { kind: SIMULATED_EMBEDDING_KIND, model: `hashed-bag-of-words-${dimension}`, modelHash: `hashed-bag-v1-${dimension}`, params: { dimension } };
  }

  private bucket(token: string): number {
    let b = this.buckets.get(token);
    if (b === undefined) {
      b = createHash("sha256").update(token).digest().readUInt32BE(0) % this.dimension;
      this.buckets.set(token, b);
    }
    return b;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const v = new Float64Array(this.dimension);
      for (const token of text.toLowerCase().match(/[a-z0-9_]+/g) ?? []) v[this.bucket(token)] += 1;
      if (v.every((x) => x === 0)) v[0] = 1;
      let norm = 0;
      for (const x of v) norm += x * x;
      norm = Math.sqrt(norm);
      return Float32Array.from(v, (x) => x / norm);
    });
  }

  async tokenCounts(texts: readonly string[]): Promise<number[]> {
    return texts.map((t) => (t.toLowerCase().match(/[a-z0-9_]+/g) ?? []).length);
  }

  async close(): Promise<void> {}
}
