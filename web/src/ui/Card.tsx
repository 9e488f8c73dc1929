import { startAuthentication } from '@simplewebauthn/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorText } from '../api';
import {
  ago,
  capitalise,
  clock,
  decisionSentence,
  LEVEL_WORDS,
  parseArguments,
  pretty,
  ruleText,
  timeLeft,
} from '../format';
import type { Departure } from '../inbox';
import { approverName, titleOf } from '../inbox';
import { CANCELLED, isCancelled, needsPasskey, stepUpOf, stepUpRequest, type StepUpOptions } from '../passkeys';
import type { Approval, DecisionBody } from '../types';
import { hasModifier, hrefFor, isTyping, MOD_KEY, submitOnModEnter, useKeydown } from './hooks';
import { DEFAULT_GRANT_LIFETIME, GrantExpiry } from './GrantExpiry';
import { Secrets } from './Secrets';
import { IpAddressNotice, passkeyFailure } from './Passkeys';
import { Preview } from './Preview';
import { formable, SchemaForm } from './SchemaForm';
import { allows, RejectReasons, RespondForm, ruleChoices } from './DecisionChoices';

interface Props {
  call: Approval;
  /** Set once the call has left `pending` (decided here or anywhere else). */
  departure?: Departure;
  /** The caller may decide it (it is in their inbox). */
  decidable: boolean;
  /**
   * How much of the conversation the caller may see: `all`; `summary` (a person named on this call alone: what the
   * inbox lists of it, no timeline); `none` (the same, opened from a link: only the call was theirs to read).
   */
  conversationShown?: 'all' | 'summary' | 'none';
  destructive: boolean;
  /** The tool's input schema, when it registered one: the edit form is made from it. */
  inputSchema?: Record<string, unknown>;
  now: number;
  me: string;
  /** Admins alone may grant beyond the conversation; the server refuses anyone else with 403. */
  admin: boolean;
  /** A shortcut pressed on the list that opened this card, to carry on here: reject or edit opens that form; approve
   * (of a call that asks twice) arrives armed, so the next `a` confirms with the whole card in view. */
  intent?: Intent;
  onDecide(call: Approval, body: DecisionBody): Promise<void>;
  /** A challenge for approving the call with a passkey, bound to the arguments the person approves. */
  onStepUp(call: Approval, body: { arguments?: Record<string, unknown> }): Promise<StepUpOptions>;
  onClose(): void;
  /** The conversation's step holds more pending calls than this one: decide them all at once (answers a summary). */
  step?: { size: number; decide(decision: 'approve' | 'reject'): Promise<string> };
}

export type Intent = 'approve' | 'reject' | 'edit';

/** Destructive tools and manual-level calls take a second press to approve, from the card or the list alike. */
export const asksTwice = (call: Approval, destructive: boolean): boolean =>
  destructive || call.policy.level === 'manual';

type Mode = 'choose' | 'reject' | 'edit' | 'always' | 'respond';
/** The field each form starts on. */
const FIELD = {
  reject: 'reject-reason',
  edit: 'edit-args',
  always: 'scope-conversation',
  respond: 'respond-text',
} as const;
type Armed = 'approve' | 'always' | 'edit' | null;
type Scope = 'conversation' | 'agent' | 'tenant';

