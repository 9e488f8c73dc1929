import type { QuestionView } from '../../application/views/question.view';
import type { ProposedToolCallDto } from '../api/dto/tool-call.dto';
import type { ActorRefView } from '../api/dto/views.dto';
import type { StatusView } from '../../application/queries/get-status/get-status.query';
import type {
  ApprovalView,
  ConversationView,
  MeView,
  Page,
  ToolCallView,
  toolView,
} from '../../application/views/views';
import { fromStruct, fromValue, PbStruct, PbTimestamp, PbValue, toStruct, toTimestamp, toValue } from './protobuf-json';

/**
 * The REST views (src/application/views) as the messages of proto/tollgate/v1/tollgate.proto, and the messages
 * of requests as the JSON bodies REST takes, so that both transports validate them with the same DTOs.
 * Objects are @grpc/proto-loader's: lowerCamelCase names, enums as their names, absent members left out.
 */

/** `approved` ⇄ `TOOL_CALL_STATUS_APPROVED`: the REST string, upper-cased behind the enum's prefix. */
export function enumName(prefix: string, value: string): string {
  return `${prefix}_${value.toUpperCase()}`;
}

/** The REST string of an enum name; undefined for the _UNSPECIFIED value (not given) and for no value at all. */
export function enumValue(prefix: string, name: string | number | undefined): string | undefined {
  if (name === undefined || name === `${prefix}_UNSPECIFIED` || name === 0) return undefined;
  // A number is a value this server's proto does not know: passed on as it is, for validation to refuse.
  if (typeof name !== 'string' || !name.startsWith(`${prefix}_`)) return String(name);
  return name.slice(prefix.length + 1).toLowerCase();
}

type Json = Record<string, unknown>;
type Msg = Record<string, unknown>;

/** The members of `o` that are set (not undefined, not null): proto3 leaves the others out, and so do REST bodies. */
export function present<T extends Msg>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

function ts(iso: unknown): PbTimestamp | undefined {
  return typeof iso === 'string' ? toTimestamp(iso) : undefined;
}

function actorRef(a: unknown): Msg | undefined {
  if (!a) return undefined;
  const r = a as ActorRefView;
  const message: EveryMember<ActorRefView> = {
    id: r.id,
    name: r.name,
    via: enumName('CHANNEL', r.via),
    channelUser: r.channelUser,
    assurance: r.assurance,
    onBehalfOf: r.onBehalfOf && present({ id: r.onBehalfOf.id, name: r.onBehalfOf.name }),
  };
  return present(message);
}

/** Every member of a view, mapped: a member added to the view but not to its message fails the typecheck. */
type EveryMember<V> = { [K in keyof Required<V>]: unknown };

