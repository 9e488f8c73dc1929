import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiParam, ApiQuery } from '@nestjs/swagger';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../request-params';
import { ID_PATTERN } from './conversation.dto';

/*
 * Parameters as the OpenAPI document shows them. A parameter Nest also reflects from the handler's signature
 * (`@Param('id')`, `@Headers('x-tollgate-channel')`) is declared here under the very same name, so the two merge
 * into one instead of appearing twice (once as required).
 */

/** `cursor` and `limit` of every list. */
export const ApiListQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'cursor',
      required: false,
      type: 'string',
      description: 'The `nextCursor` of the previous page; opaque',
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      description: 'Items per page',
    }),
  );

/** `?wait=N` of a read that may long-poll while `what` is pending. */
export const ApiWaitQuery = (what: string) =>
  ApiQuery({
    name: 'wait',
    required: false,
    schema: { type: 'integer', minimum: 0, maximum: 60, default: 0 },
    description: `Seconds to wait while ${what} is pending`,
  });

/** A path parameter holding an id or tool name of `[A-Za-z0-9_.:-]{1,128}`. */
export const ApiIdParam = (name: string, description: string, example: string) =>
  ApiParam({ name, description, schema: { type: 'string', pattern: ID_PATTERN.source }, example });

/** Where the person decided, recorded as `decision.by.via` (and on halt and resume events). */
export const ApiChannelHeader = () =>
  ApiHeader({
    name: 'x-tollgate-channel',
    required: false,
    description: 'X-Tollgate-Channel: where the person acts from, recorded as `via` (default api); Slack sets its own',
    schema: { type: 'string', enum: ['web', 'cli', 'api', 'mcp'], default: 'api' },
  });

/** `from` and `to`: the window on events' `at`. */
export const ApiWindowQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'from',
      required: false,
      type: 'string',
      description: 'ISO 8601 date or date-time; inclusive',
      example: '2026-01-01',
    }),
    ApiQuery({
      name: 'to',
      required: false,
      type: 'string',
      description: 'ISO 8601 date or date-time; exclusive',
      example: '2026-02-01T00:00:00Z',
    }),
  );

/** The filters of the audit trail's list and export; all must hold. */
export const ApiAuditFilters = (eventTypes: readonly string[]) =>
  applyDecorators(
    ApiQuery({
      name: 'conversationId',
      required: false,
      type: 'string',
      description: "Only this conversation's events",
    }),
    ApiQuery({ name: 'toolCallId', required: false, type: 'string', description: "Only this tool call's events" }),
    ApiQuery({
      name: 'toolName',
      required: false,
      type: 'string',
      description: "Only the events of this tool's calls",
    }),
    ApiQuery({
      name: 'actor',
      required: false,
      type: 'string',
      description: "The actor's id: a `sub`, `policy` or `system`",
    }),
    ApiQuery({
      name: 'type',
      required: false,
      description: 'Event types, comma-separated or repeated',
      schema: { type: 'array', items: { type: 'string', enum: [...eventTypes] } },
      style: 'form',
      explode: true,
    }),
    ApiWindowQuery(),
    ApiQuery({
      name: 'cursor',
      required: false,
      type: 'string',
      description: 'The `nextCursor` of the previous page; opaque',
    }),
  );
