/**
 * The SDK against a server older than 0.6, which knows neither `claim` nor `results` on a proposal: it refuses
 * them as unknown members (400 validation_failed), as this server refuses any unknown member. The guard must still
 * run the tool: it proposes again without them, claims on the claim route, reports alone, and remembers.
 * Emulated by a fetch that refuses those members with the server's own wording, in front of the real server.
 */
import type { ToolCall } from '@tollgate/sdk';
import { tapFetch, type Setup, withServer } from './support.js';

let s: Setup;
withServer((_started, setup) => {
  s = setup;
});

const NEWER = ['claim', 'claimKey', 'results'];

/** Refuses a proposal that carries a member the older server does not know, worded as the server words it. */
function olderServer() {
  const refused: string[][] = [];
  const fetch = tapFetch(async (url, init) => {
    if (init.method !== 'POST' || !new URL(url).pathname.endsWith('/tool-calls')) return undefined;
    const body = JSON.parse(String(init.body)) as Record<string, unknown>;
    const unknown = Object.keys(body).filter((k) => NEWER.includes(k));
    if (unknown.length === 0) return undefined;
    refused.push(unknown);
    const detail = unknown.map((k) => `${k}: unknown field "${k}"`).join('; ');
    return new Response(
      JSON.stringify({
        type: 'urn:tollgate:problem:validation_failed',
        title: 'Bad Request',
        status: 400,
        detail,
        code: 'validation_failed',
        errors: unknown.map((k) => ({ path: k, message: `unknown field "${k}"` })),
      }),
      { status: 400, headers: { 'content-type': 'application/problem+json' } },
    );
  });
  const paths = () => fetch.calls.map((c) => `${c.method} ${new URL(c.url).pathname.replace(/tc_[0-9a-f]+/, 'tc')}`);
  return { fetch, refused, paths };
}

describe('guard against a server that takes no claim or results with a proposal', () => {
  it('runs each call, claiming it on its own route, and stops sending what the server refused', async () => {
    const older = olderServer();
    const reportErrors: Array<{ error: unknown; call: ToolCall }> = [];
    const tollgate = s.agent({
      fetch: older.fetch,
      onReportError: (error, call) => reportErrors.push({ error, call }),
    });
    const conv = await tollgate.conversation({ id: 'older-1', user: { id: 'ann', roles: ['admin'], name: 'Ann' } });
    const getSource = conv.guard('get_source', (args: { id: string }) => ({ id: args.id, title: `source ${args.id}` }));

    const outs = [];
    for (let i = 0; i < 4; i++) outs.push(await getSource({ id: `src_${i}` }));
    await tollgate.close();

    expect(outs.map((o) => o.id)).toEqual(['src_0', 'src_1', 'src_2', 'src_3']);
    // The first proposal was refused for `claim`; the first that carried a result, for `results`; never again.
    expect(older.refused).toEqual([['claim', 'claimKey'], ['results']]);
    const proposals = `POST /v1/conversations/${conv.id}/tool-calls`;
    expect(older.paths().filter((p) => p === proposals)).toHaveLength(4 + 2);
    expect(older.paths().filter((p) => p === 'POST /v1/tool-calls/tc/execution')).toHaveLength(4);
    expect(older.paths().filter((p) => p === 'POST /v1/tool-calls/tc/result')).toHaveLength(4);
    const calls = (await conv.refresh()).toolCalls!;
    expect(calls.map((c) => [c.status, c.result?.output])).toEqual(
      outs.map((o) => ['completed', { id: o.id, title: o.title }]),
    );
    expect(reportErrors).toEqual([]);
  });
});
