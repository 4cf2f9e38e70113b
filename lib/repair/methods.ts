/**
 * Repair stage, the methods the episode loop runs: re-exported from the one method registry
 * (lib/methods/, DESIGN.md §1), where every method is a composition of parts.
 * @module
 */
export { getMethod, methodNames, registerMethod, type MethodSpec } from "../methods/index.ts";
