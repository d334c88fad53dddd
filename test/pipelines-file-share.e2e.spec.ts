import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

/** Issue 17, the file-share source (docs/pipelines.md, The file-share source): a temp directory as the share, only under PIPELINE_FILE_SHARE_ROOTS. */

describe('pipelines: the file_share source', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const base = mkdtempSync(join(tmpdir(), 'ars-share-'));
  const root = join(base, 'shares');
  const team = join(root, 'team');
  const given: { id: string; text: string }[] = [];
  const write = (rel: string, text: string | Buffer, at?: Date) => {
    const p = join(team, rel);
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, text);
    if (at) utimesSync(p, at, at);
  };

  /** The agent: indexes the record (document id = the path with `/` as `_`) unless its text holds POISON-PILL. */
  const agentReply = (req: CapturedRequest): ScriptedReply => {
    const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
    if (messages[messages.length - 1].role === 'tool') return { content: 'Indexed the file.' };
    const input = messages.filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
    if (input.includes('POISON-PILL')) return { error: { status: 400, message: 'the model refused this file' } };
    const id = /source_record_id: (.+)\n/.exec(input)?.[1] ?? '';
    const text = input.slice(input.indexOf('\n\n') + 2);
    given.push({ id, text });
    return { toolCalls: [{ id: 'c1', name: 'index', arguments: JSON.stringify({ documents: [{ id: id.replace(/\//g, '_'), text }] }) }] };
  };

  beforeAll(async () => {
    write('handbook.md', '# Handbook\n\nThe vacation policy grants 30 days.');
    write('setup.txt', 'Install the agent with the setup script.');
    write('sub/guide.html', '<html><head><title>Guide</title></head><body><p>Ask the helpdesk first.</p></body></html>');
    write('logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    write('drafts/wip.txt', 'Excluded by the glob.');
    write('big.txt', 'x'.repeat(5000));
    write('broken.pdf', 'not a PDF at all');
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'outside', 'secret.txt'), 'The root password is hunter2.');
    symlinkSync(join(base, 'outside', 'secret.txt'), join(team, 'escape.txt'));
    symlinkSync(join(team, 'setup.txt'), join(team, 'alias.txt'));
    symlinkSync(team, join(team, 'loop'));
    symlinkSync(join(base, 'outside'), join(root, 'link-out'));
    // Issue 41 #15: a link to a FIFO in the share; opening it for reading used to wait for a writer for ever.
    mkdirSync(join(root, 'piped'));
    execFileSync('mkfifo', [join(root, 'piped', 'pipe')]);
    symlinkSync(join(root, 'piped', 'pipe'), join(root, 'piped', 'report.txt'));
    writeFileSync(join(root, 'piped', 'notes.txt'), 'The piped share still has its notes.');
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    app = await startTestApp({ env: { WORKER_POLL_MS: '200', PIPELINE_FILE_SHARE_ROOTS: `${root}:/nonexistent-root` } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'files', name: 'Files' });
    const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'files' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    rmSync(base, { recursive: true, force: true });
  });

  const source = (extra: object = {}) => ({ type: 'file_share', path: team, exclude: ['drafts/**'], max_bytes: 4096, ...extra });
  const create = async (key: string, src: object, extra: object = {}) => {
    const res = await app.call('POST', '/v2/pipelines', { key, name: key, source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, ...extra });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const ended = (key: string, id: string) =>
    until(`run ${id} to end`, async () => {
      const r = (await app.call('GET', `/v2/pipelines/${key}/runs/${id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
  const run = async (key: string) => {
    const { body } = await app.call('POST', `/v2/pipelines/${key}/trigger`);
    const done = await ended(key, body.id);
    const events = (await app.call('GET', `/v2/pipelines/${key}/runs/${body.id}/events?order=asc&limit=200`)).body.events as { type: string; status?: string; attempt?: number | null; source_record_id?: string }[];
    return { run: done, events, processed: events.filter((e) => e.type === 'record_processing' && e.status === 'completed').map((e) => e.source_record_id).sort() };
  };
  const synced = async (key: string) => {
    const all = (await app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=200')).body.events.filter((e: any) => e.data.key === key);
    return all[all.length - 1].data as { versions: Record<string, unknown>; gone: string[] };
  };

  it('reads the files under the path it can parse, never through a link out of the share, and the agent indexes them', async () => {
    const created = await create('share-inc', source());
    expect(created.source).toEqual({ type: 'file_share', path: team, include: [], exclude: ['drafts/**'], max_bytes: 4096, max_files: 100000 });
    const first = await run('share-inc');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 4, records_processed: 4, records_failed: 0 });
    // escape.txt links outside the roots; loop/ is a linked directory (not entered); drafts/ is excluded; big.txt is above max_bytes; the png is not text; broken.pdf is not a PDF.
    expect(first.processed).toEqual(['alias.txt', 'handbook.md', 'setup.txt', 'sub/guide.html']);
    expect(given.some((g) => g.text.includes('hunter2'))).toBe(false);
    expect(JSON.stringify((await app.call('GET', '/v2/corpora/files/documents/handbook.md')).body)).toContain('vacation policy grants 30 days');
    expect(given.find((g) => g.id === 'sub/guide.html')?.text).toContain('Ask the helpdesk first');
    expect(app.logLines.some((l) => l.includes('escape.txt') && l.includes('outside the share'))).toBe(true);
    // A file the parser cannot read is skipped with the parser's reason, not a failed run.
    expect(app.logLines.some((l) => l.includes('broken.pdf') && l.includes('corrupt'))).toBe(true);
  });

  it('incremental: only a file whose size or modification time changed is read again; a removed file is gone from the sync state', async () => {
    write('setup.txt', 'Install the agent with the new installer.', new Date(Date.now() + 60_000));
    rmSync(join(team, 'handbook.md'));
    const second = await run('share-inc');
    // alias.txt links to setup.txt: it changed too.
    expect(second.processed).toEqual(['alias.txt', 'setup.txt']);
    expect(given[given.length - 1].text).toBe('Install the agent with the new installer.');
    expect((await synced('share-inc')).gone).toEqual(['handbook.md']);
    expect((await run('share-inc')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
  });

  it('full_refresh reads every file each run; include globs narrow it', async () => {
    await create('share-full', source({ include: ['**/*.txt'] }), { sync_mode: 'full_refresh' });
    expect((await run('share-full')).processed).toEqual(['alias.txt', 'setup.txt']);
    expect((await run('share-full')).processed).toEqual(['alias.txt', 'setup.txt']);
  });

  it('a file the agent keeps failing is dead-lettered; processing reads just that file, and a dead letter naming a path out of the share reads nothing', async () => {
    write('trial/bad.txt', 'This file is a POISON-PILL to the model.');
    await create('share-poison', source({ path: join(team, 'trial') }));
    const r = await run('share-poison');
    expect(r.events.filter((e) => e.source_record_id === 'bad.txt').map((e) => [e.status, e.attempt])).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    write('trial/bad.txt', 'This file is now fine.');
    expect((await app.call('POST', '/v2/pipelines/share-poison/dead_letters', { source_record_id: '../../../outside/secret.txt' })).status).toBe(201);
    const retry = await app.call('POST', '/v2/pipelines/share-poison/dead_letters/process', {});
    expect(await ended('share-poison', retry.body.id)).toMatchObject({ status: 'completed', trigger_type: 'retry', records_fetched: 1, records_processed: 1 });
    expect(given[given.length - 1]).toEqual({ id: 'bad.txt', text: 'This file is now fine.' });
  });

  it('refuses a path outside the roots, with dot segments, or relative, and bad fields, with a 400 naming them; a path linked out of the roots fails its run', async () => {
    const bad = async (src: object) => {
      const res = await app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ path: join(base, 'outside') }))).toEqual([400, ['source.path']]);
    expect(await bad(source({ path: `${team}/../../outside` }))).toEqual([400, ['source.path']]);
    expect(await bad(source({ path: 'shares/team' }))).toEqual([400, ['source.path']]);
    expect(await bad(source({ path: undefined }))).toEqual([400, ['source.path']]);
    expect(await bad(source({ max_bytes: 0 }))).toEqual([400, ['source.max_bytes']]);
    expect(await bad(source({ include: ['**/*.md', ''] }))).toEqual([400, ['source.include[1]']]);
    expect(await bad(source({ share: 'smb://files/team' }))).toEqual([400, ['source.share']]);
    expect((await app.call('GET', '/v2/pipelines/bad')).status).toBe(404);
    await create('share-out', source({ path: join(root, 'link-out') }));
    const out = await run('share-out');
    expect(out.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(out.run.error).toContain('resolves outside PIPELINE_FILE_SHARE_ROOTS');
  });

  it('never opens a FIFO: a link to one is skipped with the reason, the regular file is read and the run completes', async () => {
    await create('share-fifo', source({ path: join(root, 'piped'), exclude: [] }));
    const r = await run('share-fifo');
    expect(r.run).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1, records_failed: 0 });
    expect(r.processed).toEqual(['notes.txt']);
    expect(given.find((g) => g.id === 'notes.txt')?.text).toContain('still has its notes');
    expect(app.logLines.some((l) => l.includes('report.txt') && l.includes('a FIFO, not a regular file'))).toBe(true);
  });

  it('a cancel ends a run of that share', async () => {
    await create('share-fifo-cancel', source({ path: join(root, 'piped'), exclude: [] }), { sync_mode: 'full_refresh' });
    const { body } = await app.call('POST', '/v2/pipelines/share-fifo-cancel/trigger');
    const cancel = await app.call('POST', `/v2/pipelines/share-fifo-cancel/runs/${body.id}/cancel`);
    // 409 when the run had already ended: it ends either way, never held by the FIFO.
    expect([200, 202, 204, 409]).toContain(cancel.status);
    expect(['cancelled', 'completed']).toContain((await ended('share-fifo-cancel', body.id)).status);
  });
});
