#!/usr/bin/env node
'use strict';
/**
 * The minimal baseline the approval-loop benchmark compares Tollgate with: plain node:http + pg (Pool of 10,
 * like Tollgate's), doing one proposal's durable writes and nothing else. For
 * POST /v1/conversations/{id}/tool-calls it parses the JSON body and, in one transaction (BEGIN, two INSERTs,
 * COMMIT: four round trips), inserts the tool call row and its event row, then answers 201 with the call.
 * No authentication, no policy, no hash chain, no framework: what any service that records a proposal
 * durably must at least do.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb PORT=0 node bench/baseline-server.js
 *
 * Prints "baseline listening on http://127.0.0.1:PORT" once ready; stops on SIGTERM.
 */
const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { Pool } = require('pg');

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('baseline-server: set DATABASE_URL');
  process.exit(2);
}
const pool = new Pool({ connectionString: url, max: 10, application_name: 'tollgate-bench-baseline' });
pool.on('error', (e) => console.error(`baseline-server: idle client error: ${e.message}`));

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS baseline_tool_calls (
    tenant_id       text        NOT NULL,
    id              text        NOT NULL,
    conversation_id text        NOT NULL,
    tool_name       text        NOT NULL,
    arguments       jsonb       NOT NULL,
    status          text        NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
  );
  CREATE TABLE IF NOT EXISTS baseline_events (
    seq          bigserial   PRIMARY KEY,
    tenant_id    text        NOT NULL,
    type         text        NOT NULL,
    tool_call_id text        NOT NULL,
    at           timestamptz NOT NULL,
    data         jsonb       NOT NULL
  );`;

const ROUTE = /^\/v1\/conversations\/([^/]+)\/tool-calls$/;

async function propose(conversationId, body) {
  const input = body.toolCalls[0];
  const call = {
    id: `tc_${randomUUID()}`,
    conversationId,
    toolName: input.toolName,
    arguments: input.arguments ?? {},
    status: 'approved',
    createdAt: new Date().toISOString(),
  };
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      'INSERT INTO baseline_tool_calls (tenant_id, id, conversation_id, tool_name, arguments, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      ['default', call.id, conversationId, call.toolName, JSON.stringify(call.arguments), call.status, call.createdAt],
    );
    await client.query(
      'INSERT INTO baseline_events (tenant_id, type, tool_call_id, at, data) VALUES ($1, $2, $3, $4, $5)',
      [
        'default',
        'ToolCallProposed',
        call.id,
        call.createdAt,
        JSON.stringify({ toolName: call.toolName, arguments: call.arguments }),
      ],
    );
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
  return call;
}

function send(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const m = req.method === 'POST' ? ROUTE.exec(req.url) : null;
  if (!m) {
    if (req.method === 'GET' && req.url === '/health') return send(res, 200, { status: 'ok' });
    return send(res, 404, { code: 'not_found' });
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, { code: 'validation_failed' });
    }
    if (
      !Array.isArray(body?.toolCalls) ||
      body.toolCalls.length === 0 ||
      typeof body.toolCalls[0].toolName !== 'string'
    ) {
      return send(res, 400, { code: 'validation_failed' });
    }
    propose(decodeURIComponent(m[1]), body).then(
      (call) => send(res, 201, { toolCalls: [call] }),
      (e) => send(res, 503, { code: 'unavailable', detail: e.message }),
    );
  });
});
server.keepAliveTimeout = 65_000;

async function main() {
  await pool.query(SCHEMA);
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const { port } = server.address();
    console.log(`baseline listening on http://127.0.0.1:${port}`);
  });
}

function stop() {
  server.close(() => pool.end().finally(() => process.exit(0)));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 5000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

main().catch((e) => {
  console.error(`baseline-server: ${e.message}`);
  process.exit(1);
});
