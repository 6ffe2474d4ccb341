/** An async mutex: one holder at a time, in the order they asked. */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Runs `fn` while holding the mutex; releases it however `fn` ends. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const previous = this.#tail;
    this.#tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