/** One request, in a modal dialog: everything needed to judge it, and the four ways to decide. */
export function Card({
  call,
  departure,
  decidable,
  conversationShown = 'all',
  destructive,
  inputSchema,
  now,
  me,
  admin,
  intent,
  onDecide,
  onStepUp,
  onClose,
  step,
}: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    // Focus starts on the title, which a screen reader reads first, so a stray Enter decides nothing; or in the
    // form a list shortcut (r, e) asked for.
    const field = intent === 'reject' || intent === 'edit' ? document.getElementById(FIELD[intent]) : null;
    (field ?? heading.current)?.focus();
    return () => d?.close();
  }, []);

  const title = titleOf(call);
  const conv = call.conversation;
  const pending = call.status === 'pending' && !departure;
  const level = call.policy.level;
  const secondClick = asksTwice(call, destructive);
  const user = conv.user;
  const quorum = call.approval?.quorum;
  // Kept here, not in StepActions: the step's calls leave pending as the answer arrives, and the actions with them.
  const [stepNote, setStepNote] = useState<string>();
  // The server refuses these people (403 self_approval); the card says so before they try.
  const selfBarred =
    call.approval?.selfApproval === false && user?.id === me ? 'You are the end user of this conversation' : undefined;

  return (
    <dialog
      ref={dialog}
      class="card"
      aria-labelledby="card-title"
      aria-describedby={call.display?.summary ? 'card-summary' : undefined}
      onCancel={(e) => {
        e.preventDefault(); // Esc: the route closes the dialog, so history and focus stay right
        onClose();
      }}
    >
      <header class="card-head">
        <div>
          <p class="eyebrow">
            <code>{call.toolName}</code> · requested {ago(call.createdAt, now)}
          </p>
          <h2 id="card-title" ref={heading} tabIndex={-1}>
            {title}
          </h2>
          <p class="badges">
            <span class={`badge level-${level}`}>{level}</span>
            {destructive && <span class="badge danger">destructive</span>}
            {pending && call.approval && <span class="badge time">{timeLeft(call.approval.expiresAt, now)}</span>}
            {quorum && (
              <span class="badge quorum" data-testid="quorum-badge">
                {quorum.approvedBy.length} of {quorum.needed} approvals
              </span>
            )}
          </p>
        </div>
        <button type="button" class="icon" aria-label="Close (Esc)" title="Close (Esc)" onClick={onClose}>
          ×
        </button>
      </header>

      {pending && selfBarred && (
        <p class="notice" role="status" data-testid="self-approval">
          {selfBarred}: separation of duties keeps you from approving it. Another approver must; you may still reject
          it.
        </p>
      )}
      {pending && quorum && quorum.approvedBy.some((a) => a.id === me) && (
        <p class="notice" role="status" data-testid="quorum-mine">
          You approved this call; it waits for {quorum.needed - quorum.approvedBy.length} more approval
          {quorum.needed - quorum.approvedBy.length === 1 ? '' : 's'}.
        </p>
      )}
      {departure && (
        <p class="notice" role="status" data-testid="card-departure">
          No longer pending: {departure.note}.
        </p>
      )}
      {!departure && !pending && call.decision && (
        <p class="notice" role="status" data-testid="card-decision">
          {capitalise(decisionSentence(call.decision, me))} <span class="muted">({clock(call.decision.at, now)})</span>
          {stepUpOf(call.decision) && <span data-testid="approved-with-passkey"> · approved with a passkey</span>}
        </p>
      )}

      {destructive && pending && (
        <p class="warning">
          <strong>Destructive.</strong> This tool can change or delete things that cannot be restored. Approving asks
          for a second click.
        </p>
      )}
      {call.display?.summary && (
        <p id="card-summary" class="summary">
          {call.display.summary}
        </p>
      )}
      {call.display?.fields && call.display.fields.length > 0 && (
        <dl class="fields">
          {call.display.fields.map((f, i) => (
            <div key={i}>
              <dt>{f.label}</dt>
              <dd>{f.value}</dd>
            </div>
          ))}
        </dl>
      )}

      <dl class="facts">
        {conversationShown === 'none' ? (
          <div>
            <dt>Conversation</dt>
            <dd>
              <span class="muted">
                {conv.id}: not shown to you (you are named on this call, not on its conversation)
              </span>
            </dd>
          </div>
        ) : (
          <>
            <div>
              <dt>Agent</dt>
              <dd>
                <code>{conv.agentId}</code>
              </dd>
            </div>
            <div>
              <dt>Conversation</dt>
              <dd>
                {conv.title ?? <span class="muted">untitled</span>} <span class="muted">({conv.id})</span>
                {conversationShown === 'all' && (
                  <>
                    {' · '}
                    <a href={hrefFor({ view: 'conversation', id: conv.id })} aria-keyshortcuts="t">
                      timeline
                    </a>
                  </>
                )}
              </dd>
            </div>
            <div>
              <dt>End user</dt>
              <dd>
                {user ? (
                  <>
                    {user.name ?? user.id} {user.name && <span class="muted">({user.id})</span>}
                    {user.roles && user.roles.length > 0 && <span class="muted"> · {user.roles.join(', ')}</span>}
                  </>
                ) : (
                  <span class="muted">none given</span>
                )}
              </dd>
            </div>
          </>
        )}
        <div>
          <dt>Agent's reason</dt>
          <dd>{call.reason ?? <span class="muted">none given</span>}</dd>
        </div>
        {call.confidence !== undefined && (
          <div>
            <dt>Agent's confidence</dt>
            <dd>{Math.round(call.confidence * 100)} %</dd>
          </div>
        )}
        {call.estimatedCost !== undefined && (
          <div>
            <dt>Estimated cost</dt>
            <dd>{call.estimatedCost}</dd>
          </div>
        )}
        <div>
          <dt>Policy</dt>
          <dd>
            {LEVEL_WORDS[level] ?? level}{' '}
            <span class="muted">({ruleText(call.policy.rule, call.policy.policyVersion)})</span>
            {!/^Rule \d+ \([^)]*\): \w+$/.test(call.policy.reason) && (
              <>
                <br />
                <span class="muted">{call.policy.reason}</span>
              </>
            )}
            {call.policy.shadow && (
              <>
                <br />
                <span class="muted shadow-verdict">
                  Shadow rule {call.policy.shadow.rule} would have:{' '}
                  {LEVEL_WORDS[call.policy.shadow.level] ?? call.policy.shadow.level} ({call.policy.shadow.reason})
                </span>
              </>
            )}
          </dd>
        </div>
        {call.approval && (
          <div>
            <dt>Who may decide</dt>
            <dd>
              {call.approval.approvers.map(approverName).join(', ')}
              {call.approval.selfApproval === false && (
                <span class="muted"> (not the end user or the agent's owner: separation of duties)</span>
              )}
            </dd>
          </div>
        )}
        {quorum && (
          <div>
            <dt>Approvals</dt>
            <dd data-testid="quorum">
              {quorum.approvedBy.length} of {quorum.needed}
              {quorum.of && <span class="muted"> (from {quorum.of.map(approverName).join(', ')})</span>}
              {quorum.approvedBy.length > 0 && `: ${quorum.approvedBy.map((a) => a.name ?? a.id).join(', ')}`}
            </dd>
          </div>
        )}
        {pending && call.approval && (
          <div>
            <dt>Time left</dt>
            <dd>
              <span data-testid="time-left">{timeLeft(call.approval.expiresAt, now)}</span>{' '}
              <span class="muted">(expires at {clock(call.approval.expiresAt, now)}; then it never runs)</span>
            </dd>
          </div>
        )}
      </dl>

      {call.preview && <Preview preview={call.preview} />}

      <h3 class="args-h">Arguments</h3>
      <pre class="json" tabIndex={0} aria-label="Arguments as JSON" data-testid="arguments">
        {pretty(call.arguments)}
      </pre>
      <Secrets args={call.arguments} />
      {call.decision?.editedArguments && (
        <>
          <h3 class="args-h">Arguments as approved (edited)</h3>
          <pre class="json">{pretty(call.decision.editedArguments)}</pre>
        </>
      )}

      {pending && decidable && (
        <Decide
          call={call}
          secondClick={secondClick}
          admin={admin}
          intent={intent}
          onDecide={onDecide}
          onStepUp={onStepUp}
          inputSchema={inputSchema}
        />
      )}
      {pending && decidable && step && step.size > 1 && (
        <StepActions size={step.size} decide={step.decide} onNote={setStepNote} />
      )}
      {stepNote && (
        <p class="notice" role="status" data-testid="step-note">
          {stepNote}
        </p>
      )}
      {pending && !decidable && <p class="muted">You may not decide this request.</p>}
    </dialog>
  );
}

