import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { SandboxPool } from './adapters/sandbox/sandbox-pool';
import { LambdaSandbox } from './adapters/lambda/lambda-sandbox';
import { McpClient } from './adapters/mcp/mcp-client';
import { LambdaRunner } from './application/lambda-runner.port';
import { McpConnector } from './application/mcp-connector.port';
import { Sandbox } from './application/sandbox.port';
import { ToolConfigurations } from './application/tool-configurations/tool-configurations';
import { ToolServers } from './application/tool-servers/tool-servers';
import { UserTools } from './application/user-tools/user-tools';
import { ToolCaller } from './application/tools/tool-caller';
import { SERVICE_TOOL_PROVIDERS } from './application/tools/tool-catalogue';
import { ToolRegistryHolder } from './application/tools/tool-registry-holder';
import { ToolAttachments } from './application/tools/tool.port';

export interface ToolsModuleOptions {
  /** The module that provides SecretBox (tool servers' credentials are sealed with it). */
  readonly llms: DynamicModule;
}

/**
 * The tools context: its own tools, tool configurations, tool servers, user tools, the sandboxes and the tool
 * caller. Imported by the agents module, which provides the ports these need from it (ArtifactBytes,
 * SharedConfigurationRights, ToolUsers) and builds the registry (AGENT_TOOLS) from every tool type's entry.
 */
@Module({})
export class ToolsModule {
  static forRoot(options: ToolsModuleOptions): DynamicModule {
    const providers = [SandboxPool, LambdaSandbox, ToolRegistryHolder, ToolConfigurations, ToolServers, UserTools, ToolCaller, ...SERVICE_TOOL_PROVIDERS];
    // The use cases know the sandboxes and the MCP client by their ports (application/*.port.ts).
    const ports = [{ provide: Sandbox, useExisting: SandboxPool }, { provide: LambdaRunner, useExisting: LambdaSandbox }, { provide: McpConnector, useClass: McpClient }];
    return {
      module: ToolsModule,
      imports: [CqrsModule, options.llms],
      providers: [...providers, ...ports, { provide: ToolAttachments, useExisting: ToolServers }],
      exports: [...providers, Sandbox, LambdaRunner, McpConnector, ToolAttachments],
    };
  }
}
