import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { entryArgs } from './service-build';

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: string[];
  exited: Promise<number | null>;
}

/**
 * Starts the service as a separate process on a random port: compiled once for the run (service-build.ts), or
 * `apps/main.ts` through ts-node without type checks and tsconfig-paths when `preload` modules are given (they patch
 * the sources, e.g. to change a platform default) or the build failed; `args` go to the service (e.g.
 * `--role=worker`).
 */
export async function spawnService(env: Record<string, string>, timeoutMs = 30_000, preload: readonly string[] = [], args: readonly string[] = []): Promise<ServiceProcess> {
  const root = join(__dirname, '..', '..');
  const entry = entryArgs('apps/main.ts', preload);
  // The console is found beside the sources' build (dist/console); the compiled twin lives elsewhere.
  const consoleDir = existsSync(join(root, 'dist', 'console')) ? { CONSOLE_DIR: join(root, 'dist', 'console') } : {};
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_WEBHOOKS_ALLOWED_HOSTS: '127.0.0.1', ...consoleDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start:\n${output.join('\n')}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        output.push(line);
        if (line.includes('"service started"')) {
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${JSON.parse(line).port}`);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`service exited with ${code}:\n${output.join('\n')}`)));
  });
  return { child, url, output, exited };
}
