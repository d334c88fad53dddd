import type { LlmRow } from '@lib/llms';
import { DomainError, FindQuery, loadConfig, ReadDoc, ReadStore } from '@lib/platform';
import { GenerationModels, LLM_FIELD } from './generation-models';

/** A read store holding only `llms` rows, answering the lookups the resolver makes (by id, by name, enabled). */
function readsWith(rows: Partial<LlmRow>[]): ReadStore {
  const all = rows.map((r, i) => ({ id: `llm_${i}`, enabled: true, ...r }) as unknown as LlmRow);
  const matches = (doc: LlmRow, q: FindQuery) => (q.where ?? []).every((c) => (doc as Record<string, unknown>)[c.field] === c.value);
  return {
    get: async <T extends ReadDoc>(_: string, id: string) => all.find((r) => r.id === id) as unknown as T | undefined,
    find: async <T extends ReadDoc>(_: string, q: FindQuery) => ({ items: all.filter((r) => matches(r, q)).slice(0, q.limit) as unknown as T[] }),
    count: async () => all.length,
    sum: async () => ({}) as never,
    ping: async () => undefined,
  };
}

const models = (rows: Partial<LlmRow>[], env: Record<string, string> = {}) => new GenerationModels(readsWith(rows), loadConfig({ DATA_DIR: '/tmp/unused', ...env }));

async function problem(p: Promise<unknown>): Promise<{ message: string; field: string }> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(DomainError);
  expect((e as DomainError).kind).toBe('invalid');
  return { message: (e as DomainError).message, field: (e as DomainError).details.fieldErrors![LLM_FIELD] };
}

describe('the model a generation uses', () => {
  it('is the one the request names, by name or id', async () => {
    const m = models([{ name: 'a' }, { name: 'b' }], { GENERATION_LLM: 'a' });
    expect(await m.resolve('b')).toBe('b');
    expect(await m.resolve('llm_1')).toBe('b');
  });

  it('else GENERATION_LLM, else the only enabled registered model', async () => {
    expect(await models([{ name: 'a' }, { name: 'b' }], { GENERATION_LLM: 'b' }).resolve()).toBe('b');
    expect(await models([{ name: 'a' }, { name: 'off', enabled: false }]).resolve()).toBe('a');
    expect(await models([{ name: 'a' }]).current()).toBe('a');
  });

  it('says what to configure when none resolves', async () => {
    const none = await problem(models([]).resolve());
    expect(none.message).toMatch(/no LLM is registered/);
    for (const what of ['POST /v2/llms', 'GENERATION_LLM', 'generation.model_parameters.llm_name']) expect(none.message).toContain(what);
    expect(none.field).toMatch(/register one with POST \/v2\/llms/);
    expect((await problem(models([{ name: 'a' }, { name: 'b' }]).resolve())).message).toMatch(/^Several LLMs are registered and none is chosen/);
    expect(await models([{ name: 'a' }, { name: 'b' }]).current()).toBeUndefined();
  });

  it('refuses an unknown or disabled name, and a GENERATION_LLM that names no model', async () => {
    expect((await problem(models([{ name: 'a' }]).resolve('ghost'))).message).toMatch(/No registered LLM is named "ghost"/);
    expect((await problem(models([{ name: 'a', enabled: false }]).resolve('a'))).message).toMatch(/LLM "a" is disabled/);
    expect((await problem(models([{ name: 'a' }], { GENERATION_LLM: 'ghost' }).resolve())).message).toMatch(/GENERATION_LLM is "ghost", which is not a registered LLM/);
  });
});
