import fc from 'fast-check';
import { previewDigest as sdkPreviewDigest, type Preview } from '@tollgate/sdk';
import { ValidationError } from '../../domain/shared/domain-error';
import type { PreviewInputDto } from './dto/preview.dto';
import { parsePreview, previewDigest } from './preview';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');

const dto = (p: Partial<PreviewInputDto>): PreviewInputDto =>
  ({ kind: 'text', content: 'hello', ...p }) as PreviewInputDto;

describe('a preview digest', () => {
  it('is SHA-256 in base64url of the RFC 8785 form of the given members', () => {
    // {"content":"hi","kind":"text"}, hashed: the canonical form is written by hand here, so the test can fail.
    const expected = require('node:crypto')
      .createHash('sha256')
      .update('{"content":"hi","kind":"text"}')
      .digest('base64url');
    expect(previewDigest({ kind: 'text', content: 'hi' })).toBe(expected);
  });

  it('does not depend on the order of the members (nor of the email headers)', () => {
    const a = previewDigest({
      kind: 'email',
      content: 'Body',
      title: 'T',
      email: { to: 'ann@example.com', subject: 'S' },
    });
    const b = previewDigest({
      email: { subject: 'S', to: 'ann@example.com' },
      title: 'T',
      content: 'Body',
      kind: 'email',
    } as never);
    expect(a).toBe(b);
  });

  it('leaves out members not given: an absent title and an empty email are the same preview', () => {
    expect(previewDigest({ kind: 'text', content: 'x', email: {} })).toBe(
      previewDigest({ kind: 'text', content: 'x' }),
    );
    expect(previewDigest({ kind: 'text', content: 'x', title: '' })).not.toBe(
      previewDigest({ kind: 'text', content: 'x' }),
    );
  });

  it('binds unicode as written: composed and decomposed é differ, astral characters are kept', async () => {
    const composed = previewDigest({ kind: 'text', content: 'caf\u00e9 🚀' });
    const decomposed = previewDigest({ kind: 'text', content: 'cafe\u0301 🚀' });
    expect(composed).not.toBe(decomposed);
    expect(await sdkPreviewDigest({ kind: 'text', content: 'caf\u00e9 🚀' })).toBe(composed);
  });

  it('changes with any member: kind, content, title, rows, a header', () => {
    const base = { kind: 'sql' as const, content: 'DELETE FROM t', estimatedRows: 3 };
    const d = previewDigest(base);
    expect(previewDigest({ ...base, estimatedRows: 4 })).not.toBe(d);
    expect(previewDigest({ ...base, content: 'DELETE FROM u' })).not.toBe(d);
    expect(previewDigest({ ...base, kind: 'text' })).not.toBe(d);
    expect(previewDigest({ ...base, title: 'x' })).not.toBe(d);
  });

  it('is what the SDK computes, for any preview', async () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 40 });
    const preview = fc.record(
      {
        kind: fc.constantFrom('diff', 'sql', 'email', 'text') as fc.Arbitrary<Preview['kind']>,
        content: text,
        title: text,
        estimatedRows: fc.nat(),
        email: fc.record({ from: text, to: text, cc: text, subject: text }, { requiredKeys: [] }),
      },
      { requiredKeys: ['kind', 'content'] },
    );
    await fc.assert(
      fc.asyncProperty(preview, async (p) => {
        expect(await sdkPreviewDigest(p)).toBe(previewDigest(p));
      }),
      { numRuns: 300 },
    );
  });
});

describe('a proposal preview', () => {
  const faults = (p: Partial<PreviewInputDto>) => {
    try {
      parsePreview(dto(p), 'preview');
      return [];
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      return (e as ValidationError).faults.map((f) => f.path);
    }
  };

  it('keeps what was given and adds its digest', () => {
    const p = parsePreview(dto({ kind: 'sql', content: 'DELETE FROM t', estimatedRows: 2 }), 'preview');
    expect(p).toEqual({
      kind: 'sql',
      content: 'DELETE FROM t',
      estimatedRows: 2,
      digest: previewDigest({ kind: 'sql', content: 'DELETE FROM t', estimatedRows: 2 }),
    });
  });

  it('takes an image only as a data: URL whose bytes are the image it names', () => {
    expect(faults({ kind: 'image', content: `data:image/png;base64,${PNG}` })).toEqual([]);
    expect(faults({ kind: 'image', content: 'https://example.com/a.png' })).toEqual(['preview.content']);
    expect(faults({ kind: 'image', content: `data:image/jpeg;base64,${PNG}` })).toEqual(['preview.content']);
    expect(faults({ kind: 'image', content: 'data:image/svg+xml;base64,PHN2Zz4=' })).toEqual(['preview.content']);
    const big = Buffer.concat([Buffer.from(PNG, 'base64'), Buffer.alloc(256 * 1024)]).toString('base64');
    expect(faults({ kind: 'image', content: `data:image/png;base64,${big}` })).toEqual(['preview.content']);
  });

  it('bounds text at 64 KiB and refuses members of other kinds and lone surrogates', () => {
    expect(faults({ content: 'x'.repeat(65_536) })).toEqual([]);
    expect(faults({ content: 'x'.repeat(65_537) })).toEqual(['preview.content']);
    expect(faults({ kind: 'text', estimatedRows: 1 })).toEqual(['preview.estimatedRows']);
    expect(faults({ kind: 'sql', email: { to: 'a' } })).toEqual(['preview.email']);
    expect(faults({ content: 'a\ud800b' })).toEqual(['preview']);
  });
});
