import type { ReadStore } from '@lib/platform';
import type { AgentConfig } from '../../domain/agent-config';
import { guardrailReferenceCheck } from './guardrail-reference-check';
import { redact } from './guardrail-checks';

/** Registered LLMs by name, as the read model answers `findLlm`. */
const readsWith = (llms: string[]): ReadStore =>
  ({
    get: async () => undefined,
    find: async (_c: string, q: { where: { value: string }[] }) => ({ items: llms.includes(q.where[0].value) ? [{ id: 'llm_1', name: q.where[0].value }] : [] }),
  }) as unknown as ReadStore;
const withGuardrails = (guardrails: unknown[]) => ({ guardrails }) as unknown as AgentConfig;

describe('guardrails: the checks made against the rest of the service', () => {
  it('refuses a grounding guardrail when the service has no factual-consistency scorer, and accepts it with one', async () => {
    const grounding = withGuardrails([{ type: 'grounding', action: 'block' }]);
    expect(Object.keys(await guardrailReferenceCheck(readsWith([]), {})(grounding))).toEqual(['guardrails[0].type']);
    expect(await guardrailReferenceCheck(readsWith([]), { fcsHhemUrl: 'http://hhem' })(grounding)).toEqual({});
    expect(await guardrailReferenceCheck(readsWith([]), { fcsJudgeLlm: 'judge' })(grounding)).toEqual({});
  });

  it('refuses a judge naming no registered LLM, and patterns RE2 does not take (lookaround, backreferences, bad syntax)', async () => {
    const check = guardrailReferenceCheck(readsWith(['judge']), {});
    expect(await check(withGuardrails([{ type: 'judge', llm_name: 'judge', policy: 'p', on: 'input', action: 'block' }]))).toEqual({});
    expect(Object.keys(await check(withGuardrails([{ type: 'judge', llm_name: 'nobody', policy: 'p', on: 'input', action: 'block' }])))).toEqual(['guardrails[0].llm_name']);
    const patterns = await check(withGuardrails([{ type: 'pattern', patterns: ['ok', '(?=x)', '(a)\\1', '[z'], on: 'output', action: 'block' }]));
    expect(Object.keys(patterns)).toEqual(['guardrails[0].patterns[1]', 'guardrails[0].patterns[2]', 'guardrails[0].patterns[3]']);
  });

  it('masks every match of every pattern and counts them', () => {
    expect(redact(['\\d{4}', '(?i)secret'], 'pin 1234 and 5678, SECRET')).toEqual({ text: 'pin [REDACTED] and [REDACTED], [REDACTED]', matches: 3 });
    expect(redact(['x'], 'none here')).toEqual({ text: 'none here', matches: 0 });
  });
});
