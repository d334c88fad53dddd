import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 4: a bulk metadata job survives a restart and finishes; an interrupted one resumes from its cursor. */

async function waitForState(app: TestApp, jobId: string, state: string) {
  for (let i = 0; i < 200; i++) {
    const job = (await app.call('GET', `/v2/jobs/${jobId}`)).body;
    if (job?.state === state) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} never reached ${state}`);
}

describe('jobs across restarts', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-jobs-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a job queued by an API-only process is run by the next process that does background work', async () => {
    let app = await startTestApp({ dataDir });
    expect((await app.call('POST', '/v2/corpora', { key: 'jr', name: 'Jobs' })).status).toBe(201);
    for (const id of ['j1', 'j2', 'j3', 'j4']) {
      expect((await app.call('POST', '/v2/corpora/jr/documents', { id, type: 'core', metadata: { n: 0 }, document_parts: [{ text: `Text of ${id}.` }] })).status).toBe(201);
    }
    await app.close();

    // No worker: the job is stored, and nobody runs it.
    app = await startTestApp({ dataDir, role: 'api', env: { READ_YOUR_WRITES_TIMEOUT_MS: '200' } });
    const queued = await app.call('PATCH', '/v2/corpora/jr/documents?document_ids=j1,j2', { metadata: { n: 1 } });
    expect(queued.status).toBe(202);
    const jobId = queued.body.job_id;
    await app.close();

    app = await startTestApp({ dataDir });
    const job = await waitForState(app, jobId, 'completed');
    expect(job.progress).toMatchObject({ total: 2, updated: 2 });
    expect((await app.call('GET', '/v2/corpora/jr/documents/j2')).body.metadata).toEqual({ n: 1 });
    await app.close();
  });

  it('an interrupted job goes on from its recorded cursor, not from the start', async () => {
    let app = await startTestApp({ dataDir });
    const corpusId = (await app.call('GET', '/v2/corpora/jr')).body.id;
    const jobId = `job_${randomUUID().replace(/-/g, '')}`;
    const meta = { actor: { type: 'system' as const, id: 'test' }, correlationId: 'test', schemaVersion: 1 };
    // What a process that crashed after the first two documents leaves in the log.
    await app.started.infra.events.append(
      `job-${jobId}`,
      [
        {
          id: randomUUID(),
          type: 'JobQueued',
          data: { jobId, corpusKey: 'jr', corpusId, request: { type: 'bulk_update_document_metadata', documentIds: ['j1', 'j2', 'j3', 'j4'], metadata: { n: 9 }, strategy: 'merge' }, total: 4, createdAt: new Date().toISOString() },
          metadata: meta,
        },
        { id: randomUUID(), type: 'JobStarted', data: { jobId, startedAt: new Date().toISOString() }, metadata: meta },
        { id: randomUUID(), type: 'JobProgressed', data: { jobId, counts: { processed: 2, updated: 2, skipped: 0, failed: 0 }, cursor: 2 }, metadata: meta },
      ],
      { expectedRevision: 'no_stream' },
    );
    await app.close();

    app = await startTestApp({ dataDir });
    const job = await waitForState(app, jobId, 'completed');
    expect(job.progress).toMatchObject({ processed: 4, updated: 4 });
    // j1 and j2 were recorded as done, so they are not redone; j3 and j4 are.
    expect((await app.call('GET', '/v2/corpora/jr/documents/j1')).body.metadata).toEqual({ n: 1 });
    expect((await app.call('GET', '/v2/corpora/jr/documents/j3')).body.metadata).toEqual({ n: 9 });
    expect((await app.call('GET', '/v2/corpora/jr/documents/j4')).body.metadata).toEqual({ n: 9 });
    await app.close();
  });
});
