/**
 * Runs the tasks of one key one after another, in arrival order; tasks of different keys run at once.
 *
 * Commands on one conversation queue here within an instance, so they stop racing each other's optimistic
 * commits (each lost race used to retry under row locks, behind the tenant's chain head). Across instances
 * the database still decides: the version check, then the locked retry.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Keys with a task running or waiting (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    const result = before ? before.then(task) : task();
    // The next task waits for this one to settle, not to succeed; the map forgets a key once its queue is empty.
    const tail: Promise<void> = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
