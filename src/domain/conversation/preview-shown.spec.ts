import fc from 'fast-check';
import { DomainError } from '../shared/domain-error';
import type { CallPreview } from './call-preview';
import {
  EMAIL_PREVIEW_MAX,
  mustHaveShownPreview,
  previewHiddenFaults,
  previewShownWhole,
  SLACK_PREVIEW_MAX,
} from './preview-shown';

const preview = (p: Partial<CallPreview> = {}): CallPreview => ({ kind: 'diff', content: '+a', digest: 'd', ...p });

describe('which channel shows a preview whole', () => {
  it('Slack and email show text up to their limits; push never; the web, the CLI and the API always', () => {
    const short = preview();
    expect(['slack', 'email', 'web', 'cli', 'api', 'grpc'].map((c) => previewShownWhole(short, c as never))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(previewShownWhole(short, 'push')).toBe(false);
    expect(previewShownWhole(preview({ content: 'x'.repeat(SLACK_PREVIEW_MAX + 1) }), 'slack')).toBe(false);
    expect(previewShownWhole(preview({ content: 'x'.repeat(SLACK_PREVIEW_MAX + 1) }), 'email')).toBe(true);
    expect(previewShownWhole(preview({ content: 'x'.repeat(EMAIL_PREVIEW_MAX + 1) }), 'email')).toBe(false);
    expect(previewShownWhole(preview({ content: 'x'.repeat(EMAIL_PREVIEW_MAX + 1) }), 'web')).toBe(true);
    expect(previewShownWhole(undefined, 'push')).toBe(true);
  });

  it("counts Slack's escaping: text that fits raw but not escaped is not shown whole", () => {
    expect(previewShownWhole(preview({ content: '<'.repeat(SLACK_PREVIEW_MAX / 2) }), 'slack')).toBe(false);
    expect(previewShownWhole(preview({ content: '<'.repeat(SLACK_PREVIEW_MAX / 5) }), 'slack')).toBe(true);
  });

  it('shows no image outside the web card', () => {
    const image = preview({ kind: 'image', content: 'data:image/png;base64,AA==' });
    expect(previewShownWhole(image, 'slack')).toBe(false);
    expect(previewShownWhole(image, 'email')).toBe(false);
    expect(previewShownWhole(image, 'web')).toBe(true);
  });

  it('is monotone: whatever a channel shows whole, it shows whole once shortened', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000 }), fc.constantFrom('slack', 'email'), (s, c) => {
        if (previewShownWhole(preview({ content: s }), c)) {
          expect(previewShownWhole(preview({ content: s.slice(0, s.length >> 1) }), c)).toBe(true);
        }
      }),
    );
  });
});

describe('an approval through a channel that did not show the preview', () => {
  const code = (f: () => void) => {
    try {
      f();
      return undefined;
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      return `${(e as DomainError).kind}:${(e as DomainError).code}`;
    }
  };
  const long = preview({ content: 'x'.repeat(SLACK_PREVIEW_MAX + 1) });

  it('is refused 403 preview_not_shown; a rejection is not', () => {
    expect(code(() => mustHaveShownPreview(long, 'slack', false))).toBe('forbidden:preview_not_shown');
    expect(code(() => mustHaveShownPreview(preview(), 'push', false))).toBe('forbidden:preview_not_shown');
    expect(code(() => mustHaveShownPreview(long, 'slack', true))).toBeUndefined();
    expect(code(() => mustHaveShownPreview(long, 'web', false))).toBeUndefined();
    expect(code(() => mustHaveShownPreview(long, 'email', false))).toBeUndefined();
  });
});

describe('hidden characters in a proposed preview', () => {
  it('names each field holding a bidirectional control or an invisible format character', () => {
    for (const ch of ['\u202e', '\u2066', '\u2069', '\u200b', '\u200f', '\u202a'])
      expect(previewHiddenFaults({ content: `a${ch}b` }, 'p').map((f) => f.path)).toEqual(['p.content']);
    expect(
      previewHiddenFaults(
        { content: 'ok\n\tfine 👍', title: 'x\u202ey', email: { to: 'a\u200b@b', subject: 's' } },
        'p',
      ).map((f) => f.path),
    ).toEqual(['p.title', 'p.email.to']);
  });
});
