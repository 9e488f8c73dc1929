import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ApprovalRequest } from '../../application/ports/approval-callback.port';

export interface SlackMessageRef {
  channelId: string;
  ts: string;
  conversation: ApprovalRequest['conversation'] | null;
  outcome: string | null;
}

/** Which Slack message asked about which call: the outcome updates it, and a redelivered request is not posted twice. */
@Injectable()
export class SlackMessageStore {
  constructor(private readonly dataSource: DataSource) {}

  async find(tenantId: string, toolCallId: string): Promise<SlackMessageRef | null> {
    const rows: Array<{
      channel_id: string;
      ts: string;
      conversation: SlackMessageRef['conversation'];
      outcome: string | null;
    }> = await this.dataSource.query(
      `SELECT channel_id, ts, conversation, outcome FROM slack_messages WHERE tenant_id = $1 AND tool_call_id = $2`,
      [tenantId, toolCallId],
    );
    return rows.length
      ? { channelId: rows[0].channel_id, ts: rows[0].ts, conversation: rows[0].conversation, outcome: rows[0].outcome }
      : null;
  }

  async save(
    tenantId: string,
    toolCallId: string,
    ref: { channelId: string; ts: string; conversation: ApprovalRequest['conversation'] | null },
  ): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO slack_messages (tenant_id, tool_call_id, channel_id, ts, conversation) VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT (tenant_id, tool_call_id) DO NOTHING`,
      [tenantId, toolCallId, ref.channelId, ref.ts, JSON.stringify(ref.conversation)],
    );
  }

  async markOutcome(tenantId: string, toolCallId: string, outcome: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE slack_messages SET outcome = $3, updated_at = now() WHERE tenant_id = $1 AND tool_call_id = $2`,
      [tenantId, toolCallId, outcome],
    );
  }
}
