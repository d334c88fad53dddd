import type { Tool, ToolRegistry } from './tool.port';
import { ToolRegistryHolder } from './tool-registry-holder';

describe('ToolRegistryHolder', () => {
  const empty = (): ToolRegistry => Object.assign(new Map<string, Tool>(), { catalogue: [] });
  const registry = empty();

  it('refuses to be read before the module binds the registry', () => {
    expect(() => new ToolRegistryHolder().registry).toThrow('the tool registry is used before AgentsModule built it');
  });

  it('gives the registry it was bound to, and refuses another one', () => {
    const holder = new ToolRegistryHolder();
    holder.bind(registry);
    expect(holder.registry).toBe(registry);
    expect(() => holder.bind(empty())).toThrow('the tool registry is bound twice');
  });
});
