/**
 * A fixed set of reusable slots handed out one caller at a time (the generation backend's context
 * sequences, METHOD.md §6.4): N concurrent callers run in parallel, the N+1th waits in FIFO order.
 * @module
 */

/** Hands out each of a fixed list of slots to one holder at a time. */
export class SlotPool<T> {
  readonly #free: T[];
  readonly #waiting: Array<(slot: T) => void> = [];

  constructor(slots: readonly T[]) {
    this.#free = [...slots];
  }

  /** Runs `task` with a free slot, waiting for one when all are taken; the slot is returned afterwards. */
  async use<R>(task: (slot: T) => Promise<R>): Promise<R> {
    const slot = this.#free.pop() ?? (await new Promise<T>((resolve) => this.#waiting.push(resolve)));
    try {
      return await task(slot);
    } finally {
      const next = this.#waiting.shift();
      if (next) next(slot);
      else this.#free.push(slot);
    }
  }
}
