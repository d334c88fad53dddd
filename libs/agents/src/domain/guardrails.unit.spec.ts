import fc from 'fast-check';
import { guardrailProblems, guardrailsAt, sentenceRelease, takeSentences } from './guardrails';
import { inputBlockedBy } from './guardrail-input';
import type { SessionEvent } from './session-events';

describe('guardrails: configuration', () => {
  it('names each guardrail by its type and index unless named, and picks those of one point', () => {
    const list = [
      { type: 'grounding' as const, action: 'block' as const },
      { type: 'pattern' as const, name: 'cards', patterns: ['x'], on: 'input' as const, action: 'redact' as const },
      { type: 'judge' as const, llm_name: 'j', policy: 'p', on: 'output' as const, action: 'flag' as const },
    ];
    expect(guardrailProblems(list)).toEqual({});
    expect(guardrailsAt(list, 'output').map((g) => g.name)).toEqual(['grounding_0', 'judge_2']);
    expect(guardrailsAt(list, 'input').map((g) => g.name)).toEqual(['cards']);
    expect(guardrailsAt(list, 'tool_call')).toEqual([]);
  });

  it('refuses the actions a type cannot take where it runs, naming the field', () => {
    expect(guardrailProblems([{ type: 'pattern', patterns: ['x'], on: 'output', action: 'regenerate' }])).toEqual({ 'guardrails[0].action': 'a pattern guardrail on output takes flag, block, redact' });
    expect(guardrailProblems([{ type: 'judge', llm_name: 'j', policy: 'p', on: 'tool_call', action: 'regenerate' }])).toEqual({ 'guardrails[0].action': 'a judge guardrail on tool_call takes flag, block' });
    expect(Object.keys(guardrailProblems([{ type: 'grounding', action: 'block' }, { type: 'grounding', action: 'redact' }]))).toEqual(['guardrails[1].action']);
  });

  it('releases sentence by sentence only when every output guardrail asks for it', () => {
    const sentence = { type: 'pattern' as const, patterns: ['x'], on: 'output' as const, action: 'block' as const, check: 'sentence' as const };
    expect(sentenceRelease([sentence])).toBe(true);
    expect(sentenceRelease([sentence, { type: 'grounding', action: 'block' }])).toBe(false);
    expect(sentenceRelease([{ ...sentence, on: 'input', check: undefined }])).toBe(false);
  });
});

describe('guardrails: sentences', () => {
  it('ends a sentence at . ! ? followed by white space, or at a line break; keeps the unfinished rest', () => {
    expect(takeSentences('Pi is 3.14 today. Really? Yes! And')).toEqual({ sentences: ['Pi is 3.14 today. ', 'Really? ', 'Yes! '], rest: 'And' });
    expect(takeSentences('One\nTwo')).toEqual({ sentences: ['One\n'], rest: 'Two' });
    expect(takeSentences('e.g.x')).toEqual({ sentences: [], rest: 'e.g.x' });
  });

  it('loses and adds nothing: the sentences and the rest are the text', () => {
    fc.assert(fc.property(fc.string(), (text) => {
      const { sentences, rest } = takeSentences(text);
      expect(sentences.join('') + rest).toBe(text);
      expect(sentences.every((s) => s.length > 0)).toBe(true);
    }));
  });
});

describe('guardrails: a blocked input', () => {
  const at = { createdAt: '2026-12-03T00:00:00.000Z' };
  const input = (id: string): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId: id, ...at, messages: [{ type: 'text', content: 'hi' }], step: 'main' } });
  const fired = (id: string, subject: string, action: 'block' | 'redact'): SessionEvent => ({ type: 'SessionGuardrailTriggered', data: { eventId: id, ...at, guardrail: 'g', guardrailType: 'judge', on: 'input', action, reason: 'r', subjectEventId: subject } });

  it('is the latest input with a block stored after it; a redaction or an earlier block is not', () => {
    expect(inputBlockedBy([input('a'), fired('g1', 'a', 'block')])).toBe('g');
    expect(inputBlockedBy([input('a'), fired('g1', 'a', 'redact')])).toBeUndefined();
    expect(inputBlockedBy([input('a'), fired('g1', 'a', 'block'), input('b')])).toBeUndefined();
    expect(inputBlockedBy([])).toBeUndefined();
  });
});
