import { Principal } from '../../../domain/shared/actor';

export class ReportResultCommand {
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
    readonly result: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string },
  ) {}
}
