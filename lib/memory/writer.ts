/**
 * Memory stage, the memory-writer part of a method (METHOD.md §4.3, §5.6): what a finished episode
 * stores — positives, negatives, both or (memoryless methods have no writer) nothing — with which
 * applicability scope, and whether the non-causal transductive pre-pass seeds negatives before the
 * stream (lib/experiment/transductive.ts). finalize.ts turns an episode into an entry under these flags.
 * @module
 */
import type { MemoryWriteFlags } from "./finalize.ts";

export interface MemoryWriter {
  writes: MemoryWriteFlags;
  /** transductive_batch: one negative per initially failed query before the stream, episode entries after it. */
  transductivePrepass: boolean;
}
