import { Inject } from '@nestjs/common';
import { EventBus, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ApprovalPolicy } from '../../../domain/policy/approval-policy';
import { needsPerson } from '../../../domain/policy/supervision-level';
import { CLOCK, Clock, POLICIES, PolicyRepository, RECEIPTS, ReceiptSigner, TOOLS, ToolRepository } from '../../ports';
import { AUDIT_LOG, AuditEvent, AuditLog } from '../../ports/audit-log.port';
import { CHECKPOINT_SIGNATURES, CHECKPOINT_TYP, CheckpointSignatures } from '../../ports/checkpoint-signatures.port';
import { CHECKPOINT_SINK_READER, CheckpointSinkReader, LatestCheckpoint } from '../../ports/checkpoint-sink.port';
import { CALL_VIEWS, CallViews } from '../../ports/call-views.port';
import {
  QUICK_DECISION_MS,
  RUBBER_STAMPING,
  reviewerStats,
  rubberStamps,
} from '../../../domain/audit/reviewer-quality';
import { ValidationError } from '../../../domain/shared/domain-error';
import {
  AuditCheckpoint,
  AuditCheckpointQuery,
  AuditMetrics,
  AuditReviewers,
  AuditReviewersQuery,
  CheckpointClaims,
  GapFinding,
  VerifyAnswer,
  AuditGapsQuery,
  AuditMetricsQuery,
  ExportAuditEventsQuery,
  ListAuditEventsQuery,
  VerifyAuditTrailQuery,
} from './audit.queries';

export type { GapFinding, VerifyAnswer } from './audit.queries';

const EXPORT_BATCH = 1000;

@QueryHandler(ListAuditEventsQuery)
export class ListAuditEventsHandler implements IQueryHandler<ListAuditEventsQuery> {
  constructor(@Inject(AUDIT_LOG) private readonly audit: AuditLog) {}

  async execute({ filter, limit }: ListAuditEventsQuery): Promise<{ events: AuditEvent[]; nextCursor: string | null }> {
    const rows = await this.audit.list(filter, limit + 1);
    const events = rows.slice(0, limit);
    return { events, nextCursor: rows.length > limit ? encodeAuditCursor(events[events.length - 1].seq) : null };
  }
}

@QueryHandler(ExportAuditEventsQuery)
export class ExportAuditEventsHandler implements IQueryHandler<ExportAuditEventsQuery> {
  constructor(@Inject(AUDIT_LOG) private readonly audit: AuditLog) {}

  async execute({ filter }: ExportAuditEventsQuery): Promise<AsyncIterable<AuditEvent[]>> {
    return this.audit.scan(filter, EXPORT_BATCH);
  }
}

/**
 * Published in process (not an audit event) after every verification, whoever asked for it, so the service
 * can report the last result to its operators.
 */
export class AuditTrailVerified {
  constructor(
    readonly tenantId: string,
    readonly ok: boolean,
    readonly checked: number,
    readonly at: Date,
  ) {}
}

/**
 * Recomputes the chain (up to the head as verify began). Given a checkpoint kept outside the database, it also
 * checks what the database alone cannot: that the chain still reaches the checkpoint's seq with the same hash,
 * and that the head is at or beyond it — a tail cut off together with a rewritten head, or a chain re-hashed
 * from some event on, fails here while plain verify passes.
 */
@QueryHandler(VerifyAuditTrailQuery)
export class VerifyAuditTrailHandler implements IQueryHandler<VerifyAuditTrailQuery> {
  constructor(
    @Inject(AUDIT_LOG) private readonly audit: AuditLog,
    @Inject(CHECKPOINT_SIGNATURES) private readonly signatures: CheckpointSignatures,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly events: EventBus,
    @Inject(CHECKPOINT_SINK_READER) private readonly sink: CheckpointSinkReader,
  ) {}

  async execute({ tenantId, checkpoint }: VerifyAuditTrailQuery): Promise<VerifyAnswer> {
    const answer = await this.verify(tenantId, checkpoint);
    this.events.publish(new AuditTrailVerified(tenantId, answer.ok, answer.checked, this.clock.now()));
    return answer;
  }

