/**
 * The study's own method, a plugin file (docs/guides/add-a-method.md): a method is a set of hooks.
 * This one is MERIT's memory (`meritMemory`, lib/methods/merit-memory.ts) with one arg changed: every
 * entry is stored with scope `same_database`, so the causal eligibility rules (METHOD.md §4.7) only
 * retrieve it on the database that wrote it — a schema-local memory. Change the memory's args (`merit
 * methods` lists them), add `step: reflect()`, register a ranker with `RANKERS.register` and name it
 * in `ranker`, or write a memory, classify or step hook of your own (examples/lesson-memory.ts) to
 * study something else.
 */
import { meritMethod, registerMethod } from "../../lib/plugin.ts";

registerMethod(meritMethod("my_method", "MERIT whose memories are only retrieved on the database that wrote them (entries stored with scope same_database)", { scope: "same_database" }));
