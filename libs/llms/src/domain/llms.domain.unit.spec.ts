import { givenEvents } from '@lib/testing';
import { authContentProblems, maskedAuth, maskUriCredentials, splitAuth, joinAuth } from './auth';
import { alternateRoles, inferCapabilities } from './capabilities';
import { decideCreateLlm, decideDeleteLlm, decideUpdateLlm, llmFold, LlmEvent, LlmSettings } from './llm';
import { exceededQuota, NO_USAGE, windowOf } from './quota';
import { usageFromReport } from './usage';

const at = new Date('2026-05-01T10:00:00.000Z');
const sealed = { type: 'bearer' as const, identifiers: {}, sealed: { v: 1 as const, kid: 'k', iv: 'i', tag: 't', ct: 'c' } };
const settings = (over: Partial<LlmSettings> = {}): LlmSettings => ({
  type: 'openai-compatible',
  model: 'gpt-4o',
  uri: 'https://api.example.com/v1/chat/completions',
  description: '',
  headers: {},
  idleTimeoutSeconds: null,
  capabilities: inferCapabilities('gpt-4o'),
  quota: null,
  enabled: true,
  auth: sealed,
  ...over,
});
const created: LlmEvent = { type: 'LlmCreated', data: { llmId: 'llm_1', name: 'm', settings: settings(), createdAt: at.toISOString() } };

describe('LLM registry decisions', () => {
  it('creates a model once per name', () => {
    givenEvents(llmFold, []).when((s) => decideCreateLlm(s, { llmId: 'llm_1', name: 'm', settings: settings() }, at)).then([created]);
    givenEvents(llmFold, [created]).when((s) => decideCreateLlm(s, { llmId: 'llm_2', name: 'm', settings: settings() }, at)).thenFails({ code: 'llm.name_taken' });
  });

  it('refuses credential-looking headers, bad quotas and non-http URIs with field errors', () => {
    const create = (over: Partial<LlmSettings>) => () => decideCreateLlm({ status: 'absent' }, { llmId: 'x', name: 'x', settings: settings(over) }, at);
    expect(create({ headers: { 'X-Api-Key': 'k' } })).toThrow(expect.objectContaining({ details: { fieldErrors: expect.objectContaining({ 'headers.X-Api-Key': expect.any(String) }) } }));
    expect(create({ headers: { 'anthropic-version': '2023-06-01' } })).not.toThrow();
    expect(create({ quota: { requests_per_second: 0 } })).toThrow(/llm_quota.requests_per_second/);
    expect(create({ uri: 'ftp://x' })).toThrow(/uri/);
  });

  it('refuses credentials in a uri (they would be stored and shown in clear), on create and on PATCH', () => {
    const create = (uri: string) => () => decideCreateLlm({ status: 'absent' }, { llmId: 'x', name: 'x', settings: settings({ uri }) }, at);
    expect(create('https://user:pass@api.example.com/v1/chat/completions')).toThrow(expect.objectContaining({ details: { fieldErrors: { uri: expect.stringMatching(/user:password@.*auth/) } } }));
    expect(create('https://token@api.example.com/v1')).toThrow(/uri/);
    expect(create('https://api.example.com/v1/chat/completions?x=a@b')).not.toThrow();
    expect(() => decideUpdateLlm(llmFold.evolve(llmFold.initialState, created), 'm', { uri: 'http://a:b@h/v1' }, at)).toThrow(/uri/);
    const oauth = { type: 'oauth_client_credentials' as const, client_id: 'c', client_secret: 's', token_endpoint: 'https://c:s@auth.example.com/token' };
    expect(authContentProblems(oauth)).toHaveProperty(['auth.token_endpoint']);
  });

  it('records only what changed; an unchanged PATCH appends nothing; a quota is replaced whole', () => {
    const given = givenEvents(llmFold, [created]);
    given.when((s) => decideUpdateLlm(s, 'm', { model: 'gpt-4o', description: 'new' }, at)).then([
      { type: 'LlmUpdated', data: { llmId: 'llm_1', name: 'm', changes: { description: 'new' }, updatedAt: at.toISOString() } },
    ]);
    given.when((s) => decideUpdateLlm(s, 'm', { model: 'gpt-4o', auth: undefined }, at)).then([]);
    const withQuota = givenEvents(llmFold, [created, { type: 'LlmUpdated', data: { llmId: 'llm_1', name: 'm', changes: { quota: { requests_per_second: 5 } }, updatedAt: '' } }]);
    expect(withQuota.state).toMatchObject({ settings: { quota: { requests_per_second: 5 } } });
    withQuota.when((s) => decideUpdateLlm(s, 'm', { quota: { input_tokens_per_day: 9 } }, at)).then([
      { type: 'LlmUpdated', data: { llmId: 'llm_1', name: 'm', changes: { quota: { input_tokens_per_day: 9 } }, updatedAt: at.toISOString() } },
    ]);
  });

  it('deletes, after which the name is free and updates are 404', () => {
    const deleted: LlmEvent = { type: 'LlmDeleted', data: { llmId: 'llm_1', name: 'm', deletedAt: at.toISOString() } };
    givenEvents(llmFold, [created]).when((s) => decideDeleteLlm(s, 'm', at)).then([deleted]);
    givenEvents(llmFold, [created, deleted]).when((s) => decideUpdateLlm(s, 'm', { description: 'x' }, at)).thenFails({ kind: 'not_found' });
    givenEvents(llmFold, [created, deleted]).when((s) => decideCreateLlm(s, { llmId: 'llm_2', name: 'm', settings: settings() }, at)).then([
      { type: 'LlmCreated', data: { llmId: 'llm_2', name: 'm', settings: settings(), createdAt: at.toISOString() } },
    ]);
  });
});

