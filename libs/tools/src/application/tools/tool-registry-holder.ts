import { Injectable } from '@nestjs/common';
import type { ToolRegistry } from './tool.port';

/**
 * The tool registry (`AGENT_TOOLS`), bound once when the module builds it. For what needs the registry but is
 * itself needed by a tool in it: `ToolServers` lists the built-in tools from the registry, while the registry's
 * `mcp` and `lambda` tools need `ToolServers` first, so a constructor dependency on `AGENT_TOOLS` would be a
 * cycle. Used before it is bound (nothing does: the registry is built at module init) it throws.
 */
@Injectable()
export class ToolRegistryHolder {
  private bound?: ToolRegistry;

  bind(registry: ToolRegistry): void {
    if (this.bound && this.bound !== registry) throw new Error('the tool registry is bound twice');
    this.bound = registry;
  }

  get registry(): ToolRegistry {
    if (!this.bound) throw new Error('the tool registry is used before AgentsModule built it');
    return this.bound;
  }
}
