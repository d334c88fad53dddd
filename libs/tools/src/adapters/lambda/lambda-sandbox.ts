// Over 300 lines: a sandbox process's whole life (spawn under the OS boundary, snapshot, warm pool, the job's
// protocol, the memory watch, the kill) shares one set of per-process state; the budget and the boundary are apart
// (lambda-budget.ts, os-boundary.ts).
import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { SERVICE_CONFIG, ServiceConfig, unavailable } from '@lib/platform';
import { CallLease, LambdaBudgetError, LambdaSlots, runningLambda } from './lambda-budget';
import { OsBoundary, resolveOsBoundary, SandboxUnavailable } from './os-boundary';
import { SnapshotFile } from './snapshot-file';
import type { ArtifactAnswer, HostAnswer, LambdaJob, LambdaOutcome, LambdaRunner } from '../../application/lambda-runner.port';

export type { ArtifactAnswer, HostAnswer, LambdaJob, LambdaOutcome, LambdaToolSpec } from '../../application/lambda-runner.port';

/** Composed tool calls a lambda runs at once (the spec: up to 8 concurrent). */
export const LAMBDA_TOOL_CONCURRENCY = 8;
const MAX_LINE_BYTES = 64 * 1024 * 1024;
const START_TIMEOUT_MS = 60_000;

const RUNTIME_DIR = join(__dirname, 'runtime');
const PYODIDE_MJS = require.resolve('pyodide/pyodide.mjs');

/** A sandbox process: started, then waiting for its one job. */
interface Sandbox {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  /** Lines from the sandbox after `ready`, in order. */
  readonly lines: AsyncIterableIterator<string>;
}

/**
 * Python lambdas in Pyodide, each job in its own Node process under the OS boundary (os-boundary.ts: its own PID
 * namespace, an unprivileged user, rlimits, no new privileges) and, inside it, the permission model (reads only of
 * the runtime and Pyodide, no writes, no child processes or threads), an empty environment and the network
 * closed; the process is killed at the deadline or past its memory limit, and thrown away after its job, so no
 * state passes from one call to the next. Warm sandboxes (started, Pyodide loaded) wait once lambdas are in use.
 */
@Injectable()
export class LambdaSandbox implements LambdaRunner, OnModuleDestroy {
  private readonly warm: Sandbox[] = [];
  /** Started for the warm pool, not ready yet: a call that finds no warm sandbox takes one of these first. */
  private readonly warming: Sandbox[] = [];
  private used = false;
  private closed = false;
  private readonly slots: LambdaSlots;
  private readonly all = new Set<ChildProcess>();
  /** The real sandbox process (a grandchild under the OS boundary: spawn starts `unshare`), found once. */
  private readonly inner = new Map<ChildProcess, number>();
  private boundary: Promise<OsBoundary> | undefined;
  private resolved: OsBoundary | undefined;
  /** Pyodide's memory after load (Base64), made once by a process that never runs caller code; null: failed. */
  private snapshot: Buffer | null | undefined;
  private snapshotting = false;
  /** The snapshot kept in DATA_DIR across restarts (none without a data directory). */
  private readonly snapshotFile: SnapshotFile | undefined;

  private readonly log = new Logger('lambda-sandbox');

  constructor(@Inject(SERVICE_CONFIG) private readonly config: ServiceConfig) {
    this.slots = new LambdaSlots(config.lambdaMaxSandboxes, config.lambdaMaxSandboxesPerPrincipal ?? config.lambdaMaxSandboxes);
    this.snapshotFile = config.dataDir ? new SnapshotFile(join(config.dataDir, 'lambda'), snapshotKey()) : undefined;
  }

  onModuleDestroy(): void {
    this.closed = true;
    for (const child of this.all) this.kill(child);
    this.all.clear();
    this.warm.length = 0;
    this.warming.length = 0;
  }

  /**
   * Gets lambdas ready before a request needs them (the service's start, when lambdas exist): the OS boundary's probe,
   * the start snapshot (from DATA_DIR when kept there) and `LAMBDA_WARM_SANDBOXES` warm sandboxes. An unavailable
   * boundary is logged once, as at first use.
   */
  async prepare(): Promise<void> {
    if (this.closed || this.config.lambdaWarmSandboxes < 1) return;
    try {
      await this.osBoundary();
    } catch {
      return;
    }
    this.used = true;
    this.makeSnapshot();
    this.refill();
  }

