/** What a flush answers for each item, in the items' order. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Per-tenant group commit. Every write of a tenant takes its chain head's lock until its commit is flushed
 * to disk, so a tenant's commits cannot overlap and PostgreSQL cannot share one WAL flush among them. Here an
 * instance sends at most one commit per tenant at a time: what arrives meanwhile waits in process and goes
 * in the next one, together. Nothing waits on a timer: a lone write is sent at once, alone; under load the
 * batches grow by themselves to what arrived during the previous commit.
 */
export class TenantGroupCommit<I, R> {
  private readonly waiting = new Map<string, Array<{ item: I; resolve(value: R): void; reject(e: unknown): void }>>();
  private readonly busy = new Set<string>();

  /**
   * @param flush commits the items of one tenant (one item or more) and answers each item's outcome; it
   *   must never commit an item it answers as failed.
   */
  constructor(
    private readonly flush: (tenant: string, items: I[]) => Promise<Array<ItemOutcome<R>>>,
    private readonly maxBatch = 64,
    private readonly observe?: (size: number) => void,
  ) {}

  submit(tenant: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let queue = this.waiting.get(tenant);
      if (!queue) this.waiting.set(tenant, (queue = []));
      queue.push({ item, resolve, reject });
      if (!this.busy.has(tenant)) void this.drain(tenant);
    });
  }

  private async drain(tenant: string): Promise<void> {
    this.busy.add(tenant);
    try {
      for (;;) {
        const queue = this.waiting.get(tenant);
        if (!queue || queue.length === 0) {
          this.waiting.delete(tenant);
          return;
        }
        const batch = queue.splice(0, this.maxBatch);
        this.observe?.(batch.length);
        let outcomes: Array<ItemOutcome<R>>;
        try {
          outcomes = await this.flush(
            tenant,
            batch.map((b) => b.item),
          );
        } catch (e) {
          outcomes = batch.map(() => ({ ok: false, error: e }));
        }
        batch.forEach((b, i) => {
          const o = outcomes[i] ?? {
            ok: false,
            error: new Error('group commit answered fewer items than it was given'),
          };
          if (o.ok) b.resolve(o.value);
          else b.reject(o.error);
        });
      }
    } finally {
      this.busy.delete(tenant);
    }
  }
}
