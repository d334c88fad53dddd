import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { AddressLookup, Clock, loadConfig } from '@lib/platform';
import { createLogger } from '../../apps/api/src/logger';
import { startApp, StartedApp } from '../../apps/app';
import type { Role } from '../../apps/infrastructure/infrastructure';
import { scratchDir } from './scratch-dir';

export const TEST_KEY = 'zut_test_bootstrap_key_0123456789abcdef';

export interface TestApp {
  readonly url: string;
  readonly key: string;
  readonly dataDir: string;
  readonly started: StartedApp;
  /** Every log line the app wrote, for tests that scan logs for secrets. */
  readonly logLines: string[];
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  role?: Role;
  dataDir?: string;
  clock?: Clock;
  /** Resolver of the outbound client, instead of the system's (a fake one plays DNS rebinding). */
  lookup?: AddressLookup;
}

/** Starts the whole service (embedded default) on a random loopback port with a fresh data dir. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? scratchDir('ars-e2e-');
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_API_KEY: TEST_KEY,
    LOG_LEVEL: 'info',
    SQLITE_SYNCHRONOUS: 'NORMAL',
    // The scripted model servers, and the sites, tool servers, sources and webhook receivers tests start, listen on 127.0.0.1, which
    // the outbound policy refuses by default: each purpose's allow list names it (docs/security.md).
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1',
    OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1',
    OUTBOUND_WEBHOOKS_ALLOWED_HOSTS: '127.0.0.1',
    ...options.env,
  });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      const lines = String(chunk).split('\n').filter(Boolean);
      logLines.push(...lines);
      // A 500 is a defect whatever the test asserts: its cause goes to the test output, where CI shows it.
      for (const line of lines) if (line.includes('"msg":"unhandled error"')) process.stderr.write(`service log: ${line}\n`);
      cb();
    },
  });
  const started = await startApp(config, options.role ?? 'all', createLogger(config.logLevel, sink), (l) => logLines.push(l), { clock: options.clock, lookup: options.lookup });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    // A header given as '' is left out (e.g. `{'x-api-key': ''}` to call without the owner key).
    const all: Record<string, string> = { 'x-api-key': TEST_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers };
    const res = await fetch(`${started.url}${path}`, {
      method,
      headers: Object.fromEntries(Object.entries(all).filter(([, v]) => v !== '')),
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as any, headers: res.headers };
  };
  return {
    url: started.url,
    key: TEST_KEY,
    dataDir,
    started,
    logLines,
    call,
    async close() {
      await started.app.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
