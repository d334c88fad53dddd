/**
 * The tools context (`@lib/tools`): the Tool port and one entry per tool type, the service's own tools, tool
 * configurations, tool servers, user tools, and the sandbox, lambda and MCP adapters. It never imports the agents
 * context: a session's abilities reach a tool through its ToolContext callbacks, or through the ports below that
 * the agents context implements (ArtifactBytes, SharedConfigurationRights, ToolUsers).
 */
export * from './domain/index';
export * from './read-models';
export * from './application/tools/tool.port';
export * from './application/tools/tool-catalogue';
export * from './application/tools/tool-registry-holder';
export * from './application/tools/artifact-bytes.port';
export * from './application/configuration-rights.port';
export * from './application/condition-syntax.port';
export * from './application/tool-users.port';
export { LambdaRunner } from './application/lambda-runner.port';
export * from './application/tools/argument-overrides';
export * from './application/tools/secret-destinations';
export * from './application/tools/transform-check';
export * from './application/tools/corpora-search';
export * from './application/tools/client-tool';
export * from './application/tools/web-get';
export * from './application/tools/artifact-tools';
export * from './application/tools/tool-caller';
export * from './application/tools/get-document-text';
export * from './application/tools/scratch-pad';
export * from './application/tools/mcp';
export * from './application/tools/builtin-catalog';
export * from './application/tools/web-search';
export * from './application/tools/document-index';
export * from './application/tools/image-read';
export * from './application/tools/image-analysis';
export * from './application/tools/lambda';
export * from './application/tool-configurations/tool-configurations';
export * from './application/tool-servers/tool-servers';
export * from './application/user-tools/user-tools';
export * from './adapters/sandbox/sandbox-pool';
export { Sandbox } from './application/sandbox.port';
export * from './adapters/lambda/lambda-sandbox';
export * from './tools.module';
