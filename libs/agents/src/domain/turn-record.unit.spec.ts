import type { SessionEvent } from './session-events';
import { scorerListProblem } from './scorers';
import { canonicalJson, parseJudgeAnswer, retrievedTextsOf, sameToolCalls, turnRecordOf } from './turn-record';

const at = '2026-12-02T09:00:00.000Z';
const base = (n: number, turnId: string) => ({ eventId: `aev_${n}`, turnId, createdAt: at });
const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'ag', sessionKey: 's1', name: 's1', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at } };
const input = (n: number, text: string): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId: `aev_${n}`, createdAt: at, messages: [{ type: 'text', content: text }], step: 'main' } });
const started = (turnId: string): SessionEvent => ({ type: 'SessionTurnStarted', data: { turnId, step: 'main', holder: 'h', agentRevision: 2, createdAt: at } });
const ended = (turnId: string): SessionEvent => ({ type: 'SessionTurnEnded', data: { turnId, outcome: 'answered', usage: { input_tokens: 1, output_tokens: 1 }, createdAt: at } });
const called = (n: number, turnId: string, name: string, args: Record<string, unknown>): SessionEvent => ({ type: 'SessionToolCalled', data: { ...base(n, turnId), toolCallId: `c${n}`, modelCallId: 'm', toolConfigurationName: name, toolName: 'corpora_search', toolInput: args, arguments: JSON.stringify(args), step: 'main' } });
const returned = (n: number, turnId: string, output: Record<string, unknown>, error = false): SessionEvent => ({ type: 'SessionToolReturned', data: { ...base(n, turnId), toolCallId: `c${n}`, toolConfigurationName: 'search', toolName: 'corpora_search', toolOutput: output, error, step: 'main' } });
const answered = (n: number, turnId: string, content: string): SessionEvent => ({ type: 'SessionAgentOutput', data: { ...base(n, turnId), content, step: 'main' } });

const session: SessionEvent[] = [
  created,
  input(1, 'first question'),
  started('t1'),
  answered(2, 't1', 'first answer'),
  ended('t1'),
  input(3, 'where is the manual?'),
  started('t2'),
  called(4, 't2', 'search', { query: 'manual', limit: 3 }),
  returned(5, 't2', { search_results: [{ text: 'The manual is in the drawer.' }, { text: '' }] }),
  returned(6, 't2', { search_results: [{ text: 'failed one' }] }, true),
  answered(7, 't2', 'In the drawer.'),
  ended('t2'),
];

describe('a turn as scorers read it', () => {
  it('holds the inputs since the previous turn, the last answer, the calls and the texts retrieval returned', () => {
    expect(turnRecordOf(session, 't2')).toEqual({
      turnId: 't2', agentKey: 'ag', sessionKey: 's1', agentRevision: 2, outcome: 'answered', input: 'where is the manual?', answer: 'In the drawer.', structured: null, step: 'main',
      toolCalls: [{ name: 'search', arguments: { query: 'manual', limit: 3 } }],
      retrievedTexts: ['The manual is in the drawer.'],
    });
    expect(turnRecordOf(session, 't1')).toMatchObject({ input: 'first question', answer: 'first answer', toolCalls: [], retrievedTexts: [] });
  });

  it('is undefined for a turn that has not ended or does not exist', () => {
    expect(turnRecordOf(session.slice(0, -1), 't2')).toBeUndefined();
    expect(turnRecordOf(session, 't9')).toBeUndefined();
  });

  it('reads web search snippets and a document text as retrieved texts', () => {
    expect(retrievedTextsOf({ results: [{ snippet: 'a' }, { title: 'b' }] })).toEqual(['a']);
    expect(retrievedTextsOf({ document_id: 'd', text: 'whole' })).toEqual(['whole']);
    expect(retrievedTextsOf({ text: 'not a document' })).toEqual([]);
  });
});

describe('same_tool_calls', () => {
  const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });
  it('is the fraction of the baseline calls made, arguments compared canonically and each matched once', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    const baseline = [call('search', { q: 'a', limit: 3 }), call('search', { q: 'a', limit: 3 }), call('web', { url: 'u' })];
    expect(sameToolCalls([call('search', { limit: 3, q: 'a' }), call('web', { url: 'u' })], baseline)).toEqual({ score: 2 / 3, reason: "2 of the baseline's 3 tool calls made" });
    expect(sameToolCalls([call('search', { q: 'b', limit: 3 })], baseline).score).toBe(0);
  });
  it('compares empty call lists as equal, and calls against none as a miss', () => {
    expect(sameToolCalls([], []).score).toBe(1);
    expect(sameToolCalls([call('x', {})], []).score).toBe(0);
  });
});

describe('a judge answer', () => {
  it('is one JSON object with a score from 0 to 1 and an optional reason', () => {
    expect(parseJudgeAnswer(' {"score": 0.75, "reason": "mostly"} ')).toEqual({ score: 0.75, reason: 'mostly' });
    expect(parseJudgeAnswer('{"score": 1}')).toEqual({ score: 1 });
  });
  it.each([
    ['The score is 0.8', 'did not answer a JSON object'],
    ['```json\n{"score": 0.8}\n```', 'did not answer a JSON object'],
    ['[0.8]', 'not an object'],
    ['{"score": 1.2}', 'no "score" between 0 and 1'],
    ['{"score": "0.8"}', 'no "score" between 0 and 1'],
    ['{"score": 0.8, "confidence": 1}', 'unexpected fields: confidence'],
    ['{"score": 0.8, "reason": 3}', '"reason" that is not a string'],
  ])('refuses %j', (text, error) => {
    const parsed = parseJudgeAnswer(text);
    expect('error' in parsed && parsed.error).toContain(error);
  });
});

describe('a scorer list', () => {
  it('accepts every scorer type with its fields', () => {
    expect(scorerListProblem([{ type: 'factual_consistency' }, { type: 'llm_judge', llm_name: 'j', rubric: 'helpful?' }, { type: 'same_tool_calls' }, { type: 'structured_output_valid' }, { type: 'lambda', tool_id: 'tool_1' }])).toBeUndefined();
  });
  it.each([
    [[], 'scorers'],
    [{}, 'scorers'],
    [[{ type: 'bleu' }], 'scorers[0].type'],
    [[{ type: 'same_tool_calls' }, 'x'], 'scorers[1]'],
    [[{ type: 'llm_judge', rubric: 'r' }], 'scorers[0].llm_name'],
    [[{ type: 'llm_judge', llm_name: 'j', rubric: ' ' }], 'scorers[0].rubric'],
    [[{ type: 'lambda' }], 'scorers[0].tool_id'],
    [[{ type: 'same_tool_calls', llm_name: 'j' }], 'scorers[0].llm_name'],
  ])('names the field of %j', (raw, field) => {
    expect(scorerListProblem(raw)?.[0]).toBe(field);
  });
  it('names the fields under the prefix given', () => {
    expect(scorerListProblem([{ type: 'x' }], 'canary.scorers')?.[0]).toBe('canary.scorers[0].type');
  });
});
