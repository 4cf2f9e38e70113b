// Prompt rendering (METHOD.md §6.3): literal section labels in order, the reference's structure
// (attempts numbered from 1, memory blocks without blank lines between them, two blank lines between
// a Spider schema and its question, a generic BIRD backtick example), strict slots, deterministic
// hashes, and a user's own template folder.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  extractReflection,
  initialPrompt,
  PROMPTS_DIR,
  promptHash,
  reflectionPrompt,
  renderTemplate,
  repairPrompt,
  TEMPLATE_NAMES,
  templateHash,
  templateSetHash,
} from "../lib/prompts.ts";

const schema = "Database: pets_1\n\nTable: Pets\n  - PetID (number, PRIMARY KEY)";

describe("initial prompt", () => {
  it("renders the Spider template exactly: the empty dataset context keeps its newline (two blank lines)", () => {
    const text = initialPrompt({ dataset: "spider", schema, question: "How many pets?", evidence: "" });
    expect(text).toBe(
      "PROMPT_VERSION: spider-initial-v4\n" +
        "You are an expert SQLite developer. Write one SQL query that answers the question below.\n\n" +
        "DATABASE SCHEMA:\n" + schema + "\n\n\n" +
        "QUESTION:\nHow many pets?\n\n" +
        "RULES:\n" +
        "- Use table and column names exactly as they are written in the schema.\n" +
        "- Do not introduce table or column aliases with AS.\n" +
        "- Give exactly one query and no alternatives.\n" +
        "- Put the final SQL between <answer> and </answer>.\n",
    );
  });
  it("adds evidence and both BIRD rules only when evidence is present", () => {
    const withEvidence = initialPrompt({ dataset: "bird", schema, question: "Q?", evidence: "rate = a / b" });
    expect(withEvidence).toContain("EXTERNAL KNOWLEDGE / EVIDENCE:\nrate = a / b\n\nBIRD RULES:\n- Carry out");
    expect(withEvidence).toContain("for example `Order Total (USD)`.\n\nQUESTION:\nQ?");
    // The backtick example is a made-up identifier, not a column of any BIRD dev database.
    expect(withEvidence).not.toContain("Free Meal Count");
    const without = initialPrompt({ dataset: "bird", schema, question: "Q?", evidence: "  " });
    expect(without).not.toContain("EVIDENCE");
    expect(without).not.toContain("Carry out");
    expect(without).toContain("DATABASE SCHEMA:\n" + schema + "\n\nBIRD RULES:\n- Put column names");
  });
});

describe("repair prompt", () => {
  const base = {
    dataset: "spider" as const,
    schema,
    question: "How many pets?",
    evidence: "",
    reflections: [],
    attempts: [
      { sql: "SELECT count(*) FROM pet", status: "EXECUTION_ERROR", dbError: "no such table: pet" },
    ],
    currentErrorType: "Schema Linking",
  };
  it("keeps every section, in order, with (none) when empty", () => {
    const text = repairPrompt({ ...base, positives: [], negatives: [] });
    const order = [
      "PROMPT_VERSION: spider-repair-v4",
      "CONFIRMED SUCCESSFUL REPAIR DIRECTIONS:\n(none)",
      "OBSERVED FAILED DIRECTIONS:\n(none)",
      "LOCAL REFLECTIONS FROM THIS EPISODE:\n(none)",
      "CURRENT FEEDBACK:\nStatus: EXECUTION_ERROR\nCurrent error type: Schema Linking\nDB error: no such table: pet",
      "DATABASE SCHEMA:\n" + schema + "\n\n\nQUESTION:\nHow many pets?",
      "LOCAL ATTEMPT HISTORY:\n[Attempt 1 — observed unsuccessful]\nSELECT count(*) FROM pet",
      "REPAIR RULES:",
    ];
    let at = -1;
    for (const label of order) {
      const next = text.indexOf(label);
      expect(next, label).toBeGreaterThan(at);
      at = next;
    }
    expect(text).not.toContain("FIXED STATIC EXAMPLES");
    expect(text).not.toContain("AS.");
  });
  it("formats memories, reflections and static examples with their literal labels", () => {
    const memory = {
      entry_id: "abc",
      error_type: "Schema Linking",
      failure_context: "attempted_sql=SELECT 1; status=EXECUTION_ERROR; db_error=x",
      successful_direction: "Observed successful transition: a => b",
      attempted_sql_delta: "a => b",
      observed_outcome: "CORRECT",
      observed_db_error: null,
    };
    const text = repairPrompt({
      ...base,
      positives: [memory],
      negatives: [{ ...memory, entry_id: "def", observed_outcome: "EXECUTION_ERROR", observed_db_error: null }],
      reflections: ["first", "second"],
      staticExamples: [{ source: "train_spider", question: "Q1", sql: "SELECT 1" }],
    });
    expect(text).toContain("FIXED STATIC EXAMPLES:\n[Static example 1; source=train_spider]\nQuestion: Q1\nSQL: SELECT 1\n\nCONFIRMED");
    expect(text).toContain("[Confirmed successful repair 1]\nEntry ID: abc\nError type: Schema Linking\nFailure context: attempted_sql=SELECT 1; status=EXECUTION_ERROR; db_error=x\nObserved successful direction: Observed successful transition: a => b\nSQL delta: a => b\n\nOBSERVED FAILED DIRECTIONS:");
    expect(text).toContain("[OBSERVED FAILED DIRECTION 1]\nEntry ID: def\n");
    const two = repairPrompt({ ...base, positives: [memory, { ...memory, entry_id: "ghi" }], negatives: [] });
    expect(two).toContain("SQL delta: a => b\n[Confirmed successful repair 2]\nEntry ID: ghi\n"); // no blank line between blocks
    expect(text).toContain("Observed outcome: EXECUTION_ERROR\nObserved DB error: \n\nLOCAL REFLECTIONS");
    expect(text).toContain("[Local reflection 1] first\n[Local reflection 2] second");
  });
});

