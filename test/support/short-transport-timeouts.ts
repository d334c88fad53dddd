import { Agent, setGlobalDispatcher } from 'undici';

/**
 * Preloaded into a spawned service: Node's global fetch then gives up after 300 ms without response headers or
 * body bytes (instead of its 300 s), so a test can show in a second that calls to models do not depend on it.
 */
setGlobalDispatcher(new Agent({ headersTimeout: 300, bodyTimeout: 300 }));
