import type { Preview } from '@tollgate/sdk';
import { oneLineText as clean } from '../safe-text';
import { CLI_PREVIEW_LINES } from './schema-prompts';

/*
 * The inbox approves a call with a preview only once its person was shown the preview whole (the receipt's
 * `preview` claim binds it): in the details view when it fits there, else paged through $PAGER first. An image is
 * approved in the web inbox only (a terminal cannot show it).
 */

/** The most characters of a preview line the details view shows (previewLines cuts past it). */
const DETAILS_LINE_MAX = 300;

/** The preview's lines as the person reads them: an email's headers, an SQL statement's estimated rows, the text. */
export function previewTextLines(p: Preview): string[] {
  const lines: string[] = [];
  if (p.kind === 'email' && p.email)
    for (const k of ['from', 'to', 'cc', 'subject'] as const)
      if (p.email[k] !== undefined) lines.push(`${k[0].toUpperCase()}${k.slice(1)}: ${p.email[k]}`);
  if (p.kind === 'sql' && p.estimatedRows !== undefined) lines.push(`-- estimated rows: ${p.estimatedRows}`);
  lines.push(...p.content.split(/\r\n|\n/));
  return lines;
}

/**
 * Whether the details view shows the preview whole in a terminal `width` columns wide: not an image, at most
 * CLI_PREVIEW_LINES lines, none cut (each within the width once indented).
 */
export function previewFitsDetails(p: Preview, width: number, maxLines = CLI_PREVIEW_LINES): boolean {
  if (p.kind === 'image') return false;
  const lines = previewTextLines(p);
  return (
    lines.length <= maxLines &&
    lines.every((l) => {
      const c = clean(l);
      return c.length <= DETAILS_LINE_MAX && [...c].length + 2 <= width;
    })
  );
}

/** The whole preview as a pager shows it: a heading, then every line cleaned of what a terminal acts on. */
export function previewPage(p: Preview, toolName: string): string {
  const head = `Preview of ${clean(toolName)}: ${clean(p.kind)}${p.title ? ` — ${clean(p.title)}` : ''} (digest ${p.digest})`;
  return `${[head, '', ...previewTextLines(p).map((l) => clean(l))].join('\n')}\n`;
}

/** What must happen before a call with this preview is approved here. */
export type PreviewGate = 'shown' | 'details' | 'page' | 'image';

/**
 * `shown`: the person has seen it whole (paged before, or the details view shows it whole now); `details`: switch to
 * the details view, where it fits; `page`: page it first; `image`: approve in the web inbox.
 */
export function previewGate(
  p: Preview | undefined,
  o: { paged: boolean; view: 'list' | 'details'; width: number },
): PreviewGate {
  if (!p || o.paged) return 'shown';
  if (p.kind === 'image') return 'image';
  if (!previewFitsDetails(p, o.width)) return 'page';
  return o.view === 'details' ? 'shown' : 'details';
}
