/**
 * Data loading, the dataset registry (DESIGN.md §1): adapters register themselves here by name.
 * Read it through lib/data/datasets/index.ts, which imports every bundled adapter first.
 * @module
 */
import { Registry } from "../registry.ts";
import type { DatasetAdapter } from "./adapter.ts";

export const DATASETS = new Registry<DatasetAdapter>("dataset");

/** Registers `adapter` under its name (once) and returns it; plugin files call this too. */
export function registerDataset(adapter: DatasetAdapter): DatasetAdapter {
  return DATASETS.register(adapter.name, adapter);
}
