import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxesRunning } from './support/sandbox-processes';
import { scratchDir } from './support/scratch-dir';
import { entryArgs } from './support/service-build';
import { startTestApp, TestApp } from './support/test-app';

async function until(what: string, ok: () => boolean, timeoutMs = 90_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const code = 'def process(x: int) -> dict:\n    """Doubles.\n\n    Args:\n        x: a number\n    """\n    return {"y": x * 2}\n';

/**
 * Lambdas are ready before a request needs them after a restart (docs/lambda-tools.md, "Start cost"): the start
 * snapshot is kept in DATA_DIR, and a service that holds lambdas starts its warm sandbox at start. One without
 * lambdas starts none.
 */
describe('lambda sandboxes at start', () => {
  const dataDir = scratchDir('ars-lambda-start-');
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("makes a new install's start snapshot in the background at its first start (the service's entry point), lambdas or not", async () => {
    const fresh = scratchDir('ars-lambda-first-start-');
    const child = spawn(process.execPath, entryArgs('apps/main.ts'), { env: { ...process.env, DATA_DIR: fresh, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, stdio: 'ignore' });
    try {
      await until('the snapshot of a service that never saw a lambda', () => existsSync(join(fresh, 'lambda')) && readdirSync(join(fresh, 'lambda')).some((f) => /^snapshot-[0-9a-f]{16}\.bin$/.test(f)), 120_000);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 180_000);

  it('starts no sandbox in a service that has no lambda', async () => {
    app = await startTestApp();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(sandboxesRunning()).toBe(0);
  });

  it('keeps the start snapshot in DATA_DIR, and a restarted service holding lambdas has a sandbox waiting before any request', async () => {
    app = await startTestApp({ dataDir });
    const created = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'dbl', description: 'Doubles', language: 'python', code });
    expect(created.status).toBe(201);
    await until('the snapshot file', () => existsSync(join(dataDir, 'lambda')) && readdirSync(join(dataDir, 'lambda')).some((f) => /^snapshot-[0-9a-f]{16}\.bin$/.test(f)));
    await app.close();
    app = undefined;
    expect(sandboxesRunning()).toBe(0);

    app = await startTestApp({ dataDir });
    await until('a warm sandbox after the restart', () => sandboxesRunning() === 1);
    const tested = await app.call('POST', '/v2/tools/tol_dbl/test', { input: { x: 21 } });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ type: 'success', output: { y: 42 } });
    // The call took the waiting sandbox and one more is started for the next: never a second at once for one call.
    await until('the pool refilled', () => sandboxesRunning() === 1);
  }, 240_000);
});
