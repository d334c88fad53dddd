import type { Capability } from '@lib/auth';
import type { ToolConfig } from '../domain/tool-config';

/** Who writes a configuration: only their capabilities matter here (a Principal fits). */
export interface Configurer {
  readonly caps: readonly Capability[];
}

/** A shared configuration other agents may use: a change to it is a change to each of them. */
export type SharedConfiguration = { readonly kind: 'tool_configuration' | 'user_tool' | 'tool_server' | 'instruction'; readonly id: string; readonly label: string };

/**
 * May this configurer write or change a shared configuration (a reusable tool configuration, a user tool, a tool
 * server) that agents use? The rights are the agents' (what their identities may reach): libs/tools owns the
 * port, the agents context implements it (`ConfigurerRights`).
 */
export abstract class SharedConfigurationRights {
  /** The configuration as written (`tools` under `prefix`) asks only for rights the writer has, and the writer may change each agent using it. */
  abstract assertSharedWrite(caller: Configurer, shared: SharedConfiguration, tools: Readonly<Record<string, ToolConfig>>, prefix: string): Promise<void>;
  /** The writer may change each agent using the configuration. */
  abstract assertSharedChange(caller: Configurer, shared: SharedConfiguration): Promise<void>;
}
