import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import { ScriptedOpenAIServer } from '@lib/testing';
import { Network, netnsUnavailable } from './support/netns';
import { ServiceHost, startServiceHost } from './support/service-hosts';
import { sleep, until } from './support/wait';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pg = require('./support/postgres-cluster');

/**
 * Issue 47, "Tested across hosts": a PostgreSQL host, two API hosts and two worker hosts, each a network namespace on
 * one bridge (test/support/netns.ts), every service process on its own data directory with POSTGRES_URL naming the
 * PostgreSQL host. An API host SIGKILLed mid-burst loses no acknowledged write; a worker cut off from the database
 * mid-job is taken over and applies nothing after, and one paused past its lease has its step under way refused (the
 * fence); a turn started on one API host is re-attached on the other; PostgreSQL restarted under load answers 503 with
 * Retry-After meanwhile and loses nothing acknowledged. One file over 300 lines: the scenarios share one set of hosts,
 * whose start (five service processes) costs more than any scenario.
 */

const KEY = 'mh_owner_key_0123456789abcdefghij';
const TTL_MS = 3_000;
const HOSTS = ['pg', 'api1', 'api2', 'worker1', 'worker2'] as const;
const PG_PORT = 5432;
/** Enough documents for a bulk update to run several seconds on this machine (each a command and an append). */
const DOCS_FOR_JOB = 400;

const reason = netnsUnavailable() ?? (pg.postgresBin() ? undefined : 'PostgreSQL is not installed (apt-get install postgresql)');
if (reason) process.stderr.write(`skipped: multi-host suite: ${reason}\n`);
const describeIf = reason ? describe.skip : describe;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

interface LoggedEvent {
  readonly position: number;
  readonly stream_id: string;
  readonly type: string;
  readonly data: Record<string, any>;
  readonly metadata: Record<string, any>;
}

