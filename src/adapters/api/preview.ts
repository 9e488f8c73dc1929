import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import {
  CallPreview,
  MAX_PREVIEW_IMAGE_BYTES,
  MAX_PREVIEW_TEXT,
  PreviewInput,
  previewDigestInput,
} from '../../domain/conversation/call-preview';
import { ValidationError, type ValidationFault } from '../../domain/shared/domain-error';
import type { PreviewInputDto } from './dto/preview.dto';
import { previewHiddenFaults } from '../../domain/conversation/preview-shown';

/** SHA-256, base64url, of the RFC 8785 form of the preview's given members (the receipt's `preview` claim). */
export function previewDigest(p: PreviewInput): string {
  return createHash('sha256')
    .update(canonicalize(previewDigestInput(p)) ?? 'null', 'utf8')
    .digest('base64url');
}

const IMAGE_URL = /^data:image\/(png|jpeg|webp);base64,([A-Za-z0-9+/]*={0,2})$/;
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether `bytes` start as an image of `type` says they do (its magic bytes). */
function isImage(type: string, bytes: Buffer): boolean {
  const starts = (sig: number[], at = 0) => sig.every((b, i) => bytes[at + i] === b);
  if (type === 'png') return starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (type === 'jpeg') return starts([0xff, 0xd8, 0xff]);
  return starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8); // RIFF....WEBP
}

/**
 * A proposal's preview, checked beyond its shape and given its digest: text at most 64 KiB; an image only as a
 * data: URL of PNG, JPEG or WebP whose bytes are that image (never a link: nothing is fetched), at most 256 KiB;
 * `estimatedRows` on `sql` and `email` on `email` only; no lone surrogates (the digest's canonical form refuses them).
 */
export function parsePreview(dto: PreviewInputDto, path: string): CallPreview {
  const faults: ValidationFault[] = [];
  const strings = [dto.content, dto.title, ...Object.values(dto.email ?? {})];
  if (strings.some((s) => typeof s === 'string' && LONE_SURROGATE.test(s)))
    faults.push({ path, message: 'holds a lone surrogate (not well-formed Unicode)' });
  // Bidirectional controls and invisible format characters would show the text other than it is (preview-shown).
  faults.push(...previewHiddenFaults(dto, path));
  if (dto.kind === 'image') {
    const m = IMAGE_URL.exec(dto.content);
    if (!m) {
      faults.push({
        path: `${path}.content`,
        message: 'an image preview is a data: URL (data:image/png|jpeg|webp;base64,…); links are not fetched',
      });
    } else {
      const bytes = Buffer.from(m[2], 'base64');
      if (bytes.length > MAX_PREVIEW_IMAGE_BYTES)
        faults.push({ path: `${path}.content`, message: 'the image is larger than 256 KiB' });
      else if (!isImage(m[1], bytes))
        faults.push({ path: `${path}.content`, message: `the data is not a ${m[1]} image` });
    }
  } else if (dto.content.length > MAX_PREVIEW_TEXT) {
    faults.push({ path: `${path}.content`, message: 'is longer than 64 KiB (65,536 characters)' });
  }
  if (dto.estimatedRows !== undefined && dto.kind !== 'sql')
    faults.push({ path: `${path}.estimatedRows`, message: 'is for sql previews only' });
  if (dto.email !== undefined && dto.kind !== 'email')
    faults.push({ path: `${path}.email`, message: 'is for email previews only' });
  if (faults.length) throw new ValidationError(faults);
  const email = dto.email && {
    ...(dto.email.from !== undefined ? { from: dto.email.from } : {}),
    ...(dto.email.to !== undefined ? { to: dto.email.to } : {}),
    ...(dto.email.cc !== undefined ? { cc: dto.email.cc } : {}),
    ...(dto.email.subject !== undefined ? { subject: dto.email.subject } : {}),
  };
  const input: PreviewInput = {
    kind: dto.kind,
    content: dto.content,
    ...(dto.title !== undefined ? { title: dto.title } : {}),
    ...(dto.estimatedRows !== undefined ? { estimatedRows: dto.estimatedRows } : {}),
    ...(email && Object.keys(email).length > 0 ? { email } : {}),
  };
  return { ...input, digest: previewDigest(input) };
}
