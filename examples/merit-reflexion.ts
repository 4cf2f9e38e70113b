/**
 * Example plugin, the method seam (issue 21 §1, issue 36 §1): method `merit_reflexion`, MERIT's
 * cross-episode memory (the `meritMemory()` hook) together with Reflexion's episode-local verbal
 * reflections (the `reflect()` step, METHOD.md §6.2), with nothing in lib/ changed. The paper runs the
 * two as separate methods; this composition asks whether they add up. It shows that a method is a set
 * of hooks from the kit's factories: no new hook, no branch on a method name anywhere in the loop.
 *
 * Run: `merit methods --plugin examples/merit-reflexion.ts`; `merit grid --config configs/spider.json
 * --plugin examples/merit-reflexion.ts --methods merit,reflexion,merit_reflexion --seeds 0,1,2`.
 * Test: `npx vitest run examples/merit-reflexion.test.ts`.
 * @module
 */
import { meritMemory, reflect, registerMethod } from "../lib/plugin.ts";

registerMethod({
  name: "merit_reflexion",
  description: "MERIT's dual-polarity memory plus Reflexion's verbal reflection after every failure",
  hooks: { memory: meritMemory(), step: reflect() },
});
