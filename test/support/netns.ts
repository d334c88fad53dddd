import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';

/**
 * Hosts in network namespaces for the multi-host e2e suite (issue 47). One Linux bridge in the root namespace carries
 * a private /24 (10.247.<random>.0/24): the bridge holds `.1`, the address of the test process itself, so the test
 * reaches every host and every host reaches the test's own servers (a scripted model) without routing; each host is a
 * namespace with `lo` up and `eth0`, one end of a veth pair whose other end is a port of the bridge. Cutting a host
 * downs its bridge port: the host keeps its address and routes but its packets go nowhere (a pulled cable: sockets
 * hang, TCP retransmits, nothing is refused), until the port is up again.
 *
 * Names carry a random suffix (two runs never collide) and the namespaces the test process's pid (`arsnet-<pid>-…`),
 * the links an alias `arsnet pid=<pid>`: `sweepLeftovers` (run by `create`) removes what a dead process left.
 * Teardown kills every process in each namespace (not only those started here: `ip netns pids`), then deletes the
 * veths, namespaces and bridge; it also runs at the test process's exit.
 */

const PREFIX = 'arsnet';
const ALIAS = (pid: number) => `${PREFIX} pid=${pid}`;
const OUTPUT_LINES = 5_000;

export interface NetnsHost {
  readonly name: string;
  /** The namespace (`ip netns exec <ns>`). */
  readonly ns: string;
  /** The host's address on the bridge. */
  readonly ip: string;
  /** The bridge-side end of its veth (down while the host is cut). */
  readonly port: string;
}

export interface HostProcess {
  readonly host: NetnsHost;
  readonly child: ChildProcess;
  /** Its stdout and stderr, by line (the last 5,000). */
  readonly output: string[];
  /** Resolves with the exit code, or the signal's name when killed. */
  readonly exited: Promise<number | string | null>;
}

