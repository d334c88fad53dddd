import type { Capability } from '@lib/auth';
import { CapabilityAgentUse } from './capability-agent-use';

const reach = (caps: Capability[], key = 'writer') => new CapabilityAgentUse().reach({ caps }, key);

describe('CapabilityAgentUse: how far a caller reaches an agent', () => {
  it('runs an agent it may use, on that key or on every agent', () => {
    expect(reach([{ action: 'agent.use', scope: 'writer' }])).toBe('use');
    expect(reach([{ action: 'agent.use', scope: '*' }])).toBe('use');
  });

  it.each(['agent.view', 'agent.develop', 'agent.administer'] as const)('sees but may not run an agent it holds only %s on', (action) => {
    expect(reach([{ action, scope: 'writer' }])).toBe('visible');
  });

  it('does not see an agent its capabilities name elsewhere (answered as a missing one)', () => {
    expect(reach([{ action: 'agent.use', scope: 'other' }, { action: 'corpus.read', scope: '*' }])).toBe('hidden');
    expect(reach([])).toBe('hidden');
  });
});