describe('auth masking', () => {
  it('keeps identifiers, masks secrets, and round-trips', () => {
    const auth = { type: 'header' as const, header: 'api-key', value: 'secret' };
    const { identifiers, secrets } = splitAuth(auth);
    expect(identifiers).toEqual({ header: 'api-key' });
    expect(maskedAuth({ type: 'header', identifiers })).toEqual({ type: 'header', header: 'api-key', value: '****' });
    expect(joinAuth('header', identifiers, secrets)).toEqual(auth);
    expect(maskedAuth({ type: 'bearer', identifiers: {} })).toEqual({ type: 'bearer', token: '****' });
  });

  it('masks credentials in a uri stored before they were refused', () => {
    expect(maskUriCredentials('https://user:pass@host:8443/v1/chat?q=1')).toBe('https://****:****@host:8443/v1/chat?q=1');
    expect(maskUriCredentials('http://token@host/')).toBe('http://****:****@host/');
    expect(maskUriCredentials('https://host/v1?mail=a@b')).toBe('https://host/v1?mail=a@b');
    expect(maskedAuth({ type: 'oauth_client_credentials', identifiers: { client_id: 'c', token_endpoint: 'https://c:s@auth/token' } })).toMatchObject({ token_endpoint: 'https://****:****@auth/token' });
  });
});

describe('quota windows and checks', () => {
  it('aligns windows to UTC and names when each resets', () => {
    const t = new Date('2026-12-31T23:59:59.500Z');
    expect(windowOf('second', t).resetsAt.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(windowOf('minute', t)).toEqual({ id: '2026-12-31T23:59', resetsAt: new Date('2027-01-01T00:00:00.000Z') });
    expect(windowOf('day', t)).toEqual({ id: '2026-12-31', resetsAt: new Date('2027-01-01T00:00:00.000Z') });
    expect(windowOf('month', new Date('2026-02-10T00:00:00Z')).resetsAt.toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('admits while below each limit and names the first quota reached', () => {
    const usage = (w: string) => (w === 'day' ? { input: 100, output: 7 } : NO_USAGE);
    expect(exceededQuota({ input_tokens_per_day: 101 }, usage, 0, at)).toBeUndefined();
    expect(exceededQuota({ input_tokens_per_day: 100 }, usage, 0, at)).toMatchObject({ quota: 'input_tokens_per_day', used: 100, limit: 100 });
    expect(exceededQuota({ requests_per_second: 3 }, usage, 3, at)).toMatchObject({ quota: 'requests_per_second' });
    expect(exceededQuota({ output_tokens_per_minute: 1 }, usage, 0, at)).toBeUndefined();
  });

  it('reads usage as prompt tokens in, completion tokens out', () => {
    expect(usageFromReport({ prompt_tokens: 5, completion_tokens: 2 })).toEqual({ input: 5, output: 2 });
    expect(usageFromReport(undefined)).toBeUndefined();
  });
});

describe('capabilities', () => {
  it('infers from the model family and groups consecutive plain messages of one role', () => {
    expect(inferCapabilities('claude-sonnet-4-5')).toMatchObject({ requires_role_alternation: true, image_support: true });
    expect(inferCapabilities('my-local-model')).toMatchObject({ tool_calling: false, context_limit: 8192 });
    const tool = { role: 'assistant' as const, content: null, tool_calls: [] };
    expect(alternateRoles([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, tool, { role: 'assistant', content: 'c' }])).toEqual([
      { role: 'user', content: 'a\n\nb' },
      tool,
      { role: 'assistant', content: 'c' },
    ]);
  });
});
