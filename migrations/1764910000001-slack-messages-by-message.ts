import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One Slack app for several tenants (docs/CHANNELS.md): a click names the Slack message it was made on (channel and
 * ts), and the tenant is the one that message was posted for. This index finds it.
 */
export class SlackMessagesByMessage1764910000001 implements MigrationInterface {
  name = 'SlackMessagesByMessage1764910000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX slack_messages_by_message ON slack_messages (channel_id, ts)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX slack_messages_by_message`);
  }
}