/** The whole step at once: asks twice (it decides calls not in view), then says what was decided and what was not. */
function StepActions({
  size,
  decide,
  onNote,
}: {
  size: number;
  decide(decision: 'approve' | 'reject'): Promise<string>;
  onNote(note: string): void;
}) {
  const [armed, setArmed] = useState<'approve' | 'reject' | null>(null);
  const [busy, setBusy] = useState(false);
  const setNote = onNote;
  async function press(d: 'approve' | 'reject') {
    if (armed !== d) {
      setArmed(d);
      return;
    }
    setBusy(true);
    try {
      setNote(await decide(d));
    } catch (e) {
      setNote(e instanceof ApiError && e.status !== 0 ? e.detail : `Could not send the decision: ${errorText(e)}`);
    } finally {
      setBusy(false);
      setArmed(null);
    }
  }
  return (
    <section class="step-actions" aria-label="The whole step" data-testid="step-actions">
      <p class="muted">
        This step holds {size} pending calls. Decide them all at once (each is still recorded on its own):
      </p>
      <div class="actions">
        <button
          type="button"
          class={armed === 'approve' ? 'approve armed' : ''}
          disabled={busy}
          onClick={() => void press('approve')}
        >
          {armed === 'approve' ? `Confirm: approve all ${size}` : `Approve all ${size}`}
        </button>
        <button
          type="button"
          class={armed === 'reject' ? 'reject armed' : 'reject'}
          disabled={busy}
          onClick={() => void press('reject')}
        >
          {armed === 'reject' ? `Confirm: reject all ${size}` : `Reject all ${size}`}
        </button>
      </div>
    </section>
  );
}

