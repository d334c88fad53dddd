import { TOOL_CONFIGURATIONS } from '@lib/tools/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { toolConfigurationsProjection } from './tool-configurations.projection';

describe('tool configurations projection', () => {
  const log = new EventLog();
  const config = { type: 'web_get', name: 'Web', enabled: true, metadata: {} };
  log.append('tool_configuration-web', 'ToolConfigurationCreated', { key: 'web', config, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('tool_configuration-web', 'ToolConfigurationUpdated', { key: 'web', config: { ...config, enabled: false, output_transform: '.status' }, updatedAt: '2026-01-02T00:00:00.000Z' });
  log.append('tool_configuration-old', 'ToolConfigurationCreated', { key: 'old', config, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('tool_configuration-old', 'ToolConfigurationDeleted', { key: 'old', deletedAt: '2026-01-03T00:00:00.000Z' });

  it('keeps one row per configuration with its settings, and drops deleted ones', async () => {
    const harness = await given(log.events).project(toolConfigurationsProjection);
    expect(await harness.reads.get(TOOL_CONFIGURATIONS, 'web')).toMatchObject({ type: 'web_get', enabled: false, config: { output_transform: '.status' }, updated_at: '2026-01-02T00:00:00.000Z' });
    expect(await harness.reads.get(TOOL_CONFIGURATIONS, 'old')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(toolConfigurationsProjection, log.events);
    expect(twice).toEqual(once);
  });
});
