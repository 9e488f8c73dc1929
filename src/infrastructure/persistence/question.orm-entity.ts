import { Column, Entity, PrimaryColumn } from 'typeorm';

const tz = { type: 'timestamptz' as const };

@Entity('questions')
export class QuestionRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('text') id: string;
  @Column('text', { name: 'conversation_id' }) conversationId: string;
  @Column('text', { name: 'agent_id' }) agentId: string;
  @Column('text', { name: 'user_id', nullable: true }) userId: string | null;
  @Column('text', { name: 'external_id', nullable: true }) externalId: string | null;
  @Column('text') text: string;
  @Column('jsonb', { nullable: true }) choices: string[] | null;
  @Column('boolean', { name: 'allow_free_text' }) allowFreeText: boolean;
  @Column('text', { name: 'ask_to', array: true }) askTo: string[];
  @Column('integer', { name: 'timeout_seconds' }) timeoutSeconds: number;
  @Column('jsonb', { name: 'asked_by' }) askedBy: { id: string; via: string };
  @Column('text') status: string;
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
  @Column({ ...tz, name: 'expires_at' }) expiresAt: Date;
  @Column('text', { nullable: true }) answer: string | null;
  @Column('jsonb', { name: 'answered_by', nullable: true }) answeredBy: {
    id: string;
    name?: string;
    via: string;
  } | null;
  @Column({ ...tz, name: 'answered_at', nullable: true }) answeredAt: Date | null;
  @Column({ ...tz, name: 'ended_at', nullable: true }) endedAt: Date | null;
  @Column('text', { name: 'end_reason', nullable: true }) endReason: string | null;
  @Column('integer') version: number;
}
