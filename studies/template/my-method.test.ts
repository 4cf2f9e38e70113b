// Tests the study's plugin and study file (run by `make test`, which finds studies/**/*.test.ts):
// my_method is registered with its parts, and the study names it, its reference and its comparisons.
import { describe, expect, it } from "vitest";
import { getMethod } from "../../lib/methods/index.ts";
import "./my-method.ts";
import study from "./study.ts";

describe("the study's method and file", () => {
  it("registers my_method as MERIT with a schema-local writer", () => {
    const m = getMethod("my_method");
    expect(m.repairs).toBe(true);
    expect(m.parts.writer).toMatchObject({ name: "episode_memory", args: { scope: "same_database" } });
    expect(getMethod("merit").parts.writer?.args?.scope).toBe("global");
    expect(m.parts.planner).toEqual(getMethod("merit").parts.planner);
  });

  it("runs my_method and compares it with every other method of the study", () => {
    expect(study.methods).toContain("my_method");
    expect(study.comparisons.every(([a, b]) => study.methods.includes(a) && study.methods.includes(b))).toBe(true);
    expect(study.comparisons.some((pair) => pair.includes("my_method"))).toBe(true);
  });
});