describe("templates", () => {
  it("rejects missing and unused values", () => {
    expect(() => renderTemplate("{{a}}", {}, "t")).toThrow(/no value for slot \{\{a\}\}/);
    expect(() => renderTemplate("{{a}}", { a: "x", b: "y" }, "t")).toThrow(/values b are not used/);
  });
  it("never expands braces inside values", () => {
    expect(renderTemplate("[{{a}}]", { a: "{{b}}" })).toBe("[{{b}}]");
  });
  it("hashes deterministically", () => {
    expect(templateHash("spider-repair-v4")).toMatch(/^[0-9a-f]{64}$/);
    expect(promptHash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  it("renders the reflection prompt and extracts reflections", () => {
    const text = reflectionPrompt({ dataset: "spider", schema, question: "Q?", evidence: "", currentErrorType: "Syntax", attempts: [{ sql: "SELEC 1", status: "EXECUTION_ERROR", dbError: 'near "SELEC": syntax error' }] });
    expect(text).toContain("DATABASE SCHEMA:\n" + schema + "\n\n\nQUESTION:\nQ?");
    expect(text).toContain('CURRENT ERROR TYPE: Syntax\n\nATTEMPTS AND OBSERVED OUTCOMES:\n[Attempt 1]\nSQL: SELEC 1\nOutcome: status=EXECUTION_ERROR; db_error=near "SELEC": syntax error');
    expect(extractReflection("x <reflection> keep </reflection> y")).toBe("keep");
    expect(extractReflection("partial text</reflection> tail")).toBe("partial text");
    expect(extractReflection("  plain  ")).toBe("plain");
  });
});

describe("a user's template folder (config prompts_dir)", () => {
  const dir = mkdtempSync(join(tmpdir(), "merit-prompts-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const question = { dataset: "spider" as const, schema, question: "How many pets?", evidence: "" };

  it("renders from the folder and is named by the hash of its templates", () => {
    cpSync(PROMPTS_DIR, dir, { recursive: true });
    expect(templateSetHash(dir)).toBe(templateSetHash());
    expect(initialPrompt(question, dir)).toBe(initialPrompt(question));
    const file = join(dir, "spider-initial-v4.txt");
    writeFileSync(file, readFileSync(file, "utf8").replace("Write one SQL query", "Write exactly one SQLite query"));
    const custom = join(dir, "..", `${dir.split("/").pop()}-edited`);
    cpSync(dir, custom, { recursive: true });
    try {
      expect(initialPrompt(question, custom)).toContain("Write exactly one SQLite query");
      expect(templateSetHash(custom)).not.toBe(templateSetHash());
      expect(templateHash("spider-repair-v4", custom)).toBe(templateHash("spider-repair-v4"));
    } finally {
      rmSync(custom, { recursive: true, force: true });
    }
    expect(TEMPLATE_NAMES).toHaveLength(7);
  });

  it("a folder without a template fails naming the file and the fix", () => {
    const empty = mkdtempSync(join(tmpdir(), "merit-prompts-empty-"));
    try {
      expect(() => templateSetHash(empty)).toThrow(/spider-initial-v4\.txt cannot be read; copy prompts\/spider-initial-v4\.txt into .* or unset prompts_dir/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
