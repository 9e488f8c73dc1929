import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EgressGuard } from '../webhooks/egress-guard';
import {
  checkpointFileName,
  FileCheckpointSink,
  HttpCheckpointSink,
  peekClaims,
  tenantDirName,
} from './checkpoint-sinks';

function jwsOf(claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'EdDSA', typ: 'tollgate-checkpoint+jwt' })}.${part(claims)}.c2ln`;
}

function checkpoint(tenant: string, seq: number, at = '2026-11-28T14:15:00.000Z') {
  const claims = { tenant, seq, hash: 'a'.repeat(64), at };
  return { ...claims, jws: jwsOf(claims) };
}

describe('tenantDirName', () => {
  it('keeps plain ids and encodes the rest so that no name is a path', () => {
    expect(tenantDirName('acme-1_a')).toBe('acme-1_a');
    for (const t of ['.', '..', '../x', 'a/b', 'a\\b', 'é', '', 'x'.repeat(101)]) {
      const name = tenantDirName(t);
      expect(name).not.toMatch(/[/\\]/);
      expect(name).not.toMatch(/^\.{1,2}$/);
      expect(name.startsWith('~')).toBe(true);
    }
    expect(tenantDirName('a/b')).not.toBe(tenantDirName('a%2fb'));
  });
});

describe('FileCheckpointSink', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'tollgate-cp-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes one file per checkpoint and moves latest, leaving no temporary file', async () => {
    const sink = new FileCheckpointSink(dir);
    expect(await sink.latest('acme')).toEqual({ none: null });
    const first = checkpoint('acme', 4, '2026-11-28T14:00:00.000Z');
    const second = checkpoint('acme', 9, '2026-11-28T14:15:00.000Z');
    expect(await sink.write(first)).toBe('20261128T140000.000Z-4.jws');
    expect(await sink.write(second)).toBe(checkpointFileName(second.at, 9));
    expect((await readdir(join(dir, 'acme'))).sort()).toEqual([
      '20261128T140000.000Z-4.jws',
      '20261128T141500.000Z-9.jws',
      'latest',
    ]);
    expect((await readFile(join(dir, 'acme', '20261128T140000.000Z-4.jws'), 'utf8')).trim()).toBe(first.jws);
    expect(await sink.latest('acme')).toEqual({ found: { jws: second.jws, name: '20261128T141500.000Z-9.jws' } });
    expect(await sink.latestClaims('acme')).toEqual({ seq: 9, hash: 'a'.repeat(64) });
    expect(await sink.latestClaims('other')).toBeUndefined();
  });

  it("does not take another tenant's checkpoint put in a tenant's directory as its own", async () => {
    const sink = new FileCheckpointSink(dir);
    await sink.write(checkpoint('acme', 3));
    await writeFile(join(dir, 'acme', 'latest'), checkpoint('globex', 50).jws);
    expect(await sink.latestClaims('acme')).toBeUndefined();
  });

  it('answers an oversized latest as something that is not a checkpoint', async () => {
    const sink = new FileCheckpointSink(dir);
    await sink.write(checkpoint('acme', 3));
    await writeFile(join(dir, 'acme', 'latest'), 'x'.repeat(20_000));
    const latest = await sink.latest('acme');
    expect('found' in latest && peekClaims(latest.found.jws)).toBe(undefined);
  });
});

describe('HttpCheckpointSink, against a real loopback server', () => {
  let server: Server;
  let url: string;
  const received: Array<{ type?: string; tenant?: string; seq?: string; body: string }> = [];
  let status = 204;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({
          type: req.headers['content-type'],
          tenant: req.headers['x-tollgate-tenant'] as string,
          seq: req.headers['x-tollgate-checkpoint-seq'] as string,
          body,
        });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/anchors?k=1`;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    received.length = 0;
    status = 204;
  });

  it('POSTs the JWS as application/jose where the allow-list lets it', async () => {
    const sink = new HttpCheckpointSink(url, new EgressGuard(['127.0.0.0/8']), 5000);
    expect(await sink.preflight()).toBeUndefined();
    const cp = checkpoint('acme', 7);
    expect(await sink.write(cp)).toBe('HTTP 204');
    expect(received).toEqual([{ type: 'application/jose', tenant: 'acme', seq: '7', body: cp.jws }]);
    expect(await sink.latest()).toEqual({ none: expect.stringContaining('pass checkpoint=') });
    expect(sink.description).not.toContain('k=1');
  });

  it('throws on an answer that is not 2xx (the scheduler logs it and tries again next run)', async () => {
    status = 500;
    const sink = new HttpCheckpointSink(url, new EgressGuard(['127.0.0.0/8']), 5000);
    await expect(sink.write(checkpoint('acme', 7))).rejects.toThrow(/answered 500/);
  });

  it('refuses a loopback destination the operator did not allow, without connecting', async () => {
    const sink = new HttpCheckpointSink(url, new EgressGuard([]), 5000);
    expect(await sink.preflight()).toMatch(/not a public address/);
    await expect(sink.write(checkpoint('acme', 7))).rejects.toThrow(/destination_not_allowed/);
    expect(received).toEqual([]);
  });
});
