import { join } from 'node:path';
import { HostProcess, Network } from './netns';
import { entryArgs } from './service-build';

export interface ServiceHost {
  readonly name: string;
  readonly role: 'api' | 'worker';
  /** `http://<host address>:<port>`: reached by the test over the bridge. */
  readonly url: string;
  readonly proc: HostProcess;
}

const root = join(__dirname, '..', '..');

/**
 * Starts the compiled service (test/support/service-build.ts) inside a host of the network with `--role`, listening on
 * the host's own address; resolves once it logs "service started" (rejects with its output if it exits or takes longer
 * than `timeoutMs`). `env` completes the environment (DATA_DIR, POSTGRES_URL, keys…).
 */
export async function startServiceHost(network: Network, name: string, role: 'api' | 'worker', env: Record<string, string>, timeoutMs = 60_000): Promise<ServiceHost> {
  const host = network.host(name);
  const proc = network.run(host, process.execPath, [...entryArgs('apps/main.ts'), `--role=${role}`], { LOG_LEVEL: 'info', PORT: '8080', HOST: host.ip, ...env }, root);
  const deadline = Date.now() + timeoutMs;
  let exitedWith: number | string | null | undefined;
  void proc.exited.then((code) => (exitedWith = code ?? 'unknown'));
  for (;;) {
    const started = proc.output.find((line) => line.includes('"service started"'));
    if (started) return { name, role, url: `http://${host.ip}:${JSON.parse(started).port}`, proc };
    if (exitedWith !== undefined) throw new Error(`${name} (${role}) exited with ${exitedWith}:\n${proc.output.slice(-40).join('\n')}`);
    if (Date.now() > deadline) {
      proc.child.kill('SIGKILL');
      throw new Error(`${name} (${role}) did not start in ${timeoutMs} ms:\n${proc.output.slice(-40).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
