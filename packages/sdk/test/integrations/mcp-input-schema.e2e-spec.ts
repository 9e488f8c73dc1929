/**
 * The MCP gateway passes each upstream tool's input schema when it registers the tool with Tollgate (issue 28,
 * part 2): people then edit a held call in a form made from it, and edits are checked against it. A real Tollgate,
 * a real upstream MCP server over Streamable HTTP.
 */
import { Tollgate } from '@tollgate/sdk';
import { TollgateMcpGateway } from '../../src/integrations/mcp.js';
import { httpUpstream, type HttpUpstream } from '../../../../test/support/mcp-upstream.js';
import { startTestServer, until, type TestServer } from '../support.js';

let server: TestServer;
let files: HttpUpstream;
let gateway: TollgateMcpGateway | undefined;

beforeAll(async () => {
  server = await startTestServer();
  files = await httpUpstream('files');
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await files?.close();
  await server?.stop();
});

it("registers each upstream tool with the upstream's input schema", async () => {
  const admin = new Tollgate({ url: server.url, token: await server.token('root', ['admin']) });
  gateway = await TollgateMcpGateway.start({
    tollgate: new Tollgate({ url: server.url, token: await server.token('mcp-gateway', ['agent']) }),
    upstreams: [{ name: 'files', url: files.url }],
    log: () => undefined,
  });
  await until(async () => !!(await admin.getTool('delete_file').catch(() => undefined))?.inputSchema);
  const tool = await admin.getTool('delete_file');
  expect(tool.inputSchema).toMatchObject({
    type: 'object',
    properties: { path: { type: 'string', description: 'a path' } },
    required: ['path'],
  });
});
