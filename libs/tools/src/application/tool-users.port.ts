import type { ConfiguredTools } from './tools/tool.port';

/** An agent as the tools context sees one: its key, its tools and the reusable configurations it refers to. */
export interface ToolUser {
  readonly id: string;
  readonly config: ConfiguredTools;
  readonly tool_configuration_keys?: readonly string[];
}

/**
 * Which agents use a tool (a delete is refused while some do): the first page (20) of those `uses` accepts.
 * libs/tools owns the port, the agents context implements it over its agents' read model.
 */
export abstract class ToolUsers {
  abstract agentsUsing(uses: (agent: ToolUser) => boolean): Promise<readonly ToolUser[]>;
}

/** A check of an agent's tools against what exists (400 naming the entry): the agents' writer runs them. */
export type ToolReferenceCheck = (config: ConfiguredTools) => Promise<Record<string, string>>;
