import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import { Registry, UnknownNameError } from "../../lib/registry.ts";

describe("Registry", () => {
  it("returns values by name and lists names in registration order", () => {
    const r = new Registry<number>("ranker");
    r.register("hybrid", 1);
    r.register("random", 2);
    expect(r.get("random")).toBe(2);
    expect(r.has("hybrid")).toBe(true);
    expect(r.has("rrf")).toBe(false);
    expect(r.names()).toEqual(["hybrid", "random"]);
    expect(r.entries()).toEqual([["hybrid", 1], ["random", 2]]);
  });

  it("refuses a second registration of a name and names that are not identifiers", () => {
    const r = new Registry<number>("dataset");
    r.register("spider", 1);
    expect(() => r.register("spider", 2)).toThrow(/dataset "spider" is already registered/);
    expect(() => r.register("Spider Dev", 3)).toThrow(MeritError);
    expect(r.get("spider")).toBe(1);
  });

  it("suggests the nearest name for a typo and lists the known ones", () => {
    const r = new Registry<string>("dataset");
    r.register("spider", "s");
    r.register("bird", "b");
    expect(() => r.get("spidr")).toThrow(UnknownNameError);
    expect(() => r.get("spidr")).toThrow('unknown dataset "spidr". Did you mean "spider"? Known datasets: spider, bird');
    expect(() => r.get("postgres")).toThrow('unknown dataset "postgres". Known datasets: spider, bird');
  });
});
