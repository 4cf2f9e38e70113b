// Tests lib/methods/build-policy.ts `configurePolicy` (through `configureMethod`): a config retrieval
// setting applies to a part arg only where the method leaves that arg at METHOD.md's value; where the
// method sets the arg itself, the method's value stays under the config's default and a conflicting
// non-default setting is refused in one line naming the method, the arg, both values and the fix.
// Configuring twice (the grid's resume checks, then runExperiment) gives the same method.
import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import { configureMethod, getMethod, MERIT_PARTS, methodRecord, registerMethod, type MethodSpec } from "../../lib/methods/index.ts";
import { DEFAULT_RETRIEVAL_SETTINGS, type RetrievalSettings } from "../../lib/methods/policy.ts";

const k5 = registerMethod({ name: "configure_test_k5", description: "MERIT with five positives", parts: { ...MERIT_PARTS, planner: { name: "pools", args: { max_positive: 5 } } } });
const bonus = registerMethod({ name: "configure_test_bonus", description: "hybrid with a 0.3 bonus", parts: { ...MERIT_PARTS, ranker: { name: "hybrid", args: { type_bonus: 0.3 } } } });
const settings = (over: Partial<RetrievalSettings>): RetrievalSettings => ({ ...DEFAULT_RETRIEVAL_SETTINGS, ...over });
const args = (m: MethodSpec) => ({ planner: m.parts.planner?.args, ranker: m.parts.ranker?.args });

describe("configureMethod: a config setting never silently overrides a method's own arg", () => {
  it("the config's defaults leave a method's own args as registered (what `merit methods` lists is what runs)", () => {
    const configured = configureMethod(k5, DEFAULT_RETRIEVAL_SETTINGS);
    expect(configured.parts.planner?.args.max_positive).toBe(5);
    expect(configured.memory?.limits).toEqual({ positive: 5, negative: 1, combined: 6 });
    expect(methodRecord(configured)).toEqual(methodRecord(k5));
    expect(configured.description).toBe(k5.description);
    expect(configureMethod(bonus, DEFAULT_RETRIEVAL_SETTINGS).memory?.typeBonus).toBe(0.3);
  });

  it("a setting applies to the args the method leaves at METHOD.md's value", () => {
    const configured = configureMethod(k5, settings({ max_negative: 2, min_typed_pool: 4 }));
    expect(args(configured).planner).toMatchObject({ max_positive: 5, max_negative: 2, min_typed_pool: 4 });
    expect(configured.memory?.limits).toEqual({ positive: 5, negative: 2, combined: 7 });
    expect(configureMethod(getMethod("merit"), settings({ max_positive: 5 })).parts.planner?.args.max_positive).toBe(5);
    expect(configureMethod(getMethod("merit_typerel"), settings({ type_bonus: 0.2 })).memory?.typeBonus).toBe(0.2);
  });

  it("a setting equal to the method's own value is no conflict", () => {
    const configured = configureMethod(k5, settings({ max_positive: 5 }));
    expect(configured.parts.planner?.args.max_positive).toBe(5);
    expect(configured.description).toBe(`${k5.description} (configured: max_positive 5)`);
  });

  it("a conflicting non-default setting is refused in one line naming the method, the arg, both values and the fix", () => {
    let error: unknown;
    try {
      configureMethod(k5, settings({ max_positive: 4 }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MeritError);
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toMatch(/^method configure_test_k5 sets max_positive 5 itself \(its planner "pools"\) but the config's retrieval\.max_positive is 4; drop retrieval\.max_positive from the config/);
    expect(() => configureMethod(bonus, settings({ type_bonus: 0.2 }))).toThrow(/method configure_test_bonus sets type_bonus 0\.3 itself \(its ranker "hybrid"\) but the config's retrieval\.type_bonus is 0\.2/);
    // a ranker without a bonus takes none, whatever the config says: nothing to conflict with
    expect(configureMethod(getMethod("merit"), settings({ type_bonus: 0.2 })).memory?.typeBonus).toBe(0);
  });

  it("configuring a configured method again gives the same method, or reconfigures the registered one", () => {
    const once = configureMethod(getMethod("merit"), settings({ max_positive: 2 }));
    expect(configureMethod(once, settings({ max_positive: 2 }))).toBe(once);
    const other = configureMethod(once, settings({ max_positive: 4 }));
    expect(other.parts.planner?.args.max_positive).toBe(4);
    expect(other.description).toBe(`${getMethod("merit").description} (configured: max_positive 4)`);
    expect(configureMethod(other, DEFAULT_RETRIEVAL_SETTINGS)).toEqual(getMethod("merit"));
  });
});
