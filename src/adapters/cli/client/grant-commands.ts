import { Command, Option } from 'commander';
import { type Grant, type GrantScope, type GrantStatus } from '@tollgate/sdk';
import { ApiClient, ClientOptions, connection } from './api-client';
import { output } from './client-commands';
import { printJson, table } from './format';
import { oneLineText as clean } from '../safe-text';

function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'Tollgate base URL (default: TOLLGATE_URL or http://127.0.0.1:8080)')
    .option('--token <jwt>', 'bearer token (default: TOLLGATE_TOKEN)');
}

function where(g: Grant): string {
  return g.scope === 'conversation'
    ? `conversation ${g.conversationId}`
    : g.scope === 'agent'
      ? `agent ${g.agentId}`
      : 'tenant';
}

function revokedLine(g: Grant): string {
  const by = g.revokedBy ? ` by ${g.revokedBy.name ?? g.revokedBy.id} via ${g.revokedBy.via}` : '';
  return clean(`${g.id} ${g.pattern} (${where(g)}): ${g.status}${by}${g.revokeReason ? ` (${g.revokeReason})` : ''}`);
}

/**
 * `tollgate grants` lists the tenant's standing grants (active ones; `--all` for revoked and expired too) and
 * `tollgate grants revoke <id>` revokes one. Revocations say `X-Tollgate-Channel: cli`.
 */
export function addGrantCommands(program: Command): void {
  const grants = withConnection(
    program
      .command('grants')
      .description(
        "List the tenant's standing grants, newest first (approver, admin, auditor); `grants revoke <id>` revokes one",
      )
      .option('--all', 'revoked and expired grants too')
      .addOption(
        new Option('--status <status>', 'only grants in this status')
          .choices(['active', 'revoked', 'expired', 'all'])
          .conflicts('all'),
      )
      .option('--tool <name>', "only this tool's grants")
      .addOption(
        new Option('--scope <scope>', 'only grants of this scope').choices(['conversation', 'agent', 'tenant']),
      )
      .option('--json', 'print them as JSON'),
  ).action(
    async (
      o: ClientOptions & {
        all?: boolean;
        status?: GrantStatus | 'all';
        tool?: string;
        scope?: GrantScope;
        json?: boolean;
      },
    ) => {
      output.json = !!o.json;
      const api = new ApiClient(connection(o));
      const status = o.all ? 'all' : (o.status ?? 'active');
      const items = await api.call((t) =>
        t.grants.all({ status, ...(o.tool ? { tool: o.tool } : {}), ...(o.scope ? { scope: o.scope } : {}) }),
      );
      if (o.json) return printJson({ items });
      if (!items.length) return console.log(status === 'active' ? 'No active grants.' : 'No grants.');
      console.log(
        table(
          ['ID', 'COVERS', 'SCOPE', 'STATUS', 'BY', 'CREATED', 'EXPIRES'],
          items.map((g) => [
            g.id,
            g.pattern,
            where(g),
            g.status,
            g.createdBy.name ?? g.createdBy.id,
            g.createdAt,
            g.expiresAt ?? 'never',
          ]),
          [0, 48, 40],
        ),
      );
    },
  );

  withConnection(
    grants
      .command('revoke')
      .description(
        'Revoke a standing grant: it stops applying at once (admins any grant; approvers a conversation grant)',
      )
      .argument('<id>', 'grant id')
      .option('--reason <text>', 'why (recorded in the audit trail)')
      .option('--json', 'print the grant as JSON'),
  ).action(async (id: string, _o: unknown, cmd: Command) => {
    // The parent `grants` has --url, --token and --json too: commander gives them to it when they follow `revoke`.
    const o = cmd.optsWithGlobals<ClientOptions & { reason?: string; json?: boolean }>();
    output.json = !!o.json;
    const api = new ApiClient(connection(o));
    const g = await api.call((t) => t.grants.revoke(id, o.reason));
    if (o.json) printJson(g);
    else console.log(revokedLine(g));
  });
}
