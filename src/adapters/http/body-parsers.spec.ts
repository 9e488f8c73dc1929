import fastify, { FastifyInstance } from 'fastify';
import { gzipSync } from 'node:zlib';
import { toProblem } from '../api/problem';
import { useBodyParsers } from './body-parsers';

const LIMIT = 1024;

/** A real Fastify with the service's parsers, a route that echoes what reached it, and errors as problems. */
async function app(): Promise<{ f: FastifyInstance; url: string }> {
  const f = fastify({ bodyLimit: LIMIT });
  useBodyParsers(f, { limit: LIMIT, textTypes: ['application/yaml'], rawBodyRoutes: ['/raw'] });
  f.setErrorHandler((e, _req, reply) => {
    const p = toProblem(e);
    void reply.code(p.status).send(p);
  });
  f.post('/echo', async (req) => ({ body: req.body === undefined ? 'none' : req.body }));
  f.post('/raw', async (req) => ({ raw: (req as { rawBody?: Buffer }).rawBody?.toString('utf8'), body: req.body }));
  const url = await f.listen({ host: '127.0.0.1', port: 0 });
  return { f, url };
}

interface Answer {
  status: number;
  json: () => any;
}

describe('the body parsers', () => {
  let f: FastifyInstance;
  let base: string;
  beforeAll(async () => ({ f, url: base } = await app()));
  afterAll(() => f.close());

  const post = async (body: string | Buffer, headers: Record<string, string>, path = '/echo'): Promise<Answer> => {
    const res = await fetch(base + path, { method: 'POST', body: Buffer.from(body), headers });
    const json: unknown = await res.json();
    return { status: res.status, json: () => json };
  };

  it('takes JSON objects and arrays, under application/json and application/*+json, and {} for an empty body', async () => {
    expect((await post('{"a":1}', { 'content-type': 'application/json' })).json()).toEqual({ body: { a: 1 } });
    expect((await post('[1]', { 'content-type': 'application/merge-patch+json' })).json()).toEqual({ body: [1] });
    expect((await post('', { 'content-type': 'application/json; charset=utf-8' })).json()).toEqual({ body: {} });
  });

  it('refuses JSON that is broken or not an object or array with 400', async () => {
    for (const raw of ['{"a":', '42', 'null', '"text"']) {
      const res = await post(raw, { 'content-type': 'application/json' });
      expect([res.status, res.json().code]).toEqual([400, 'validation_failed']);
    }
  });

  it('inflates a gzip body, and refuses one over the limit once inflated with 413', async () => {
    const small = gzipSync(Buffer.from('{"a":"b"}'));
    expect((await post(small, { 'content-type': 'application/json', 'content-encoding': 'gzip' })).json()).toEqual({
      body: { a: 'b' },
    });
    const bomb = gzipSync(Buffer.from(JSON.stringify({ a: 'x'.repeat(LIMIT * 4) })));
    const res = await post(bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect([res.status, res.json().code]).toEqual([413, 'payload_too_large']);
  });

  it('refuses a body over the limit with 413', async () => {
    const res = await post(JSON.stringify({ a: 'x'.repeat(LIMIT) }), { 'content-type': 'application/json' });
    expect([res.status, res.json().code]).toEqual([413, 'payload_too_large']);
  });

  it('reads YAML as text, and refuses other media types, charsets and encodings with 415', async () => {
    expect((await post('a: 1\n', { 'content-type': 'application/yaml' })).json()).toEqual({ body: 'a: 1\n' });
    const refused: Array<Record<string, string>> = [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/json; charset=latin1' },
      { 'content-type': 'application/json', 'content-encoding': 'x-nope' },
    ];
    for (const headers of refused) {
      const res = await post('{}', headers);
      expect([res.status, res.json().code]).toEqual([415, 'unsupported_media_type']);
    }
  });

  it('lets a body without a Content-Type through as none', async () => {
    expect((await post('x', {})).json()).toEqual({ body: 'none' });
  });

  it("keeps a raw-body route's exact bytes, whatever the media type, and parses nothing", async () => {
    const form = 'payload=%7B%22type%22%3A%22x%22%7D';
    expect((await post(form, { 'content-type': 'application/x-www-form-urlencoded' }, '/raw')).json()).toEqual({
      raw: form,
      body: {},
    });
    expect((await post('{"a":', { 'content-type': 'application/json' }, '/raw')).json()).toEqual({
      raw: '{"a":',
      body: {},
    });
  });
});
