import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Glossaries: CRUD and entries, the glossary_expansion reminder, and the glossary tools. */
describe('glossaries', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('keeps glossaries and their entries', async () => {
    const created = await app.call('POST', '/v2/glossaries', { key: 'acme', name: 'ACME terms', description: 'House jargon' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'acme', name: 'ACME terms', num_entries: 0 });
    expect((await app.call('POST', '/v2/glossaries/acme/entries', { entries: { SLA: 'service level agreement', PTO: 'paid time off' } })).status).toBe(204);
    expect((await app.call('GET', '/v2/glossaries/acme')).body.num_entries).toBe(2);
    expect((await app.call('GET', '/v2/glossaries/acme/entries')).body.entries).toEqual([{ term: 'PTO', expansion: 'paid time off' }, { term: 'SLA', expansion: 'service level agreement' }]);
    expect((await app.call('PATCH', '/v2/glossaries/acme', { description: 'Our jargon' })).body).toMatchObject({ name: 'ACME terms', description: 'Our jargon' });
    expect((await app.call('POST', '/v2/glossaries/acme/entries', { entries: { '': 'x' } })).status).toBe(400);
    const again = await app.call('POST', '/v2/glossaries', { key: 'acme', name: 'again' });
    expect(again.status).toBe(400); // the reference lists no 409 for createGlossary
    expect(again.body.field_errors).toEqual({ key: 'already taken' });
    expect((await app.call('POST', '/v2/glossaries/ghost/entries', { entries: { a: 'b' } })).status).toBe(404);
  });

  it('expands the glossary in user messages of steps with a glossary_expansion reminder, and the agent edits it with the tools', async () => {
    const bad = await app.call('POST', '/v2/agents', { key: 'bad', name: 'bad', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [], reminders: [{ type: 'glossary_expansion', glossary_key: 'nope' }] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors['steps.main.reminders[0].glossary_key']).toMatch(/no glossary "nope"/);
    const agent = await app.call('POST', '/v2/agents', {
      key: 'hr',
      name: 'hr',
      model: { name: 'm' },
      tool_configurations: { learn: { type: 'glossary_put_entries', argument_override: { glossary_key: 'acme' } }, forget: { type: 'glossary_delete_entries', argument_override: { glossary_key: 'acme' } } },
      first_step_name: 'main',
      steps: { main: { instructions: [], reminders: [{ type: 'glossary_expansion', glossary_key: 'acme' }] } },
    });
    expect(agent.status).toBe(201);
    await app.call('POST', '/v2/agents/hr/sessions', { key: 's' });
    upstream.enqueue({ toolCalls: [{ id: 'l', name: 'learn', arguments: '{"entries":{"RMA":"return merchandise authorization"}}' }, { id: 'f', name: 'forget', arguments: '{"terms":["PTO"]}' }] }, { content: 'Noted.' });
    const res = await app.call('POST', '/v2/agents/hr/sessions/s/events', { messages: [{ type: 'text', content: 'Does the SLA cover PTO requests? And sla again.' }] });
    const firstCall = upstream.chatRequests().at(-2)!.body as any;
    expect(firstCall.messages.at(-1)).toEqual({ role: 'user', content: 'Does the SLA (service level agreement) cover PTO (paid time off) requests? And sla again.' });
    expect(res.body.events.filter((e: Ev) => e.type === 'tool_output').every((e: Ev) => !e.error)).toBe(true);
    expect((await app.call('GET', '/v2/glossaries/acme/entries')).body.entries.map((e: any) => e.term)).toEqual(['RMA', 'SLA']);
    const log = (await app.call('GET', '/v2/events?category=glossary&type=GlossaryEntriesUpserted&limit=10')).body.events as any[];
    expect(log.at(-1).metadata.actor).toEqual({ type: 'agent', id: 'hr' });
  });

  it('deletes a glossary and its entries', async () => {
    expect((await app.call('DELETE', '/v2/glossaries/acme')).status).toBe(204);
    expect((await app.call('GET', '/v2/glossaries/acme')).status).toBe(404);
    expect((await app.call('GET', '/v2/glossaries')).body.glossaries).toEqual([]);
  });
});