  /**
   * At a start that finds no snapshot in DATA_DIR (a new install, or new Pyodide, runtime or Node versions), makes
   * one in the background and keeps it there, lambdas or not (LAMBDA_SNAPSHOT_AT_START): a new install's first
   * lambda then starts from it instead of loading Pyodide in full. One process, seconds of one core, once; ≈ 20 MB
   * of disk. A boundary that cannot be had is said at the first lambda request, not here: a service that never
   * runs lambdas logs nothing about them.
   */
  async prepareSnapshot(): Promise<void> {
    if (this.closed || !this.config.lambdaSnapshotAtStart || !this.snapshotFile || this.snapshotFile.exists() || this.snapshot !== undefined) return;
    let boundary: OsBoundary;
    try {
      boundary = await resolveOsBoundary(this.boundaryOptions());
    } catch {
      return;
    }
    // The opt-out (javascript) is warned about at first use; no snapshot is made ahead for it.
    if (boundary.kind !== 'os' || this.closed) return;
    this.resolved ??= boundary;
    this.boundary ??= Promise.resolve(boundary);
    this.makeSnapshot();
  }

  private boundaryOptions(): Parameters<typeof resolveOsBoundary>[0] {
    return {
      isolation: this.config.lambdaSandboxIsolation ?? 'os',
      user: this.config.lambdaSandboxUser ?? 'nobody',
      mustRead: [process.execPath, join(RUNTIME_DIR, 'sandbox.mjs'), join(RUNTIME_DIR, 'lambda_runtime.py'), PYODIDE_MJS, join(dirname(PYODIDE_MJS), 'pyodide.asm.wasm'), join(dirname(PYODIDE_MJS), 'python_stdlib.zip')],
      ...(this.config.dataDir ? { mustNotRead: this.config.dataDir } : {}),
      nodePath: process.execPath,
    };
  }

  /** The OS boundary every sandbox starts under, checked once by a probe; rejects (`SandboxUnavailable`) saying what the operator must provide. */
  osBoundary(): Promise<OsBoundary> {
    this.boundary ??= resolveOsBoundary(this.boundaryOptions()).then(
      (boundary) => {
        this.resolved = boundary;
        if (boundary.kind === 'javascript') this.log.warn(`lambda sandboxes run WITHOUT the OS boundary (${boundary.describe}): a hostile lambda that reaches JavaScript can signal or renice the service's processes`);
        else this.log.log(`lambda sandboxes run as ${boundary.describe}`);
        return boundary;
      },
      (e: Error) => {
        this.log.error(e.message);
        throw e;
      },
    );
    return this.boundary;
  }

