// The episode loop, memory and the oracle decide nothing by a feedback regime's name (issue 36 §1,
// §5): every decision — acceptance, what the agent is shown, when the loop stops, what memory stores
// — is a function of the registered regime object (lib/methods/feedback.ts). No code line of
// lib/repair, lib/memory or lib/oracle names a regime or ORACLE_REGIME.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const LIB = new URL("../../lib/", import.meta.url);
const NAMES = /ORACLE_REGIME|["'`](?:denotation_confirmed|dbms_only|llm_judge|noisy_oracle|oracle)["'`]/;

/** Code lines (comments stripped) of every .ts file in a lib/ folder, with file and line number. */
function codeLines(folder: string): { where: string; text: string }[] {
  return readdirSync(new URL(`${folder}/`, LIB))
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) => {
      const text = readFileSync(new URL(`${folder}/${f}`, LIB), "utf8").replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "));
      return text.split("\n").map((line, i) => ({ where: `lib/${folder}/${f}:${i + 1}`, text: line.replace(/\/\/.*$/, "") }));
    });
}

describe("no regime-name comparison in lib/repair, lib/memory, lib/oracle", () => {
  it.each(["repair", "memory", "oracle"])("lib/%s names no feedback regime in code", (folder) => {
    expect(codeLines(folder).filter((l) => NAMES.test(l.text)).map((l) => `${l.where}: ${l.text.trim()}`)).toEqual([]);
  });

  it("the check catches a comparison (it is not vacuous)", () => {
    expect(NAMES.test(`if (spec.feedbackRegime === "dbms_only") accepted = true;`)).toBe(true);
    expect(NAMES.test(`regime === ORACLE_REGIME`)).toBe(true);
  });
});
