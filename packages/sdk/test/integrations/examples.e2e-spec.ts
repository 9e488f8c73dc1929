/**
 * Each example run as the docs say — `node examples/<framework>/agent.mjs` with TOLLGATE_URL and TOLLGATE_TOKEN —
 * so the package's subpath exports and the built SDK are what it imports (`npm test` builds first). A person
 * edits the arguments in the inbox; the example prints what the model was told.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pendingIn, withServer, until, type Setup, type TestServer } from '../support.js';

let server: TestServer;
let s: Setup;

withServer((started, setup) => {
  server = started;
  s = setup;
});

const root = join(__dirname, '../../../..');

function runExample(dir: string) {
  const child = spawn(process.execPath, [join(root, 'examples', dir, 'agent.mjs')], {
    cwd: root,
    env: { ...process.env, TOLLGATE_URL: server.url, TOLLGATE_TOKEN: s.agentToken },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe.each(['ai-sdk', 'openai-agents', 'langgraph', 'langchain', 'adk'])('node examples/%s/agent.mjs', (dir) => {
  it('waits for the inbox, runs with the edited arguments and prints what the model said', async () => {
    const run = runExample(dir);
    try {
      let conversationId = '';
      await until(
        async () => !!(conversationId = /in conversation ([\w.:-]+)/.exec(run.out())?.[1] ?? ''),
        20_000,
        `${dir} to print its conversation`,
      );
      const [pending] = await pendingIn(s.ann, conversationId);
      expect(pending).toMatchObject({ toolName: 'delete_source', arguments: { id: 'src_2' } });
      await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_3' } });
      const code = await run.exited;
      expect(run.err()).toBe('');
      expect(code).toBe(0);
      expect(run.out().trim().split('\n').at(-1)).toBe('The tool said: {"deleted":"src_3","existed":true}');
    } finally {
      run.child.kill();
    }
  });
});