  /** Without a checkpoint given, the latest one the scheduler wrote to a file sink, when there is one. */
  private async verify(tenantId: string, given: string | undefined): Promise<VerifyAnswer> {
    if (given !== undefined) return this.verifyAgainst(tenantId, given);
    const latest = await this.sink.latest(tenantId);
    if ('none' in latest) {
      const chain = await this.audit.verify(tenantId);
      return latest.none ? { ...chain, noCheckpoint: latest.none } : chain;
    }
    return this.verifyAgainst(tenantId, latest.found.jws, latest.found);
  }

  private async verifyAgainst(
    tenantId: string,
    checkpoint: string,
    fromSink?: LatestCheckpoint,
  ): Promise<VerifyAnswer> {
    const opened = await this.signatures.open(checkpoint);
    if (opened.status === 'malformed') {
      if (fromSink)
        return {
          ok: false,
          checked: 0,
          problem: `the latest checkpoint in the sink (${fromSink.name}) is not a checkpoint: ${opened.reason}; the sink was changed`,
        };
      throw new ValidationError([{ path: 'checkpoint', message: opened.reason }]);
    }
    if (opened.status === 'unverified') {
      return {
        ok: false,
        checked: 0,
        problem: `the checkpoint's signature does not verify with this service's keys (kid ${opened.kid ?? 'missing'}): it was not issued here, or the signing key was replaced`,
      };
    }
    const cp = checkpointClaims(opened.payload);
    if (cp.tenant !== tenantId) {
      if (fromSink)
        return {
          ok: false,
          checked: 0,
          problem: `the latest checkpoint in the sink (${fromSink.name}) is another tenant's: the sink was changed`,
        };
      throw new ValidationError([{ path: 'checkpoint', message: "is a checkpoint of another tenant's audit trail" }]);
    }
    const head = await this.audit.head(tenantId); // before verify: the chain verify checks reaches at least this far
    const chain = await this.audit.verify(tenantId);
    const against = {
      ...cp,
      kid: opened.kid,
      source: fromSink ? ('sink' as const) : ('request' as const),
      ...(fromSink ? { name: fromSink.name } : {}),
    };
    if (!chain.ok) return { ...chain, checkpoint: against };
    const found = await this.compare(tenantId, cp, head.seq);
    if (found === 'purged') return { ...chain, checkpoint: { ...against, purged: true } };
    return found
      ? { ok: false, checked: chain.checked, ...found, checkpoint: against }
      : { ...chain, checkpoint: against };
  }

  /** What is wrong between the checkpoint and the chain (null: nothing), or 'purged' when a retention purge removed its event. */
  private async compare(
    tenantId: string,
    cp: CheckpointClaims,
    headSeq: number,
  ): Promise<{ firstBadSeq: number; problem: string } | 'purged' | null> {
    if (headSeq < cp.seq) {
      return {
        firstBadSeq: headSeq + 1,
        problem: `the checkpoint of ${cp.at} vouches for events up to seq ${cp.seq}, but the chain now ends at seq ${headSeq}: events were removed from its end`,
      };
    }
    if (cp.seq === 0) return null;
    const differs = {
      firstBadSeq: cp.seq,
      problem: `event ${cp.seq} no longer has the hash the checkpoint of ${cp.at} recorded: the chain up to it was rewritten`,
    };
    const [event] = await this.audit.list({ tenantId, afterSeq: cp.seq - 1 }, 1);
    if (event?.seq === cp.seq) return event.hash === cp.hash ? null : differs;
    // Not in the table: a retention purge may have removed it. Its AuditPurged event recorded the last purged hash.
    const purges = await this.audit.list({ tenantId, types: ['AuditPurged'] }, 1000);
    const anchor = purges.find((p) => Number(p.data.lastPurgedSeq) === cp.seq);
    if (anchor) return anchor.data.lastPurgedHash === cp.hash ? 'purged' : differs;
    const [first] = await this.audit.list({ tenantId }, 1);
    if (first && first.seq > cp.seq && purges.length > 0) return 'purged'; // verify has checked that a purge accounts for the events before `first`
    return {
      firstBadSeq: cp.seq,
      problem: `event ${cp.seq}, which the checkpoint of ${cp.at} vouches for, is missing`,
    };
  }
}

