import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorText, type Api } from '../api';
import { ago, timeLeft } from '../format';
import type { Question } from '@tollgate/sdk';

interface Props {
  api: Api;
  now: number;
  /** Bumped when a question is asked, answered, expires or is cancelled anywhere (the live stream). */
  version: number;
}

/**
 * The questions agents asked that this person may answer, above the approvals: the question, its conversation,
 * and either its choices as buttons or a text box. The first answer wins; one given elsewhere first is said so.
 * Renders nothing when there are none, so the inbox looks as before.
 */
export function Questions({ api, now, version }: Props) {
  const [items, setItems] = useState<Question[]>([]);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const [note, setNote] = useState<string>();
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let stale = false;
    api.questions().then(
      (list) => !stale && setItems(list),
      () => undefined, // a person without the roles to answer sees no questions: the inbox stays as it was
    );
    return () => {
      stale = true;
    };
  }, [api, version, reload]);

  async function answer(q: Question, text: string) {
    if (text.trim() === '') return;
    setBusy(q.id);
    setNote(undefined);
    try {
      await api.answer(q.id, text.trim());
      setNote(`Answered “${clip(q.text)}”: ${text.trim()}`);
    } catch (e) {
      setNote(
        e instanceof ApiError && e.code === 'already_answered'
          ? `Someone answered “${clip(q.text)}” first.`
          : `Could not answer: ${errorText(e)}`,
      );
    } finally {
      setBusy(null);
      setReload((n) => n + 1);
    }
  }

  if (items.length === 0 && !note) return null;
  return (
    <section class="questions" aria-labelledby="questions-h" data-testid="questions">
      <h2 id="questions-h">Questions for you</h2>
      {note && (
        <p class="notice" role="status" data-testid="questions-note">
          {note}
        </p>
      )}
      <ul>
        {items.map((q) => (
          <li key={q.id} data-question-id={q.id} class="question">
            <p class="question-text">{q.text}</p>
            <p class="muted">
              Asked {ago(q.createdAt, now)} in <code>{q.conversationId}</code> · {timeLeft(q.expiresAt, now)}
            </p>
            {q.choices && (
              <p class="choices">
                {q.choices.map((c) => (
                  <button type="button" key={c} disabled={busy === q.id} onClick={() => void answer(q, c)}>
                    {c}
                  </button>
                ))}
              </p>
            )}
            {(!q.choices || q.allowFreeText) && (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void answer(q, texts[q.id] ?? '');
                }}
              >
                <label>
                  <span class="sr-only">Your answer to {q.text}</span>
                  <input
                    type="text"
                    maxLength={4000}
                    value={texts[q.id] ?? ''}
                    placeholder={q.choices ? 'Or another answer' : 'Your answer'}
                    onInput={(e) => setTexts({ ...texts, [q.id]: (e.target as HTMLInputElement).value })}
                  />
                </label>
                <button type="submit" class="approve" disabled={busy === q.id || (texts[q.id] ?? '').trim() === ''}>
                  Answer
                </button>
              </form>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function clip(s: string): string {
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}
