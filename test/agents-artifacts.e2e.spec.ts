import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Session artifacts: files uploaded with an input, stored by content hash, listed with metadata_filter. */
describe('session artifacts', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'clerk', name: 'clerk', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/clerk/sessions', { key: 'files' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const upload = (parts: { files?: [string, Buffer, string][]; fields?: Record<string, string> }, session = 'files') => {
    const form = new FormData();
    for (const [name, bytes, type] of parts.files ?? []) form.append('files', new Blob([bytes], { type }), name);
    for (const [k, v] of Object.entries(parts.fields ?? {})) form.append(k, v);
    return fetch(`${app.url}/v2/agents/clerk/sessions/${session}/events`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  };
  const invoice = Buffer.from('%PDF-1.4 invoice 2026-001 total 42 EUR');
  const photo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);

  it('stores the files, records one artifact_upload event, and the agent reads about them with the message', async () => {
    upstream.enqueue({ content: 'I see an invoice and a photo.' });
    const res = await upload({
      files: [['invoice.pdf', invoice, 'application/pdf'], ['photo.png', photo, 'image/png']],
      fields: { metadata: JSON.stringify({ kind: 'invoice', year: 2026 }), messages: JSON.stringify([{ type: 'text', content: 'What did I send?' }]) },
    });
    expect(res.status).toBe(201);
    expect(res.body.events.map((e: Ev) => e.type)).toEqual(['artifact_upload', 'input_message', 'agent_output']);
    expect(res.body.events[0].artifacts).toEqual([
      { artifact_id: expect.stringMatching(/^art_/), filename: 'invoice.pdf', mime_type: 'application/pdf', size_bytes: invoice.length },
      { artifact_id: expect.stringMatching(/^art_/), filename: 'photo.png', mime_type: 'image/png', size_bytes: photo.length },
    ]);
    const prompt = (upstream.chatRequests().at(-1)!.body as any).messages.map((m: any) => m.content);
    expect(prompt[0]).toMatch(/^Uploaded files: invoice\.pdf \(application\/pdf, \d+ bytes, artifact_id art_/);
    expect(prompt[1]).toBe('What did I send?');
    // The bytes are not in the log: only their hash.
    const log = JSON.stringify((await app.call('GET', '/v2/events?category=session&limit=1000')).body);
    expect(log).toContain(createHash('sha256').update(invoice).digest('hex'));
    expect(log).not.toContain('invoice 2026-001');
  });

  it('lists with metadata_filter, paging and order, and gets the same bytes back', async () => {
    await upload({ files: [['notes.txt', Buffer.from('plain notes'), 'text/plain']], fields: { metadata: JSON.stringify({ kind: 'note' }) } });
    const all = await app.call('GET', '/v2/agents/clerk/sessions/files/artifacts?order_by=asc&limit=100');
    expect(all.body.artifacts.map((a: any) => a.filename)).toEqual(['invoice.pdf', 'photo.png', 'notes.txt']);
    const invoices = await app.call('GET', `/v2/agents/clerk/sessions/files/artifacts?metadata_filter=${encodeURIComponent("doc.kind = 'invoice' AND doc.year >= 2026")}`);
    expect(invoices.body.artifacts.map((a: any) => a.filename).sort()).toEqual(['invoice.pdf', 'photo.png']);
    const page = await app.call('GET', '/v2/agents/clerk/sessions/files/artifacts?limit=1');
    expect(page.body.artifacts[0].filename).toBe('notes.txt');
    expect(page.body.metadata.page_key).toBeDefined();
    const one = all.body.artifacts[0];
    expect(one).toMatchObject({ metadata: { kind: 'invoice', year: 2026 }, checksum_sha256: createHash('sha256').update(invoice).digest('hex'), created_at: expect.any(String) });
    const got = await app.call('GET', `/v2/agents/clerk/sessions/files/artifacts/${one.artifact_id}`);
    expect(Buffer.from(got.body.data, 'base64').equals(invoice)).toBe(true);
    expect((await app.call('GET', '/v2/agents/clerk/sessions/files/artifacts/art_nope')).status).toBe(404);
    expect((await app.call('GET', `/v2/agents/clerk/sessions/files/artifacts?metadata_filter=${encodeURIComponent('doc.kind = ')}`)).status).toBe(400);
    // Stored once per content, owner-only.
    const dir = join(app.dataDir, 'artifacts');
    expect(readdirSync(dir).length).toBe(3);
    const file = join(dir, one.checksum_sha256.slice(0, 2), one.checksum_sha256);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a bad upload with nothing stored', async () => {
    const before = (await app.call('GET', '/v2/agents/clerk/sessions/files/events?limit=100&include_hidden=true')).body.events.length;
    expect((await upload({ files: [['a.txt', Buffer.from('a'), 'text/plain']], fields: { metadata: '{not json' } })).status).toBe(400);
    expect((await upload({ files: [['a.txt', Buffer.from('a'), 'text/plain']], fields: { metadata: '[1]' } })).status).toBe(400);
    expect((await upload({ fields: { messages: JSON.stringify([{ type: 'text', content: 'no file' }]) } })).status).toBe(400);
    expect((await upload({ files: [['a.txt', Buffer.from('a'), 'text/plain']], fields: { surprise: '1' } })).status).toBe(400);
    const big = await upload({ files: [['big.bin', Buffer.alloc(25 * 1024 * 1024 + 1), 'application/octet-stream']] });
    expect(big.status).toBe(413);
    expect(big.body.messages[0]).toMatch(/larger than/);
    expect((await upload({ files: [['a.txt', Buffer.from('a'), 'text/plain']] }, 'ghost')).status).toBe(404);
    expect((await app.call('GET', '/v2/agents/clerk/sessions/files/events?limit=100&include_hidden=true')).body.events.length).toBe(before);
  });

  it('a fork sees the artifacts uploaded before its fork point', async () => {
    const events = (await app.call('GET', '/v2/agents/clerk/sessions/files/events?limit=100')).body.events as Ev[];
    const firstUpload = events.find((e) => e.type === 'artifact_upload')!;
    expect((await app.call('POST', '/v2/agents/clerk/sessions', { key: 'fork', from_session: { session_key: 'files', include_up_to_event_id: firstUpload.id } })).status).toBe(201);
    const listed = await app.call('GET', '/v2/agents/clerk/sessions/fork/artifacts?order_by=asc');
    expect(listed.body.artifacts.map((a: any) => a.filename)).toEqual(['invoice.pdf', 'photo.png']);
  });

  it('image_read puts an uploaded image before a model that takes images, after the tool output, and refuses otherwise', async () => {
    await registerScripted(app, upstream, 'vision', { capabilities: { image_support: true } });
    for (const [key, model] of [['eyes', 'vision'], ['blind', 'm']]) {
      await app.call('POST', '/v2/agents', { key, name: key, model: { name: model }, tool_configurations: { look: { type: 'image_read', argument_override: { detail: 'low' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
      await app.call('POST', `/v2/agents/${key}/sessions`, { key: 's' });
    }
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108020000009077', 'hex');
    const up = async (agentKey: string) => {
      const f = new FormData();
      f.append('files', new Blob([png], { type: 'image/png' }), 'dot.png');
      const r = (await (await fetch(`${app.url}/v2/agents/${agentKey}/sessions/s/events`, { method: 'POST', headers: { 'x-api-key': app.key }, body: f })).json()) as any;
      return r.events[0].artifacts[0].artifact_id as string;
    };
    const id = await up('eyes');
    upstream.enqueue({ toolCalls: [{ id: 'i', name: 'look', arguments: JSON.stringify({ artifact_id: id }) }] }, { content: 'A single pixel.' });
    const res = await app.call('POST', '/v2/agents/eyes/sessions/s/events', { messages: [{ type: 'text', content: 'what is in the image?' }] });
    expect(res.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'tool_input', 'image_read', 'tool_output', 'agent_output']);
    expect(res.body.events[2]).toMatchObject({ artifact_id: id, detail: 'low' });
    const sent = (upstream.chatRequests().at(-1)!.body as any).messages;
    expect(sent.at(-2)).toMatchObject({ role: 'tool', tool_call_id: 'i' });
    expect(sent.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: `Image ${id}:` }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}`, detail: 'low' } }] });
    const blindId = await up('blind');
    upstream.enqueue({ toolCalls: [{ id: 'i', name: 'look', arguments: JSON.stringify({ artifact_id: blindId }) }] }, { content: 'I cannot see.' });
    const blind = await app.call('POST', '/v2/agents/blind/sessions/s/events', { messages: [{ type: 'text', content: 'look' }] });
    expect(blind.body.events.find((e: Ev) => e.type === 'tool_output')).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/does not take images/) } });
  });
  it('image_analysis enhances a small image, tiles a large one at high detail, and puts each before the model', async () => {
    const sharp = (await import('sharp')).default;
    await app.call('POST', '/v2/agents', { key: 'lens', name: 'lens', model: { name: 'vision' }, tool_configurations: { analyse: { type: 'image_analysis' }, plain: { type: 'image_analysis', tool_configuration: { preprocessing: { upscale: false, enhance_contrast: false, sharpen: false, tile: false } } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/lens/sessions', { key: 's' });
    // A small, low-contrast image (grey 100..140) and a large one (2500 x 1200).
    const small = await sharp({ create: { width: 200, height: 100, channels: 3, background: { r: 100, g: 100, b: 100 } } }).composite([{ input: await sharp({ create: { width: 100, height: 50, channels: 3, background: { r: 140, g: 140, b: 140 } } }).png().toBuffer(), left: 50, top: 25 }]).png().toBuffer();
    const large = await sharp({ create: { width: 2500, height: 1200, channels: 3, background: { r: 10, g: 200, b: 30 } } }).png().toBuffer();
    const f = new FormData();
    f.append('files', new Blob([small], { type: 'image/png' }), 'small.png');
    f.append('files', new Blob([large], { type: 'image/png' }), 'large.png');
    const up = (await (await fetch(`${app.url}/v2/agents/lens/sessions/s/events`, { method: 'POST', headers: { 'x-api-key': app.key }, body: f })).json()) as any;
    const [smallId, largeId] = up.events[0].artifacts.map((a: any) => a.artifact_id);
    upstream.enqueue({ toolCalls: [{ id: 'a', name: 'analyse', arguments: JSON.stringify({ artifact_id: smallId }) }, { id: 'b', name: 'analyse', arguments: JSON.stringify({ artifact_id: largeId, detail: 'high' }) }, { id: 'c', name: 'plain', arguments: JSON.stringify({ artifact_id: smallId, detail: 'low' }) }] }, { content: 'Seen.' });
    const res = await app.call('POST', '/v2/agents/lens/sessions/s/events', { messages: [{ type: 'text', content: 'look closely' }] });
    const outs = res.body.events.filter((e: Ev) => e.type === 'tool_output').sort((x: Ev, y: Ev) => x.tool_call_id.localeCompare(y.tool_call_id));
    const [a, b, c] = outs.map((o: Ev) => o.tool_output);
    expect(a).toMatchObject({ artifact_id: smallId, original: { width: 200, height: 100, format: 'png' }, analyzed: { width: 800, height: 400 }, tiles: [], preprocessing: ['upscaled 4.00x', 'contrast stretched to the full range', 'sharpened'] });
    expect(b.tiles.length).toBe(6);
    expect(b.tiles[0]).toMatchObject({ left: 0, top: 0, width: 1024, height: 1024 });
    expect(b.tiles.at(-1)).toMatchObject({ left: 1476, top: 176, width: 1024, height: 1024 });
    expect(b.analyzed).toMatchObject({ width: 2048, height: 983 });
    expect(c).toMatchObject({ analyzed: { width: 200, height: 100 }, tiles: [], preprocessing: [] });
    // The stretched contrast is real: the prepared small image spans black to white.
    const prepared = await app.call('GET', `/v2/agents/lens/sessions/s/artifacts/${a.analyzed.artifact_id}`);
    const bytes = Buffer.from(prepared.body.data, 'base64');
    const stats = await sharp(bytes).stats();
    expect(stats.channels[0].min).toBeLessThan(20);
    expect(stats.channels[0].max).toBeGreaterThan(235);
    // Every prepared image was put before the model after the tool outputs: 1 + (1 + 6) + 1.
    const sent = (upstream.chatRequests().at(-1)!.body as any).messages;
    const images = sent.filter((m: any) => Array.isArray(m.content)).flatMap((m: any) => m.content).filter((p: any) => p.type === 'image_url');
    expect(images).toHaveLength(9);
    expect(res.body.events.filter((e: Ev) => e.type === 'image_read')).toHaveLength(9);
  });
});
