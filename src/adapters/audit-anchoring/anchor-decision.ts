/**
 * Whether the scheduler signs a new checkpoint of a tenant's chain (issue 28, part 8). It never signs over a
 * chain that no longer reaches the last checkpoint: a new checkpoint would make `latest` vouch for the cut or
 * rewritten chain, and verify would then pass. Pure: the facts are read by the scheduler.
 */
export type AnchorDecision = { kind: 'skip' } | { kind: 'anchor' } | { kind: 'refuse'; problem: string };

export function anchorDecision(
  head: { seq: number },
  /** The last checkpoint written (from the sink when it can be read, else the database's record); none yet: undefined. */
  last: { seq: number; hash: string } | undefined,
  /** The hash of the event at `last.seq` now; 'missing' when it is not in the table (a retention purge, or a cut). */
  atLast: string | 'missing' | undefined,
): AnchorDecision {
  if (!last || last.seq === 0) return head.seq > 0 ? { kind: 'anchor' } : { kind: 'skip' };
  if (head.seq < last.seq)
    return {
      kind: 'refuse',
      problem: `the chain now ends at seq ${head.seq}, before the last checkpoint's seq ${last.seq}: events were removed from its end`,
    };
  if (atLast !== 'missing' && atLast !== last.hash)
    return {
      kind: 'refuse',
      problem: `event ${last.seq} no longer has the hash the last checkpoint recorded: the chain up to it was rewritten`,
    };
  // Missing: a purge removes the oldest events, and verify judges a purge against its AuditPurged record.
  return head.seq > last.seq ? { kind: 'anchor' } : { kind: 'skip' };
}
