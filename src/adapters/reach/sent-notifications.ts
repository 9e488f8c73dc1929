import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** What a person was sent about a call: the request itself (or its escalation to them), or the reminder. */
export type SentKind = 'ask' | 'escalated' | 'reminder';

/**
 * `notifications_sent`: which person was told of which call on which channel (push, email, Slack direct messages). A row is claimed before sending, so an
 * outbox redelivery (after a crash between sending and the cursor's move) never sends twice: at most once, by design,
 * since a duplicate buzz on someone's phone is worse than one lost to a crash (the inbox still lists the call).
 */
@Injectable()
export class SentNotifications {
  constructor(private readonly dataSource: DataSource) {}

  /** The persons of `personIds` not yet sent `kind` about the call, now marked as sent. */
  async claim(
    tenantId: string,
    toolCallId: string,
    channel: string,
    personIds: readonly string[],
    kind: SentKind,
  ): Promise<Set<string>> {
    if (personIds.length === 0) return new Set();
    const rows: Array<{ person_id: string }> = await this.dataSource.query(
      `INSERT INTO notifications_sent (tenant_id, tool_call_id, channel, person_id, kind, sent_at)
       SELECT $1, $2, $3, p, $5, now() FROM unnest($4::text[]) AS p
       ON CONFLICT DO NOTHING RETURNING person_id`,
      [tenantId, toolCallId, channel, [...new Set(personIds)], kind],
    );
    return new Set(rows.map((r) => r.person_id));
  }

  /** Gives back a claim whose message could not be sent now, so the retry sends it. */
  async release(
    tenantId: string,
    toolCallId: string,
    channel: string,
    personId: string,
    kind: SentKind,
  ): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM notifications_sent
       WHERE tenant_id = $1 AND tool_call_id = $2 AND channel = $3 AND person_id = $4 AND kind = $5`,
      [tenantId, toolCallId, channel, personId, kind],
    );
  }

  /** Everyone sent anything about the call on the channel: those whose notification its outcome replaces. */
  async told(tenantId: string, toolCallId: string, channel: string): Promise<string[]> {
    const rows: Array<{ person_id: string }> = await this.dataSource.query(
      `SELECT DISTINCT person_id FROM notifications_sent WHERE tenant_id = $1 AND tool_call_id = $2 AND channel = $3
       ORDER BY person_id`,
      [tenantId, toolCallId, channel],
    );
    return rows.map((r) => r.person_id);
  }
}
