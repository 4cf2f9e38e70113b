/**
 * Example plugin, the method seam (issue 21 §1): method `merit_reflexion`, MERIT's cross-episode
 * memory (pool planner, ranker, memory writer) together with Reflexion's episode-local verbal
 * reflections (the `reflect` step, METHOD.md §6.2), with nothing in lib/ changed. The paper runs the
 * two as separate methods; this composition asks whether they add up. It proves that a method is a
 * composition of registered parts: no new part, no branch on a method name anywhere in the loop.
 *
 * Run: `merit methods --plugin examples/merit-reflexion.ts`; `merit grid --config configs/spider.json
 * --plugin examples/merit-reflexion.ts --methods merit,reflexion,merit_reflexion --seeds 0,1,2`.
 * Test: `npx vitest run examples/merit-reflexion.test.ts`.
 * @module
 */
import { MERIT_PARTS, registerMethod } from "../lib/plugin.ts";

registerMethod({
  name: "merit_reflexion",
  description: "MERIT's dual-polarity memory plus Reflexion's verbal reflection after every failure",
  parts: { ...MERIT_PARTS, steps: [{ name: "reflect" }] },
});
