import { givenEvents } from '@lib/testing';
import { AgentConfig } from './agent-config';
import { AgentEvent, agentFold, configFromRequest, decideCreateAgent, decideUpdateAgent, mergeAgentPatch } from './agent';

const NOW = new Date('2026-03-01T00:00:00.000Z');
const base = configFromRequest({
  name: 'A',
  model: { name: 'm', parameters: { temperature: 0.1 } },
  tool_configurations: { docs: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'c' }] } } } },
  first_step_name: 'one',
  steps: { one: { instructions: [], next_steps: [{ step_name: 'two' }] }, two: { instructions: [], reentry_step: 'one' } },
  metadata: { team: 'x' },
});
const created: AgentEvent = { type: 'AgentCreated', data: { agentId: 'agt_1', agentKey: 'a', config: base, createdAt: NOW.toISOString() } };

describe('agent configuration', () => {
  it('folds the deprecated first_step into steps, under its name', () => {
    const c = configFromRequest({ name: 'L', model: { name: 'm' }, tool_configurations: {}, first_step: { name: 'start', type: 'conversational', instructions: [] } });
    expect(c.first_step_name).toBe('start');
    expect(c.steps.start).toEqual({ instructions: [], output_parser: { type: 'default' }, reminders: [], next_steps: [] });
    expect(() => configFromRequest({ name: 'L', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'other', first_step: { name: 'start', instructions: [] } })).toThrow(/first_step_name must equal/);
    expect(() => configFromRequest({ name: 'L', model: { name: 'm' }, tool_configurations: {} })).toThrow(/first_step_name is required/);
  });

  it('merges a patch as the reference says: null clears, maps merge by key, model is replaced whole', () => {
    const merged = mergeAgentPatch(base, {
      description: null,
      metadata: null,
      enabled: null,
      model: { name: 'n' },
      tool_configurations: { docs: null, ask: { type: 'client' } },
      steps: { two: { reentry_step: null, allowed_tools: ['ask'] } },
    });
    expect(merged.metadata).toEqual({});
    expect(merged.enabled).toBe(true);
    expect(merged.model).toEqual({ name: 'n' });
    expect(Object.keys(merged.tool_configurations)).toEqual(['ask']);
    expect(merged.steps.two).toEqual({ instructions: [], output_parser: { type: 'default' }, reminders: [], next_steps: [], allowed_tools: ['ask'] });
    expect(merged.steps.one).toEqual(base.steps.one);
  });

  it('renames the first step through the deprecated first_step patch and keeps what it does not name', () => {
    const merged = mergeAgentPatch(base, { first_step: { name: 'uno', reminders: [{ type: 'templated', template: 'r', hooks: ['input_message'] }] } });
    expect(merged.first_step_name).toBe('uno');
    expect(merged.steps.one).toBeUndefined();
    expect(merged.steps.uno.next_steps).toEqual([{ step_name: 'two' }]);
    expect(merged.steps.uno.reminders).toHaveLength(1);
  });

  it('refuses a change that leaves a dangling reference, and appends nothing for a change that changes nothing', () => {
    givenEvents(agentFold, [created])
      .when((s) => decideUpdateAgent(s, 'a', (c) => mergeAgentPatch(c, { steps: { two: null } }), false, NOW))
      .thenFails({ kind: 'invalid', details: { fieldErrors: { 'steps.one.next_steps[0].step_name': expect.any(String) } } });
    givenEvents(agentFold, [created]).when((s) => decideUpdateAgent(s, 'a', (c) => mergeAgentPatch(c, { name: 'A' }), false, NOW)).then([]);
  });

  it('refuses tool types it cannot run, naming the field', () => {
    const config = { ...base, tool_configurations: { web: { type: 'document_conversion' } } } as unknown as AgentConfig;
    givenEvents(agentFold, []).when((s) => decideCreateAgent(s, { agentId: 'agt_2', agentKey: 'b', config }, NOW)).thenFails({ details: { fieldErrors: { 'tool_configurations.web.type': expect.stringMatching(/not available/) } } });
    // A dynamic_vectara the edge did not resolve to a built-in names no tool the service has: refused on its tool_id.
    const dynamic = { ...base, tool_configurations: { web: { type: 'dynamic_vectara', tool_id: 'tol_builtin_nope' } } } as unknown as AgentConfig;
    givenEvents(agentFold, []).when((s) => decideCreateAgent(s, { agentId: 'agt_2', agentKey: 'b', config: dynamic }, NOW)).thenFails({ details: { fieldErrors: { 'tool_configurations.web.tool_id': expect.stringMatching(/dynamic_vectara/) } } });
  });
});
