/**
 * The study's own method, a plugin file (README "How to add a method"): MERIT's pool planner and ranker
 * with a memory writer that stores every entry with scope `same_database`, so the causal eligibility
 * rules (METHOD.md §4.7) only retrieve it on the database that wrote it: a schema-local memory.
 * Change the parts (or register a new ranker with PARTS.ranker) to study something else.
 */
import { MERIT_PARTS, registerMethod } from "../../lib/plugin.ts";

registerMethod({
  name: "my_method",
  description: "MERIT whose memories are only retrieved on the database that wrote them (entries stored with scope same_database)",
  parts: { ...MERIT_PARTS, writer: { name: "episode_memory", args: { scope: "same_database" } } },
});
