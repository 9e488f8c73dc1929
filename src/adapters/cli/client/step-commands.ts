import { Command, InvalidArgumentError } from 'commander';
import { ApiClient, ClientOptions, connection, EXIT } from './api-client';
import { output } from './client-commands';
import { printJson } from './format';
import { passkeyCardUrl } from './passkey-link';
import { oneLineText as clean } from '../safe-text';

function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'Tollgate base URL (default: TOLLGATE_URL or http://127.0.0.1:8080)')
    .option('--token <jwt>', 'bearer token (default: TOLLGATE_TOKEN)');
}

/** `--by`: seconds, or a number and a unit (90s, 30m, 8h); at most a day, as the server bounds it. */
function extension(v: string): number {
  const m = /^(\d+)\s*(s|m|h)?$/.exec(v.trim());
  const seconds = m ? Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h'] : NaN;
  if (!(seconds >= 1 && seconds <= 86_400))
    throw new InvalidArgumentError('use seconds or a number and a unit (90s, 30m, 8h), at most a day');
  return seconds;
}

/**
 * `tollgate step approve|reject <conversation>` decides every pending call of a conversation's step at once (each
 * still its own decision and event); `tollgate extend <id> --by 1h` (admins) gives a held call more time.
 * Both say `X-Tollgate-Channel: cli`. A step with refused calls exits 1 after printing what was decided.
 */
export function addStepCommands(program: Command): void {
  const step = program.command('step').description("Decide every pending call of a conversation's step at once");
  for (const decision of ['approve', 'reject'] as const) {
    withConnection(
      step
        .command(decision)
        .description(
          `${decision === 'approve' ? 'Approve' : 'Reject'} every pending call of the conversation (each recorded on its own); calls you may not decide are listed and left`,
        )
        .argument('<conversation>', 'conversation id')
        .option(
          '--reason <text>',
          decision === 'reject' ? 'why (shown to the agent and recorded)' : 'why (recorded in the audit trail)',
        )
        .option('--only <ids...>', 'only these pending calls')
        .option('--json', 'print the answer as JSON'),
    ).action(async (conversation: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<ClientOptions & { reason?: string; only?: string[]; json?: boolean }>();
      output.json = !!o.json;
      const api = new ApiClient(connection(o));
      const r = await api.call((t) =>
        t.inbox().decideStep(conversation, { decision, reason: o.reason, ...(o.only ? { toolCallIds: o.only } : {}) }),
      );
      if (o.json) printJson(r);
      else {
        for (const c of r.toolCalls) {
          const q = c.approval?.quorum;
          console.log(
            clean(
              `${c.id} ${c.toolName}: ${c.status}${c.status === 'pending' && q ? `, ${q.approvedBy.length} of ${q.needed} approvals` : ''}`,
            ),
          );
        }
        for (const x of r.refused)
          console.error(
            clean(
              // A call that needs a passkey is approved in the web inbox: the line says where.
              `${x.id}: ${x.code}: ${x.detail}${x.code === 'step_up_required' ? ` — its card: ${passkeyCardUrl(api.conn.url, x.id)}` : ''}`,
            ),
          );
        if (!r.toolCalls.length && !r.refused.length) console.log('No pending calls.');
      }
      if (r.refused.length) process.exitCode = EXIT.refused;
    });
  }

  withConnection(
    program
      .command('extend')
      .description('Give a pending tool call more time (admins); its reminders start over')
      .argument('<id>', 'tool call id')
      .requiredOption('--by <duration>', 'time added to its deadline: 90s, 30m, 8h (at most a day from now)', extension)
      .option('--reason <text>', 'why (recorded in the audit trail)')
      .option('--json', 'print the tool call as JSON'),
  ).action(async (id: string, o: ClientOptions & { by: number; reason?: string; json?: boolean }) => {
    output.json = !!o.json;
    const api = new ApiClient(connection(o));
    const call = await api.call((t) => t.inbox().extendDeadline(id, { extendBy: o.by, reason: o.reason }));
    if (o.json) printJson(call);
    else console.log(clean(`${call.id} ${call.toolName}: ${call.status}, now expires ${call.approval?.expiresAt}`));
  });
}
