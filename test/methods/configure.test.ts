// Tests lib/methods/method.ts `underSettings` (with merit-memory.ts `retrievalOverrides`) and
// `withArgs`: a config retrieval setting applies to a memory arg only where the method leaves that arg
// at METHOD.md's value; where the method sets the arg itself, the method's value stays under the
// config's default and a conflicting non-default setting is refused in one line naming the method, the
// arg, both values and the fix. Configuring twice (the grid's resume checks, then runExperiment) gives
// the same method. `withArgs` overrides a factory's args under the method's name, refusing an unknown arg.
import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import {
  DEFAULT_RETRIEVAL_SETTINGS,
  getMethod,
  isEntryMemory,
  meritMethod,
  methodRecord,
  registerMethod,
  retrievalOverrides,
  underSettings,
  withArgs,
  type MethodSpec,
  type RetrievalSettings,
} from "../../lib/methods/index.ts";

const k5 = registerMethod(meritMethod("configure_test_k5", "MERIT with five positives", { max_positive: 5 }));
const bonus = registerMethod(meritMethod("configure_test_bonus", "hybrid with a 0.3 bonus", { ranker_args: { type_bonus: 0.3 } }));
const settings = (over: Partial<RetrievalSettings>): RetrievalSettings => ({ ...DEFAULT_RETRIEVAL_SETTINGS, ...over });
const args = (m: MethodSpec) => (m.record.hooks?.memory as { args: Record<string, unknown> }).args;
const rankerArgs = (m: MethodSpec) => args(m).ranker_args as Record<string, unknown>;

