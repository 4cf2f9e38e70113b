/**
 * Peer memory methods (METHOD.md §13; issue "The peers on the same stream"): methods of other papers
 * ported to the repair loop as hooks (lib/methods/hooks.ts), each citing its paper and declaring its
 * extra call kinds and whether its memory relies on the oracle's verdict. Importing this module
 * registers them, after the paper's methods.
 * @module
 */
import "./reasoning-bank.ts";
import "./dynamic-cheatsheet.ts";
import "./dynamic-cheatsheet-rs.ts";
import "./awm.ts";
import "./expel-online.ts";
import "./exprag.ts";
import "./error-fix-memory.ts";
