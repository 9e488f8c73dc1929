import { status } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import {
  AlreadyDecidedError,
  ConversationBlockedError,
  GrantNotAllowedError,
  HaltedError,
} from '../../domain/conversation/conversation.errors';
import { DomainError, ValidationError } from '../../domain/shared/domain-error';
import { GRPC_STATUS_BY_CODE, grpcError } from './grpc-errors';

const API = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'API.md'), 'utf8');

const rpc = protobuf.parse(`
  syntax = "proto3";
  package google.rpc;
  message Any { string type_url = 1; bytes value = 2; }
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
  message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
  message BadRequest { message FieldViolation { string field = 1; string description = 2; } repeated FieldViolation field_violations = 1; }
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message RetryInfo { Duration retry_delay = 1; }
`).root;

/** What a client reads of an error: its status, `tollgate-code`, and the google.rpc.Status in grpc-status-details-bin. */
function read(e: unknown) {
  const answer = grpcError(e);
  const Status = rpc.lookupType('google.rpc.Status');
  const st = Status.toObject(Status.decode(answer.metadata.get('grpc-status-details-bin')[0] as Buffer), {
    longs: Number,
    defaults: true,
  }) as { code: number; message: string; details: Array<{ typeUrl: string; value: Uint8Array }> };
  const details = Object.fromEntries(
    st.details.map((d) => {
      const type = rpc.lookupType(d.typeUrl.replace('type.googleapis.com/', ''));
      return [type.fullName.slice(1), type.toObject(type.decode(d.value), { longs: Number, defaults: true })];
    }),
  );
  const read: {
    code: status;
    details: string;
    tollgateCode: unknown;
    status: { code: number; message: string };
    types: string[];
    [detail: string]: any;
  } = {
    code: answer.code,
    details: answer.details,
    tollgateCode: answer.metadata.get('tollgate-code')[0],
    status: { code: st.code, message: st.message },
    types: st.details.map((d) => d.typeUrl),
    ...details,
  };
  return read;
}

