/**
 * `tollgate hook …` starts on every tool call of an agent, so bin/tollgate.js runs it from its own entry
 * (src/adapters/cli/hook-cli.ts): none of the other commands, the config or the server is loaded for it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

function loadedBy(script: string): string[] {
  const out = execFileSync(
    process.execPath,
    ['-e', `${script}; process.stdout.write(JSON.stringify(Object.keys(require.cache)))`],
    { cwd: root, encoding: 'utf8' },
  );
  return (JSON.parse(out) as string[]).map((p) => p.slice(root.length + 1));
}

describe('the hook entry', () => {
  it('loads commander and its own modules, nothing of the other commands or the server', () => {
    const loaded = loadedBy(`require('./dist/src/adapters/cli/hook-cli.js')`);
    expect(loaded).toContain('dist/src/adapters/cli/hook-cli.js');
    const heavy = loaded.filter((p) =>
      /dist\/src\/adapters\/cli\/(main|client\/|login\/|server-commands)|dist\/src\/(application|domain)\/|node_modules\/(@nestjs|typeorm|pg|reflect-metadata)\//.test(
        p,
      ),
    );
    expect(heavy).toEqual([]);
  });

  it('is smaller than the whole CLI, which loads the client commands', () => {
    const all = loadedBy(`require('reflect-metadata'); require('./dist/src/adapters/cli/main.js')`);
    expect(all.some((p) => p.startsWith('dist/src/adapters/cli/client/'))).toBe(true);
    expect(loadedBy(`require('./dist/src/adapters/cli/hook-cli.js')`).length).toBeLessThan(all.length);
  });
});
