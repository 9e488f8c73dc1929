import type { QueryBus } from '@nestjs/cqrs';
import { Access, ToolCallAccessQuery } from '../../application/queries/access/access.query';
import type { Principal } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import { decideToolCall } from './decide-tool-call.request';
import { channelHeader, channelMetadata } from './request-params';

const ann: Principal = { id: 'ann', tenant: 't1', roles: ['approver'] };

/** A query bus that answers ToolCallAccessQuery with `access`, or 404 when the call is not visible. */
function queriesAnswering(access: Access | 'not_found'): QueryBus & { asked: number } {
  const bus = {
    asked: 0,
    async execute(q: unknown) {
      if (!(q instanceof ToolCallAccessQuery)) throw new Error('unexpected query');
      bus.asked++;
      if (access === 'not_found')
        throw new DomainError('not_found', 'not_found', `Tool call ${q.toolCallId} not found`);
      return access;
    },
  };
  return bus as unknown as QueryBus & { asked: number };
}

const approver: Access = { isAgent: false, isOwningAgent: false, mayDecide: true };
const rest = (body: unknown, header?: string) => () => ({ body, via: () => channelHeader(header) });

describe('a decision request, as REST and gRPC read it', () => {
  it('becomes the command, with the channel the caller named, and reads no access when it is good', async () => {
    const queries = queriesAnswering(approver);
    const command = await decideToolCall(queries, ann, 'tc_1', rest({ decision: 'approve', reason: 'ok' }, 'web'));
    expect(command.decider).toEqual({ ...ann, via: 'web' });
    expect(command.input).toEqual({ decision: 'approve', reason: 'ok' });
    expect(command.grant).toEqual({});
    expect(queries.asked).toBe(0);
  });

  it('a field its decision does not take is a 400 for someone who may decide the call', async () => {
    const queries = queriesAnswering(approver);
    await expect(
      decideToolCall(queries, ann, 'tc_1', rest({ decision: 'approve', expiresIn: 60 })),
    ).rejects.toMatchObject({ code: 'validation_failed', faults: [{ path: 'expiresIn' }] });
  });

  it('the same request on a call the caller cannot see is a 404, and from an agent a 403', async () => {
    const body = { decision: 'reject', arguments: { id: 1 } };
    await expect(decideToolCall(queriesAnswering('not_found'), ann, 'tc_1', rest(body))).rejects.toMatchObject({
      code: 'not_found',
    });
    const agent: Access = { isAgent: true, isOwningAgent: true, mayDecide: false };
    await expect(decideToolCall(queriesAnswering(agent), ann, 'tc_1', rest(body))).rejects.toMatchObject({
      code: 'forbidden',
      message: 'Agent tokens cannot decide tool calls: approval comes from people',
    });
  });

  it('a channel the transport does not allow is a 400 after the 404, as a bad body is', async () => {
    const grpc = () => ({ body: { decision: 'approve' }, via: () => channelMetadata('slack') });
    await expect(decideToolCall(queriesAnswering('not_found'), ann, 'tc_1', grpc)).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(decideToolCall(queriesAnswering(approver), ann, 'tc_1', grpc)).rejects.toMatchObject({
      code: 'validation_failed',
      faults: [{ path: 'x-tollgate-channel' }],
    });
  });
});
