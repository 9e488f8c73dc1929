import { AuditEvent } from '../../../application/ports/audit-log.port';

const COLUMNS = [
  'seq',
  'id',
  'type',
  'at',
  'recordedAt',
  'tenant',
  'instanceId',
  'correlationId',
  'conversationId',
  'toolCallId',
  'toolName',
  'actorId',
  'actorKind',
  'actorName',
  'actorVia',
  'actor',
  'data',
  'prevHash',
  'hash',
] as const;

export const CSV_HEADER = COLUMNS.join(',') + '\r\n';

/** RFC 4180 quoting; a cell a spreadsheet would run as a formula is prefixed with a quote (OWASP CSV injection). */
function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  let s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One event per row; `actor` and `data` as JSON so nothing is lost and the hash can be recomputed. */
export function toCsvRow(e: AuditEvent): string {
  const a = e.actor as { id?: unknown; kind?: unknown; name?: unknown; via?: unknown };
  const values: Record<(typeof COLUMNS)[number], unknown> = {
    seq: e.seq,
    id: e.id,
    type: e.type,
    at: e.at,
    recordedAt: e.recordedAt,
    tenant: e.tenant,
    instanceId: e.instanceId,
    correlationId: e.correlationId,
    conversationId: e.conversationId,
    toolCallId: e.toolCallId,
    toolName: e.toolName,
    actorId: a.id,
    actorKind: a.kind,
    actorName: a.name,
    actorVia: a.via,
    actor: e.actor,
    data: e.data,
    prevHash: e.prevHash,
    hash: e.hash,
  };
  return COLUMNS.map((c) => cell(values[c])).join(',') + '\r\n';
}
