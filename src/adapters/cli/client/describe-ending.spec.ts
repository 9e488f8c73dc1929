import { describeEnding, type StreamEvent } from './event-stream';

const event = (over: Partial<StreamEvent>): StreamEvent =>
  ({ type: 'ToolCallApproved', actor: { id: 'ann', name: 'Ann', via: 'slack' }, data: {}, ...over }) as StreamEvent;

describe('how the CLI tells a request ended', () => {
  it('names who decided and where, and for whom when a delegate decided', () => {
    expect(describeEnding(event({}))).toBe('approved by Ann via slack');
    expect(
      describeEnding(
        event({
          actor: { id: 'bob', name: 'Bob', via: 'email', onBehalfOf: { id: 'ann', name: 'Ann\u001b[31m' } } as never,
        }),
      ),
    ).toMatch(/^approved by Bob for Ann[^\u001b]* via email$/);
  });
});
