import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorText, type Api, type PendingChange } from '../api';
import { ago, timeLeft } from '../format';

interface Props {
  api: Api;
  /** The signed-in person's id: their own proposals wait for someone else. */
  me: string;
  now: number;
  /** Bumped when a change is proposed, approved, rejected, applied or expires anywhere (the live stream). */
  version: number;
}

const KIND: Record<string, string> = {
  policy_update: 'Policy change',
  policy_rollback: 'Policy rollback',
  resume: 'Resume after a halt',
  webhook_create: 'New webhook',
  tenant_grant: 'Tenant-wide grant',
};

const who = (p: { id: string; name?: string }) => p.name ?? p.id;

/**
 * Changes of the control plane waiting for another admin (four eyes: `governance` in the policy), above the
 * approvals: what would change, who proposed it, who approved so far. The proposer's own show who they wait for;
 * another admin may approve or reject. Renders nothing when there are none (or for people who are not admins).
 */
export function Changes({ api, me, now, version }: Props) {
  const [items, setItems] = useState<PendingChange[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [note, setNote] = useState<string>();
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let stale = false;
    api.pendingChanges().then(
      (list) => !stale && setItems(list),
      () => undefined, // not an admin: no changes to show, and the inbox stays as it was
    );
    return () => {
      stale = true;
    };
  }, [api, version, reload]);

  async function decide(c: PendingChange, action: 'approve' | 'reject') {
    setBusy(c.id);
    setNote(undefined);
    try {
      if (action === 'approve') {
        const r = await api.approveChange(c.id);
        setNote(
          r.applied
            ? `Approved and applied: ${c.summary}`
            : `Approved: ${c.summary} (${r.change.approvals.length} of ${r.change.needed})`,
        );
      } else {
        await api.rejectChange(c.id, 'rejected in the web inbox');
        setNote(`Rejected: ${c.summary}`);
      }
    } catch (e) {
      setNote(`Could not ${action}: ${e instanceof ApiError && e.status !== 0 ? e.detail : errorText(e)}`);
    } finally {
      setBusy(null);
      setReload((n) => n + 1);
    }
  }

  if (items.length === 0 && !note) return null;
  return (
    <section class="questions changes" aria-labelledby="changes-h" data-testid="changes">
      <h2 id="changes-h">Changes waiting for another admin</h2>
      {note && (
        <p class="notice" role="status" data-testid="changes-note">
          {note}
        </p>
      )}
      <ul>
        {items.map((c) => {
          const mine = c.proposedBy.id === me;
          const approved = c.approvals.some((a) => a.by.id === me);
          return (
            <li key={c.id} data-change-id={c.id} class="question">
              <p class="question-text">
                <strong>{KIND[c.kind] ?? c.kind}</strong>: {c.summary}
              </p>
              <p class="muted">
                Proposed by {who(c.proposedBy)} {ago(c.createdAt, now)} · approved by{' '}
                {c.approvals.map((a) => who(a.by)).join(', ')} ({c.approvals.length} of {c.needed}) ·{' '}
                {timeLeft(c.expiresAt, now)} ·{' '}
                <code title="SHA-256 of what will be applied">{c.payloadDigest.slice(0, 12)}</code>
              </p>
              {c.kind === 'policy_update' && (
                <details>
                  <summary>The document</summary>
                  <pre>{JSON.stringify(c.payload.document, null, 2)}</pre>
                </details>
              )}
              <p class="choices">
                {mine || approved ? (
                  <span class="muted" data-testid="change-waiting">
                    {mine ? 'You proposed it: ' : 'You approved it: '}another admin must approve it.
                  </span>
                ) : (
                  <button
                    type="button"
                    class="approve"
                    disabled={busy === c.id}
                    onClick={() => void decide(c, 'approve')}
                  >
                    Approve
                  </button>
                )}{' '}
                <button type="button" class="reject" disabled={busy === c.id} onClick={() => void decide(c, 'reject')}>
                  {mine ? 'Withdraw' : 'Reject'}
                </button>
              </p>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
