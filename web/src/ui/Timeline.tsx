import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api';
import { ApiError, errorText } from '../api';
import { capitalise, clock, decidedBy, decisionSentence, duration, timeLeft } from '../format';
import { titleOf } from '../inbox';
import type { AuditEvent, Conversation, ToolCall } from '../types';
import { hrefFor } from './hooks';
import { stepUpOf } from '../passkeys';

interface Props {
  api: Api;
  id: string;
  me: string;
  /** Auditors and admins also see the conversation's audit trail. */
  withAudit: boolean;
  now: number;
  /** Bumped when the live stream shows an event of this conversation. */
  version: number;
}

/**
 * A conversation's timeline: every call, who decided, when, how long it waited. Built from the conversation
 * (`GET /v1/conversations/{id}`, which approvers may read); auditors and admins also get its audit events.
 */
export function Timeline({ api, id, me, withAudit, now, version }: Props) {
  const [conv, setConv] = useState<Conversation | null>(null);
  const [events, setEvents] = useState<AuditEvent[] | null>(null);
  const [error, setError] = useState<string>();

  useEffect(() => {
    let stale = false;
    const t = setTimeout(
      () => {
        api.conversation(id).then(
          (c) => !stale && (setConv(c), setError(undefined)),
          (e: unknown) =>
            !stale &&
            setError(
              e instanceof ApiError && e.status === 404
                ? 'No such conversation, or not one you may see.'
                : errorText(e),
            ),
        );
        if (withAudit)
          api.auditEvents(id).then(
            (ev) => !stale && setEvents(ev),
            () => undefined,
          );
      },
      version === 0 ? 0 : 200,
    );
    return () => {
      stale = true;
      clearTimeout(t);
    };
  }, [api, id, withAudit, version]);

  useEffect(() => {
    document.getElementById('timeline-h')?.focus();
  }, [id]);

  const calls = conv
    ? [...(conv.toolCalls ?? [])].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt))
    : [];
  return (
    <section class="timeline" aria-labelledby="timeline-h">
      <p>
        <a href="#/">← Back to the inbox</a> <kbd>Esc</kbd>
      </p>
      <h1 id="timeline-h" tabIndex={-1}>
        {conv?.title ?? `Conversation ${id}`}
      </h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {conv && (
        <p class="muted">
          <code>{conv.id}</code> · agent <code>{conv.agentId}</code>
          {conv.user && ` · for ${conv.user.name ?? conv.user.id}`} · started {clock(conv.createdAt, now)} ·{' '}
          {conv.status}
          {conv.pendingCount > 0 && ` · ${conv.pendingCount} pending`}
        </p>
      )}
      {conv && calls.length === 0 && <p class="muted">No tool calls yet.</p>}
      {calls.length > 0 && (
        <ol class="steps" data-testid="timeline">
          {calls.map((c) => (
            <Step key={c.id} call={c} me={me} now={now} />
          ))}
        </ol>
      )}
      {withAudit && events && (
        <section aria-labelledby="audit-h">
          <h2 id="audit-h">Audit trail</h2>
          <div class="table-wrap">
            <table class="audit">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Call</th>
                  <th scope="col">Who</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => (
                  <tr key={e.seq}>
                    <td>{e.seq}</td>
                    <td>
                      <time dateTime={e.at}>{clock(e.at, now)}</time>
                    </td>
                    <td>{e.type}</td>
                    <td>{e.toolName ?? ''}</td>
                    <td>
                      {e.actor.name ?? e.actor.id}
                      {e.actor.via && <span class="muted"> via {e.actor.via}</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {!withAudit && <p class="hint">The full audit trail of this conversation is open to auditors and admins.</p>}
    </section>
  );
}

function Step({ call, me, now }: { call: ToolCall; me: string; now: number }) {
  const d = call.decision;
  const waited = d ? Date.parse(d.at) - Date.parse(call.createdAt) : now - Date.parse(call.createdAt);
  return (
    <li class={`step ${call.status}`}>
      <time dateTime={call.createdAt}>{clock(call.createdAt, now)}</time>
      <div>
        <p>
          <a href={hrefFor({ view: 'call', id: call.id })}>
            <strong>{titleOf(call)}</strong>
          </a>{' '}
          <code class="tool">{call.toolName}</code> <span class={`badge status-${call.status}`}>{call.status}</span>{' '}
          <span class={`badge level-${call.policy.level}`}>{call.policy.level}</span>
        </p>
        {call.display?.summary && <p class="muted">{call.display.summary}</p>}
        {d ? (
          <p data-testid="step-decision">
            {capitalise(decisionSentence(d, me))} at {clock(d.at, now)}
            {d.by.via !== 'policy' && ` · waited ${duration(waited)}`}
            {d.editedArguments && ' · arguments edited'}
            {stepUpOf(d) && ' · approved with a passkey'}
          </p>
        ) : (
          call.status === 'pending' && (
            <p>
              Waiting for a person for {duration(waited)} · {timeLeft(call.approval?.expiresAt, now)}
            </p>
          )
        )}
        {call.cancellation && (
          <p>
            Cancelled {decidedBy(call.cancellation.by, me)} at {clock(call.cancellation.at, now)}:{' '}
            {call.cancellation.reason}
          </p>
        )}
        {call.execution && <p class="muted">Run claimed at {clock(call.execution.at, now)}</p>}
        {call.result && (
          <p class="muted">
            Result: {call.result.outcome} at {clock(call.result.at, now)}
            {call.result.error ? ` (${call.result.error})` : ''}
          </p>
        )}
      </div>
    </li>
  );
}