describe('the gRPC status of each problem code', () => {
  const expected: Array<[string, keyof typeof status]> = [
    ['validation_failed', 'INVALID_ARGUMENT'],
    ['payload_too_large', 'INVALID_ARGUMENT'],
    ['unsupported_media_type', 'INVALID_ARGUMENT'],
    ['headers_too_large', 'INVALID_ARGUMENT'],
    ['unauthenticated', 'UNAUTHENTICATED'],
    ['forbidden', 'PERMISSION_DENIED'],
    ['not_found', 'NOT_FOUND'],
    ['conversation_blocked', 'FAILED_PRECONDITION'],
    ['idempotency_mismatch', 'FAILED_PRECONDITION'],
    ['already_decided', 'FAILED_PRECONDITION'],
    ['already_answered', 'FAILED_PRECONDITION'],
    ['too_many_open_questions', 'RESOURCE_EXHAUSTED'],
    ['not_approved', 'FAILED_PRECONDITION'],
    ['already_executed', 'FAILED_PRECONDITION'],
    ['not_executed', 'FAILED_PRECONDITION'],
    ['already_completed', 'FAILED_PRECONDITION'],
    ['illegal_transition', 'FAILED_PRECONDITION'],
    ['halted', 'FAILED_PRECONDITION'],
    ['rate_limited', 'RESOURCE_EXHAUSTED'],
    ['unavailable', 'UNAVAILABLE'],
    ['internal', 'INTERNAL'],
  ];

  it('covers every code of docs/API.md#errors, and nothing else', () => {
    const documented = [...API.matchAll(/^\| \d{3} \| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThan(15);
    expect(Object.keys(GRPC_STATUS_BY_CODE).sort()).toEqual([...new Set(documented)].sort());
  });

  it.each(expected)('%s is told as %s, with tollgate-code and an ErrorInfo naming it', (code, name) => {
    const grpcStatus = status[name];
    const e = new DomainError(code, 'conflict', `a ${code} problem`);
    const r = read(e);
    expect(r).toMatchObject({
      code: grpcStatus,
      details: `a ${code} problem`,
      tollgateCode: code,
      status: { code: grpcStatus, message: `a ${code} problem` },
    });
    expect(r['google.rpc.ErrorInfo']).toEqual({ reason: code, domain: 'tollgate', metadata: {} });
  });
});

describe('the details of an error', () => {
  it('carries the problem’s extra members in ErrorInfo.metadata: strings as they are, the rest as JSON', () => {
    const blocked = read(new ConversationBlockedError(['tc_1', 'tc_2']));
    expect(blocked['google.rpc.ErrorInfo'].metadata).toEqual({ pendingToolCallIds: '["tc_1","tc_2"]' });
    const decided = read(
      new AlreadyDecidedError('tc_1', { outcome: 'rejected', by: { id: 'ann', via: 'web' } }, 'rejected'),
    );
    expect(decided['google.rpc.ErrorInfo'].metadata).toEqual({
      decision: '{"outcome":"rejected","by":{"id":"ann","via":"web"}}',
      toolCallStatus: 'rejected',
    });
    expect(
      read(new GrantNotAllowedError('too wide', 'tenant', 'conversation'))['google.rpc.ErrorInfo'].metadata,
    ).toEqual({ requestedScope: 'tenant', allowedScope: 'conversation' });
    expect(read(new HaltedError('tenant', 'drill'))['google.rpc.ErrorInfo'].metadata).toEqual({ scope: 'tenant' });
  });

  it('lists each validation fault as a google.rpc.BadRequest field violation', () => {
    const r = read(
      new ValidationError([
        { path: 'toolCalls[0].toolName', message: 'must match ^x$' },
        { path: 'decision', message: 'must be one of approve' },
      ]),
    );
    expect(r.types).toEqual(['type.googleapis.com/google.rpc.ErrorInfo', 'type.googleapis.com/google.rpc.BadRequest']);
    expect(r['google.rpc.BadRequest']).toEqual({
      fieldViolations: [
        { field: 'toolCalls[0].toolName', description: 'must match ^x$' },
        { field: 'decision', description: 'must be one of approve' },
      ],
    });
    expect(r['google.rpc.ErrorInfo'].metadata).toEqual({}); // the faults are in BadRequest, not repeated here
  });

  it('says when to come back with a google.rpc.RetryInfo', () => {
    const r = read(new DomainError('rate_limited', 'rate_limited', 'slow down', { retryAfter: 7.2 }));
    expect(r['google.rpc.RetryInfo']).toEqual({ retryDelay: { seconds: 8, nanos: 0 } });
    expect(r['google.rpc.ErrorInfo'].metadata).toEqual({ retryAfter: '7.2' });
  });

  it('fails closed: a database out of reach is UNAVAILABLE (retry in 2 s), anything unexpected INTERNAL without its message', () => {
    const away = read(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    expect(away).toMatchObject({
      code: status.UNAVAILABLE,
      tollgateCode: 'unavailable',
      'google.rpc.RetryInfo': { retryDelay: { seconds: 2 } },
    });
    const bug = read(new TypeError("Cannot read properties of undefined (reading 'secret')"));
    expect(bug).toMatchObject({
      code: status.INTERNAL,
      tollgateCode: 'internal',
      details: 'An unexpected error occurred; it has been logged.',
    });
  });

  it('encodes long messages and many members (lengths past one varint byte)', () => {
    const detail = 'é'.repeat(300);
    const r = read(
      new DomainError(
        'forbidden',
        'forbidden',
        detail,
        Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, 'v'.repeat(200)])),
      ),
    );
    expect(r.status.message).toBe(detail);
    expect(Object.keys(r['google.rpc.ErrorInfo'].metadata)).toHaveLength(12);
  });

  it('bounds what it echoes, so that every client takes the trailers: the message, each violation and their number, each member', () => {
    const id = 'x'.repeat(100_000);
    const r = read(new DomainError('not_found', 'not_found', `Tool call ${id} not found`, { toolCallId: id }));
    expect(Buffer.byteLength(r.details)).toBeLessThanOrEqual(1024);
    expect(r.details).toMatch(/^Tool call x+…$/);
    expect(r.status.message).toBe(r.details);
    expect(Buffer.byteLength(r['google.rpc.ErrorInfo'].metadata.toolCallId)).toBeLessThanOrEqual(4096);
    // Cut between characters, never inside one.
    expect(read(new DomainError('forbidden', 'forbidden', '€'.repeat(5000))).details).toMatch(/^€+…$/);
    const faults = Array.from({ length: 500 }, (_, i) => ({
      path: `arguments.${'k'.repeat(10_000)}${i}`,
      message: 'm'.repeat(10_000),
    }));
    const v = read(new ValidationError(faults));
    expect(v['google.rpc.BadRequest'].fieldViolations).toHaveLength(20);
    for (const f of v['google.rpc.BadRequest'].fieldViolations)
      expect(Buffer.byteLength(f.field) + Buffer.byteLength(f.description)).toBeLessThanOrEqual(768);
    const bin = grpcError(new ValidationError(faults)).metadata.get('grpc-status-details-bin')[0] as Buffer;
    expect(bin.length).toBeLessThan(24 * 1024);
  });
});
