import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AddressLookup } from '@lib/platform';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Tools beyond retrieval (issue 15, first slice): web_get, jq transforms, artifact tools and artifact offloading. */
describe('agent tools', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let siteUrl = '';
  const hits: { method: string; url: string; body: string }[] = [];
  const big = Array.from({ length: 5000 }, (_, i) => `line ${i}: ${i === 4321 ? 'the secret ingredient is cardamom' : 'nothing to see'}`).join('\n');

  beforeAll(async () => {
    site = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        hits.push({ method: req.method ?? '', url: req.url ?? '', body });
        if (req.url === '/redirect-to-metadata') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
        if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(big);
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Hello</h1>\n<p>${req.method} ${req.url} ${body}</p>`);
      });
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await registerScripted(app, upstream, 'small', { capabilities: { context_limit: 4096 } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
  });

  const agent = async (key: string, tools: object, model = 'm') => {
    const res = await app.call('POST', '/v2/agents', { key, name: key, model: { name: model }, tool_configurations: tools, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (res.status !== 201) throw new Error(`agent ${key}: ${res.status} ${JSON.stringify(res.body)}`);
    await app.call('POST', `/v2/agents/${key}/sessions`, { key: 's' });
  };
  const turn = (key: string, ...calls: { name: string; arguments: object }[]) => {
    upstream.enqueue({ toolCalls: calls.map((c, i) => ({ id: `c${i}`, name: c.name, arguments: JSON.stringify(c.arguments) })) }, { content: 'done' });
    return app.call('POST', `/v2/agents/${key}/sessions/s/events`, { messages: [{ type: 'text', content: 'go' }] });
  };
  // Calls of one answer run concurrently: their outputs come in the order they finish, so they are sorted by call.
  const outputs = (res: { body: { events: Ev[] } }) => res.body.events.filter((e) => e.type === 'tool_output').sort((a, b) => a.tool_call_id.localeCompare(b.tool_call_id));

  it('web_get fetches through the outbound guard: methods, the exact bad-URL error, the body limit before sending, refused addresses and redirects', async () => {
    await agent('browser', { web: { type: 'web_get', max_body_bytes: 1024 } });
    const got = outputs(await turn('browser', { name: 'web', arguments: { url: `${siteUrl}/page` } }, { name: 'web', arguments: { url: `${siteUrl}/form`, method: 'PATCH', body: 'x=1' } }));
    expect(got[0].tool_output).toMatchObject({ status: 200, content_type: 'text/html' });
    expect(got.map((o) => o.tool_output.content).join()).toContain('PATCH /form x=1');
    const bad = outputs(await turn('browser', { name: 'web', arguments: { url: 'ftp://example.com/x' } }, { name: 'web', arguments: { url: '/relative' } }));
    expect(bad.map((o) => o.tool_output.error)).toEqual(['URL must be an absolute HTTP or HTTPS URL', 'URL must be an absolute HTTP or HTTPS URL']);
    const before = hits.length;
    const tooBig = outputs(await turn('browser', { name: 'web', arguments: { url: `${siteUrl}/form`, method: 'POST', body: 'y'.repeat(1025) } }))[0];
    expect(tooBig).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/over max_body_bytes \(1024\): nothing was sent/) } });
    expect(hits.length).toBe(before);
    const refused = outputs(await turn('browser', { name: 'web', arguments: { url: 'http://169.254.169.254/latest/meta-data/' } }, { name: 'web', arguments: { url: `${siteUrl}/redirect-to-metadata` } }, { name: 'web', arguments: { url: 'http://10.1.2.3/' } }));
    for (const o of refused) expect(o).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/^refused/) } });
  });

  it('indexes documents with document_index: searchable by default, a repeated id refuses the batch, reindex repeats delete-and-create, and only into a corpus the identity may write', async () => {
    await app.call('POST', '/v2/corpora', { key: 'notes', name: 'Notes' });
    await agent('indexer', { put: { type: 'document_index', argument_override: { corpus_key: 'notes' } }, anywhere: { type: 'document_index' } });
    const docs = [{ id: 'n1', text: 'Cats purr when content.' }, { id: 'n2', title: 'Dogs', sections: [{ title: 'Sound', text: 'Dogs bark at strangers.' }], metadata: { animal: 'dog' } }];
    const [ok] = outputs(await turn('indexer', { name: 'put', arguments: { documents: docs } }));
    expect(ok).toMatchObject({ error: false, tool_output: { corpus_key: 'notes', indexed: [{ id: 'n1' }, { id: 'n2' }], wait_for: 'searchable' } });
    const found = await app.call('POST', '/v2/corpora/notes/query', { query: 'what do cats do', search: { limit: 1, lexical_interpolation: 1 } });
    expect(found.body.search_results[0].document_id).toBe('n1');
    const before = (await app.call('GET', '/v2/corpora/notes/documents')).body.documents.length;
    const [dup] = outputs(await turn('indexer', { name: 'put', arguments: { documents: [{ id: 'n3', text: 'a' }, { id: 'n3', text: 'b' }] } }));
    expect(dup).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/appears twice in the batch: nothing was deleted or indexed/) } });
    expect((await app.call('GET', '/v2/corpora/notes/documents')).body.documents.length).toBe(before);
    const [again] = outputs(await turn('indexer', { name: 'put', arguments: { documents: [{ id: 'n1', text: 'Cats sleep all day.' }], reindex: true, wait_for: 'indexed' } }));
    expect(again).toMatchObject({ error: false, tool_output: { indexed: [{ id: 'n1' }], wait_for: 'indexed' } });
    const [elsewhere] = outputs(await turn('indexer', { name: 'anywhere', arguments: { corpus_key: 'docs-of-others', documents: [{ id: 'x', text: 'y' }] } }));
    expect(elsewhere.tool_output.error).toMatch(/may not write to it/);
    const log = (await app.call('GET', '/v2/events?category=document&type=DocumentIndexed&limit=1000')).body.events as any[];
    expect(log.at(-1).metadata.actor).toEqual({ type: 'agent', id: 'indexer' });
  });

  it('schedule_wakeup wakes the session later with its prompt; a later wakeup does not replace a sooner one', async () => {
    await agent('sleeper', { wake: { type: 'schedule_wakeup' } });
    const [first] = outputs(await turn('sleeper', { name: 'wake', arguments: { delay_seconds: 1, prompt: 'check the build', reason: 'CI runs' } }));
    expect(first.tool_output).toMatchObject({ scheduled: true, due_at: expect.any(String) });
    const [later] = outputs(await turn('sleeper', { name: 'wake', arguments: { delay_seconds: 3600, prompt: 'much later' } }));
    expect(later.tool_output).toMatchObject({ scheduled: false, pending_at: first.tool_output.due_at });
    upstream.enqueue({ content: 'The build is green.' });
    const deadline = Date.now() + 10_000;
    let events: Ev[] = [];
    while (Date.now() < deadline) {
      events = (await app.call('GET', '/v2/agents/sleeper/sessions/s/events?limit=100')).body.events;
      if (events.at(-1)?.type === 'agent_output' && events.some((e) => e.messages?.[0]?.content?.startsWith('[Scheduled wakeup'))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const woken = events.find((e) => e.messages?.[0]?.content?.startsWith('[Scheduled wakeup'));
    expect(woken?.messages[0].content).toBe('[Scheduled wakeup — CI runs] check the build');
    expect(events.at(-1)).toMatchObject({ type: 'agent_output', content: 'The build is green.' });
  }, 20_000);

  it('says web_search is not configured when no provider key is set', async () => {
    await agent('nosearch', { search: { type: 'web_search' } });
    expect(outputs(await turn('nosearch', { name: 'search', arguments: { query: 'x' } }))[0]).toMatchObject({ error: true, tool_output: { error: 'web search is not configured on this service (TAVILY_API_KEY)' } });
  });

  it('runs input_transform and output_transform in real jq, reports a failing one as a tool error, and stops an endless one', async () => {
    await agent('shaped', {
      fetch: { type: 'web_get', input_transform: `{url: ("${siteUrl}/" + .args.path + "?who=" + .session.key)}`, output_transform: '{status, heading: (.content | split("\\n")[0])}' },
      broken: { type: 'web_get', input_transform: 'error("no path given")' },
      endless: { type: 'web_get', input_transform: '[repeat(1)] | {url: "x"}', max_execution_time_seconds: 1 },
    });
    const res = await turn('shaped', { name: 'fetch', arguments: { path: 'doc' } }, { name: 'broken', arguments: {} }, { name: 'endless', arguments: {} });
    const [ok, broken, endless] = outputs(res);
    expect(hits.at(-1)!.url).toBe('/doc?who=s');
    expect(ok.tool_output).toEqual({ status: 200, heading: '<h1>Hello</h1>' });
    expect(broken).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/^input_transform failed: jq: error .*no path given$/) } });
    expect(endless).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/input_transform failed: stopped after 1000 ms/) } });
    // The model reads the errors as the calls' outputs.
    expect(JSON.stringify((upstream.chatRequests().at(-1)!.body as any).messages)).toContain('no path given');
    const invalid = await app.call('POST', '/v2/agents', { key: 'badjq', name: 'badjq', model: { name: 'm' }, tool_configurations: { w: { type: 'web_get', output_transform: '.[' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.field_errors['tool_configurations.w.output_transform']).toMatch(/not a jq program/);
  });

  it('stores an output too large for the context as an artifact the agent then reads with artifact_grep, artifact_read and artifact_jq', async () => {
    await agent('reader', { web: { type: 'web_get', max_execution_time_seconds: 30 }, grep: { type: 'artifact_grep' }, read: { type: 'artifact_read', tool_configuration: { max_lines: 3 } }, jq: { type: 'artifact_jq' } }, 'small');
    const fetched = outputs(await turn('reader', { name: 'web', arguments: { url: `${siteUrl}/big` } }))[0];
    expect(fetched.tool_output).toMatchObject({ offloaded: true, artifact_id: expect.stringMatching(/^art_/), hint: expect.stringContaining('grep, read, jq') });
    const id = fetched.tool_output.artifact_id;
    const listed = (await app.call('GET', '/v2/agents/reader/sessions/s/artifacts')).body.artifacts;
    expect(listed).toEqual([expect.objectContaining({ artifact_id: id, mime_type: 'application/json', metadata: { source: 'tool_output', tool_configuration_name: 'web', tool_call_id: 'c0' } })]);
    // The model never saw the big content itself.
    expect(JSON.stringify((upstream.chatRequests().at(-1)!.body as any).messages)).not.toContain('cardamom');
    const [grep, read, jq] = outputs(
      await turn('reader', { name: 'grep', arguments: { artifact_id: id, pattern: 'secret ingredient', grep_options: ['-i'] } }, { name: 'read', arguments: { artifact_id: id, start_line: 1 } }, { name: 'jq', arguments: { artifact_id: id, filter: '.status' } }),
    );
    expect(grep.tool_output).toMatchObject({ count: 1, matches: [{ text: expect.stringContaining('the secret ingredient is cardamom') }] });
    expect(grep.tool_output.matches[0].text.length).toBeLessThan(500);
    expect(read.tool_output).toMatchObject({ start_line: 1, end_line: 3, more: true, content: expect.stringMatching(/^\{\n {2}"status": 200,/) });
    expect(jq.tool_output).toEqual({ artifact_id: id, result: 200 });
    const nope = outputs(await turn('reader', { name: 'read', arguments: { artifact_id: 'art_missing' } }, { name: 'grep', arguments: { artifact_id: id, pattern: '(' } }));
    expect(nope.map((o) => o.tool_output.error)).toEqual(['no artifact "art_missing" in this session', expect.stringMatching(/not a valid regular expression/)]);
  });

  it("get_document_text returns a document's text by section with its metadata, within the identity's corpora", async () => {
    await app.call('POST', '/v2/corpora', { key: 'kb', name: 'KB' });
    await app.call('POST', '/v2/corpora', { key: 'hr', name: 'HR' });
    await app.call('POST', '/v2/corpora/kb/documents', { id: 'guide', type: 'structured', title: 'Guide', metadata: { lang: 'en', internal: { owner: 'ops' } }, sections: [{ title: 'Setup', text: 'Plug it in.' }, { title: 'Care', text: 'Keep it dry.' }] });
    await agent('librarian', { doc: { type: 'get_document_text', argument_override: { corpus_key: 'kb' }, tool_configuration: { metadata: { exclude_paths: ['internal'] } } }, any: { type: 'get_document_text' } });
    const [kb, hr, missing] = outputs(await turn('librarian', { name: 'doc', arguments: { document_id: 'guide' } }, { name: 'any', arguments: { corpus_key: 'hr', document_id: 'x' } }, { name: 'doc', arguments: { document_id: 'nope' } }));
    expect(kb.tool_output).toEqual({ corpus_key: 'kb', document_id: 'guide', title: 'Guide', text: '## Setup\n\nPlug it in.\n\n## Care\n\nKeep it dry.', metadata: { lang: 'en' } });
    expect(hr.tool_output.error).toMatch(/may not read it/);
    expect(missing.tool_output.error).toBe('document "nope" is not in corpus "kb"');
  });

  it("get_document returns a document's text parts and makes its tables and images session artifacts named in the output", async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC';
    const table = { id: 'counts', title: 'Otter counts', data: { headers: [[{ text_value: 'Site' }, { text_value: 'Otters' }]], rows: [[{ text_value: 'Morro Bay' }, { int_value: 41 }]] } };
    await app.call('POST', '/v2/corpora/kb/documents', {
      id: 'otters', type: 'structured', title: 'Sea otters',
      sections: [{ title: 'Survey', text: 'Sea otters were counted.', tables: [table], images: [{ id: 'map', title: 'Survey map', caption: 'Where', image_data: { data: png, mime_type: 'image/png' } }] }],
    });
    await agent('doc-reader', { doc: { type: 'get_document', argument_override: { corpus_key: 'kb' } }, peek: { type: 'artifact_read' } });
    const [doc] = outputs(await turn('doc-reader', { name: 'doc', arguments: { document_id: 'otters' } }));
    expect(doc.tool_output).toMatchObject({ corpus_key: 'kb', document_id: 'otters', title: 'Sea otters' });
    expect(doc.tool_output.parts.map((p: any) => p.text)).toContain('Sea otters were counted.');
    expect(doc.tool_output.tables).toEqual([{ table_id: 'counts', title: 'Otter counts', artifact_id: expect.stringMatching(/^art_doc_/) }]);
    expect(doc.tool_output.images).toEqual([{ image_id: 'map', title: 'Survey map', caption: 'Where', mime_type: 'image/png', artifact_id: expect.stringMatching(/^art_doc_/) }]);
    const listed = (await app.call('GET', '/v2/agents/doc-reader/sessions/s/artifacts?order_by=asc')).body.artifacts;
    expect(listed.map((a: any) => a.artifact_id).sort()).toEqual([doc.tool_output.tables[0].artifact_id, doc.tool_output.images[0].artifact_id].sort());
    const image = listed.find((a: any) => a.artifact_id === doc.tool_output.images[0].artifact_id);
    expect(image).toMatchObject({ mime_type: 'image/png', size_bytes: Buffer.from(png, 'base64').length, metadata: { source: 'document_image', document_id: 'otters', image_id: 'map' } });
    // The table artifact is readable with the artifact tools; asking again makes no second copy.
    const [read, again] = outputs(await turn('doc-reader', { name: 'peek', arguments: { artifact_id: doc.tool_output.tables[0].artifact_id } }, { name: 'doc', arguments: { document_id: 'otters' } }));
    expect(JSON.stringify(read.tool_output)).toContain('Morro Bay');
    expect(again.tool_output.tables[0].artifact_id).toBe(doc.tool_output.tables[0].artifact_id);
    expect((await app.call('GET', '/v2/agents/doc-reader/sessions/s/artifacts')).body.artifacts).toHaveLength(2);
  });

  it('corpora_search_20260608 marks table and image results with the matched snippet and the table or image as an artifact; plain corpora_search is unchanged', async () => {
    const search = (type: string) => ({ type, query_configuration: { search: { corpora: [{ corpus_key: 'kb', lexical_interpolation: 1 }], limit: 10 } } });
    await agent('dated-search', { dated: search('corpora_search_20260608'), plain: search('corpora_search') });
    const [dated, plain] = outputs(await turn('dated-search', { name: 'dated', arguments: { query: 'Morro Bay Survey map' } }, { name: 'plain', arguments: { query: 'Morro Bay Survey map' } }));
    const results = dated.tool_output.search_results as any[];
    const tableHit = results.find((r) => r.table);
    const imageHit = results.find((r) => r.result_type === 'image');
    expect(tableHit).toMatchObject({ result_type: 'text', document_id: 'otters', text: expect.stringContaining('Morro Bay'), table: { table_id: 'counts', title: 'Otter counts', artifact_id: expect.stringMatching(/^art_doc_/) } });
    expect(imageHit).toMatchObject({ document_id: 'otters', text: expect.stringContaining('Survey map'), image: { image_id: 'map', mime_type: 'image/png', artifact_id: expect.stringMatching(/^art_doc_/) } });
    // The table is not inlined: its rows are in the artifact, which the session now holds.
    expect(tableHit.table.data).toBeUndefined();
    const artifacts = (await app.call('GET', '/v2/agents/dated-search/sessions/s/artifacts')).body.artifacts.map((a: any) => a.artifact_id);
    expect(artifacts).toEqual(expect.arrayContaining([tableHit.table.artifact_id, imageHit.image.artifact_id]));
    for (const r of plain.tool_output.search_results) expect(Object.keys(r).sort()).toEqual(['corpus_key', 'document_id', 'document_metadata', 'part_metadata', 'score', 'text']);
    const listed = (await app.call('GET', '/v2/tools/tol_builtin_corpora_search_20260608')).body;
    expect(listed).toMatchObject({ name: 'corpora_search_20260608', lineage: 'corpora_search', version: '20260608', category: 'retrieval' });
    expect((await app.call('GET', '/v2/tools/tol_builtin_corpora_search')).body).toMatchObject({ lineage: 'corpora_search', version: '1' });
  });

  it('keeps named scratch pads as session artifacts: write, append, replace, read, clear, within max_bytes', async () => {
    await agent('planner', { pad: { type: 'scratch_pad', max_bytes: 100 } });
    const first = outputs(await turn('planner', { name: 'pad', arguments: { operation: 'write', pad: 'plan', content: 'step 1' } }, { name: 'pad', arguments: { operation: 'append', pad: 'plan', content: '\nstep 2' } }, { name: 'pad', arguments: { operation: 'read', pad: 'plan' } }));
    expect(first.map((o) => o.tool_output)).toEqual([
      { pad: 'plan', operation: 'write', size_bytes: 6 },
      { pad: 'plan', operation: 'append', size_bytes: 13 },
      { pad: 'plan', content: 'step 1\nstep 2', size_bytes: 13 },
    ]);
    const second = outputs(await turn('planner', { name: 'pad', arguments: { operation: 'replace', pad: 'plan', old: 'step', new: 'STEP' } }, { name: 'pad', arguments: { operation: 'append', pad: 'plan', content: 'x'.repeat(100) } }, { name: 'pad', arguments: { operation: 'read', pad: 'plan' } }));
    expect(second[1]).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/over its 100: nothing was written/) } });
    expect(second[2].tool_output.content).toBe('STEP 1\nSTEP 2');
    const artifacts = (await app.call('GET', '/v2/agents/planner/sessions/s/artifacts')).body.artifacts;
    expect(artifacts).toEqual([expect.objectContaining({ artifact_id: 'art_pad_plan', filename: 'plan.md', size_bytes: 13, metadata: { scratch_pad: 'plan' } })]);
    const cleared = outputs(await turn('planner', { name: 'pad', arguments: { operation: 'clear', pad: 'plan' } }, { name: 'pad', arguments: { operation: 'read', pad: 'other' } }));
    expect(cleared.map((o) => o.tool_output)).toEqual([{ pad: 'plan', operation: 'clear', size_bytes: 0 }, { pad: 'other', content: '', size_bytes: 0 }]);
  });
});

/**
 * DNS rebinding through a real agent turn: the service's resolver is a fake one whose answer for `rebind.test`
 * changes after the first lookup, from an allowed address (127.0.0.1, allowed by the test app's
 * OUTBOUND_TOOLS_ALLOWED_HOSTS) to a refused one (127.0.0.2, loopback). Each connection resolves and is checked anew.
 */
describe('web_get and DNS rebinding', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let port = 0;
  const hits: string[] = [];
  const lookups: string[] = [];

  beforeAll(async () => {
    // `connection: close`, so the second call cannot reuse the first one's connection and must resolve again.
    site = createServer((req, res) => {
      hits.push(`${req.headers.host} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end(`hello ${req.url}`);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    port = (site.address() as AddressInfo).port;
    upstream = await ScriptedOpenAIServer.start();
    const lookup: AddressLookup = async (hostname) => {
      if (hostname !== 'rebind.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      lookups.push(hostname);
      return [{ address: lookups.length === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    app = await startTestApp({ lookup });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'rebound', name: 'rebound', model: { name: 'm' }, tool_configurations: { web: { type: 'web_get' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/rebound/sessions', { key: 's' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
  });

  const get = async (path: string): Promise<Ev> => {
    upstream.enqueue({ toolCalls: [{ id: 'c0', name: 'web', arguments: JSON.stringify({ url: `http://rebind.test:${port}${path}` }) }] }, { content: 'done' });
    const res = await app.call('POST', '/v2/agents/rebound/sessions/s/events', { messages: [{ type: 'text', content: 'go' }] });
    const outs = (res.body.events as Ev[]).filter((e) => e.type === 'tool_output');
    expect(outs).toHaveLength(1);
    return outs[0];
  };

  it('web_get refuses a host name whose DNS answer changes to a refused address after an allowed one (rebinding), and sends nothing there', async () => {
    const first = await get('/first');
    expect(first).toMatchObject({ error: false, tool_output: { status: 200, url: `http://rebind.test:${port}/first`, content_type: 'text/plain', content: 'hello /first' } });
    const second = await get('/second');
    expect(second.error).toBe(true);
    expect(second.tool_output).toEqual({
      error: `refused: rebind.test:${port} (127.0.0.2) is not allowed by the outbound policy (loopback address); an administrator can allow it with OUTBOUND_TOOLS_ALLOWED_HOSTS or OUTBOUND_TOOLS_ALLOW_PRIVATE=true`,
    });
    // Each connection resolved the name itself; only the first request reached a server.
    expect(lookups).toEqual(['rebind.test', 'rebind.test']);
    expect(hits).toEqual([`rebind.test:${port} /first`]);
  });
});

/** web_search through the configured provider (Tavily's API, played here on 127.0.0.1). */
describe('web_search', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let tavily: Server;
  const seen: { auth?: string; body: any }[] = [];
  const KEY = 'tvly-SECRET-key-7777';

  beforeAll(async () => {
    tavily = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ title: 'Otters', url: 'https://example.org/otters', content: 'Otters hold hands while sleeping.', score: 0.9 }] }));
      });
    });
    await new Promise<void>((r) => tavily.listen(0, '127.0.0.1', r));
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { TAVILY_API_KEY: KEY, TAVILY_URL: `http://127.0.0.1:${(tavily.address() as AddressInfo).port}` } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'searcher', name: 'searcher', model: { name: 'm' }, tool_configurations: { search: { type: 'web_search', argument_override: { include_domains: ['example.org'] } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/searcher/sessions', { key: 's' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    tavily?.closeAllConnections();
    await new Promise((r) => tavily?.close(r));
  });

  it('searches with the configured key and the configuration’s domains, and the key stays out of the events', async () => {
    upstream.enqueue({ toolCalls: [{ id: 'w', name: 'search', arguments: '{"query":"do otters hold hands","limit":3}' }] }, { content: 'Yes.' });
    const res = await app.call('POST', '/v2/agents/searcher/sessions/s/events', { messages: [{ type: 'text', content: 'otters?' }] });
    const out = res.body.events.find((e: Ev) => e.type === 'tool_output');
    expect(out.tool_output).toEqual({ query: 'do otters hold hands', results: [{ title: 'Otters', url: 'https://example.org/otters', snippet: 'Otters hold hands while sleeping.', score: 0.9 }] });
    expect(seen.at(-1)).toEqual({ auth: `Bearer ${KEY}`, body: { query: 'do otters hold hands', max_results: 3, include_domains: ['example.org'], exclude_domains: [] } });
    expect(JSON.stringify([res.body, (await app.call('GET', '/v2/events?limit=1000')).body])).not.toContain(KEY);
  });
});
