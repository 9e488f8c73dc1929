/**
 * Input schemas and previews over gRPC (issue 28, parts 2 and 3): RegisterTool takes and answers `input_schema`,
 * ProposeToolCalls takes a `preview` and the call answers it with its digest, an edit that breaks the schema is
 * INVALID_ARGUMENT `arguments_invalid` with the faults as a BadRequest, and the receipt carries the digest.
 */
import * as grpc from '@grpc/grpc-js';
import { previewDigest, verifyReceipt } from '@tollgate/sdk';
import { client } from '../support/http';
import { json, struct, TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let rpc: TollgateGrpc;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;
let approver: string;

const SCHEMA = {
  type: 'object',
  properties: { rows: { type: 'integer', maximum: 100 } },
  required: ['rows'],
};
const PREVIEW = { kind: 'sql' as const, content: 'DELETE FROM invoices WHERE paid', estimatedRows: 42, title: 'Purge' };

beforeAll(async () => {
  server = await startTestServer();
  rpc = new TollgateGrpc(server.grpcAddress!);
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  admin = await server.token('root', ['admin']);
  approver = await server.token('ann', ['approver']);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

describe('gRPC', () => {
  it('registers a tool with its input schema, and refuses one that is not a JSON Schema', async () => {
    const bad = await rpc.failure(
      'RegisterTool',
      { name: 'purge', requiresApproval: true, inputSchema: struct({ type: 'objectx' }) },
      admin,
    );
    expect({ code: bad.code, tollgateCode: bad.tollgateCode }).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'input_schema_invalid',
    });
    const ok = await rpc.call(
      'RegisterTool',
      { name: 'purge', requiresApproval: true, inputSchema: struct(SCHEMA) },
      admin,
    );
    expect(json(ok.tool.inputSchema)).toEqual(SCHEMA);
  });

  it('proposes with a preview, answers it with its digest, refuses an edit that breaks the schema, and binds the receipt', async () => {
    await rpc.call('StartConversation', { id: 'rp-grpc' }, agent);
    const answer = await rpc.call(
      'ProposeToolCalls',
      {
        conversationId: 'rp-grpc',
        toolCalls: [{ toolName: 'purge', arguments: struct({ rows: 42 }), preview: PREVIEW }],
      },
      agent,
    );
    const [call] = answer.toolCalls;
    const digest = await previewDigest(PREVIEW);
    expect(call.preview).toMatchObject({ kind: 'sql', content: PREVIEW.content, title: 'Purge', digest });
    expect(Number(call.preview.estimatedRows)).toBe(42);

    const refused = await rpc.failure(
      'DecideToolCall',
      { id: call.id, decision: 'DECISION_KIND_APPROVE', arguments: struct({ rows: 1000 }) },
      approver,
    );
    expect({ code: refused.code, tollgateCode: refused.tollgateCode }).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'arguments_invalid',
    });
    expect(refused.violations).toEqual([{ field: '/rows', description: 'must be <= 100' }]);

    await rpc.call(
      'DecideToolCall',
      { id: call.id, decision: 'DECISION_KIND_APPROVE', arguments: struct({ rows: 10 }) },
      approver,
    );
    const claim = await http.post(`/v1/tool-calls/${call.id}/execution`, agent);
    expect(claim.status).toBe(200);
    const jwks = (await http.get('/.well-known/jwks.json')).body;
    const claims = await verifyReceipt(claim.body.receipt, {
      jwks,
      tenant: 'default',
      toolName: 'purge',
      arguments: { rows: 10 },
      preview: PREVIEW,
    });
    expect(claims.preview).toBe(digest);
  });
});
