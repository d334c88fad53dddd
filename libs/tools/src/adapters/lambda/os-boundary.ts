import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * How a lambda sandbox process is started under the operating system's boundary (docs/lambda-tools.md): its own
 * PID namespace (nothing outside it can be named, so nothing outside can be signalled or reniced) with its own
 * `/proc`, an unprivileged uid/gid (the `LAMBDA_SANDBOX_USER` when the service is root; else an unprivileged user
 * namespace), no new privileges, a session of its own (`detached` at spawn), and rlimits. Built from util-linux
 * (`unshare`, `prlimit`, `setpriv`), present on every mainstream Linux.
 */
export interface OsBoundary {
  /** `os`: the namespaces and the user; `javascript`: the operator opted out, the permission model alone. */
  readonly kind: 'os' | 'javascript';
  /** What the sandbox runs as, for the log and errors. */
  readonly describe: string;
  /** The command line that runs `node <args>` inside the boundary. */
  wrap(node: string, args: readonly string[]): { command: string; args: string[] };
}

export interface OsBoundaryOptions {
  readonly isolation: 'os' | 'javascript';
  readonly user: string;
  /** Files the sandbox must read (the runtime, Pyodide, node): checked as the sandbox user. */
  readonly mustRead: readonly string[];
  /** A directory the sandbox must not read (the service's DATA_DIR): checked as the sandbox user when it is another uid. */
  readonly mustNotRead?: string;
  readonly nodePath: string;
}

// Last in the chain, `setsid`: the sandbox leads a session and group of its own inside the namespace, so "its
// group" (kill(0), which `process.kill(process.ppid)` is there) is itself, not the wrapper of the same uid.

/** Limits every sandbox gets: no core files, no file writes, few descriptors, no raising its priority. */
const RLIMITS = ['--core=0', '--fsize=0', '--nofile=256', '--nice=0', '--rtprio=0', '--memlock=0', '--msgqueue=0'];

/**
 * Sandboxes run at a lower CPU priority than the service (niceness 10, CFS weight ~1/10 of the service's): a
 * lambda's work, and above all Pyodide's start, is CPU-bound, and on a small machine a few of them at once took the
 * cores from the event loop (a 4×4 composed call held `/health` 734 ms). A sandbox may lower its own priority
 * further, never raise it (`--nice=0` above).
 */
const NICENESS = '10';

/** Why lambdas cannot run: what the operator must provide, said once in the error of every call. */
export class SandboxUnavailable extends Error {}