function checkpointClaims(p: Record<string, unknown>): CheckpointClaims {
  const ok =
    typeof p.tenant === 'string' &&
    Number.isSafeInteger(p.seq) &&
    (p.seq as number) >= 0 &&
    typeof p.hash === 'string' &&
    /^[0-9a-f]{64}$/.test(p.hash) &&
    typeof p.at === 'string';
  if (!ok) throw new ValidationError([{ path: 'checkpoint', message: 'does not carry {tenant, seq, hash, at}' }]);
  return { tenant: p.tenant as string, seq: p.seq as number, hash: p.hash as string, at: p.at as string };
}

/** The chain's head, signed with the receipt keys: kept outside the database, it proves later that nothing before it changed. */
@QueryHandler(AuditCheckpointQuery)
export class AuditCheckpointHandler implements IQueryHandler<AuditCheckpointQuery> {
  constructor(
    @Inject(AUDIT_LOG) private readonly audit: AuditLog,
    @Inject(RECEIPTS) private readonly signer: ReceiptSigner,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ tenantId }: AuditCheckpointQuery): Promise<AuditCheckpoint> {
    const head = await this.audit.head(tenantId);
    const payload = { tenant: tenantId, seq: head.seq, hash: head.hash, at: this.clock.now().toISOString() };
    return { jws: await this.signer.signPayload(payload, CHECKPOINT_TYP), ...payload };
  }
}

@QueryHandler(AuditMetricsQuery)
export class AuditMetricsHandler implements IQueryHandler<AuditMetricsQuery> {
  constructor(
    @Inject(AUDIT_LOG) private readonly audit: AuditLog,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ tenantId, window }: AuditMetricsQuery): Promise<AuditMetrics> {
    const stats = await this.audit.decisionStats(tenantId, window.from, window.to);
    // The pending count is "now", whatever the window (CONTRACT §11).
    return { pendingApprovals: await this.audit.pendingApprovals(tenantId, this.clock.now()), ...stats };
  }
}

/** A claimed run with no outcome after this long is reported: the agent may have stopped before its report. */
export const RUN_WITHOUT_RESULT_AFTER_MS = 15 * 60_000;

/**
 * Where human oversight failed or could fail (CONTRACT §9): HITL-EXEC and HITL-02 from the events in the
 * window, HITL-01 from the current policy and registry; RUN-01, runs whose outcome never reached the trail.
 */
@QueryHandler(AuditGapsQuery)
export class AuditGapsHandler implements IQueryHandler<AuditGapsQuery> {
  constructor(
    @Inject(AUDIT_LOG) private readonly audit: AuditLog,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(TOOLS) private readonly tools: ToolRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(CALL_VIEWS) private readonly views: CallViews,
  ) {}

