import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsInt, IsOptional, IsString, Matches } from 'class-validator';
import type { QuestionView as AppQuestionView } from '../../../application/views/question.view';
import type { Page } from '../../../application/views/views';
import {
  MAX_ANSWER_TEXT,
  MAX_CHOICE_LENGTH,
  MAX_CHOICES,
  MAX_QUESTION_SECONDS,
  MAX_QUESTION_TEXT,
  MIN_CHOICES,
  QUESTION_AUDIENCES,
  QUESTION_STATUSES,
  type QuestionAudience,
  type QuestionStatus,
} from '../../../domain/question/question.aggregate';
import { ID_PATTERN } from './conversation.dto';
import { ActorRefView } from './views.dto';
import type { Holds, SameMembers } from '../../../application/views/view-guard';

/*
 * Shapes only here: the rules (lengths, distinct choices, ranges) are the domain's `questionFaults`, so REST and
 * any other way in refuse the same questions with the same field paths.
 */

export class AskQuestionRequest {
  @ApiProperty({ minLength: 1, maxLength: MAX_QUESTION_TEXT, example: 'Proceed with the EU or the US region?' })
  @IsString()
  text: string;
  @ApiPropertyOptional({
    type: [String],
    minItems: MIN_CHOICES,
    maxItems: MAX_CHOICES,
    uniqueItems: true,
    items: { type: 'string', minLength: 1, maxLength: MAX_CHOICE_LENGTH },
    description: 'The answers to pick from; without them the answer is free text',
    example: ['EU', 'US'],
  })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  choices?: string[];
  @ApiPropertyOptional({
    default: false,
    description:
      'With choices: take an answer outside them too. Without choices every answer is free text (false is refused)',
  })
  @IsOptional()
  @IsBoolean()
  allowFreeText?: boolean;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_QUESTION_SECONDS,
    default: 300,
    description: 'Seconds before the question expires unanswered',
  })
  @IsOptional()
  @IsInt({ message: 'must be a whole number of seconds' })
  timeoutSeconds?: number;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...QUESTION_AUDIENCES] },
    minItems: 1,
    default: [...QUESTION_AUDIENCES],
    description: "Who may answer: the conversation's user (`requester`), approvers, admins. Never agents or auditors.",
  })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  askTo?: string[];
  @ApiPropertyOptional({
    pattern: ID_PATTERN.source,
    description:
      "The agent's own id for the question, its idempotency key: the same id and content again answers the same question",
    example: 'ask_1',
  })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  id?: string;
}

export class AnswerQuestionRequest {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_ANSWER_TEXT,
    description: 'One of the choices, or free text where the question takes it',
    example: 'EU',
  })
  @IsString()
  answer: string;
}

@ApiSchema({ name: 'QuestionAnswer', description: 'The answer that won, who gave it, where and when' })
export class QuestionAnswerView implements NonNullable<AppQuestionView['answer']> {
  @ApiProperty({ example: 'EU' }) text: string;
  @ApiProperty({ type: () => ActorRefView }) by: ActorRefView;
  @ApiProperty({ type: 'string', format: 'date-time' }) at: string;
}

@ApiSchema({ name: 'Question', description: 'A question an agent asked a person in a conversation' })
export class QuestionView implements AppQuestionView {
  @ApiProperty({ example: 'q_3f9a0c' }) id: string;
  @ApiProperty({ example: 'conv-1' }) conversationId: string;
  @ApiPropertyOptional({ description: "The agent's own id for it, as asked", example: 'ask_1' }) externalId?: string;
  @ApiProperty() text: string;
  @ApiPropertyOptional({ type: [String] }) choices?: string[];
  @ApiProperty({ description: 'True for a free-text question, or when an answer outside the choices is taken' })
  allowFreeText: boolean;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...QUESTION_AUDIENCES] } })
  askTo: QuestionAudience[];
  @ApiProperty({ enum: QUESTION_STATUSES, enumName: 'QuestionStatus' }) status: QuestionStatus;
  @ApiProperty({ type: 'integer' }) timeoutSeconds: number;
  @ApiProperty({ type: 'string', format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time' }) expiresAt: string;
  @ApiPropertyOptional({ type: () => QuestionAnswerView, description: 'answered: the first answer' })
  answer?: QuestionAnswerView;
  @ApiPropertyOptional({ type: 'string', format: 'date-time', description: 'expired or cancelled: when' })
  endedAt?: string;
  @ApiPropertyOptional({ description: "cancelled: the halt's reason" }) reason?: string;
}

@ApiSchema({ name: 'QuestionPage' })
export class QuestionPageView implements Page<AppQuestionView> {
  @ApiProperty({ type: () => [QuestionView] }) items: QuestionView[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}

/* Compile-time guard: the class names the same members as the application's view. */
export type QuestionViewGuards = [
  Holds<SameMembers<QuestionView, AppQuestionView>>,
  Holds<SameMembers<QuestionAnswerView, NonNullable<AppQuestionView['answer']>>>,
];
