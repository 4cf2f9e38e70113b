/**
 * Known answers for the oracle's denotation comparison (METHOD.md §2.3 step 3, §2.4): Python value
 * equality (valueKey), Python's float repr, the Spider test-suite `result_eq` with its `quick_rej`
 * pre-check, and BIRD's set comparison. Every expected value is worked out by hand from the Python
 * semantics in the comments, not taken from running the code.
 */
import { describe, expect, it } from "vitest";
import { birdResultEq, pyFloatRepr, pySortKey, rowKey, spiderResultEq, valueKey } from "../../lib/oracle/compare.ts";
import type { Rows } from "../../lib/oracle/types.ts";

describe("valueKey (Python == and hash)", () => {
  it("equates int and integral float, exactly", () => {
    expect(valueKey(1n)).toBe(valueKey(1.0)); // 1 == 1.0
    expect(valueKey(-0)).toBe(valueKey(0n)); // -0.0 == 0
    expect(valueKey(2n ** 53n)).toBe(valueKey(9007199254740992.0)); // 2^53 is a float exactly
    // 2^53 + 1 = 9007199254740993 has no float; Python compares int/float exactly ⇒ not equal.
    expect(valueKey(2n ** 53n + 1n)).not.toBe(valueKey(9007199254740992.0));
    expect(valueKey(0.5)).toBe(valueKey(0.5));
    expect(valueKey(1n)).not.toBe(valueKey(1.5));
  });
  it("keeps types apart where Python does", () => {
    expect(valueKey("1")).not.toBe(valueKey(1n)); // '1' != 1
    expect(valueKey("1")).not.toBe(valueKey(1.0));
    expect(valueKey(null)).not.toBe(valueKey("")); // None != ''
    expect(valueKey(null)).not.toBe(valueKey(0n)); // None != 0
    expect(valueKey(null)).toBe(valueKey(null));
  });
  it("compares bytes by content, never equal to text", () => {
    expect(valueKey(new Uint8Array([1, 2]))).toBe(valueKey(Buffer.from([1, 2])));
    expect(valueKey(new Uint8Array([1, 2]))).not.toBe(valueKey(new Uint8Array([1, 3])));
    expect(valueKey(new Uint8Array([0x61]))).not.toBe(valueKey("a")); // b'a' != 'a'
  });
  it("gives distinct keys to distinct tuples", () => {
    // ('a', 'b') vs ('ab',): concatenating value keys without lengths would collide.
    expect(rowKey(["a", "b"])).not.toBe(rowKey(["ab"]));
    expect(rowKey([1n, "x"])).toBe(rowKey([1.0, "x"]));
  });
});

