import { TOOL_CATALOG, TOOL_SERVERS } from '@lib/tools/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { toolServersProjection } from './tool-servers.projection';

describe('tool servers projection', () => {
  const log = new EventLog();
  const settings = { name: 'Orders', type: 'mcp', uri: 'https://mcp.example.com/mcp', headers: {}, transport: 'streamable-http', enabled: true, metadata: {} };
  const tool = (name: string) => ({ name, description: name, input_schema: { type: 'object' } });
  log.append('tool_server-tsr_1', 'ToolServerCreated', { id: 'tsr_1', settings, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('tool_server-tsr_1', 'ToolServerSynced', { id: 'tsr_1', tools: [tool('a'), tool('b')], syncedAt: '2026-01-02T00:00:00.000Z' });
  log.append('tool_server-tsr_1', 'ToolServerSynced', { id: 'tsr_1', tools: [tool('b'), tool('c')], syncedAt: '2026-01-03T00:00:00.000Z' });
  log.append('tool_server-tsr_1', 'ServerToolUpdated', { id: 'tsr_1', toolName: 'c', enabled: false, disabledTools: ['c'], updatedAt: '2026-01-03T01:00:00.000Z' });
  log.append('tool_server-tsr_1', 'ToolServerUpdated', { id: 'tsr_1', settings: { ...settings, name: 'Orders 2' }, updatedAt: '2026-01-03T02:00:00.000Z' });
  log.append('tool_server-tsr_2', 'ToolServerCreated', { id: 'tsr_2', settings, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('tool_server-tsr_2', 'ToolServerSynced', { id: 'tsr_2', tools: [tool('z')], syncedAt: '2026-01-02T00:00:00.000Z' });
  log.append('tool_server-tsr_2', 'ToolServerDeleted', { id: 'tsr_2', deletedAt: '2026-01-04T00:00:00.000Z' });

  it('keeps the tools of the last sync only, and drops a deleted server with its tools', async () => {
    const harness = await given(log.events).project(toolServersProjection);
    expect((await harness.reads.find(TOOL_CATALOG, { limit: 10 })).items.map((r) => r.id)).toEqual(['tol_1_b', 'tol_1_c']);
    expect(await harness.reads.get(TOOL_SERVERS, 'tsr_1')).toMatchObject({ name: 'Orders 2', synced_at: '2026-01-03T00:00:00.000Z', disabled_tools: ['c'] });
    expect(await harness.reads.get(TOOL_SERVERS, 'tsr_2')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(toolServersProjection, log.events);
    expect(twice).toEqual(once);
  });
});