export function toolCallMessage(v: ToolCallView): Msg {
  const d = v.decision;
  const r = v.result;
  const message: EveryMember<ToolCallView> = {
    id: v.id,
    externalId: v.externalId,
    conversationId: v.conversationId,
    toolName: v.toolName,
    arguments: toStruct(v.arguments),
    reason: v.reason,
    confidence: v.confidence,
    estimatedCost: v.estimatedCost,
    // A held tenant-wide grant's pending change, as JSON (REST's PendingChange).
    pendingChange: v.pendingChange && toStruct({ ...v.pendingChange }),
    display: v.display,
    preview: v.preview,
    status: enumName('TOOL_CALL_STATUS', v.status),
    policy: present({
      level: enumName('SUPERVISION_LEVEL', v.policy.level),
      rule: v.policy.rule,
      policyVersion: v.policy.policyVersion,
      reason: v.policy.reason,
      toolFlags: v.policy.toolFlags,
      ...(v.policy.shadow
        ? {
            shadow: {
              rule: v.policy.shadow.rule,
              level: enumName('SUPERVISION_LEVEL', v.policy.shadow.level),
              reason: v.policy.shadow.reason,
            },
          }
        : {}),
    }),
    approval: v.approval && {
      approvers: v.approval.approvers,
      expiresAt: ts(v.approval.expiresAt),
      ...(v.approval.selfApproval === false ? { selfApproval: false } : {}),
      ...(v.approval.chatApproval === false ? { chatApproval: false } : {}),
      ...(v.approval.stepUp ? { stepUp: v.approval.stepUp } : {}),
      ...(v.approval.notify ? { notify: v.approval.notify } : {}),
      ...(v.approval.allowedDecisions ? { allowedDecisions: v.approval.allowedDecisions } : {}),
      ...(v.approval.rejectReasons ? { rejectReasons: v.approval.rejectReasons } : {}),
      ...(v.approval.rejectFreeText ? { rejectFreeText: true } : {}),
      ...(v.approval.quorum
        ? {
            quorum: {
              needed: v.approval.quorum.needed,
              of: v.approval.quorum.of ?? [],
              approvedBy: v.approval.quorum.approvedBy.map((a) => ({ ...actorRef(a), at: ts(a.at) })),
            },
          }
        : {}),
    },
    decision:
      d &&
      present<EveryMember<typeof d>>({
        outcome: enumName('DECISION_OUTCOME', d.outcome),
        by: actorRef(d.by),
        at: ts(d.at),
        reason: d.reason,
        editedArguments: d.editedArguments && toStruct(d.editedArguments),
        stepUp: d.stepUp && {
          method: d.stepUp.method,
          credentialId: d.stepUp.credentialId,
          aaguid: d.stepUp.aaguid,
          userVerified: d.stepUp.userVerified,
        },
        response: d.response,
      }),
    execution: v.execution && { at: ts(v.execution.at), by: actorRef(v.execution.by) },
    result:
      r &&
      present({
        outcome: enumName('RESULT_OUTCOME', r.outcome),
        output: r.output === undefined ? undefined : toValue(r.output),
        error: r.error,
        at: ts(r.at),
      }),
    cancellation: v.cancellation && {
      by: actorRef(v.cancellation.by),
      at: ts(v.cancellation.at),
      reason: v.cancellation.reason,
    },
    createdAt: ts(v.createdAt),
    updatedAt: ts(v.updatedAt),
  };
  return present(message);
}

export function conversationMessage(c: ConversationView): Msg {
  return present<EveryMember<ConversationView>>({
    id: c.id,
    agentId: c.agentId,
    user: c.user,
    title: c.title,
    metadata: toStruct(c.metadata),
    status: enumName('CONVERSATION_STATUS', c.status),
    pendingCount: c.pendingCount,
    toolCalls: c.toolCalls?.map(toolCallMessage),
    createdAt: ts(c.createdAt),
    updatedAt: ts(c.updatedAt),
  });
}

export function approvalPageMessage(page: Page<ApprovalView>): Msg {
  return present({
    items: page.items.map(({ conversation, ...call }) => ({
      toolCall: toolCallMessage(call),
      conversation: present({ ...conversation }),
    })),
    nextCursor: page.nextCursor,
  });
}

export function toolMessage(t: ReturnType<typeof toolView>): Msg {
  return present({
    ...t,
    inputSchema: t.inputSchema && toStruct(t.inputSchema),
    registeredBy: { id: t.registeredBy.id, kind: enumName('REGISTRANT_KIND', t.registeredBy.kind) },
    createdAt: ts(t.createdAt),
    updatedAt: ts(t.updatedAt),
  });
}

export function tenantStatusMessage(s: StatusView): Msg {
  const message: EveryMember<StatusView> = {
    tenant: s.tenant,
    halted: s.halted,
    halts: s.halts.map((h) =>
      present({ scope: enumName('HALT_SCOPE', h.scope), id: h.id, reason: h.reason, by: actorRef(h.by), at: ts(h.at) }),
    ),
  };
  return message;
}

export function meMessage(m: MeView): Msg {
  return present<EveryMember<MeView>>({
    id: m.id,
    tenant: m.tenant,
    kind: enumName('PRINCIPAL_KIND', m.kind),
    name: m.name,
    email: m.email,
    roles: m.roles,
    owner: m.owner,
  });
}

// ---- Requests, as the JSON bodies of the matching REST routes ----

