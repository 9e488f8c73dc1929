import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/** Tollgate's version, from its package.json (found upwards of this file: it runs from src/ in tests, dist/src/ built). */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'tollgate') return (cached = pkg.version ?? '0.0.0');
    }
    if (dirname(dir) === dir) return (cached = '0.0.0');
  }
}
