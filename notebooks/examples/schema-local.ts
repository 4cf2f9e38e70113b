/**
 * A follow-up method as a plugin file (notebook 08; DESIGN.md §1, docs/guides/add-a-method.md):
 * `schema_local` is MERIT's memory hook with one arg changed — every entry is stored with scope
 * `same_database`, so the causal eligibility rules (METHOD.md §4.7) only ever retrieve it on the
 * database that wrote it. Run it with
 *   merit grid --config configs/demo.json --plugin notebooks/examples/schema-local.ts --methods schema_local
 * @module
 */
import { meritMethod, registerMethod } from "../../lib/methods/index.ts";

registerMethod(meritMethod("schema_local", "MERIT whose memories are only retrieved on the database that wrote them (entries stored with scope same_database)", { scope: "same_database" }));