  /** Resolves once a warm sandbox waits (benchmarks and tests: a warm start measured as such). */
  async whenWarm(timeoutMs = 60_000): Promise<void> {
    await this.osBoundary();
    this.used = true;
    this.makeSnapshot();
    this.refill();
    const until = Date.now() + timeoutMs;
    while (!this.warm.length) {
      if (Date.now() > until) throw new Error('no warm sandbox');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Resolves once the start snapshot is made (true) or could not be (false). */
  async whenSnapshot(timeoutMs = 60_000): Promise<boolean> {
    await this.osBoundary();
    this.makeSnapshot();
    const until = Date.now() + timeoutMs;
    while (this.snapshot === undefined && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return !!this.snapshot;
  }

  /** Resident memory of the sandboxes waiting, in bytes (benchmarks). */
  async warmResidentBytes(): Promise<number[]> {
    return Promise.all(this.warm.map((s) => this.residentBytes(s.child)));
  }

  /**
   * Runs a job in a sandbox of its own. Every sandbox counts against `LAMBDA_MAX_SANDBOXES`: a job called from a
   * lambda's composed tools runs inside the reservation of the call it belongs to (lambda-budget.ts); any other job
   * reserves `1 + height` sandboxes for its call first, waiting its turn. Throws a DomainError (503) when the OS
   * boundary is not available; a job the budget refuses is a failed run saying why.
   */
  async run(job: LambdaJob): Promise<LambdaOutcome> {
    try {
      await this.osBoundary();
    } catch (e) {
      if (e instanceof SandboxUnavailable) throw unavailable('lambda.sandbox_unavailable', e.message);
      throw e;
    }
    const parent = runningLambda.getStore();
    const height = Math.max(0, job.height ?? 0);
    const refused = (why: string): LambdaOutcome => ({ validation: { status: job.run ? 'valid' : 'invalid', errors: job.run ? [] : [why] }, input_schema: null, output_schema: null, ...(job.run ? { execution: { success: false, error: { message: why }, latency_millis: 0 } } : {}), memory_used_mb: 0, cold: false, stopped: why });
    if (parent) {
      // A lambda's own tools: inside its call's reservation, one level less than the caller had.
      if (parent.height < 1) return refused('this call reserved no sandbox for another level of lambdas: the lambdas changed while the call ran');
      const own = Math.min(height, parent.height - 1);
      // When the calling lambda ends (answered, stopped), what it started stops too.
      const signal = job.signal ? AbortSignal.any([job.signal, parent.ended]) : parent.ended;
      try {
        await parent.lease.take(own, true, signal);
      } catch (e) {
        if (e instanceof LambdaBudgetError) return refused(e.message);
        throw e;
      }
      try {
        return await this.execute({ ...job, signal }, parent.lease, own);
      } finally {
        parent.lease.give();
      }
    }
    const principal = job.principal ?? 'service';
    const lease = new CallLease(height + 1, this.config.lambdaMaxNestedRuns ?? 64);
    try {
      await this.slots.reserve(principal, lease.size, job.signal);
    } catch (e) {
      if (e instanceof LambdaBudgetError) return refused(e.message);
      throw e;
    }
    try {
      await lease.take(height, false);
      try {
        return await this.execute(job, lease, height);
      } finally {
        lease.give();
      }
    } finally {
      // The reservation goes back once the call's nested lambdas (stopped with it) have ended too.
      void lease.idle().then(() => this.slots.release(principal, lease.size));
    }
  }

  private async execute(job: LambdaJob, lease: CallLease, height: number): Promise<LambdaOutcome> {
    this.used = true;
    this.makeSnapshot();
    // A warm sandbox, else one already starting for the pool (it is further along than a new one would be, and a
    // second start would take the cores from it), else a new one.
    const taken = this.warm.shift();
    const sandbox = taken ?? this.warming.shift() ?? this.start();
    this.refill();
    const empty = { validation: { status: 'invalid' as const, errors: [] as string[] }, input_schema: null, output_schema: null, memory_used_mb: 0, cold: !taken };
    const started = Date.now();
    let peak = 0;
    let stopped: string | undefined;
    const stop = (why: string) => {
      stopped ??= why;
      this.kill(sandbox.child);
    };
    // The lambda's time limit counts from its sandbox being ready: a start slowed by a busy machine is bounded by
    // START_TIMEOUT_MS, not taken from the code's time.
    let deadline: NodeJS.Timeout | undefined;
    const limitBytes = this.config.lambdaMaxMemoryMb * 1024 * 1024;
    const watch = setInterval(() => {
      void this.residentBytes(sandbox.child).then((bytes) => {
        peak = Math.max(peak, bytes);
        if (bytes > limitBytes) stop(`stopped: the lambda went over its memory limit of ${this.config.lambdaMaxMemoryMb} MB`);
      });
    }, 50);
    const ended = new AbortController();
    const onAbort = () => stop('stopped: the call was cancelled');
    job.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([sandbox.ready, new Promise((_, reject) => setTimeout(() => reject(new Error('the sandbox did not start')), START_TIMEOUT_MS).unref())]);
      deadline = setTimeout(() => stop(`stopped after ${Math.round(job.deadlineMs / 1000)} s: the lambda's time limit`), job.deadlineMs);
      write(sandbox.child, { run: job.run, code: job.code, args: job.args ?? {}, tools: job.tools ?? [] });
      const calls = new Limiter(LAMBDA_TOOL_CONCURRENCY);
      for await (const line of sandbox.lines) {
        const message = parse(line);
        if (!message) continue;
        if (message.type === 'tool') {
          const id = message.id;
          void calls.run(async () => {
            const name = String(message.name);
            const declared = job.tools?.some((t) => t.name === name);
            const onTool = job.onTool;
            // Lambdas these tools run find this call's reservation and this lambda's height here.
            const answer: HostAnswer = !declared ? { ok: false, error: `no tool "${name}" in this lambda's tool_configurations` } : onTool ? await runningLambda.run({ lease, height, ended: ended.signal }, () => onTool(name, isObject(message.args) ? message.args : {})).catch((e: Error) => ({ ok: false as const, error: e.message })) : { ok: false, error: 'tools cannot be called here' };
            write(sandbox.child, { id, ...answer });
          });
        } else if (message.type === 'artifact') {
          const id = message.id;
          void (async () => {
            const answer: ArtifactAnswer = job.onArtifact ? await job.onArtifact(String(message.artifact_id)).catch((e: Error) => ({ ok: false as const, error: e.message })) : { ok: false, error: 'artifacts are available only in a session' };
            write(sandbox.child, answer.ok ? { id, ok: true, filename: answer.filename, data: answer.data.toString('base64') } : { id, ok: false, error: answer.error });
          })();
        } else if (message.type === 'result') {
          const validation = message.validation as LambdaOutcome['validation'];
          const execution = message.execution as { success: boolean; output_json?: string; error?: { message: string; traceback?: string }; latency_millis: number } | undefined;
          return {
            validation,
            input_schema: (message.input_schema as Record<string, unknown> | null) ?? null,
            output_schema: (message.output_schema as Record<string, unknown> | null) ?? null,
            ...(execution ? { execution: { success: execution.success, ...(execution.output_json !== undefined ? { output: JSON.parse(execution.output_json) } : {}), ...(execution.error ? { error: execution.error } : {}), latency_millis: execution.latency_millis } } : {}),
            memory_used_mb: Math.round(peak / (1024 * 1024)),
            cold: !taken,
          };
        }
      }
      const why = stopped ?? 'stopped: the sandbox exited without an answer';
      return { ...empty, validation: { status: job.run ? 'valid' : 'invalid', errors: job.run ? [] : [why] }, ...(job.run ? { execution: { success: false, error: { message: why }, latency_millis: Date.now() - started } } : {}), memory_used_mb: Math.round(peak / (1024 * 1024)), stopped: why };
    } catch (e) {
      const why = stopped ?? `stopped: ${(e as Error).message}`;
      return { ...empty, validation: { status: job.run ? 'valid' : 'invalid', errors: job.run ? [] : [why] }, ...(job.run ? { execution: { success: false, error: { message: why }, latency_millis: Date.now() - started } } : {}), stopped: why };
    } finally {
      clearTimeout(deadline);
      clearInterval(watch);
      job.signal?.removeEventListener('abort', onAbort);
      ended.abort();
      this.kill(sandbox.child);
    }
  }

  /** Keeps `LAMBDA_WARM_SANDBOXES` started once lambdas have been used. */
  private refill(): void {
    if (!this.used || this.closed) return;
    while (this.warm.length + this.warming.length < this.config.lambdaWarmSandboxes) {
      const sandbox = this.start();
      this.warming.push(sandbox);
      const settle = (ok: boolean) => {
        const i = this.warming.indexOf(sandbox);
        if (i < 0) return; // Taken by a call while it started.
        this.warming.splice(i, 1);
        if (ok && !this.closed && sandbox.child.exitCode === null) this.warm.push(sandbox);
      };
      sandbox.ready.then(
        () => settle(true),
        () => settle(false),
      );
    }
  }

  /**
   * A sandbox process under the OS boundary (os-boundary.ts) and, inside it, Node's permission model. `detached`:
   * a session and process group of its own, so a signal to "its group" reaches no process of the service.
   */
  private spawnSandbox(mode: 'run' | 'snapshot'): ChildProcess {
    const boundary = this.resolved;
    if (!boundary) throw new Error('the lambda sandbox boundary is not resolved');
    const permission = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
    const { command, args } = boundary.wrap(process.execPath, [permission, `--allow-fs-read=${RUNTIME_DIR}/`, `--allow-fs-read=${dirname(PYODIDE_MJS)}/`, '--no-warnings', '--max-old-space-size=256', join(RUNTIME_DIR, 'sandbox.mjs'), PYODIDE_MJS, join(RUNTIME_DIR, 'lambda_runtime.py'), mode]);
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], env: {}, detached: true });
    this.all.add(child);
    child.on('exit', () => {
      this.all.delete(child);
      this.inner.delete(child);
      const i = this.warm.findIndex((s) => s.child === child);
      if (i >= 0) this.warm.splice(i, 1);
    });
    child.on('error', () => undefined);
    (child.stdio[3] as NodeJS.WritableStream).on('error', () => undefined);
    // Python's stderr is never logged: a lambda's arguments may hold secrets.
    child.stderr?.resume();
    return child;
  }

  /**
   * Makes the start snapshot once, in the background, or reads the one kept in DATA_DIR by an earlier start of the
   * same Pyodide, runtime and Node; sandboxes started before it is ready load in full.
   */
  private makeSnapshot(): void {
    if (this.snapshot !== undefined || this.snapshotting || this.closed) return;
    const kept = this.snapshotFile?.read();
    if (kept) {
      this.snapshot = kept;
      return;
    }
    this.snapshotting = true;
    const child = this.spawnSandbox('snapshot');
    const timer = setTimeout(() => this.kill(child), START_TIMEOUT_MS);
    void (async () => {
      let data: Buffer | null = null;
      try {
        const all = await readAll(child);
        const nl = all.indexOf(10);
        const header = nl > 0 ? parse(all.subarray(0, nl).toString('utf8')) : undefined;
        if (header?.type === 'snapshot' && typeof header.size === 'number' && all.length - nl - 1 === header.size) data = all.subarray(nl + 1);
      } catch {
        data = null;
      }
      clearTimeout(timer);
      this.snapshot = data;
      this.snapshotting = false;
      const kept = !!data && !!this.snapshotFile?.write(data, (e) => this.log.warn(`the lambda start snapshot could not be kept in DATA_DIR: ${e.message}`));
      // Made ahead at a start (no lambda used yet): kept on disk only, read back by the first lambda.
      if (kept && !this.used) this.snapshot = undefined;
      if (data === null) this.log.warn('lambda sandboxes load Pyodide in full: its start snapshot could not be made');
    })();
  }

  /** Kills the sandbox: the wrapper (its parent-death signal kills the sandbox, PID 1 of its namespace) and the sandbox itself. */
  private kill(child: ChildProcess): void {
    const inner = this.inner.get(child);
    if (inner) {
      try {
        process.kill(inner, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    child.kill('SIGKILL');
  }

  /** Resident bytes of the sandbox's Node process: under the OS boundary the wrapper's child, found once from /proc. */
  private async residentBytes(child: ChildProcess): Promise<number> {
    if (this.resolved?.kind !== 'os') return rss(child.pid);
    let pid = this.inner.get(child);
    if (pid === undefined && child.pid) {
      pid = await firstChild(child.pid);
      if (pid && child.exitCode === null && this.all.has(child)) this.inner.set(child, pid);
    }
    return rss(pid);
  }

  private start(): Sandbox {
    const child = this.spawnSandbox('run');
    const snapshot = this.snapshot;
    write(child, snapshot ? { snapshot_bytes: snapshot.length } : {});
    if (snapshot) (child.stdio[3] as NodeJS.WritableStream).write(snapshot);
    const lines = lineReader(child);
    const ready = (async () => {
      const first = await lines.next();
      if (first.done || parse(first.value)?.type !== 'ready') throw new Error('the sandbox did not start');
    })();
    ready.catch(() => undefined);
    return { child, ready, lines };
  }
}

/** What a snapshot depends on: Pyodide's version, the runtime the sandbox loads, and Node's version. */
function snapshotKey(): string {
  const hash = createHash('sha256').update(process.version);
  for (const file of [join(dirname(PYODIDE_MJS), 'package.json'), join(RUNTIME_DIR, 'sandbox.mjs'), join(RUNTIME_DIR, 'lambda_runtime.py')]) hash.update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

function write(child: ChildProcess, message: Record<string, unknown>): void {
  const pipe = child.stdio[3] as NodeJS.WritableStream | null;
  if (pipe && child.exitCode === null) pipe.write(`${JSON.stringify(message)}\n`);
}

function parse(line: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The sandbox's lines on fd 4; a line over 64 MB ends the sandbox. */
async function* lineReader(child: ChildProcess): AsyncIterableIterator<string> {
  const pipe = child.stdio[4] as NodeJS.ReadableStream;
  let parts: Buffer[] = [];
  let size = 0;
  for await (const data of pipe) {
    let chunk = data as Buffer;
    let nl: number;
    while ((nl = chunk.indexOf(10)) >= 0) {
      parts.push(chunk.subarray(0, nl));
      const line = Buffer.concat(parts).toString('utf8');
      parts = [];
      size = 0;
      chunk = chunk.subarray(nl + 1);
      yield line;
    }
    parts.push(chunk);
    size += chunk.length;
    if (size > MAX_LINE_BYTES) {
      child.kill('SIGKILL'); // The wrapper: its parent-death signal ends the sandbox.
      return;
    }
  }
}

/** Everything a process writes on fd 4 until it exits (the snapshot maker: a header line, then raw bytes). */
async function readAll(child: ChildProcess): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const data of child.stdio[4] as NodeJS.ReadableStream) parts.push(data as Buffer);
  return Buffer.concat(parts);
}

/** The first child of a process (the sandbox `unshare` forked), from /proc. */
async function firstChild(pid: number): Promise<number | undefined> {
  try {
    const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean);
    return children.length ? Number(children[0]) : undefined;
  } catch {
    return undefined;
  }
}

/** Resident bytes of a process from /proc (Linux); 0 elsewhere. */
async function rss(pid: number | undefined): Promise<number> {
  if (!pid) return 0;
  try {
    const statm = await readFile(`/proc/${pid}/statm`, 'utf8');
    return Number(statm.split(' ')[1]) * 4096;
  } catch {
    return 0;
  }
}

class Limiter {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly max: number) {}
  async run(task: () => Promise<void>): Promise<void> {
    if (this.active >= this.max) await new Promise<void>((r) => this.queue.push(r));
    else this.active++;
    try {
      await task();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}
