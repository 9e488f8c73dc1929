import { Command, Option } from 'commander';
import { ApiClient, ClientOptions, connection } from './api-client';
import { output } from './client-commands';
import { printJson, table } from './format';
import { oneLineText as clean } from '../safe-text';

/** A pending change of the control plane, as GET /v1/changes answers it (the members the CLI shows). */
interface Change {
  id: string;
  kind: string;
  summary: string;
  payloadDigest: string;
  proposedBy: { id: string; name?: string };
  approvals: Array<{ by: { id: string; name?: string }; at: string }>;
  needed: number;
  status: string;
  createdAt: string;
  expiresAt: string;
  rejectedBy: { id: string; name?: string } | null;
  reason: string | null;
}

const who = (p: { id: string; name?: string }) => p.name ?? p.id;
const enc = encodeURIComponent;

function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'Tollgate base URL (default: TOLLGATE_URL or http://127.0.0.1:8080)')
    .option('--token <jwt>', 'bearer token (default: TOLLGATE_TOKEN)');
}

function line(c: Change): string {
  const approvals = `${c.approvals.length} of ${c.needed}: ${c.approvals.map((a) => who(a.by)).join(', ')}`;
  const end =
    c.status === 'rejected' && c.rejectedBy ? ` by ${who(c.rejectedBy)}${c.reason ? ` (${c.reason})` : ''}` : '';
  return clean(`${c.id} ${c.kind}: ${c.status}${end}; ${approvals}; ${c.summary}`);
}

/**
 * `tollgate changes` lists the tenant's pending changes of the control plane (governance: four eyes); `changes
 * approve <id>` and `changes reject <id>` decide one (admins; the proposer may not approve their own).
 */
export function addChangeCommands(program: Command): void {
  const changes = withConnection(
    program
      .command('changes')
      .description(
        'List changes of the control plane waiting for another admin (governance); `changes approve|reject <id>` decides one',
      )
      .addOption(
        new Option('--status <status>', 'only changes in this status (default: pending)').choices([
          'pending',
          'applied',
          'rejected',
          'expired',
          'all',
        ]),
      )
      .option('--json', 'print them as JSON'),
  ).action(async (o: ClientOptions & { status?: string; json?: boolean }) => {
    output.json = !!o.json;
    const api = new ApiClient(connection(o));
    const status = o.status ?? 'pending';
    const page = await api.get<{ items: Change[] }>(
      `/v1/changes?limit=100${status === 'all' ? '' : `&status=${enc(status)}`}`,
    );
    if (o.json) return printJson({ items: page.items });
    if (!page.items.length) return console.log(status === 'pending' ? 'No pending changes.' : 'No changes.');
    console.log(
      table(
        ['ID', 'KIND', 'STATUS', 'APPROVALS', 'PROPOSED BY', 'EXPIRES', 'SUMMARY'],
        page.items.map((c) => [
          c.id,
          c.kind,
          c.status,
          `${c.approvals.length}/${c.needed}`,
          who(c.proposedBy),
          c.expiresAt,
          c.summary,
        ]),
        [0, 0, 0, 0, 24, 0, 80],
      ),
    );
  });

  withConnection(
    changes
      .command('approve')
      .description('Approve a pending change; at its quorum it takes effect (admins other than its proposer)')
      .argument('<id>', 'change id')
      .option('--json', 'print the answer as JSON'),
  ).action(async (id: string, _o: unknown, cmd: Command) => {
    const o = cmd.optsWithGlobals<ClientOptions & { json?: boolean }>();
    output.json = !!o.json;
    const api = new ApiClient(connection(o));
    const res = await api.post<{ change: Change; applied: boolean }>(`/v1/changes/${enc(id)}/approve`, undefined);
    if (o.json) return printJson(res);
    console.log(line(res.change));
    console.log(res.applied ? 'Applied.' : `Waiting for ${res.change.needed - res.change.approvals.length} more.`);
  });

  withConnection(
    changes
      .command('reject')
      .description('Reject a pending change: it ends (any admin, its proposer too)')
      .argument('<id>', 'change id')
      .option('--reason <text>', 'why (recorded in the audit trail)')
      .option('--json', 'print the change as JSON'),
  ).action(async (id: string, _o: unknown, cmd: Command) => {
    const o = cmd.optsWithGlobals<ClientOptions & { reason?: string; json?: boolean }>();
    output.json = !!o.json;
    const api = new ApiClient(connection(o));
    const c = await api.post<Change>(`/v1/changes/${enc(id)}/reject`, o.reason ? { reason: o.reason } : {});
    if (o.json) return printJson(c);
    console.log(line(c));
  });
}
