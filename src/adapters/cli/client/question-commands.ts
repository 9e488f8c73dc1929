import { Command, Option } from 'commander';
import { allPages, type Question, type QuestionStatus } from '@tollgate/sdk';
import { ApiClient, ClientOptions, connection } from './api-client';
import { output } from './client-commands';
import { printJson, table } from './format';
import { safeJson } from '../safe-text';

const STATUSES: QuestionStatus[] = ['pending', 'answered', 'expired', 'cancelled'];
/** Conversations looked up for their titles at most, per listing: a long list shows the rest by id. */
const MAX_TITLES = 50;

function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'Tollgate base URL (default: TOLLGATE_URL or http://127.0.0.1:8080)')
    .option('--token <jwt>', 'bearer token (default: TOLLGATE_TOKEN)');
}

/** Every question of these statuses the caller may answer, newest first (the API lists one status at a time). */
async function questionsIn(api: ApiClient, statuses: QuestionStatus[]): Promise<Question[]> {
  const lists = await Promise.all(
    statuses.map((status) =>
      api.call((t) =>
        allPages((cursor) => t.questions.list({ status, limit: 1000, ...(cursor ? { cursor } : {}) }), 1000),
      ),
    ),
  );
  return lists.flat().sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** The conversations' titles, where the caller may read them: questions carry only the conversation's id. */
async function titles(api: ApiClient, items: Question[]): Promise<Map<string, string>> {
  const ids = [...new Set(items.map((q) => q.conversationId))].slice(0, MAX_TITLES);
  const found = await Promise.all(
    ids.map((id) =>
      api.tollgate.getConversation(id).then(
        (c) => [id, c.title] as const,
        () => [id, null] as const,
      ),
    ),
  );
  return new Map(found.filter((f): f is readonly [string, string] => !!f[1]));
}

/**
 * `tollgate questions` lists the questions agents asked that the caller may answer (pending by default; `--all`
 * or `--status` for the others) and `tollgate answer <id> <answer…>` answers one. Answers say
 * `X-Tollgate-Channel: cli`; the first answer wins, a later one exits 1 with `already_answered`.
 */
export function addQuestionCommands(program: Command): void {
  withConnection(
    program
      .command('questions')
      .description(
        'List the questions agents asked that you may answer, newest first (pending ones unless --all or --status)',
      )
      .option('--all', 'answered, expired and cancelled questions too')
      .addOption(new Option('--status <status>', 'only questions in this status').choices(STATUSES).conflicts('all'))
      .option('--json', 'print them as JSON'),
  ).action(async (o: ClientOptions & { all?: boolean; status?: QuestionStatus; json?: boolean }) => {
    output.json = !!o.json;
    const api = new ApiClient(connection(o));
    const statuses = o.all ? STATUSES : [o.status ?? 'pending'];
    const items = await questionsIn(api, statuses);
    if (o.json) return printJson({ items });
    if (!items.length)
      return console.log(
        statuses.length === 1 && statuses[0] === 'pending' ? 'No questions waiting for you.' : 'No questions.',
      );
    const named = await titles(api, items);
    const conversation = (q: Question) =>
      named.has(q.conversationId) ? `${named.get(q.conversationId)} (${q.conversationId})` : q.conversationId;
    const choices = (q: Question) =>
      q.choices?.length ? `${q.choices.join(' | ')}${q.allowFreeText ? ' | …' : ''}` : 'free text';
    if (statuses.length === 1 && statuses[0] === 'pending') {
      console.log(
        table(
          ['ID', 'ASKED', 'CONVERSATION', 'QUESTION', 'CHOICES'],
          items.map((q) => [q.id, q.createdAt, conversation(q), q.text, choices(q)]),
          [0, 0, 40, 60, 60],
        ),
      );
      return;
    }
    const outcome = (q: Question) =>
      q.answer ? `${q.answer.text} (${q.answer.by.name ?? q.answer.by.id} via ${q.answer.by.via})` : (q.reason ?? '');
    console.log(
      table(
        ['ID', 'ASKED', 'CONVERSATION', 'QUESTION', 'STATUS', 'ANSWER'],
        items.map((q) => [q.id, q.createdAt, conversation(q), q.text, q.status, outcome(q)]),
        [0, 0, 40, 60, 0, 60],
      ),
    );
  });

  withConnection(
    program
      .command('answer')
      .description(
        'Answer a question an agent asked (the first answer wins); with choices, the answer must be one of them',
      )
      .argument('<id>', 'question id (q_…)')
      .argument('<answer...>', 'the answer; several words are joined with spaces')
      .option('--json', 'print the question as JSON'),
  ).action(async (id: string, words: string[], o: ClientOptions & { json?: boolean }) => {
    output.json = !!o.json;
    const api = new ApiClient(connection(o));
    const q = await api.call((t) => t.answer(id, words.join(' ')));
    if (o.json) printJson(q);
    else console.log(`${q.id} answered: ${safeJson(q.answer?.text ?? words.join(' '))}`);
  });
}