/** A Struct member of a request, as JSON; absent stays absent (and the DTO says whether it may be). */
export function structField(s: PbStruct | undefined | null, path: string): Json | undefined {
  return s ? fromStruct(s, path) : undefined;
}

export function valueField(v: PbValue | undefined | null, path: string): unknown {
  return v ? fromValue(v, path) : undefined;
}

export interface ProposedToolCallMsg {
  id?: string;
  toolName?: string;
  arguments?: PbStruct | null;
  annotations?: Msg | null;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: { title?: string; summary?: string; fields?: Array<{ label?: string; value?: string }> } | null;
  preview?: {
    kind?: string;
    content?: string;
    title?: string;
    estimatedRows?: number | string | { toString(): string };
    email?: { from?: string; to?: string; cc?: string; subject?: string } | null;
  } | null;
}

/** A proposal's preview as REST takes it (int64 rows arrive as a string or Long: kept exact, checked there). */
function previewBody(p: NonNullable<ProposedToolCallMsg['preview']>): Json {
  const rows = p.estimatedRows === undefined || p.estimatedRows === null ? undefined : Number(String(p.estimatedRows));
  return present({
    kind: p.kind ?? '',
    content: p.content ?? '',
    title: p.title,
    estimatedRows: rows,
    email: p.email && present({ from: p.email.from, to: p.email.to, cc: p.email.cc, subject: p.email.subject }),
  }) as Json;
}

/** The members of ToolAnnotations by name (the loader adds a virtual `_name` member per optional field). */
const ANNOTATION_NAMES = [
  'isReadOnly',
  'requiresApproval',
  'destructive',
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
  'title',
] as const;

function annotationsBody(a: Msg): Json {
  return present(Object.fromEntries(ANNOTATION_NAMES.map((k) => [k, a[k]]))) as Json;
}

/** A result sent with a proposal (CarriedResult). */
export interface CarriedResultMsg {
  toolCallId?: string;
  outcome?: string;
  output?: PbValue | null;
  error?: string;
}

/** The body of POST /v1/conversations/{id}/tool-calls. */
export function proposalBody(
  calls: ProposedToolCallMsg[] | undefined,
  claim?: boolean,
  claimKey?: string,
  results?: CarriedResultMsg[],
): Json {
  return {
    ...(claim ? { claim: true } : {}),
    ...(claimKey !== undefined ? { claimKey } : {}),
    // Left out when empty: proto3 cannot tell an empty list from none.
    ...(results?.length
      ? {
          results: results.map(
            (r, i) =>
              present({
                toolCallId: r.toolCallId ?? '',
                outcome: enumValue('RESULT_OUTCOME', r.outcome),
                output: valueField(r.output, `results[${i}].output`),
                error: r.error,
              }) as Json,
          ),
        }
      : {}),
    toolCalls: (calls ?? []).map((c, i) =>
      present<EveryMember<ProposedToolCallDto>>({
        id: c.id,
        toolName: c.toolName ?? '',
        arguments: structField(c.arguments, `toolCalls[${i}].arguments`),
        annotations: c.annotations && annotationsBody(c.annotations),
        reason: c.reason,
        confidence: c.confidence,
        estimatedCost: c.estimatedCost,
        display:
          c.display &&
          present({
            title: c.display.title,
            summary: c.display.summary,
            fields: c.display.fields?.map((f) => ({ label: f.label ?? '', value: f.value ?? '' })),
          }),
        preview: c.preview && previewBody(c.preview),
      }),
    ),
  };
}

export function questionMessage(q: QuestionView): Msg {
  return present<EveryMember<QuestionView>>({
    id: q.id,
    conversationId: q.conversationId,
    externalId: q.externalId,
    text: q.text,
    choices: q.choices ?? [],
    allowFreeText: q.allowFreeText,
    askTo: q.askTo,
    status: enumName('QUESTION_STATUS', q.status),
    timeoutSeconds: q.timeoutSeconds,
    createdAt: ts(q.createdAt),
    expiresAt: ts(q.expiresAt),
    answer: q.answer && { text: q.answer.text, by: actorRef(q.answer.by), at: ts(q.answer.at) },
    endedAt: ts(q.endedAt),
    reason: q.reason,
  });
}
