import { AGENTS } from '@lib/agents/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { agentsProjection } from './agents.projection';

describe('agents projection', () => {
  const log = new EventLog();
  const config = { name: 'A', tool_configurations: {}, model: { name: 'm' }, first_step_name: 's', steps: { s: { instructions: [{ type: 'reference', id: 'ins_1', version: 2 }], output_parser: { type: 'default' }, reminders: [], next_steps: [] } }, metadata: {}, enabled: true };
  log.append('agent-a', 'AgentCreated', { agentId: 'agt_1', agentKey: 'a', config, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('agent-a', 'AgentUpdated', { agentId: 'agt_1', agentKey: 'a', config: { ...config, name: 'A2', enabled: false }, replaced: false, updatedAt: '2026-01-02T00:00:00.000Z' });
  log.append('agent-b', 'AgentCreated', { agentId: 'agt_2', agentKey: 'b', config, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('agent-b', 'AgentDeleted', { agentId: 'agt_2', agentKey: 'b', deletedAt: '2026-01-03T00:00:00.000Z' });

  it('keeps one row per agent with the instructions it uses, and drops deleted ones', async () => {
    const harness = await given(log.events).project(agentsProjection);
    expect(await harness.reads.get(AGENTS, 'a')).toMatchObject({ name: 'A2', enabled: false, instruction_ids: ['ins_1'], instruction_versions: ['ins_1@2'], updated_at: '2026-01-02T00:00:00.000Z' });
    expect(await harness.reads.get(AGENTS, 'b')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(agentsProjection, log.events);
    expect(once).toMatchObject({ [AGENTS]: [{ id: 'a', name: 'A2' }] });
    expect(twice).toEqual(once);
  });
});