describeIf('multi-host: hosts in network namespaces on one PostgreSQL', () => {
  let network: Network;
  let cluster: any;
  let postgresUrl: string;
  let upstream: ScriptedOpenAIServer;
  const dirs = new Map<string, string>();
  const services = new Map<string, ServiceHost>();
  let env: Record<string, string>;

  const service = (name: string) => services.get(name)!;
  const start = async (name: string, role: 'api' | 'worker') => {
    // A host started again keeps its data directory (its projections go on from their checkpoints).
    const dataDir = dirs.get(name) ?? mkdtempSync(join(tmpdir(), `ars-mh-${name}-`));
    dirs.set(name, dataDir);
    services.set(name, await startServiceHost(network, name, role, { ...env, DATA_DIR: dataDir }, 90_000));
  };
  /** Starts the host's service again if a test left it dead (a failed scenario must not fail the next). */
  const ensure = async (name: string, role: 'api' | 'worker') => {
    if (service(name).proc.child.exitCode === null && service(name).proc.child.signalCode === null) return;
    await start(name, role);
  };
  const logsOf = (name: string, last = 60) => `--- ${name}\n${service(name).proc.output.slice(-last).join('\n')}`;

  async function call(host: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 15_000): Promise<Answer> {
    const res = await fetch(`${service(host).url}${path}`, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
      headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (an SSE body, an HTML error): kept as text.
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** A statement on the test's database, from the test process (over the bridge). */
  async function sql(text: string, values: unknown[] = []): Promise<any[]> {
    const client = new PgClient({ connectionString: postgresUrl, connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** The whole log (or a category/type of it) as one host reads it, every page. */
  async function log(host: string, query: string): Promise<LoggedEvent[]> {
    const all: LoggedEvent[] = [];
    for (let after = 0; ; ) {
      const page = (await call(host, 'GET', `/v2/events?limit=1000&after=${after}&${query}`)).body;
      all.push(...page.events);
      if (!page.metadata.after) return all;
      after = page.metadata.after;
    }
  }

  const createCorpus = async (key: string) => {
    const res = await call('api1', 'POST', '/v2/corpora', { key, name: key, encoder_name: 'none' });
    expect(res.status).toBe(201);
    await until(`corpus ${key} on api2`, async () => ((await call('api2', 'GET', `/v2/corpora/${key}`)).status === 200 ? true : undefined), 20_000);
  };
  const doc = (id: string, text = `Document ${id} about tides.`) => ({ id, type: 'core', metadata: { round: 0 }, document_parts: [{ text }] });

  /** Every document id of a corpus as one host lists it, every page. */
  async function listed(host: string, corpus: string): Promise<string[]> {
    const ids: string[] = [];
    for (let pageKey: string | undefined; ; ) {
      const page = await call(host, 'GET', `/v2/corpora/${corpus}/documents?limit=100${pageKey ? `&page_key=${encodeURIComponent(pageKey)}` : ''}`);
      expect(page.status).toBe(200);
      ids.push(...page.body.documents.map((d: { id: string }) => d.id));
      pageKey = page.body.metadata?.page_key;
      if (!pageKey) return ids;
    }
  }

  beforeAll(async () => {
    const t0 = Date.now();
    network = Network.create(HOSTS);
    const pgHost = network.host('pg');
    cluster = pg.initCluster({ listen: pgHost.ip, prefix: 'ars-mh-pg-' });
    const admin = pg.startCluster(cluster, PG_PORT, ['ip', 'netns', 'exec', pgHost.ns]);
    postgresUrl = await pg.createDatabase(admin, 'ars');
    upstream = await ScriptedOpenAIServer.start(network.gateway);
    env = {
      POSTGRES_URL: postgresUrl,
      ADMIN_API_KEY: KEY,
      OAUTH_SIGNING_KEY: 'mh-oauth-signing-key-0123456789abcdef',
      SECRETS_KEY: 'a'.repeat(64),
      LEASE_TTL_MS: String(TTL_MS),
      LEASE_RENEW_MS: '1000',
      WORKER_POLL_MS: '500',
      OUTBOUND_ALLOWED_HOSTS: network.gateway,
      LAMBDA_WARM_SANDBOXES: '0',
      LAMBDA_SNAPSHOT_AT_START: 'false',
      SQLITE_SYNCHRONOUS: 'NORMAL',
    };
    // One worker first: it makes the schema and bootstraps the owner on the shared log; the others then start together.
    await start('worker1', 'worker');
    // Which host appended each event (the test's own instrument on its database, not the service's): the fencing check.
    await sql(`CREATE TABLE mh_writers (position bigint PRIMARY KEY, client text NOT NULL);
      CREATE FUNCTION mh_note_writer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO mh_writers VALUES (NEW.position, host(inet_client_addr())); RETURN NULL; END $$;
      CREATE TRIGGER mh_note_writer AFTER INSERT ON es_events FOR EACH ROW EXECUTE FUNCTION mh_note_writer();`);
    await Promise.all([start('worker2', 'worker'), start('api1', 'api'), start('api2', 'api')]);
    for (const api of ['api1', 'api2']) await until(`the owner key on ${api}`, async () => ((await call(api, 'GET', '/v2/corpora')).status === 200 ? true : undefined), 30_000);
    process.stderr.write(`multi-host: five hosts up in ${Date.now() - t0} ms\n`);
  }, 180_000);

  // Each step whatever the others did: the hosts' processes (PostgreSQL's too: it runs in its namespace) die with the
  // namespaces, then the directories go.
  afterAll(async () => {
    const steps: [string, () => unknown][] = [
      ['the scripted model server', () => upstream?.close()],
      ['PostgreSQL', () => cluster && pg.stopCluster(cluster, 'immediate')],
      ['the namespaces', () => network?.teardown()],
      ['the data directories', () => [cluster?.dir, ...dirs.values()].filter(Boolean).forEach((dir) => rmSync(dir, { recursive: true, force: true }))],
    ];
    const failed: string[] = [];
    for (const [what, step] of steps) await Promise.resolve().then(step).catch((e: Error) => failed.push(`${what}: ${e.message}`));
    if (failed.length) throw new Error(`teardown: ${failed.join('; ')}`);
  }, 60_000);

  it('writes through both API hosts, one SIGKILLed mid-burst: every acknowledged write is readable from the other, none twice', async () => {
    await createCorpus('burst');
    const acknowledged = new Set<string>();
    const lost: string[] = [];
    let killed = false;
    let retried = 0;
    /** One write: to its host, or to api2 again with the same Idempotency-Key when api1 went away under it. */
    const write = async (i: number) => {
      const id = `b${i}`;
      const host = i % 2 === 0 && !killed ? 'api1' : 'api2';
      const headers = { 'idempotency-key': `burst-${id}` };
      const first = await call(host, 'POST', '/v2/corpora/burst/documents', doc(id), headers).catch(() => undefined);
      if (first?.status === 201) return void acknowledged.add(id);
      if (first) throw new Error(`${id} on ${host}: ${first.status} ${JSON.stringify(first.body)}`);
      retried++;
      // No answer: the write may or may not have landed. A client retries it elsewhere; a landed one is a 409 or, for
      // the same idempotency key, the first answer again.
      const again = await call('api2', 'POST', '/v2/corpora/burst/documents', doc(id), headers);
      if (again.status === 201) return void acknowledged.add(id);
      // The reference API answers 400 for an id taken (field_errors.id).
      if ((again.status === 400 || again.status === 409) && /already exists/.test(JSON.stringify(again.body))) return void lost.push(id);
      throw new Error(`${id} retried on api2: ${again.status} ${JSON.stringify(again.body)}`);
    };
    const started = Date.now();
    const lanes = Array.from({ length: 4 }, async (_, lane) => {
      for (let i = lane; i < 120; i += 4) await write(i);
    });
    await until('writes acknowledged before the kill', () => (acknowledged.size >= 30 ? true : undefined), 30_000, 10);
    service('api1').proc.child.kill('SIGKILL');
    killed = true;
    await service('api1').proc.exited;
    await Promise.all(lanes);
    expect(acknowledged.size + lost.length).toBe(120);
    process.stderr.write(`burst: ${acknowledged.size} acknowledged, ${retried} without an answer from api1 retried on api2, ${lost.length} of them had landed\n`);
    // The kill landed mid-burst: writes were in flight to api1 (a write under way there when it died has no answer).
    expect(retried).toBeGreaterThan(0);

    // api2's read models are projections of the shared log: they catch up in their own time.
    const seen = await until('every acknowledged write on api2', async () => {
      const ids = await listed('api2', 'burst');
      return [...acknowledged].every((id) => ids.includes(id)) ? ids : undefined;
    }, 20_000, 250);
    expect(new Set(seen).size).toBe(seen.length);
    const indexed = (await log('api2', 'type=DocumentIndexed')).filter((e) => e.data.corpusKey === 'burst');
    const perId = new Map<string, number>();
    for (const e of indexed) perId.set(e.data.documentId, (perId.get(e.data.documentId) ?? 0) + 1);
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
    expect([...acknowledged].every((id) => perId.get(id) === 1)).toBe(true);
    for (const id of [...acknowledged].slice(0, 5)) expect((await call('api2', 'GET', `/v2/corpora/burst/documents/${id}`)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(60_000);

    // The host comes back as a new process on its data directory and serves the same log.
    await start('api1', 'api');
    await until('api1 ready again', async () => ((await call('api1', 'GET', '/health/ready')).status === 200 ? true : undefined), 30_000, 250);
    expect(new Set(await listed('api1', 'burst'))).toEqual(new Set(seen));
  }, 60_000);

  it('re-attaches through one API host to a turn started through the other', async () => {
    await ensure('api1', 'api');
    const pieces = ['The ', 'tide ', 'comes ', 'in ', 'twice ', 'a ', 'day, ', 'roughly ', 'every ', 'twelve ', 'hours.'];
    const registered = await call('api1', 'POST', '/v2/llms', { type: 'openai-compatible', name: 'mh', model: 'mh-upstream', uri: `${upstream.baseURL}/chat/completions` });
    expect(registered.status).toBe(201);
    const agent = await call('api1', 'POST', '/v2/agents', { key: 'tides', name: 'tides', model: { name: 'mh' }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(agent.status).toBe(201);
    await until('the agent on api2', async () => ((await call('api2', 'GET', '/v2/agents/tides')).status === 200 ? true : undefined), 20_000);
    expect((await call('api1', 'POST', '/v2/agents/tides/sessions', { key: 's1' })).status).toBe(201);

    upstream.enqueue({ chunks: pieces, holdAfterChunks: 3, chunkDelayMs: 50 });
    const caller = await openSse(`${service('api1').url}/v2/agents/tides/sessions/s1/events`, {
      method: 'POST',
      body: { messages: [{ type: 'text', content: 'When does the tide come in?' }], stream_response: true },
    });
    expect(caller.status).toBe(201);
    await upstream.whenHeld();
    const got = await caller.until('two pieces on api1', (f) => f.filter((x) => x.event === 'streaming_agent_output').length >= 2);
    caller.leave();
    const lastId = got.at(-1)!.id!;
    expect(lastId).toMatch(/^\d+\.\d+$/);

    // On the other host: after the last id seen, then afresh (a page loaded there).
    const back = await openSse(`${service('api2').url}/v2/agents/tides/sessions/s1/stream?until=turn_end`, { headers: { 'last-event-id': lastId } });
    const fresh = await openSse(`${service('api2').url}/v2/agents/tides/sessions/s1/stream?until=turn_end`, {});
    expect([back.status, fresh.status]).toEqual([200, 200]);
    await fresh.until('the stored input on api2', (f) => f.some((x) => x.event === 'input_message'));
    expect(back.ended).toBe(false);
    upstream.release();
    const rest = await back.done();
    const all = await fresh.done();
    expect(rest.map((f) => f.event)).toEqual(['agent_output', 'end']);
    expect(rest[0].data.content).toBe(pieces.join(''));
    expect(all.map((f) => f.event)).toEqual(['input_message', 'agent_output', 'end']);
    expect(all[1].data.content).toBe(pieces.join(''));
  }, 60_000);

  let jobIds: Promise<string[]> | undefined;
  /** The corpus the job scenarios update: made once, its documents written through both API hosts. */
  const jobDocuments = () =>
    (jobIds ??= (async () => {
      await createCorpus('jobs');
      const ids = Array.from({ length: DOCS_FOR_JOB }, (_, i) => `j${String(i).padStart(4, '0')}`);
      const t0 = Date.now();
      await Promise.all(
        Array.from({ length: 8 }, async (_, lane) => {
          for (let i = lane; i < ids.length; i += 8) expect((await call(lane % 2 ? 'api2' : 'api1', 'POST', '/v2/corpora/jobs/documents', doc(ids[i]))).status).toBe(201);
        }),
      );
      process.stderr.write(`jobs: ${ids.length} documents in ${Date.now() - t0} ms\n`);
      return ids;
    })());

  /** Queues a bulk metadata update of `ids` and waits until a worker holds its lease and has made progress. */
  async function startJob(ids: string[], round: string) {
    const queued = await call('api1', 'PATCH', `/v2/corpora/jobs/documents?document_ids=${ids.join(',')}`, { metadata: { round } });
    expect(queued.status).toBe(202);
    const jobId: string = queued.body.job_id;
    const queuedAt = Date.now();
    const first = await until('the job lease', async () => (await leaseEvents(jobId))[0], 20_000, 100);
    const holderName = ['worker1', 'worker2'].find((w) => service(w).proc.child.pid === pidOf(first.data.holder))!;
    expect(holderName).toBeDefined();
    const otherName = holderName === 'worker1' ? 'worker2' : 'worker1';
    await until('progress', async () => ((await call('api1', 'GET', `/v2/jobs/${jobId}`)).body.progress?.processed > 0 ? true : undefined), 20_000, 50);
    return { jobId, first, holderName, otherName, queuedAt };
  }
  const pidOf = (holder: string) => Number(holder.split(':')[1]);
  const leaseEvents = async (jobId: string) => (await log('api1', 'category=lease')).filter((e) => e.stream_id === `lease-${jobId}` && e.type === 'LeaseAcquired');

  /**
   * Every document updated once by the job (none twice), and after the takeover nothing appended for it but by the
   * new holder's host: each event's client address comes from the trigger on the test's database, and its
   * `metadata.holder` (when set) must agree.
   */
  async function expectFenced(jobId: string, ids: string[], first: LoggedEvent, takeover: LoggedEvent, holderName: string, otherName: string) {
    const rows = await sql(
      `SELECT e.position, e.stream_id, e.type, e.data::json->>'documentId' AS document, e.metadata::json->>'holder' AS holder, w.client FROM es_events e LEFT JOIN mh_writers w USING (position)
        WHERE e.stream_id IN ($1, $2) OR (e.type = 'DocumentMetadataUpdated' AND e.data::json->>'jobId' = $3) ORDER BY e.position`,
      [`lease-${jobId}`, `job-${jobId}`, jobId],
    );
    const updates = rows.filter((r) => r.type === 'DocumentMetadataUpdated');
    expect(updates.map((r) => r.document).sort()).toEqual(ids);
    // The instrument tells the hosts apart: the first holder's steps before the takeover are its own.
    const before = rows.filter((r) => Number(r.position) < takeover.position && r.type === 'DocumentMetadataUpdated');
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((r) => r.client === network.host(holderName).ip && (r.holder === null || r.holder === first.data.holder))).toBe(true);
    const after = rows.filter((r) => Number(r.position) > takeover.position);
    const strays = after.filter((r) => r.client !== network.host(otherName).ip || (r.holder !== null && r.holder !== takeover.data.holder));
    if (process.env.MH_DEBUG) {
      const at = rows.findIndex((r) => Number(r.position) > takeover.position);
      process.stderr.write(`around the takeover (${takeover.position}):\n${rows.slice(Math.max(0, at - 6), at + 6).map((r) => JSON.stringify(r)).join('\n')}\n${logsOf(holderName, 8)}\n`);
    }
    const refused = service(holderName).proc.output.filter((l) => l.includes(jobId) && /refused|fenced/i.test(l));
    process.stderr.write(`job ${jobId}: ${strays.length} appended after the takeover by another host than ${otherName}${strays.length ? `: ${JSON.stringify(strays)}` : ''}; the first holder logged ${refused.length ? refused.join(' ') : 'no refused step'}\n`);
    expect(strays).toEqual([]);
    expect(after.some((r) => r.type === 'JobCompleted')).toBe(true);
  }

  it('a worker host cut off from the database mid-job: the other takes the job over and finishes it, the cut-off one applies no step after, then rejoins', async () => {
    const ids = await jobDocuments();
    const { jobId, first, holderName, otherName, queuedAt } = await startJob(ids, 'cut');

    network.cut(holderName);
    const cutAt = Date.now();
    const processedAtCut = (await call('api1', 'GET', `/v2/jobs/${jobId}`)).body.progress?.processed;
    let takeover: LoggedEvent;
    let takeoverSeenAt = 0;
    try {
      expect((await call('api1', 'GET', `/v2/jobs/${jobId}`)).body.state).toBe('started');
      takeover = await until('the takeover', async () => (await leaseEvents(jobId))[1], TTL_MS + 20_000, 200);
      takeoverSeenAt = Date.now();
      // Past the takeover with the link still down, so that anything the cut-off worker sent meanwhile lands after it.
      await sleep(1_000);
    } finally {
      network.mend(holderName);
    }
    const mendedAt = Date.now();
    expect(pidOf(takeover.data.holder)).toBe(service(otherName).proc.child.pid);
    expect(Date.parse(takeover.data.acquiredAt)).toBeGreaterThanOrEqual(Date.parse(first.data.acquiredAt) + TTL_MS);

    const job = await until('the job to finish', async () => {
      const body = (await call('api1', 'GET', `/v2/jobs/${jobId}`)).body;
      return body.state === 'completed' || body.state === 'failed' ? body : undefined;
    }, 45_000, 200);
    process.stderr.write(`cut: ${processedAtCut} documents processed at the cut; job queued → cut ${cutAt - queuedAt} ms, cut → takeover seen ${takeoverSeenAt - cutAt} ms, mended after ${mendedAt - cutAt} ms, finished after ${Date.now() - cutAt} ms\n`);
    expect(job.state).toBe('completed');
    expect(job.progress).toMatchObject({ total: ids.length, processed: ids.length, failed: 0 });

    // The cut-off host rejoins by itself (ready again), and learns it lost the lease. Only then is the log read: a step
    // it had in flight at the cut reaches the database when TCP retransmits after the link is back (seconds later).
    await until(`${holderName} ready again`, async () => ((await call(holderName, 'GET', '/health/ready', undefined, {}, 2_000).catch(() => undefined))?.status === 200 ? true : undefined), 40_000, 500);
    await until(`${holderName} to see its lease lost`, () => (service(holderName).proc.output.some((l) => l.includes('"lease lost"') && l.includes(jobId)) ? true : undefined), 30_000, 200);
    await sleep(2_000);

    await expectFenced(jobId, ids, first, takeover, holderName, otherName);
  }, 60_000);

  it('a worker paused mid-job past its lease (SIGSTOP), resumed just after the takeover: the step it had under way is refused, not applied', async () => {
    const ids = await jobDocuments();
    const { jobId, first, holderName, otherName } = await startJob(ids, 'pause');
    const paused = service(holderName).proc.child;
    const successor = service(otherName).proc.child;
    const watcher = new PgClient({ connectionString: postgresUrl });
    await watcher.connect();
    let takeover: LoggedEvent | undefined;
    paused.kill('SIGSTOP');
    try {
      // The new holder's LeaseAcquired, read on the database itself (every 10 ms): then the new holder is paused a moment
      // so that the old one, resumed, meets the takeover before the new holder has redone its step.
      const row = await until('the takeover', async () => (await watcher.query(`SELECT position FROM es_events WHERE stream_id = $1 AND type = 'LeaseAcquired' ORDER BY position`, [`lease-${jobId}`])).rows[1], TTL_MS + 20_000, 10);
      successor.kill('SIGSTOP');
      paused.kill('SIGCONT');
      // Until the resumed one sees its lease lost (its renewal meets the takeover), at most 1.5 s: well inside the new holder's TTL.
      await until('the old holder to see its lease lost', () => (service(holderName).proc.output.some((l) => l.includes('"lease lost"') && l.includes(jobId)) ? true : undefined), 1_500, 20).catch(() => undefined);
      takeover = (await leaseEvents(jobId)).find((e) => e.position === Number(row.position));
    } finally {
      paused.kill('SIGCONT');
      successor.kill('SIGCONT');
      await watcher.end();
    }
    expect(takeover).toBeDefined();
    expect(pidOf(takeover!.data.holder)).toBe(successor.pid);
    const job = await until('the job to finish', async () => {
      const body = (await call('api1', 'GET', `/v2/jobs/${jobId}`)).body;
      return body.state === 'completed' || body.state === 'failed' ? body : undefined;
    }, 45_000, 200);
    expect(job).toMatchObject({ state: 'completed', progress: { total: ids.length, processed: ids.length, failed: 0 } });
    await until(`${holderName} to see its lease lost`, () => (service(holderName).proc.output.some((l) => l.includes('"lease lost"') && l.includes(jobId)) ? true : undefined), 30_000, 200);
    await sleep(1_000);
    await expectFenced(jobId, ids, first, takeover!, holderName, otherName);
    expect((await call(holderName, 'GET', '/health/ready')).status).toBe(200);
  }, 60_000);

  it('PostgreSQL restarted under load: the API answers 503 with Retry-After meanwhile, recovers by itself, and loses nothing acknowledged', async () => {
    await ensure('api1', 'api');
    await createCorpus('restart');
    type Outcome = { id: string; host: string; status?: number; retryAfter?: string | null; error?: string; at: number; body?: unknown };
    const outcomes: Outcome[] = [];
    let n = 0;
    let upAt = Infinity;
    let stop = false;
    const lanes = Array.from({ length: 4 }, async (_, lane) => {
      while (!stop) {
        const id = `r${n++}`;
        const host = lane % 2 ? 'api2' : 'api1';
        const at = Date.now();
        try {
          const res = await call(host, 'POST', '/v2/corpora/restart/documents', doc(id), {}, 20_000);
          outcomes.push({ id, host, status: res.status, retryAfter: res.headers.get('retry-after'), at, body: res.status === 201 ? undefined : res.body });
          if (res.status !== 201) await sleep(100);
        } catch (e) {
          outcomes.push({ id, host, error: `${(e as Error).message} ${(e as { cause?: Error }).cause?.message ?? ''}`, at });
          await sleep(100);
        }
      }
    });
    const recovered = () => ['api1', 'api2'].every((h) => outcomes.some((o) => o.host === h && o.status === 201 && o.at > upAt));
    try {
      await sleep(1_500);
      pg.stopCluster(cluster, 'fast');
      const downAt = Date.now();
      await sleep(4_000);
      pg.startCluster(cluster, PG_PORT, ['ip', 'netns', 'exec', network.host('pg').ns]);
      upAt = Date.now();
      process.stderr.write(`restart: down ${upAt - downAt} ms\n`);
      await until('writes acknowledged again on both API hosts', () => (recovered() ? true : undefined), 30_000, 100);
    } finally {
      stop = true;
      await Promise.all(lanes);
    }
    const counts = outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.status ?? 'no answer']: (acc[o.status ?? 'no answer'] ?? 0) + 1 }), {});
    process.stderr.write(`restart: outcomes ${JSON.stringify(counts)}; first failures ${JSON.stringify(outcomes.filter((o) => o.status !== 201).slice(0, 3))}\n`);
    const unexpected = outcomes.filter((o) => o.status !== 201 && !(o.status === 503 && o.retryAfter));
    expect(unexpected).toEqual([]);
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0);

    const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => o.id);
    for (const host of ['api1', 'api2']) {
      await until(`every acknowledged write on ${host}`, async () => {
        const ids = new Set(await listed(host, 'restart'));
        return acknowledged.every((id) => ids.has(id)) ? true : undefined;
      }, 30_000, 250);
    }
    // The database's password reached no answer and no log line, through all the connection errors.
    const password = new URL(postgresUrl).password;
    expect(outcomes.filter((o) => JSON.stringify(o.body ?? '').includes(password))).toEqual([]);
    for (const [name, host] of services) expect(host.proc.output.filter((l) => l.includes(password)).map((l) => `${name}: ${l}`)).toEqual([]);
    const indexed = (await log('api2', 'type=DocumentIndexed')).filter((e) => e.data.corpusKey === 'restart');
    const perId = new Map<string, number>();
    for (const e of indexed) perId.set(e.data.documentId, (perId.get(e.data.documentId) ?? 0) + 1);
    expect([...perId.values()].every((c) => c === 1)).toBe(true);
  }, 60_000);

  /** An SSE response read as it comes (frames so far, wait for more, go away). */
  async function openSse(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown }) {
    const ctrl = new AbortController();
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      signal: ctrl.signal,
      headers: { 'x-api-key': KEY, ...init.headers, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const frames: { id?: string; event: string; data: any }[] = [];
    let ended = false;
    const reading = (async () => {
      if (!res.body || !res.headers.get('content-type')?.includes('text/event-stream')) return;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        for (let at: number; (at = buffer.indexOf('\n\n')) >= 0; ) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const data = /^data:(.*)$/m.exec(block);
          if (data) frames.push({ id: /^id:(.*)$/m.exec(block)?.[1], event: /^event:(.*)$/m.exec(block)![1], data: JSON.parse(data[1]) });
        }
      }
    })()
      .catch(() => undefined)
      .finally(() => (ended = true));
    return {
      status: res.status,
      frames,
      until: (what: string, pred: (f: typeof frames) => boolean) => until(what, () => (pred(frames) ? frames.slice() : undefined), 20_000, 20),
      done: async () => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([reading, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`stream ${url} did not end: ${JSON.stringify(frames)}`)), 30_000)))]);
        clearTimeout(timer);
        return frames;
      },
      get ended() {
        return ended;
      },
      leave: () => ctrl.abort(),
    };
  }

});
