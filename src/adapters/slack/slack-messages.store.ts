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

  /**
   * Whose request (or question) a Slack message is: the tenant it was posted for and the call's (or question's) id.
   * A click acts in that tenant, so one Slack app serves several without a click crossing between them.
   */
  async findByMessage(channelId: string, ts: string): Promise<{ tenantId: string; id: string } | null> {
    const rows: Array<{ tenant_id: string; tool_call_id: string }> = await this.dataSource.query(
      `SELECT tenant_id, tool_call_id FROM slack_messages WHERE channel_id = $1 AND ts = $2 LIMIT 2`,
      [channelId, ts],
    );
    // Slack's (channel, ts) names one message; two rows would be a copy made by hand: trust neither.
    return rows.length === 1 ? { tenantId: rows[0].tenant_id, id: rows[0].tool_call_id } : null;
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
