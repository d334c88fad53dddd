import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: string[];
  exited: Promise<number | null>;
}

/**
 * Starts `apps/main.ts` (TypeScript, through ts-node without type checks and tsconfig-paths) as a separate process
 * on a random port; `preload` modules are required first (e.g. to change a platform default); `args` go to the
 * service (e.g. `--role=worker`).
 */
export async function spawnService(env: Record<string, string>, timeoutMs = 30_000, preload: readonly string[] = [], args: readonly string[] = []): Promise<ServiceProcess> {
  const root = join(__dirname, '..', '..');
  const preloads = preload.flatMap((p) => ['-r', p]);
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ...preloads, join(root, 'apps', 'main.ts'), ...args], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', ...env },
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
