/**
 * The events entry of the tools context (`@lib/tools/events`): the event types of its streams. Domain code only.
 */
export type { ToolConfigurationEvent, ReusableToolConfig } from './domain/tool-configuration';
export type { ToolServerEvent } from './domain/tool-server';
export { serverToolId } from './domain/tool-server';
export type { UserToolEvent } from './domain/user-tool';
