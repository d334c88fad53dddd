import { applyOverrides, UnresolvedRef } from './argument-overrides';

describe('argument_override', () => {
  const sources = { agentSecrets: { token: 's3cr3t' }, agentMetadata: { base: 'https://api.example.com' }, sessionSecrets: {}, sessionMetadata: { user: 'u1' } };

  it('resolves $refs at any depth, and shows secrets as **** wherever they are', () => {
    const { resolved, shown } = applyOverrides({ q: 'x' }, { url: { $ref: 'agent.metadata.base' }, headers: { authorization: { $ref: 'agent.secrets.token' } }, list: [{ $ref: 'session.metadata.user' }, 2] }, sources);
    expect(resolved).toEqual({ q: 'x', url: 'https://api.example.com', headers: { authorization: 's3cr3t' }, list: ['u1', 2] });
    expect(shown).toEqual({ q: 'x', url: 'https://api.example.com', headers: { authorization: '****' }, list: ['u1', 2] });
  });

  it('names the argument whose $ref does not resolve', () => {
    expect(() => applyOverrides({}, { headers: { authorization: { $ref: 'agent.secrets.absent' } } }, sources)).toThrow(UnresolvedRef);
    expect(() => applyOverrides({}, { headers: { authorization: { $ref: 'agent.secrets.absent' } } }, sources)).toThrow(/argument headers\.authorization/);
  });
});
