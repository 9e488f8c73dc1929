import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DEFAULT_MAX_TTL_S, mintToken } from '../../infrastructure/auth/jwt-verifier';
import { checkSecretStrength, devSecretPath, readDevSecret } from '../../infrastructure/auth/dev-secret';
import { ConfigError, loadConfig } from '../../infrastructure/config/config';
import { spanSeconds } from '../../infrastructure/config/duration';

/**
 * `tollgate token`. Apart from the server's commands so that it loads only the config, the dev secret and jose:
 * not Nest, Swagger, gRPC or the database drivers (a token in a tenth of the time).
 */

export interface TokenOptions {
  sub: string;
  role: string[];
  tenant: string;
  name?: string;
  owner?: string;
  ttl: string;
  dataDir?: string;
  /** The audience instead of the server's TOLLGATE_JWT_AUDIENCE: an end user's token for user.token, say. */
  aud?: string;
}

export async function token(o: TokenOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(o.dataDir ? { ...env, TOLLGATE_DATA_DIR: o.dataDir } : env);
  const toldBy = o.dataDir ? '--data-dir' : env.TOLLGATE_DATA_DIR ? 'TOLLGATE_DATA_DIR' : undefined;
  const secret = config.auth.secret ?? findDevSecret(toldBy, config);
  // Mint only what the server will accept: its secret rule, lifetime cap, and issuer and audience when configured.
  if (config.auth.secret) checkSecretStrength(config.auth.secret);
  const max = config.auth.maxTtlSeconds ?? DEFAULT_MAX_TTL_S;
  const ttl = spanSeconds(o.ttl, { bare: true });
  if (ttl !== undefined && ttl > max) {
    throw new ConfigError(
      `--ttl ${o.ttl} is longer than the ${max} s a token may live (TOLLGATE_JWT_MAX_TTL): the server would refuse it`,
    );
  }
  const { issuer } = config.auth;
  const audience = o.aud ?? config.auth.audience;
  console.log(
    await mintToken(secret, { sub: o.sub, roles: o.role, tenant: o.tenant, name: o.name, owner: o.owner }, o.ttl, {
      issuer,
      audience,
    }),
  );
}

/**
 * The dev secret the server made in its data dir. A data dir the caller named is the only place looked; otherwise
 * the server's default (./.tollgate here), then the one beside this Tollgate (where `npm start` in its checkout puts
 * it), so that a token minted from another project's directory signs with the checkout's server's secret.
 */
function findDevSecret(toldBy: string | undefined, config: { dataDir: string; auth: { jwksUrl?: string } }): string {
  if (config.auth.jwksUrl)
    throw new ConfigError(
      'Tokens come from your identity provider (TOLLGATE_JWKS_URL is set); this command signs only with a shared secret',
    );
  const fix =
    'start the server once to make one (npm start in the Tollgate checkout), point at its data dir (--data-dir DIR or TOLLGATE_DATA_DIR=DIR), or set TOLLGATE_JWT_SECRET to the secret the server uses';
  if (toldBy) {
    const secret = readDevSecret(config.dataDir);
    if (secret) return secret;
    throw new ConfigError(
      `No secret to sign with: TOLLGATE_JWT_SECRET is not set and there is no dev secret at ${devSecretPath(config.dataDir)} (the data dir from ${toldBy}). It must be the server's data dir (its TOLLGATE_DATA_DIR; ./.tollgate where it was started), where it makes the secret on its first start; or set TOLLGATE_JWT_SECRET to the secret the server uses`,
    );
  }
  const here = config.dataDir;
  const root = packageRoot();
  const beside = root ? join(root, '.tollgate') : undefined;
  const secret = readDevSecret(here);
  if (secret) return secret;
  if (beside && resolve(beside) !== here) {
    const found = readDevSecret(beside);
    if (found) {
      // Said on stderr (stdout is the token alone, for $(…)): a 401 later is then easy to trace to the wrong server.
      console.error(
        `tollgate: signed with the dev secret in ${beside} (no .tollgate in the current directory; --data-dir or TOLLGATE_DATA_DIR picks another)`,
      );
      return found;
    }
  }
  const looked = [devSecretPath(here), ...(beside && resolve(beside) !== here ? [devSecretPath(beside)] : [])];
  throw new ConfigError(
    `No secret to sign with: TOLLGATE_JWT_SECRET is not set and there is no dev secret at ${looked.join(' nor at ')}. To fix it, ${fix}`,
  );
}

/** This Tollgate's directory: upwards of this file (src/ in tests, dist/src/ built), the package.json named tollgate. */
export function packageRoot(): string | undefined {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        if ((JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'tollgate') return dir;
      } catch {
        /* not ours: keep looking */
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}