function Decide({
  call,
  secondClick,
  admin,
  intent,
  onDecide,
  onStepUp,
  inputSchema,
}: {
  call: Approval;
  secondClick: boolean;
  admin: boolean;
  intent?: Intent;
  onDecide: Props['onDecide'];
  onStepUp: Props['onStepUp'];
  inputSchema?: Record<string, unknown>;
}) {
  const [mode, setMode] = useState<Mode>(intent === 'reject' || intent === 'edit' ? intent : 'choose');
  const [armed, setArmed] = useState<Armed>(intent === 'approve' && secondClick ? 'approve' : null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [reason, setReason] = useState('');
  const [scope, setScope] = useState<Scope>('conversation');
  const [lifetime, setLifetime] = useState<number | null>(DEFAULT_GRANT_LIFETIME);
  const original = pretty(call.arguments);
  const [text, setText] = useState(original);
  const parsed = parseArguments(text);
  const approveRef = useRef<HTMLButtonElement>(null);
  const manual = call.policy.level === 'manual';
  const passkey = needsPasskey(call);
  // The person has no passkey to sign with (409 no_passkey): the card sends them to the Passkeys panel.
  const [noPasskey, setNoPasskey] = useState(false);
  const [signing, setSigning] = useState(false);
  // Editing by a form made from the tool's input schema, when it has one (the JSON editor a press away).
  const schema = formable(inputSchema) ? inputSchema : undefined;
  const [asForm, setAsForm] = useState(!!schema);
  const [formValue, setFormValue] = useState<Record<string, unknown>>(call.arguments);
  const [formOk, setFormOk] = useState(true);
  const [faults, setFaults] = useState<Record<string, string>>({});
  const editOk = schema && asForm ? formOk : parsed.ok;
  const edited = () => (schema && asForm ? formValue : parsed.ok ? parsed.value : call.arguments);

  async function send(body: DecisionBody, needsArm: Armed) {
    if (needsArm && secondClick && armed !== needsArm) {
      setArmed(needsArm);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      // An approval of a call whose rule asks for a passkey carries an assertion made for this call and exactly
      // these arguments; a rejection never needs one.
      if (passkey && body.decision !== 'reject' && body.decision !== 'respond') {
        const options = await onStepUp(call, stepUpRequest(body));
        setSigning(true);
        const assertion = await startAuthentication({ optionsJSON: options.publicKey });
        setSigning(false);
        await onDecide(call, { ...body, stepUp: { passkey: assertion } });
      } else await onDecide(call, body);
    } catch (e) {
      if (e instanceof ApiError && e.problem.code === 'arguments_invalid')
        setFaults(Object.fromEntries((e.problem.errors ?? []).map((f) => [f.path, f.message])));
      if (e instanceof ApiError && e.problem.code === 'no_passkey') setNoPasskey(true);
      else if (isCancelled(e)) setError(CANCELLED);
      else if (e instanceof ApiError)
        setError(e.status !== 0 ? e.detail : `Could not send the decision: ${errorText(e)}`);
      else setError(`The passkey did not sign: ${passkeyFailure(e)}`);
      setArmed(null);
    } finally {
      setSigning(false);
      setBusy(false);
    }
  }

  const approve = () => send({ decision: 'approve' }, 'approve');
  const choose = (m: Mode) => {
    setMode(m);
    setArmed(null);
    setError(undefined);
  };

  // Shortcuts inside the card: a approve, r reject, e edit, t timeline; Esc leaves a form, then the card.
  useKeydown((e: KeyboardEvent) => {
    if (hasModifier(e)) return;
    if (e.key === 'Escape' && mode !== 'choose') {
      e.preventDefault();
      e.stopPropagation();
      choose('choose');
      return;
    }
    if (isTyping(e) || busy) return;
    if (e.key === 'a' && mode === 'choose' && allows(call, 'approve')) {
      e.preventDefault();
      void approve();
    } else if (e.key === 'r' && allows(call, 'reject')) {
      e.preventDefault();
      choose('reject');
    } else if (e.key === 'e' && allows(call, 'edit')) {
      e.preventDefault();
      choose('edit');
    } else if (e.key === 't') {
      e.preventDefault();
      location.hash = hrefFor({ view: 'conversation', id: call.conversationId });
    }
  }, true);

  const firstMode = useRef(true);
  useEffect(() => {
    if (firstMode.current) {
      firstMode.current = false;
      return;
    }
    if (mode === 'choose') approveRef.current?.focus();
    else document.getElementById(FIELD[mode])?.focus();
  }, [mode]);

  const confirmHint = (what: Armed) =>
    armed === what && (
      <p class="confirm" role="alert">
        {call.policy.level === 'manual' ? 'Manual level' : 'Destructive'}: press again to confirm.
      </p>
    );

  return (
    <section class="decide" aria-label="Decide">
      {passkey && (
        <div class="step-up" data-testid="needs-passkey">
          <p class="notice" role="status">
            <strong>Needs your passkey.</strong>{' '}
            {signing
              ? 'Confirm with your passkey in the browser’s prompt…'
              : 'Approving asks your device to confirm it is you and sign this request with its arguments. Rejecting does not.'}
          </p>
          <IpAddressNotice />
          {noPasskey && (
            <p class="warning" role="alert" data-testid="no-passkey">
              You have no passkey yet, and this request needs one to be approved.{' '}
              <a href={hrefFor({ view: 'passkeys' })}>Add a passkey in Passkeys</a>, then come back to approve it.
            </p>
          )}
        </div>
      )}
      {mode === 'choose' && (
        <>
          {confirmHint('approve')}
          <div class="actions">
            {allows(call, 'approve') && (
              <button
                ref={approveRef}
                type="button"
                class={armed === 'approve' ? 'approve armed' : 'approve'}
                disabled={busy}
                onClick={approve}
                aria-keyshortcuts="a"
              >
                {armed === 'approve' ? 'Confirm approve' : 'Approve'} <kbd>a</kbd>
              </button>
            )}
            {/* A manual call, or one that needs a passkey, is never covered by a grant: offering one would mislead. */}
            {!manual && !passkey && allows(call, 'always_allow') && (
              <button type="button" disabled={busy} onClick={() => choose('always')}>
                Always allow…
              </button>
            )}
            {allows(call, 'edit') && (
              <button type="button" disabled={busy} onClick={() => choose('edit')} aria-keyshortcuts="e">
                Edit arguments <kbd>e</kbd>
              </button>
            )}
            {allows(call, 'reject') && (
              <button
                type="button"
                class="reject"
                disabled={busy}
                onClick={() => choose('reject')}
                aria-keyshortcuts="r"
              >
                Reject… <kbd>r</kbd>
              </button>
            )}
            {allows(call, 'respond') && (
              <button type="button" disabled={busy} onClick={() => choose('respond')} data-testid="respond">
                Answer instead…
              </button>
            )}
          </div>
        </>
      )}

      {mode === 'respond' && (
        <RespondForm
          busy={busy}
          onRespond={(response) => void send({ decision: 'respond', response }, null)}
          onBack={() => choose('choose')}
        />
      )}
      {mode === 'reject' && ruleChoices(call).rejectReasons?.length ? (
        <RejectReasons
          call={call}
          busy={busy}
          onReject={(r) => void send({ decision: 'reject', reason: r }, null)}
          onBack={() => choose('choose')}
        />
      ) : null}
      {mode === 'reject' && !ruleChoices(call).rejectReasons?.length && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            // Ctrl+Enter submits too, past the disabled button: the same conditions hold here.
            if (!busy && reason.trim() !== '') void send({ decision: 'reject', reason: reason.trim() }, null);
          }}
        >
          <label for="reject-reason">Why reject? The agent is told this reason.</label>
          <textarea
            id="reject-reason"
            rows={3}
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
            onKeyDown={submitOnModEnter}
            required
            maxLength={4000}
            aria-keyshortcuts="Control+Enter Meta+Enter"
          />
          <div class="actions">
            <button type="submit" class="reject" disabled={busy || reason.trim() === ''}>
              Reject <kbd aria-hidden="true">{MOD_KEY}+Enter</kbd>
            </button>
            <button type="button" onClick={() => choose('choose')}>
              Back <kbd>Esc</kbd>
            </button>
          </div>
        </form>
      )}

      {mode === 'edit' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (editOk && !busy) void send({ decision: 'approve', arguments: edited() }, 'edit');
          }}
        >
          {schema && (
            <p class="hint">
              <button
                type="button"
                data-testid="edit-as"
                onClick={() => {
                  if (asForm) setText(pretty(formValue));
                  else if (parsed.ok) setFormValue(parsed.value);
                  setAsForm(!asForm || !parsed.ok);
                  setArmed(null);
                }}
              >
                {asForm ? 'Edit as JSON' : 'Edit as a form'}
              </button>{' '}
              Checked against <code>{call.toolName}</code>&apos;s input schema when you approve.
            </p>
          )}
          {schema && asForm && (
            <SchemaForm
              id="edit-args"
              schema={schema}
              value={formValue}
              faults={faults}
              onValidity={setFormOk}
              onChange={(v) => {
                setFormValue(v);
                setArmed(null);
              }}
            />
          )}
          {!(schema && asForm) && (
            <>
              <label for="edit-args">Arguments to run instead (JSON object). The original stays in the record.</label>
              <textarea
                id="edit-args"
                class="json-editor"
                rows={Math.min(16, Math.max(5, text.split('\n').length + 1))}
                spellcheck={false}
                value={text}
                onInput={(e) => {
                  setText(e.currentTarget.value);
                  setArmed(null);
                }}
                onKeyDown={submitOnModEnter}
                aria-keyshortcuts="Control+Enter Meta+Enter"
                aria-invalid={!parsed.ok}
                aria-describedby="edit-status"
              />
              <p
                id="edit-status"
                class={parsed.ok ? 'hint' : 'error'}
                role={parsed.ok ? undefined : 'alert'}
                data-testid="json-status"
              >
                {parsed.ok ? (text === original ? 'Unchanged.' : 'Valid JSON.') : parsed.error}
              </p>
            </>
          )}
          {confirmHint('edit')}
          <div class="actions">
            <button type="submit" class={armed === 'edit' ? 'approve armed' : 'approve'} disabled={busy || !editOk}>
              {armed === 'edit' ? 'Confirm approve with these arguments' : 'Approve with these arguments'}{' '}
              <kbd aria-hidden="true">{MOD_KEY}+Enter</kbd>
            </button>
            <button
              type="button"
              onClick={() => {
                setText(original);
                setFormValue(call.arguments);
                setFaults({});
              }}
              disabled={text === original && formValue === call.arguments}
            >
              Reset
            </button>
            <button type="button" onClick={() => choose('choose')}>
              Back <kbd>Esc</kbd>
            </button>
          </div>
        </form>
      )}

      {mode === 'always' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void send(
              { decision: 'always_allow', scope, ...(lifetime !== null ? { expiresIn: lifetime } : {}) },
              'always',
            );
          }}
        >
          <fieldset>
            <legend>
              Approve this call, and let future <code>{call.toolName}</code> calls run without asking:
            </legend>
            {(
              [
                ['conversation', `in this conversation (${call.conversation.title ?? call.conversationId})`],
                ['agent', `from agent ${call.conversation.agentId}, in any conversation`],
                ['tenant', 'from any agent of this tenant'],
              ] as Array<[Scope, string]>
            )
              .filter(([value]) => admin || value === 'conversation')
              .map(([value, label]) => (
                <label class="check" key={value}>
                  <input
                    type="radio"
                    id={`scope-${value}`}
                    name="scope"
                    value={value}
                    checked={scope === value}
                    onChange={() => setScope(value)}
                  />{' '}
                  {label}
                </label>
              ))}
          </fieldset>
          <GrantExpiry value={lifetime} onChange={setLifetime} />
          {confirmHint('always')}
          <div class="actions">
            <button type="submit" class={armed === 'always' ? 'approve armed' : 'approve'} disabled={busy}>
              {armed === 'always' ? 'Confirm always allow' : 'Always allow'}
            </button>
            <button type="button" onClick={() => choose('choose')}>
              Back <kbd>Esc</kbd>
            </button>
          </div>
        </form>
      )}

      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p class="hint keys">
        <kbd>a</kbd> approve · <kbd>r</kbd> reject · <kbd>e</kbd> edit · <kbd>t</kbd> timeline · <kbd>Esc</kbd> close
        {secondClick && ' · this one asks twice before approving'}
      </p>
    </section>
  );
}
