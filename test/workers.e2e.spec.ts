import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnService, ServiceProcess } from './support/service-process';

/**
 * Issue 13: two worker processes and one API process on one data dir. Each job is claimed through its lease and
 * run once; a worker SIGKILLed while holding a job's lease is taken over by the other, which finishes the job.
 */

const KEY = 'zut_test_bootstrap_key_0123456789abcdef';
const TTL_MS = 1500;

interface LoggedEvent {
  stream_id: string;
  type: string;
  data: Record<string, any>;
}

describe('worker wing: two workers on one store', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-workers-'));
  const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', LEASE_TTL_MS: String(TTL_MS), LEASE_RENEW_MS: '300', WORKER_POLL_MS: '300' };
  const processes: ServiceProcess[] = [];
  let api: ServiceProcess;
  let workers: ServiceProcess[];

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };
  const log = async (query: string): Promise<LoggedEvent[]> => {
    const all: LoggedEvent[] = [];
    for (let after = 0; ; ) {
      const page = (await call('GET', `/v2/events?limit=1000&after=${after}&${query}`)).body;
      all.push(...page.events);
      if (!page.metadata.after) return all;
      after = page.metadata.after;
    }
  };
  const jobDone = (jobId: string) =>
    until(`job ${jobId}`, async () => {
      const job = (await call('GET', `/v2/jobs/${jobId}`)).body;
      return job?.state === 'completed' || job?.state === 'failed' ? job : undefined;
    });
  const queue = async (ids: readonly string[], metadata: Record<string, unknown>): Promise<string> => {
    const res = await call('PATCH', `/v2/corpora/wk/documents?document_ids=${ids.join(',')}`, { metadata });
    expect(res.status).toBe(202);
    return res.body.job_id;
  };

  beforeAll(async () => {
    // The first worker creates the store and the owner; the API process would wait for a projection to show it.
    const first = await spawnService(env, 45_000, [], ['--role=worker']);
    processes.push(first);
    const [second, apiProcess] = await Promise.all([spawnService(env, 45_000, [], ['--role=worker']), spawnService(env, 45_000, [], ['--role=api'])]);
    processes.push(second, apiProcess);
    workers = [first, second];
    api = apiProcess;
    // The owner key works once a worker's auth projection shows it.
    await until('the owner key', async () => ((await call('GET', '/v2/corpora')).status === 200 ? true : undefined));
    expect((await call('POST', '/v2/corpora', { key: 'wk', name: 'Workers' })).status).toBe(201);
    for (let i = 0; i < 40; i++) {
      expect((await call('POST', '/v2/corpora/wk/documents', { id: `d${i}`, type: 'core', metadata: { round: -1 }, document_parts: [{ text: `Document ${i}.` }] })).status).toBe(201);
    }
  }, 90_000);

  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('each queued job is claimed through its lease and run exactly once', async () => {
    const jobIds: string[] = [];
    for (let j = 0; j < 6; j++) jobIds.push(await queue([0, 1, 2, 3, 4].map((i) => `d${j * 5 + i}`), { round: j }));
    for (const jobId of jobIds) expect((await jobDone(jobId)).progress).toMatchObject({ total: 5, processed: 5, updated: 5, skipped: 0 });

    const leases = await log('category=lease');
    const jobsLog = await log('category=job');
    for (const jobId of jobIds) {
      const acquired = leases.filter((e) => e.stream_id === `lease-${jobId}` && e.type === 'LeaseAcquired');
      expect(acquired).toHaveLength(1);
      expect(jobsLog.filter((e) => e.data.jobId === jobId && e.type === 'JobStarted')).toHaveLength(1);
      expect(jobsLog.filter((e) => e.data.jobId === jobId && e.type === 'JobCompleted')).toHaveLength(1);
    }
    // Lease bookkeeping stays out of the default feed.
    expect((await log('')).some((e) => e.stream_id.startsWith('lease-'))).toBe(false);
  });

  it('a worker killed while holding a job lease is taken over after the TTL, and the job finishes', async () => {
    // A long job: listed ids, most of them missing (each still a step), real documents first and last.
    const missing = Array.from({ length: 9_960 }, (_, i) => `m${i}`);
    const ids = [...Array.from({ length: 20 }, (_, i) => `d${i}`), ...missing, ...Array.from({ length: 20 }, (_, i) => `d${20 + i}`)];
    const jobId = await queue(ids, { round: 'big' });

    const first = await until('the job lease', async () => {
      const acquired = (await log('category=lease')).filter((e) => e.stream_id === `lease-${jobId}` && e.type === 'LeaseAcquired');
      return acquired[0]?.data.holder as string | undefined;
    });
    await until('progress', async () => ((await call('GET', `/v2/jobs/${jobId}`)).body.progress?.processed > 0 ? true : undefined));
    const holderPid = Number(first.split(':')[1]);
    const holder = workers.find((w) => w.child.pid === holderPid)!;
    expect(holder).toBeDefined();
    expect((await call('GET', `/v2/jobs/${jobId}`)).body.state).toBe('started');
    holder.child.kill('SIGKILL');
    const killedAt = Date.now();
    await holder.exited;

    const job = await jobDone(jobId);
    expect(job.state).toBe('completed');
    expect(job.progress).toMatchObject({ total: ids.length, processed: ids.length, failed: missing.length });
    expect(job.progress.updated + job.progress.skipped).toBe(40);
    expect((await call('GET', '/v2/corpora/wk/documents/d39')).body.metadata).toEqual({ round: 'big' });

    const acquired = (await log('category=lease')).filter((e) => e.stream_id === `lease-${jobId}` && e.type === 'LeaseAcquired');
    expect(acquired.map((e) => e.data.holder)).toEqual([first, expect.not.stringContaining(`:${holderPid}:`)]);
    // Taken over no earlier than the dead holder's lease allowed.
    expect(Date.parse(acquired[1].data.acquiredAt)).toBeGreaterThanOrEqual(Date.parse(acquired[0].data.acquiredAt) + TTL_MS);
    const jobsLog = (await log('category=job')).filter((e) => e.data.jobId === jobId);
    expect(jobsLog.filter((e) => e.type === 'JobStarted')).toHaveLength(1);
    expect(jobsLog.filter((e) => e.type === 'JobCompleted')).toHaveLength(1);
    expect(Date.now() - killedAt).toBeLessThan(20_000);
  });
});
