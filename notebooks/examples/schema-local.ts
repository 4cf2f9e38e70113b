/**
 * A follow-up method as a plugin file (notebook 08; DESIGN.md §1, "How to add a method" in the
 * README): `schema_local` is MERIT's pool planner and ranker with a memory writer that stores every
 * entry with scope `same_database`, so the causal eligibility rules (METHOD.md §4.7) only ever
 * retrieve it on the database that wrote it. Run it with
 *   merit grid --config configs/demo.json --plugin notebooks/examples/schema-local.ts --methods schema_local
 * @module
 */
import { MERIT_PARTS, registerMethod } from "../../lib/methods/index.ts";

registerMethod({
  name: "schema_local",
  description: "MERIT whose memories are only retrieved on the database that wrote them (entries stored with scope same_database)",
  parts: { ...MERIT_PARTS, writer: { name: "episode_memory", args: { scope: "same_database" } } },
});
