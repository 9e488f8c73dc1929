import { checkOpenQuestionLimit, TooManyOpenQuestionsError } from './open-question-limit';

const limits = { perConversation: 3, perAgent: 5 };

function refusal(open: { conversation: number; agent: number }) {
  try {
    checkOpenQuestionLimit(open, limits);
    return undefined;
  } catch (e) {
    return e as TooManyOpenQuestionsError;
  }
}

describe('the open question limit', () => {
  it('lets an agent ask while it is under both limits', () => {
    expect(refusal({ conversation: 0, agent: 0 })).toBeUndefined();
    expect(refusal({ conversation: 2, agent: 4 })).toBeUndefined();
  });

  it("refuses at the conversation's limit first, then at the agent's, with the limit and its scope", () => {
    expect(refusal({ conversation: 3, agent: 3 })).toMatchObject({
      code: 'too_many_open_questions',
      kind: 'conflict',
      details: { limit: 3, scope: 'conversation' },
    });
    expect(refusal({ conversation: 1, agent: 5 })).toMatchObject({
      code: 'too_many_open_questions',
      details: { limit: 5, scope: 'agent' },
    });
  });
});
