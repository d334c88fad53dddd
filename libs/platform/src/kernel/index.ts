/**
 * The kernel entry (`@lib/platform/kernel`): what domain code may use — typed errors, ids, the clock, the event
 * envelope and the configuration reader. Pure TypeScript and node's core modules: importing it loads no
 * adapter, driver or framework (the dependency rules check what it reaches).
 */
export * from './errors';
export * from './ids';
export * from './recurrence';
export * from './clock';
export * from './yield';
export * from '../event-store/events';
export * from './url-credentials';
export * from './sibling-worker';
