import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
import { serviceEnv } from './common';
import { createLogger } from '../apps/api/src/logger';
import { startApp, StartedApp } from '../apps/app';

export const BENCH_KEY = 'zut_bench_key_0123456789abcdefghijkl';

export interface BenchService {
  readonly started: StartedApp;
  /** The service's DATA_DIR (removed on close unless it was kept). */
  readonly dataDir: string;
  /** JSON call with the bench key; a status ≥ 300 throws with the body. */
  call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Waits until the search projection has applied every event written so far; throws past `timeoutMs`. */
export async function untilSearchable(started: StartedApp, timeoutMs: number): Promise<void> {
  const { infra } = started;
  if (!(await infra.progress.waitFor(await infra.events.headPosition(), ['search'], timeoutMs))) throw new Error('search projection did not catch up');
}

/** The whole service (embedded default, silent logs) in a fresh temporary data dir, on a loopback port. */
export async function startBenchService(name: string, env: Record<string, string> = {}, keepDir?: string): Promise<BenchService> {
  // A kept data dir (the scale bench's `keep=DIR`) is created if missing, reused if present, never removed.
  if (keepDir) mkdirSync(keepDir, { recursive: true });
  const dir = keepDir ?? mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: BENCH_KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000',
    // The benches' model, encoder and reranker servers listen on loopback.
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1', ...serviceEnv(), ...env });
  const started = await startApp(config, 'all', createLogger('silent'), () => undefined);
  return {
    started,
    dataDir: dir,
    async call(method, path, body) {
      const res = await fetch(`${started.url}${path}`, { method, headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
    async close() {
      await started.app.close();
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
