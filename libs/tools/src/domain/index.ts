/**
 * The domain entry of the tools context (`@lib/tools/domain`): tool types, a tool's configuration and its checks,
 * reusable tool configurations, tool servers, user tools. Pure (the kernel only): what the agents' domain may
 * reach to validate an agent's tools.
 */
export * from './tool-types';
export * from './tool-config';
export * from './tool-approval';
export * from './tool-configuration';
export * from './tool-server';
export * from './user-tool';
