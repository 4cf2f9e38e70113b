/**
 * Peer memory methods (METHOD.md §13; PEERS.md §2): other works' memories ported into the same
 * repair loop as memory hooks (lib/methods/hooks.ts), registered after the paper's methods.
 * @module
 */
import "./expel-online.ts";
import "./exprag.ts";
import "./error-fix-memory.ts";