/** Why namespaces cannot be built here (not root, no `ip`), or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['-V'], { stdio: 'pipe' });
  } catch {
    return 'the `ip` command (iproute2) is not installed';
  }
  // Root in a container without CAP_NET_ADMIN (or CAP_SYS_ADMIN for the mount) still cannot make one.
  const probe = `${PREFIX}-${process.pid}-probe`;
  try {
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'pipe' });
  } catch (e) {
    return `network namespaces cannot be made here: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
  } finally {
    tryIp('netns', 'del', probe);
  }
  return undefined;
}

function ip(...args: string[]): string {
  return execFileSync('ip', args, { stdio: 'pipe', timeout: 10_000 }).toString();
}

function tryIp(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // Already gone.
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** SIGKILLs every process in the namespace (whoever started it). */
function killAllIn(ns: string): void {
  let pids: number[] = [];
  try {
    pids = ip('netns', 'pids', ns).split('\n').filter(Boolean).map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

/** Removes the namespaces and links that a test process now dead left behind (its pid is in their name or alias). */
export function sweepLeftovers(): string[] {
  const removed: string[] = [];
  const namespaces = JSON.parse(ip('-j', 'netns', 'list') || '[]') as { name: string }[];
  for (const { name } of namespaces) {
    const owner = new RegExp(`^${PREFIX}-(\\d+)-`).exec(name);
    if (!owner || alive(Number(owner[1]))) continue;
    killAllIn(name);
    tryIp('netns', 'del', name);
    removed.push(name);
  }
  const links = JSON.parse(ip('-j', 'link', 'show') || '[]') as { ifname: string; ifalias?: string }[];
  for (const { ifname, ifalias } of links) {
    const owner = new RegExp(`^${PREFIX} pid=(\\d+)$`).exec(ifalias ?? '');
    if (!owner || alive(Number(owner[1]))) continue;
    tryIp('link', 'del', ifname);
    removed.push(ifname);
  }
  return removed;
}

/** A /24 of 10.247.0.0/16 that no interface here has an address or route in. */
function freeSubnet(): string {
  const used = ip('-4', '-o', 'addr', 'show') + ip('-4', 'route', 'show');
  for (let attempt = 0; attempt < 64; attempt++) {
    const net = `10.247.${randomInt(0, 256)}`;
    if (!used.includes(`${net}.`)) return net;
  }
  throw new Error('no free /24 in 10.247.0.0/16');
}

export class Network {
  private readonly processes = new Set<HostProcess>();
  private tornDown = false;
  private readonly onExit = () => this.teardownNow();

  private constructor(
    readonly suffix: string,
    readonly bridge: string,
    /** The test process's address on the bridge: the hosts reach the test's servers there. */
    readonly gateway: string,
    readonly hosts: readonly NetnsHost[],
  ) {
    process.once('exit', this.onExit);
  }

  /**
   * Builds the bridge and one namespace per name (at most 36). Sweeps what dead runs left first; on any failure,
   * removes what it made before throwing.
   */
  static create(names: readonly string[]): Network {
    if (names.length > 36) throw new Error('at most 36 hosts');
    sweepLeftovers();
    const suffix = randomBytes(4).toString('hex').slice(0, 5);
    const net = freeSubnet();
    const network = new Network(
      suffix,
      `arsb${suffix}`,
      `${net}.1`,
      names.map((name, i) => ({ name, ns: `${PREFIX}-${process.pid}-${suffix}-${name}`, ip: `${net}.${i + 2}`, port: `arsv${suffix}${i.toString(36)}` })),
    );
    try {
      ip('link', 'add', network.bridge, 'type', 'bridge');
      ip('link', 'set', 'dev', network.bridge, 'alias', ALIAS(process.pid));
      ip('addr', 'add', `${network.gateway}/24`, 'dev', network.bridge);
      ip('link', 'set', network.bridge, 'up');
      for (const host of network.hosts) {
        ip('netns', 'add', host.ns);
        ip('link', 'add', host.port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.ns);
        ip('link', 'set', 'dev', host.port, 'alias', ALIAS(process.pid));
        ip('link', 'set', host.port, 'master', network.bridge, 'up');
        ip('-n', host.ns, 'addr', 'add', `${host.ip}/24`, 'dev', 'eth0');
        ip('-n', host.ns, 'link', 'set', 'eth0', 'up');
        ip('-n', host.ns, 'link', 'set', 'lo', 'up');
      }
      // Another run may have taken the same /24 at the same instant: then its routes and ours would mix.
      const clash = ip('-4', '-o', 'addr', 'show').split('\n').filter((l) => l.includes(` ${net}.`) && !l.includes(` ${network.bridge} `));
      if (clash.length) throw new Error(`subnet ${net}.0/24 taken meanwhile: ${clash.join('; ')}`);
    } catch (e) {
      network.teardownNow();
      throw e;
    }
    return network;
  }

  host(name: string): NetnsHost {
    const host = this.hosts.find((h) => h.name === name);
    if (!host) throw new Error(`no host ${name}`);
    return host;
  }

  /** Runs `cmd args` inside the host's namespace (`ip netns exec`, which execs: the child's pid is the command's). */
  run(host: NetnsHost | string, cmd: string, args: readonly string[] = [], env: Record<string, string> = {}, cwd?: string): HostProcess {
    if (this.tornDown) throw new Error('the network is torn down');
    const h = typeof host === 'string' ? this.host(host) : host;
    const child = spawn('ip', ['netns', 'exec', h.ns, cmd, ...args], { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    const collect = (chunk: Buffer) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) output.push(line);
      if (output.length > OUTPUT_LINES) output.splice(0, output.length - OUTPUT_LINES);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const exited = new Promise<number | string | null>((resolve) => {
      child.once('exit', (code, signal) => resolve(code ?? signal));
      child.once('error', (e) => {
        output.push(`spawn failed: ${e.message}`);
        resolve(null);
      });
    });
    const proc: HostProcess = { host: h, child, output, exited };
    this.processes.add(proc);
    void exited.then(() => this.processes.delete(proc));
    return proc;
  }

  /** The host's link down: its packets are dropped (no error, no reset) until `mend`. */
  cut(host: NetnsHost | string): void {
    ip('link', 'set', (typeof host === 'string' ? this.host(host) : host).port, 'down');
  }

  mend(host: NetnsHost | string): void {
    ip('link', 'set', (typeof host === 'string' ? this.host(host) : host).port, 'up');
  }

  /** Signals every process this harness started on the host. */
  kill(host: NetnsHost | string, signal: NodeJS.Signals = 'SIGTERM'): HostProcess[] {
    const h = typeof host === 'string' ? this.host(host) : host;
    const hit = [...this.processes].filter((p) => p.host === h);
    for (const p of hit) p.child.kill(signal);
    return hit;
  }

  /** Kills everything in the namespaces, waits (bounded) for the processes started here, and removes every link and namespace. */
  async teardown(): Promise<void> {
    const running = [...this.processes];
    this.teardownNow();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(running.map((p) => p.exited)), new Promise((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
  }

  private teardownNow(): void {
    if (this.tornDown) return;
    this.tornDown = true;
    process.removeListener('exit', this.onExit);
    for (const p of this.processes) p.child.kill('SIGKILL');
    for (const host of this.hosts) {
      if (!existsSync(`/run/netns/${host.ns}`)) continue;
      killAllIn(host.ns);
    }
    for (const host of this.hosts) tryIp('link', 'del', host.port);
    for (const host of this.hosts) tryIp('netns', 'del', host.ns);
    tryIp('link', 'del', this.bridge);
  }
}
