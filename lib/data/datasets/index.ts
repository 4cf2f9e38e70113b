/**
 * Data loading, the bundled datasets (DESIGN.md §1): one line per adapter, in table order. Import
 * lookups from here (not from dataset-registry.ts), so every bundled adapter is registered first.
 * @module
 */
import "./spider.ts";
import "./bird.ts";
import "./spider-syn.ts";
import "./spider-dk.ts";

import { registeredName } from "../../registry.ts";
import { DATASETS } from "../dataset-registry.ts";
import type { DatasetAdapter } from "../adapter.ts";

export { DATASETS, registerDataset } from "../dataset-registry.ts";

/** The adapter of `name`; throws a one-line "unknown dataset … Did you mean …?" error. */
export function datasetAdapter(name: string): DatasetAdapter {
  return DATASETS.get(name);
}

/** Every registered dataset name, in registration order. */
export function datasetNames(): string[] {
  return DATASETS.names();
}

/** A config/cache field naming a registered dataset (checked at parse time, so plugins count). */
export const DatasetNameSchema = registeredName(DATASETS);
