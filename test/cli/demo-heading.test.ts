// Tests lib/cli/demo.ts bundledHeading: step 1's heading names every dataset of the bundled predictions (it said "Spider dev" above a BIRD row).
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bundledHeading } from "../../lib/report/demo.ts";

describe("demo step 1 heading", () => {
  it("names BIRD when a BIRD file is among the bundled predictions, and only the datasets present", () => {
    const files = readdirSync("data/predictions").filter((f) => f.endsWith(".sql"));
    expect(files.some((f) => f.startsWith("bird_"))).toBe(true);
    expect(bundledHeading(files)).toBe("== 1. Execution accuracy of the bundled real predictions (Spider dev, official test-suite protocol; BIRD dev, official BIRD protocol)");
    expect(bundledHeading(["spider_dev__x.sql"])).toBe("== 1. Execution accuracy of the bundled real predictions (Spider dev, official test-suite protocol)");
    expect(bundledHeading(["bird_dev__x.sql"])).not.toContain("Spider");
  });
});