describe("underSettings: a config setting never silently overrides a method's own arg", () => {
  it("the config's defaults leave a method's own args as registered (what `merit methods` lists is what runs)", () => {
    const configured = underSettings(k5, DEFAULT_RETRIEVAL_SETTINGS);
    expect(args(configured).max_positive).toBe(5);
    expect(configured.memory?.limits).toEqual({ positive: 5, negative: 1, combined: 6 });
    expect(methodRecord(configured)).toEqual(methodRecord(k5));
    expect(configured.description).toBe(k5.description);
    expect(underSettings(bonus, DEFAULT_RETRIEVAL_SETTINGS).memory?.typeBonus).toBe(0.3);
  });

  it("a setting applies to the args the method leaves at METHOD.md's value", () => {
    const configured = underSettings(k5, settings({ max_negative: 2, min_typed_pool: 4 }));
    expect(args(configured)).toMatchObject({ max_positive: 5, max_negative: 2, min_typed_pool: 4 });
    expect(configured.memory?.limits).toEqual({ positive: 5, negative: 2, combined: 7 });
    expect(args(underSettings(getMethod("merit"), settings({ max_positive: 5 }))).max_positive).toBe(5);
    expect(underSettings(getMethod("merit_typerel"), settings({ type_bonus: 0.2 })).memory?.typeBonus).toBe(0.2);
  });

  it("a setting equal to the method's own value is no conflict", () => {
    const configured = underSettings(k5, settings({ max_positive: 5 }));
    expect(args(configured).max_positive).toBe(5);
    expect(configured.description).toBe(`${k5.description} (configured: max_positive 5)`);
  });

  it("a conflicting non-default setting is refused in one line naming the method, the arg, both values and the fix", () => {
    let error: unknown;
    try {
      underSettings(k5, settings({ max_positive: 4 }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MeritError);
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toMatch(/^method configure_test_k5 sets max_positive 5 itself \(its memory "merit_memory"\) but the config's retrieval\.max_positive is 4; drop retrieval\.max_positive from the config/);
    expect(() => underSettings(bonus, settings({ type_bonus: 0.2 }))).toThrow(/method configure_test_bonus sets type_bonus 0\.3 itself \(its ranker "hybrid"\) but the config's retrieval\.type_bonus is 0\.2/);
    // a ranker without a bonus takes none, whatever the config says: nothing to conflict with
    expect(underSettings(getMethod("merit"), settings({ type_bonus: 0.2 })).memory?.typeBonus).toBe(0);
  });

  it("configuring a configured method again gives the same method, or reconfigures the registered one", () => {
    const once = underSettings(getMethod("merit"), settings({ max_positive: 2 }));
    expect(underSettings(once, settings({ max_positive: 2 }))).toBe(once);
    const other = underSettings(once, settings({ max_positive: 4 }));
    expect(args(other).max_positive).toBe(4);
    expect(other.description).toBe(`${getMethod("merit").description} (configured: max_positive 4)`);
    const back = underSettings(other, DEFAULT_RETRIEVAL_SETTINGS);
    expect(methodRecord(back)).toEqual(methodRecord(getMethod("merit")));
    expect({ ...back, definition: null, hooks: null }).toEqual({ ...getMethod("merit"), definition: null, hooks: null });
  });

  it("a method without MERIT's memory is returned as it is", () => {
    const iterative = getMethod("iterative");
    expect(underSettings(iterative, settings({ max_positive: 5, type_bonus: 0.2 }))).toBe(iterative);
    const reasoning = getMethod("reasoning_bank");
    expect(underSettings(reasoning, settings({ max_positive: 5 }))).toBe(reasoning);
  });
});

describe("retrievalOverrides: the settings as overrides of a memory's args", () => {
  const memoryOf = (m: MethodSpec) => {
    const memory = m.hooks.memory;
    if (!isEntryMemory(memory)) throw new Error(`${m.name} has no entry memory`);
    return memory;
  };
  it("is empty under METHOD.md's values, and names only the args that change", () => {
    expect(retrievalOverrides("merit", memoryOf(getMethod("merit")), DEFAULT_RETRIEVAL_SETTINGS)).toEqual({});
    expect(retrievalOverrides("merit", memoryOf(getMethod("merit")), settings({ max_negative: 2, type_bonus: 0.3 }))).toEqual({ max_negative: 2 });
    expect(retrievalOverrides("merit_typerel", memoryOf(getMethod("merit_typerel")), settings({ type_bonus: 0.3 }))).toEqual({ ranker_args: { bm25_weight: 0.25, dense_weight: 0.75, type_bonus: 0.3 } });
    expect(retrievalOverrides("configure_test_k5", memoryOf(k5), settings({ max_positive: 5 }))).toEqual({});
  });
});

describe("withArgs: a method with some of its factory's args overridden", () => {
  it("keeps the name, changes the args, and leaves the registered method as it was", () => {
    const merit = getMethod("merit");
    const k2 = withArgs(merit, { max_positive: 2, ranker_args: { dense_weight: 0.5 } });
    expect(k2.name).toBe("merit");
    expect(k2.canonicalName).toBe("merit");
    expect(k2.description).toBe(merit.description);
    expect(args(k2).max_positive).toBe(2);
    expect(rankerArgs(k2)).toEqual({ bm25_weight: 0.25, dense_weight: 0.5, type_bonus: 0 });
    expect(k2.memory?.limits).toEqual({ positive: 2, negative: 1, combined: 3 });
    expect(args(getMethod("merit")).max_positive).toBe(3);
    expect(withArgs(merit, {})).toBe(merit);
    expect(withArgs(merit, { type_filter: "never" }, "merit, unfiltered").description).toBe("merit, unfiltered");
  });

  it("an alias's override keeps the alias's name", () => {
    const full = withArgs(getMethod("merit_full"), { max_negative: 0 });
    expect(full).toMatchObject({ name: "merit_full", canonicalName: "merit" });
    expect(full.memory?.limits.negative).toBe(0);
  });

  it("refuses an unknown or ill-typed arg, and a method without args, in one line", () => {
    expect(() => withArgs(getMethod("merit"), { max_postive: 2 })).toThrow(/^method "merit": memory "merit_memory" has no arg "max_postive" \(did you mean "max_positive"\?\)/);
    expect(() => withArgs(getMethod("merit"), { causal: 1 })).toThrow(/arg "causal" must be a boolean, got 1/);
    expect(() => withArgs(getMethod("iterative"), { max_positive: 2 })).toThrow(/^method "iterative" has no args to change \(max_positive\)/);
    expect(() => withArgs(getMethod("reflexion"), { top_k: 2 })).toThrow(/^method "reflexion" has no args to change/);
  });
});
