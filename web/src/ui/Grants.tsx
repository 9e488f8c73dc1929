import { useState } from 'preact/hooks';
import { useLoad } from './hooks';
import { ApiError, errorText, type Api } from '../api';
import { ago, channelName, timeLeft } from '../format';
import type { Grant } from '../types';

/** Who may revoke a grant, as the server decides it: admins any; approvers a conversation grant (the kind they may make). */
export function mayRevoke(roles: readonly string[], g: Pick<Grant, 'scope'>): boolean {
  if (roles.includes('agent')) return false;
  return roles.includes('admin') || (g.scope === 'conversation' && roles.includes('approver'));
}

/** Who may see the grants: the people who decide or audit. */
export function mayListGrants(roles: readonly string[]): boolean {
  return !roles.includes('agent') && ['approver', 'admin', 'auditor'].some((r) => roles.includes(r));
}

function where(g: Grant): string {
  return g.scope === 'conversation'
    ? `conversation ${g.conversationId}`
    : g.scope === 'agent'
      ? `agent ${g.agentId}`
      : 'the whole tenant';
}

interface Props {
  api: Api;
  roles: readonly string[];
  now: number;
  /** Bumped when a grant is made or revoked anywhere (the live stream): the list is read again. */
  version: number;
  onClose(): void;
}

/**
 * The tenant's standing grants that apply now: what runs without asking, and why. A grant the person may revoke
 * has a Revoke button that asks twice; a revoked grant stops applying at the next proposal.
 */
export function Grants({ api, roles, now, version, onClose }: Props) {
  const [armed, setArmed] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [note, setNote] = useState<string>();

  const {
    value: grants,
    error,
    reload,
  } = useLoad(
    () => api.grants(),
    (e) =>
      e instanceof ApiError && e.status === 403
        ? 'Your roles may not see the grants.'
        : `Could not load the grants: ${errorText(e)}`,
    [api, version],
  );

  async function revoke(g: Grant) {
    if (armed !== g.id) {
      setArmed(g.id);
      return;
    }
    setBusy(g.id);
    setNote(undefined);
    try {
      await api.revokeGrant(g.id, 'revoked in the web inbox');
      setNote(`Revoked: ${g.pattern} (${where(g)}). Such calls ask again from now on.`);
      reload();
    } catch (e) {
      setNote(`Could not revoke ${g.pattern}: ${e instanceof ApiError && e.status !== 0 ? e.detail : errorText(e)}`);
    } finally {
      setArmed(null);
      setBusy(null);
    }
  }

  return (
    <section class="grants" aria-labelledby="grants-h" data-testid="grants">
      <div class="inbox-head">
        <h1 id="grants-h">Standing grants</h1>
        <p class="muted">
          What runs without asking: each grant came from an “always allow” and turns a request that would wait for a
          person into one that runs at once.{' '}
          <button type="button" class="link" onClick={onClose}>
            Back to the inbox
          </button>
        </p>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {note && (
        <p class="notice" role="status" data-testid="grants-note">
          {note}
        </p>
      )}
      {!grants && !error && <p class="muted">Loading…</p>}
      {grants && grants.length === 0 && (
        <div class="empty" data-testid="grants-empty">
          <p>
            <strong>No standing grants.</strong>
          </p>
          <p class="muted">Every request the policy holds waits for a person.</p>
        </div>
      )}
      {grants && grants.length > 0 && (
        <div class="table-wrap">
          <table class="audit" aria-label="Active grants">
            <thead>
              <tr>
                <th scope="col">Covers</th>
                <th scope="col">Where</th>
                <th scope="col">Made by</th>
                <th scope="col">Made</th>
                <th scope="col">Ends</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {grants.map((g) => (
                <tr key={g.id} data-grant-id={g.id}>
                  <td>
                    <code>{g.pattern}</code>
                  </td>
                  <td>{where(g)}</td>
                  <td>
                    {g.createdBy.name ?? g.createdBy.id} <span class="muted">via {channelName(g.createdBy.via)}</span>
                  </td>
                  <td>
                    <time dateTime={g.createdAt} title={g.createdAt}>
                      {ago(g.createdAt, now)}
                    </time>
                  </td>
                  <td>
                    {g.expiresAt ? (
                      <time dateTime={g.expiresAt} title={g.expiresAt}>
                        {timeLeft(g.expiresAt, now)}
                      </time>
                    ) : (
                      'when revoked'
                    )}
                  </td>
                  <td>
                    {mayRevoke(roles, g) && (
                      <button
                        type="button"
                        class={armed === g.id ? 'reject armed' : 'reject'}
                        disabled={busy === g.id}
                        onClick={() => void revoke(g)}
                        aria-label={`${armed === g.id ? 'Confirm revoke' : 'Revoke'} ${g.pattern}`}
                      >
                        {armed === g.id ? 'Confirm revoke' : 'Revoke'}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
