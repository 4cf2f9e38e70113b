// Report stage (lib/report/column-codec.ts): integer columns round-trip through the one-code-unit-per-row
// string, and columns with a value outside [−1, 55000) stay number arrays.
import { describe, expect, it } from "vitest";
import { decodeColumn, encodeColumn } from "../../lib/report/column-codec.ts";

describe("column codec", () => {
  it("writes value + 48 per row", () => {
    // −1 → 47 "/", 0 → 48 "0", 9 → 57 "9", 17 → 65 "A".
    expect(encodeColumn([-1, 0, 9, 17])).toBe("/09A");
    expect(decodeColumn("/09A")).toEqual([-1, 0, 9, 17]);
  });

  it("round-trips the largest encodable value and an empty column", () => {
    expect(decodeColumn(encodeColumn([54_999, 0]))).toEqual([54_999, 0]);
    expect(encodeColumn([])).toBe("");
  });

  it("keeps out-of-range or fractional columns as numbers", () => {
    expect(encodeColumn([1, 55_000])).toEqual([1, 55_000]);
    expect(encodeColumn([-2])).toEqual([-2]);
    expect(encodeColumn([0.5])).toEqual([0.5]);
    expect(decodeColumn([1, 55_000])).toEqual([1, 55_000]);
  });
});