describe("pyFloatRepr (Python repr(float))", () => {
  it.each([
    [1.0, "1.0"],
    [1e16, "1e+16"], // exponent 16 ≥ 16 ⇒ scientific
    [1e15, "1000000000000000.0"], // exponent 15 < 16 ⇒ positional
    [2.5e16, "2.5e+16"],
    [1e-5, "1e-05"], // exponent −5 < −4 ⇒ scientific, two-digit exponent
    [0.0001, "0.0001"], // exponent −4 ⇒ positional
    [1.5e-7, "1.5e-07"],
    [123456789.125, "123456789.125"], // exactly representable (0.125 = 2^-3)
    [0.1, "0.1"], // shortest round-trip digits
    [-2.5, "-2.5"],
    [0.0, "0.0"],
    [-0.0, "-0.0"],
    [Infinity, "inf"],
    [-Infinity, "-inf"],
    [NaN, "nan"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [5e-324, "5e-324"],
  ])("repr(%s) = %s", (x, repr) => {
    expect(pyFloatRepr(x)).toBe(repr);
  });
});

describe("pySortKey (str(v) + str(type(v)))", () => {
  it("spells the Python forms", () => {
    expect(pySortKey(1n)).toBe("1<class 'int'>");
    expect(pySortKey(1.0)).toBe("1.0<class 'float'>");
    expect(pySortKey("1")).toBe("1<class 'str'>");
    expect(pySortKey(null)).toBe("None<class 'NoneType'>");
    // repr(b"a'") uses double quotes because the bytes contain ' and no ".
    expect(pySortKey(new Uint8Array([0x61, 0x27]))).toBe(`b"a'"<class 'bytes'>`);
    expect(pySortKey(new Uint8Array([0x00, 0x0a]))).toBe("b'\\x00\\n'<class 'bytes'>");
  });
});

describe("spiderResultEq (test-suite result_eq(gold, pred, order_matters))", () => {
  it("both empty ⇒ equal; one empty ⇒ not", () => {
    expect(spiderResultEq([], [], false)).toBe(true);
    expect(spiderResultEq([], [], true)).toBe(true);
    expect(spiderResultEq([[1n]], [], false)).toBe(false);
    expect(spiderResultEq([], [[1n]], false)).toBe(false);
  });
  it("row count or column count differs ⇒ not equal", () => {
    expect(spiderResultEq([[1n], [2n]], [[1n]], false)).toBe(false);
    expect(spiderResultEq([[1n, 2n]], [[1n]], false)).toBe(false);
    expect(spiderResultEq([[1n]], [[1n, 1n]], false)).toBe(false);
  });
  it("row order matters only when told so", () => {
    const gold: Rows = [[1n], [2n]];
    const pred: Rows = [[2n], [1n]];
    expect(spiderResultEq(gold, pred, false)).toBe(true);
    expect(spiderResultEq(gold, pred, true)).toBe(false);
    expect(spiderResultEq(gold, gold, true)).toBe(true);
  });
  it("int and float of the same value are equal", () => {
    expect(spiderResultEq([[1n]], [[1.0]], false)).toBe(true);
    expect(spiderResultEq([[3n, "a"]], [[3.0, "a"]], true)).toBe(true);
  });
  it("accepts a column permutation (2 columns)", () => {
    const gold: Rows = [[1n, "a"], [2n, "b"]];
    const pred: Rows = [["a", 1n], ["b", 2n]];
    expect(spiderResultEq(gold, pred, false)).toBe(true);
    expect(spiderResultEq(gold, pred, true)).toBe(true);
    // Swapping columns cannot fix a value difference.
    expect(spiderResultEq(gold, [["a", 1n], ["c", 2n]], false)).toBe(false);
  });
  it("accepts a column permutation (5 columns, the >3-column pruning path)", () => {
    const gold: Rows = [
      [1n, "a", 2.5, null, "x"],
      [2n, "b", 3.5, null, "y"],
    ];
    // pred column j holds gold column perm[j]: pred = (gold[4], gold[2], gold[0], gold[1], gold[3])
    const pred: Rows = [
      ["x", 2.5, 1n, "a", null],
      ["y", 3.5, 2n, "b", null],
    ];
    expect(spiderResultEq(gold, pred, false)).toBe(true);
    expect(spiderResultEq(gold, pred, true)).toBe(true);
    // Each column's values exist in gold, but rows are recombined: (1,'b',…) is no gold row.
    const mixed: Rows = [
      ["x", 2.5, 1n, "b", null],
      ["y", 3.5, 2n, "a", null],
    ];
    expect(spiderResultEq(gold, mixed, false)).toBe(false);
  });
  it("uses bag semantics: duplicates count", () => {
    // Same row set {1, 2} and same length 3, but multisets {1,1,2} ≠ {1,2,2}.
    expect(spiderResultEq([[1n], [1n], [2n]], [[1n], [2n], [2n]], false)).toBe(false);
    expect(spiderResultEq([[1n], [1n], [2n]], [[2n], [1n], [1n]], false)).toBe(true);
  });
  it("the brief's example passes quick_rej: gold [(1, '1')] vs pred [('1', 1.0)]", () => {
    // unorder_row(gold row): keys "1<class 'int'>" and "1<class 'str'>"; they share "1<class '" and
    // then 'i' (0x69) < 's' (0x73) ⇒ (1, '1').
    // unorder_row(pred row): keys "1<class 'str'>" and "1.0<class 'float'>"; second char '.' (0x2E)
    // < '<' (0x3C) ⇒ (1.0, '1').
    // quick_rej (unordered): {(1, '1')} == {(1.0, '1')} since 1 == 1.0 ⇒ passes. Permutation (1, 0)
    // turns ('1', 1.0) into (1.0, '1') == (1, '1') ⇒ equal.
    expect(spiderResultEq([[1n, "1"]], [["1", 1.0]], false)).toBe(true);
  });
  it("reproduces quick_rej's false negative: gold [(1, '10')] vs pred [(1.0, '10')]", () => {
    // The rows are equal as Python tuples ((1, '10') == (1.0, '10')), but unorder_row sorts them
    // differently: gold keys "1<class 'int'>" vs "10<class 'str'>": second char '<' (0x3C) > '0'
    // (0x30) ⇒ ('10', 1). Pred keys "1.0<class 'float'>" vs "10<class 'str'>": '.' (0x2E) < '0' ⇒
    // (1.0, '10'). {('10', 1)} != {(1.0, '10')} ⇒ quick_rej says different ⇒ result_eq is False.
    expect(spiderResultEq([[1n, "10"]], [[1.0, "10"]], false)).toBe(false);
    expect(spiderResultEq([[1n, "10"]], [["10", 1.0]], false)).toBe(false);
    // With an int prediction the sorted rows coincide and the tables are equal.
    expect(spiderResultEq([[1n, "10"]], [[1n, "10"]], false)).toBe(true);
  });
  it("sorts inside quick_rej by Python's float repr (1e+16, not 10000000000000000.0)", () => {
    // gold (10^16 int, '1a'): keys "10000000000000000<class 'int'>" vs "1a<class 'str'>": '0' < 'a'
    // ⇒ (10^16, '1a'). pred (1e16 float, '1a'): keys "1e+16<class 'float'>" vs "1a<class 'str'>":
    // 'a' (0x61) < 'e' (0x65) ⇒ ('1a', 1e16). The sorted rows differ ⇒ quick_rej rejects ⇒ False,
    // though the tuples are equal. (A positional repr "10000000000000000.0" would sort first and pass.)
    expect(spiderResultEq([[10n ** 16n, "1a"]], [[1e16, "1a"]], false)).toBe(false);
    // Both int: identical sorted rows ⇒ equal.
    expect(spiderResultEq([[10n ** 16n, "1a"]], [[10n ** 16n, "1a"]], false)).toBe(true);
  });
});

describe("birdResultEq (set(pred) == set(gold))", () => {
  it("ignores duplicates and row order", () => {
    expect(birdResultEq([[1n, "a"], [1n, "a"]], [[1n, "a"]])).toBe(true);
    expect(birdResultEq([[1n], [2n]], [[2n], [1n], [2n]])).toBe(true);
  });
  it("keeps column order (rows are tuples)", () => {
    expect(birdResultEq([[1n, "a"]], [["a", 1n]])).toBe(false);
  });
  it("compares values as Python does", () => {
    expect(birdResultEq([[1n]], [[1.0]])).toBe(true);
    expect(birdResultEq([[1n]], [["1"]])).toBe(false);
    expect(birdResultEq([], [])).toBe(true);
    expect(birdResultEq([], [[null]])).toBe(false);
    expect(birdResultEq([[1n], [2n]], [[1n]])).toBe(false);
  });
});
