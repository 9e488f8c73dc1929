import { diffLineClass } from '../preview';
import type { Preview as CallPreview } from '../types';

/** Only these data: URLs are shown as images; anything else (a link, SVG) is never put in an `src`. */
const IMAGE_URL = /^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/]*={0,2}$/;

/**
 * What the call will do, as the agent says it will look: a diff with added and removed lines coloured, the SQL with
 * its estimated rows, the email as a message, the text, or the image. Agent-supplied: shown as text (Preact escapes
 * it), never as HTML; an image only from a data: URL of PNG, JPEG or WebP. Its digest is what the receipt binds.
 */
export function Preview({ preview }: { preview: CallPreview }) {
  const p = preview;
  return (
    <section class={`preview preview-${p.kind}`} aria-label="Preview" data-testid="preview">
      <h3 class="args-h">
        Preview{p.title ? `: ${p.title}` : ''} <span class="muted">({p.kind})</span>
      </h3>
      {p.kind === 'diff' && (
        <pre class="preview-body diff" tabIndex={0} aria-label="Diff" data-testid="preview-diff">
          {p.content.split('\n').map((line, i) => (
            <span key={i} class={diffLineClass(line)}>
              {line}
              {'\n'}
            </span>
          ))}
        </pre>
      )}
      {p.kind === 'sql' && (
        <>
          <pre class="preview-body sql" tabIndex={0} aria-label="SQL" data-testid="preview-sql">
            {p.content}
          </pre>
          {p.estimatedRows !== undefined && (
            <p class="muted" data-testid="preview-rows">
              Estimated rows: {p.estimatedRows.toLocaleString()}
            </p>
          )}
        </>
      )}
      {p.kind === 'email' && (
        <div class="preview-email" data-testid="preview-email">
          {p.email && (
            <dl class="facts">
              {(['from', 'to', 'cc', 'subject'] as const).map((k) =>
                p.email?.[k] !== undefined ? (
                  <div key={k}>
                    <dt>{k === 'cc' ? 'Cc' : k[0].toUpperCase() + k.slice(1)}</dt>
                    <dd>{p.email[k]}</dd>
                  </div>
                ) : null,
              )}
            </dl>
          )}
          <pre class="preview-body email-body" tabIndex={0} aria-label="Message">
            {p.content}
          </pre>
        </div>
      )}
      {p.kind === 'text' && (
        <pre class="preview-body text" tabIndex={0} aria-label="Text" data-testid="preview-text">
          {p.content}
        </pre>
      )}
      {p.kind === 'image' &&
        (IMAGE_URL.test(p.content) ? (
          <img class="preview-image" src={p.content} alt={p.title ?? 'Preview image'} data-testid="preview-image" />
        ) : (
          <p class="muted">The image is not a PNG, JPEG or WebP data: URL, so it is not shown.</p>
        ))}
      <p class="hint" data-testid="preview-digest">
        Bound to the approval: the receipt carries this preview&apos;s digest <code>{p.digest.slice(0, 12)}…</code>
      </p>
    </section>
  );
}