  async execute({ tenantId, window }: AuditGapsQuery): Promise<{ findings: GapFinding[] }> {
    const findings: GapFinding[] = [];
    for (const x of await this.audit.executionsWithoutApproval(tenantId, window.from, window.to)) {
      findings.push({
        code: 'HITL-EXEC',
        severity: 'critical',
        toolName: x.toolName,
        toolCallId: x.toolCallId,
        detail: `${x.toolName} (${x.destructive ? 'destructive' : `${x.level} level`}) ran without a person's approval (event ${x.seq})`,
      });
    }

    const policy = await this.policies.current(tenantId);
    const tools = await this.tools.findAll(tenantId);
    // Judge each tool as the policy would judge a call of it, by a user holding every role a rule may require.
    const roles = [...new Set(policy.document.rules.flatMap((r) => (r.requireRole ? [r.requireRole] : [])))];
    const levelOf = (
      toolName: string,
      flags: { isReadOnly: boolean; requiresApproval: boolean; destructive: boolean },
      registeredBy: 'admin' | 'agent',
    ) =>
      ApprovalPolicy.evaluate(
        { toolName, arguments: {} },
        {
          policy: policy.document,
          policyVersion: policy.policyVersion,
          tool: { flags, registeredBy },
          grants: [],
          conversation: { id: '', agentId: '', user: { id: '', roles } },
          now: new Date(), // no grant is weighed here: the instant changes nothing
        },
      );
    let asksPeople =
      policy.document.rules.some((r) => needsPerson(r.level)) || needsPerson(policy.document.defaults.unknownTools);
    for (const tool of tools) {
      const s = tool.snapshot();
      const verdict = levelOf(s.name, s, s.registeredBy.kind);
      asksPeople ||= needsPerson(verdict.level);
      if (s.destructive && (verdict.level === 'automatic' || verdict.level === 'notify')) {
        findings.push({
          code: 'HITL-01',
          severity: 'high',
          toolName: s.name,
          detail: `${s.name} is destructive but policy version ${policy.policyVersion} lets it run ${verdict.level === 'notify' ? 'with only a notification' : 'automatically'} (${verdict.reason})`,
        });
      }
    }

    if (asksPeople) {
      const counts = await this.audit.countByType(
        tenantId,
        ['ToolCallProposed', 'ApprovalRequested'],
        window.from,
        window.to,
      );
      if (counts.ToolCallProposed > 0 && counts.ApprovalRequested === 0) {
        findings.push({
          code: 'HITL-02',
          severity: 'high',
          detail: `The policy can ask people, and ${counts.ToolCallProposed} call(s) were proposed in the window, yet no approval was requested`,
        });
      }
    }
    // An agent reports the outcome after the run, in the background by default: one that stops first leaves it here.
    const settled = new Date(this.clock.now().getTime() - RUN_WITHOUT_RESULT_AFTER_MS);
    for (const r of await this.audit.runsWithoutResult(tenantId, settled, window.from, window.to)) {
      findings.push({
        code: 'RUN-01',
        severity: 'medium',
        toolName: r.toolName,
        toolCallId: r.toolCallId,
        detail: `${r.toolName} was claimed at ${r.claimedAt.toISOString()} and no outcome is on record (event ${r.seq}): still running, or the agent stopped before reporting it`,
      });
    }
    for (const p of (await reviewersIn(this.views, tenantId, window)).reviewers) {
      if (!p.rubberStamping) continue;
      findings.push({
        code: 'HITL-03',
        severity: 'high',
        personId: p.personId,
        detail: `${p.personId} approved ${p.approvals} call(s) in the window, ${p.quickApprovals} (${Math.round((100 * p.quickApprovals) / p.approvals)}%) within ${QUICK_DECISION_MS / 1000} s of being shown the card (median ${p.medianDecideMs} ms): approvals this quick may be rubber-stamped`,
      });
    }
    return { findings };
  }
}

/** Decisions one reviewers answer weighs at most; beyond, `truncated` says to narrow the window. */
export const REVIEWER_DECISIONS_LIMIT = 50_000;

async function reviewersIn(
  views: CallViews,
  tenantId: string,
  window: { from?: Date; to?: Date },
): Promise<AuditReviewers> {
  const decisions = await views.decisions(tenantId, window, REVIEWER_DECISIONS_LIMIT + 1);
  const truncated = decisions.length > REVIEWER_DECISIONS_LIMIT;
  const weighed = decisions.slice(0, REVIEWER_DECISIONS_LIMIT);
  // A view after the decision does not count (as in timeToDecide): the decision was made without one.
  const unviewed = new Map<string, number>();
  for (const d of weighed)
    if (!d.firstSeenAt || d.firstSeenAt.getTime() > d.decidedAt.getTime())
      unviewed.set(d.personId, (unviewed.get(d.personId) ?? 0) + 1);
  return {
    reviewers: reviewerStats(weighed).map((s) => ({
      ...s,
      rubberStamping: rubberStamps(s),
      unviewedDecisions: unviewed.get(s.personId) ?? 0,
      unviewedShare: (unviewed.get(s.personId) ?? 0) / s.decisions,
    })),
    truncated,
    thresholds: { quickMs: QUICK_DECISION_MS, ...RUBBER_STAMPING },
  };
}

/**
 * How each person decides (issue 28, part 9). Time to decide runs from when the card was shown to that person
 * (the later of the request and their first view the server recorded, call_views) to the decision.
 */
@QueryHandler(AuditReviewersQuery)
export class AuditReviewersHandler implements IQueryHandler<AuditReviewersQuery> {
  constructor(@Inject(CALL_VIEWS) private readonly views: CallViews) {}

  execute({ tenantId, window }: AuditReviewersQuery): Promise<AuditReviewers> {
    return reviewersIn(this.views, tenantId, window);
  }
}

export function encodeAuditCursor(seq: number): string {
  return Buffer.from(`seq:${seq}`).toString('base64url');
}

/** The last seq a cursor names; null when it is not one this server issued. */
export function decodeAuditCursor(cursor: string): number | null {
  const m = /^seq:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}
