import type { Preview } from '@tollgate/sdk';
import { previewFitsDetails, previewGate, previewPage } from './preview-pager';

const p = (x: Partial<Preview>): Preview => ({ kind: 'text', content: 'x', digest: 'd'.repeat(43), ...x }) as Preview;

describe('the inbox approves a preview only once it was shown whole', () => {
  it('fits the details when short and narrow enough; never an image', () => {
    expect(previewFitsDetails(p({ content: 'a\nb' }), 80)).toBe(true);
    expect(previewFitsDetails(p({ content: Array(13).fill('a').join('\n') }), 80)).toBe(false);
    expect(previewFitsDetails(p({ content: 'a'.repeat(79) }), 80)).toBe(false);
    expect(previewFitsDetails(p({ kind: 'image', content: 'data:image/png;base64,AA==' }), 80)).toBe(false);
  });

  it('asks for the details, a page, or the web inbox first', () => {
    const long = p({ content: Array(40).fill('+a').join('\n') });
    expect(previewGate(undefined, { paged: false, view: 'list', width: 80 })).toBe('shown');
    expect(previewGate(p({}), { paged: false, view: 'list', width: 80 })).toBe('details');
    expect(previewGate(p({}), { paged: false, view: 'details', width: 80 })).toBe('shown');
    expect(previewGate(long, { paged: false, view: 'details', width: 80 })).toBe('page');
    expect(previewGate(long, { paged: true, view: 'list', width: 80 })).toBe('shown');
    expect(previewGate(p({ kind: 'image' }), { paged: false, view: 'details', width: 80 })).toBe('image');
  });

  it('pages every line, cleaned of what a terminal acts on', () => {
    const page = previewPage(p({ content: `${Array(40).fill('+a').join('\n')}\n\u001b[2Jlast` }), 'deploy');
    expect(page.split('\n').filter((l) => l === '+a')).toHaveLength(40);
    expect(page).toContain('last');
    expect(page).not.toContain('\u001b');
  });
});
