/**
 * Canonical JSON and content hashes (METHOD.md vocabulary): keys sorted, no spaces after `,` and `:`,
 * non-ASCII kept; `contentHash` = SHA-256 hex of the UTF-8 canonical JSON. Every manifest and cache key
 * in the kit goes through these two functions.
 * @module
 */
import * as crypto from "node:crypto";
import { createHash } from "node:crypto";

/** `crypto.hash` (Node ≥ 20.12): the same digest as createHash, about twice as fast for short inputs. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string }).hash;

/** A JSON value as the kit hashes it (bigint is written as a JSON integer). */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue | undefined };

/**
 * Canonical JSON: object keys sorted by UTF-16 code unit (as Python's `sort_keys` sorts them for
 * BMP text), `undefined` members dropped, no insignificant whitespace, non-ASCII kept verbatim.
 * Numbers use JavaScript's shortest round-trip form; non-finite numbers are an error.
 * @example canonicalJson({b: 1, a: [true, "é"]}) === '{"a":[true,"é"],"b":1}'
 */
export function canonicalJson(value: JsonValue): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value} cannot be hashed`);
      return JSON.stringify(value);
    case "bigint":
      return value.toString();
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return "[" + value.map((v) => canonicalJson(v)).join(",") + "]";
      const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
      return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJson(value[k] as JsonValue)).join(",") + "}";
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode a value of type ${typeof value}`);
  }
}

/** SHA-256 hex of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot("sha256", data, "hex") : createHash("sha256").update(data).digest("hex");
}

/** SHA-256 hex of the canonical JSON of `value`. */
export function contentHash(value: JsonValue): string {
  return sha256Hex(canonicalJson(value));
}