/** Finds and checks the boundary: one short probe process run through it. Rejects with `SandboxUnavailable`. */
export async function resolveOsBoundary(options: OsBoundaryOptions): Promise<OsBoundary> {
  if (options.isolation === 'javascript') return { kind: 'javascript', describe: 'the service user, JavaScript permission model only (LAMBDA_SANDBOX_ISOLATION=javascript)', wrap: (node, args) => ({ command: node, args: [...args] }) };
  const optOut = 'or set LAMBDA_SANDBOX_ISOLATION=javascript to run lambdas behind the JavaScript permission model alone (not a boundary against a hostile lambda)';
  if (process.platform !== 'linux') throw new SandboxUnavailable(`lambda sandboxes need Linux namespaces (this is ${process.platform}): run the service on Linux, ${optOut}`);
  const tools = Object.fromEntries(['nice', 'unshare', 'prlimit', 'setpriv', 'setsid'].map((t) => [t, which(t)]));
  const missing = Object.entries(tools).filter(([, path]) => !path).map(([t]) => t);
  if (missing.length) throw new SandboxUnavailable(`lambda sandboxes need ${missing.join(', ')} on PATH: install util-linux (and coreutils for nice), ${optOut}`);
  const asRoot = process.getuid?.() === 0;
  const candidates: OsBoundary[] = [];
  // With a /proc of its own first; without where mounting one is refused (a container's masked /proc): the PID
  // namespace alone already keeps every outside process from being named.
  for (const mountProc of [['--mount-proc'], []]) {
    if (asRoot) {
      const user = lookUpUser(options.user);
      if (!user) throw new SandboxUnavailable(`LAMBDA_SANDBOX_USER "${options.user}" is not a user of this system: name an unprivileged user (uid or name) for lambda sandboxes, ${optOut}`);
      if (user.uid === 0 || user.gid === 0) throw new SandboxUnavailable(`LAMBDA_SANDBOX_USER "${options.user}" is root: name an unprivileged user for lambda sandboxes, ${optOut}`);
      const { uid, gid } = user;
      const prefix = [tools.nice!, '-n', NICENESS, tools.unshare!, '--pid', '--fork', '--kill-child', ...mountProc, tools.prlimit!, ...RLIMITS, '--', tools.setpriv!, `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--pdeathsig=keep', tools.setsid!];
      candidates.push({ kind: 'os', describe: `user ${options.user} (${uid}:${gid}) in its own PID namespace${mountProc.length ? '' : ' (the host /proc: none of its own could be mounted)'}`, wrap: (node, args) => ({ command: prefix[0], args: [...prefix.slice(1), node, ...args] }) });
    } else {
      const prefix = [tools.nice!, '-n', NICENESS, tools.unshare!, '--user', '--map-current-user', '--pid', '--fork', '--kill-child', ...mountProc, tools.prlimit!, ...RLIMITS, '--', tools.setpriv!, '--no-new-privs', '--pdeathsig=keep', tools.setsid!];
      candidates.push({ kind: 'os', describe: `an unprivileged user namespace with its own PID namespace${mountProc.length ? '' : ' (the host /proc: none of its own could be mounted)'}`, wrap: (node, args) => ({ command: prefix[0], args: [...prefix.slice(1), node, ...args] }) });
    }
  }
  let error = 'no boundary tried';
  for (const boundary of candidates) {
    const probe = await runProbe(boundary, options);
    if (probe.ok) return boundary;
    error = probe.error;
  }
  const need = asRoot
    ? `running as ${options.user} (LAMBDA_SANDBOX_USER) it could not ${error}; it needs a PID namespace (CAP_SYS_ADMIN: a container has it only when given it) and node, the runtime and Pyodide readable by that user`
    : `an unprivileged user namespace could not be made (${error}): allow them (sysctl user.max_user_namespaces > 0; kernel.unprivileged_userns_clone=1 or the AppArmor rule where the distribution restricts them; in a container, a seccomp profile that allows unshare), or run the service as root with LAMBDA_SANDBOX_USER`;
  throw new SandboxUnavailable(`lambda sandboxes cannot start under the OS boundary: ${need}, ${optOut}`);
}

/** A short `node -e` through the boundary: it must run as PID 1 of its own namespace, read what it needs and, as another uid, not read DATA_DIR. */
async function runProbe(boundary: OsBoundary, options: OsBoundaryOptions): Promise<{ ok: true } | { ok: false; error: string }> {
  const script = `const fs=require('fs');const out={pid:process.pid,unread:[],dataReadable:false};for(const p of JSON.parse(process.argv[1])){try{fs.accessSync(p,fs.constants.R_OK)}catch{out.unread.push(p)}}const d=process.argv[2];if(d){try{fs.readdirSync(d);out.dataReadable=true}catch{}}process.stdout.write(JSON.stringify(out))`;
  const { command, args } = boundary.wrap(options.nodePath, ['-e', script, JSON.stringify(options.mustRead), process.getuid?.() === 0 ? (options.mustNotRead ?? '') : '']);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: {}, detached: true });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', (e) => {
      err += e.message;
      resolve(-1);
    });
    child.on('close', resolve);
  });
  clearTimeout(timer);
  if (code !== 0) return { ok: false, error: `start (exit ${code}: ${err.trim().split('\n')[0]?.slice(0, 200) ?? ''})` };
  let seen: { pid: number; unread: string[]; dataReadable: boolean };
  try {
    seen = JSON.parse(out) as typeof seen;
  } catch {
    return { ok: false, error: 'start (no answer from the probe)' };
  }
  if (seen.pid !== 1) return { ok: false, error: 'get a PID namespace of its own' };
  if (seen.unread.length) return { ok: false, error: `read ${seen.unread.join(', ')}` };
  if (seen.dataReadable) return { ok: false, error: `be kept out of DATA_DIR ${options.mustNotRead} (make it 0700, owned by the service's user)` };
  return { ok: true };
}

function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** `uid`, `uid:gid`, or a name from /etc/passwd (its primary group). */
function lookUpUser(spec: string): { uid: number; gid: number } | undefined {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(spec);
  if (numeric) return { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) };
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , uid, gid] = line.split(':');
      if (name === spec && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // No passwd file: only numeric ids.
  }
  return undefined;
}
