import { useState } from 'preact/hooks';
import type { Approval } from '../types';
import { MOD_KEY, submitOnModEnter } from './hooks';

/** What a person may answer to a held call, as its rule says (`approval.allowedDecisions`; absent: all of them). */
export type RuleDecision = 'approve' | 'edit' | 'reject' | 'always_allow' | 'respond';

/** The rule's choices as the call shows them (`approval.allowedDecisions`, `rejectReasons`, `rejectFreeText`). */
export interface RuleChoices {
  allowedDecisions?: RuleDecision[];
  rejectReasons?: string[];
  rejectFreeText?: boolean;
}

export function ruleChoices(call: Approval): RuleChoices {
  return ((call as { approval?: RuleChoices }).approval ?? {}) as RuleChoices;
}

/** Whether the call's rule lets a person make `d` (the server refuses anything else with 403 decision_not_allowed). */
export function allows(call: Approval, d: RuleDecision): boolean {
  const allowed = ruleChoices(call).allowedDecisions;
  return !allowed || allowed.includes(d);
}

/**
 * The reason for a rejection: with `rejectReasons`, one of them as a choice (radio buttons), and a box for one's own
 * words only when `rejectFreeText`; without them, free text as before. Answers the reason through `onReject`.
 */
export function RejectReasons(props: {
  call: Approval;
  busy: boolean;
  onReject(reason: string): void;
  onBack(): void;
}) {
  const { rejectReasons: reasons, rejectFreeText: free } = ruleChoices(props.call);
  const [choice, setChoice] = useState<string>('');
  const [own, setOwn] = useState('');
  const reason = choice === '\u0000own' ? own.trim() : choice;
  const ok = reason !== '';
  if (!reasons || reasons.length === 0) return null;
  return (
    <form
      data-testid="reject-reasons"
      onSubmit={(e) => {
        e.preventDefault();
        if (ok && !props.busy) props.onReject(reason);
      }}
    >
      <fieldset>
        <legend>Why reject? The agent is told this reason.</legend>
        {reasons.map((r, i) => (
          <label key={r} class="choice">
            <input
              type="radio"
              name="reject-reason"
              id={i === 0 ? 'reject-reason' : undefined}
              value={r}
              checked={choice === r}
              onChange={() => setChoice(r)}
            />{' '}
            {r}
          </label>
        ))}
        {free && (
          <label class="choice">
            <input
              type="radio"
              name="reject-reason"
              value="own"
              checked={choice === '\u0000own'}
              onChange={() => setChoice('\u0000own')}
            />{' '}
            Another reason:{' '}
            <input
              type="text"
              data-testid="reject-own-reason"
              maxLength={4000}
              value={own}
              onFocus={() => setChoice('\u0000own')}
              onInput={(e) => setOwn(e.currentTarget.value)}
            />
          </label>
        )}
      </fieldset>
      <div class="actions">
        <button type="submit" class="reject" disabled={props.busy || !ok}>
          Reject
        </button>
        <button type="button" onClick={props.onBack}>
          Back <kbd>Esc</kbd>
        </button>
      </div>
    </form>
  );
}

/** `respond`: the call does not run; the person's answer is what the agent is told instead (at most 4,000 characters). */
export function RespondForm(props: { busy: boolean; onRespond(response: string): void; onBack(): void }) {
  const [text, setText] = useState('');
  const ok = text.trim() !== '';
  return (
    <form
      data-testid="respond-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (ok && !props.busy) props.onRespond(text.trim());
      }}
    >
      <label for="respond-text">
        Answer the agent instead: the tool does not run, and the agent is given this as the tool’s answer.
      </label>
      <textarea
        id="respond-text"
        rows={4}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={submitOnModEnter}
        required
        maxLength={4000}
      />
      <div class="actions">
        <button type="submit" disabled={props.busy || !ok}>
          Send answer <kbd aria-hidden="true">{MOD_KEY}+Enter</kbd>
        </button>
        <button type="button" onClick={props.onBack}>
          Back <kbd>Esc</kbd>
        </button>
      </div>
    </form>
  );
}
