/**
 * openid-client as an ES module. It ships ES modules only; Node loads it with `import()`, and the import is made
 * through a Function so that no compiler turns it into a `require` (Jest's CommonJS transform would, and fail). The
 * Function's text is made unique: V8 reuses a compiled Function of the same text, and with it the import context of
 * whichever Jest test file compiled it first (gone by the next file: "import after the environment was torn down").
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type * as OpenIdClient from 'openid-client';

export type { OpenIdClient };

const importEsm = new Function('specifier', `return import(specifier) // ${randomUUID()}`) as (
  s: string,
) => Promise<unknown>;
let loaded: Promise<typeof OpenIdClient> | undefined;

export function openIdClient(): Promise<typeof OpenIdClient> {
  loaded ??= importEsm(pathToFileURL(createRequire(__filename).resolve('openid-client')).href) as Promise<
    typeof OpenIdClient
  >;
  return loaded;
}
