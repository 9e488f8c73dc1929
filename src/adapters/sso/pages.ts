import type { FastifyReply } from 'fastify';

/** Nothing runs, nothing loads: these pages are words and links. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * A plain page for a browser that came back from the identity provider and cannot be let in: what happened, the
 * stable code (for the operator's logs and the docs), and ways on (by default back to the sign-in page). Never the
 * inbox, never a session.
 */
export interface PageLink {
  href: string;
  text: string;
  testId: string;
}

/** The inbox, which shows its sign-in to a browser without a session. */
export const BACK_TO_SIGN_IN: PageLink = { href: '/', text: 'Back to the sign-in page', testId: 'back-to-sign-in' };

export function sendPage(
  res: FastifyReply,
  status: number,
  page: { title: string; detail: string; code: string; links?: PageLink[] },
): void {
  const links = page.links ?? [BACK_TO_SIGN_IN];
  res.code(status);
  res.header('Content-Type', 'text/html; charset=utf-8');
  res.header('Cache-Control', 'no-store');
  res.header('Content-Security-Policy', PAGE_CSP);
  res.header('X-Content-Type-Options', 'nosniff');
  res.header('Referrer-Policy', 'no-referrer');
  res.header('X-Frame-Options', 'DENY');
  res.send(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(page.title)} · Tollgate</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1c1c1c}code{background:#f2f2f2;padding:0 .25em}</style>
</head>
<body>
<main>
<h1>${escape(page.title)}</h1>
<p>${escape(page.detail)}</p>
<p>Code: <code data-testid="problem-code">${escape(page.code)}</code></p>
${links.map((l) => `<p><a href="${escape(l.href)}" data-testid="${escape(l.testId)}">${escape(l.text)}</a></p>`).join('\n')}
</main>
</body>
</html>
`);
}
