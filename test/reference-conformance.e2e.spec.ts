import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { describeWithReference, Mismatch, ReferenceOpenApi } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 20's walker: every operation of the retrieval half, called over HTTP as a client of the reference API would,
 * each JSON answer (successes and the errors a client meets) validated against the schema the reference OpenAPI
 * gives for that operation and status, read from the shared YAML. One `it` per area, so a mismatch names its area;
 * the last `it` checks that no operation of the retrieval half was left unwalked.
 */

const RETRIEVAL_TAGS = ['Corpora', 'Upload', 'Index', 'Documents', 'Metadata Query', 'Queries', 'Query History', 'Chats', 'Large Language Models', 'LLM Chat Completions', 'Generation Presets', 'Factual Consistency Evaluation', 'Encoders', 'Rerankers', 'Table Extractors', 'Hallucination Correctors', 'Jobs', 'Users', 'API Keys', 'Application Clients', 'Authentication'];

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC';
const TABLE = { id: 'counts', title: 'Otter counts', data: { headers: [[{ text_value: 'Site' }, { text_value: 'Otters' }]], rows: [[{ text_value: 'Morro Bay' }, { int_value: 41 }]] } };

describeWithReference('the retrieval half answers with the reference API shapes (walker over every operation)', () => {
  const reference = new ReferenceOpenApi();
  const walked = new Map<string, Set<number>>();
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  /** Calls an operation and returns the answer with the mismatches of its body against the reference schema. */
  const op = async (operationId: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.call(method, path, body, headers);
    return record(operationId, res.status, res.body, res);
  };
  const found: Mismatch[] = [];
  const record = <T extends { status: number; body: any }>(operationId: string, status: number, body: unknown, res: T): T => {
    lastOperation = operationId;
    const errors = reference.check(operationId, status, body);
    if (errors.length) found.push({ operationId, status, errors });
    (walked.get(operationId) ?? walked.set(operationId, new Set()).get(operationId)!).add(status);
    return res;
  };
  /** The mismatches recorded since the last call (each `it` asserts its own). */
  const mismatches = () => found.splice(0);
  /** A status other than the one a reference client expects is recorded (not thrown) so one run shows them all. */
  const expectStatus = (res: { status: number; body: unknown; op?: string }, status: number) => {
    if (res.status !== status) found.push({ operationId: lastOperation, status: res.status, errors: [`expected ${status}: ${JSON.stringify(res.body).slice(0, 300)}`] });
  };
  let lastOperation = '';

  /** Calls a streaming operation and checks each event against the reference's event-stream schema. */
  const stream = async (operationId: string, path: string, body: unknown) => {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
    const text = await res.text();
    lastOperation = operationId;
    const errors = res.headers.get('content-type')?.startsWith('text/event-stream') ? reference.checkStream(operationId, res.status, text) : [`not an event stream: ${res.status} ${text.slice(0, 200)}`];
    if (errors.length) found.push({ operationId, status: res.status, errors });
    (walked.get(operationId) ?? walked.set(operationId, new Set()).get(operationId)!).add(res.status);
    return { status: res.status, body: text };
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.route('POST', '/hhem', () => ({ status: 200, json: { scores: [0.91] } }));
    upstream.route('POST', '/v1/embeddings', (req) => ({ status: 200, json: { data: (req.body as { input: string[] }).input.map((_, index) => ({ index, embedding: [0.1, 0.2, 0.3] })) } }));
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', FCS_HHEM_URL: `${upstream.url}/hhem` } });
    await registerScripted(app, upstream, 'walker-llm');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('corpora', async () => {
    expectStatus(await op('createCorpus', 'POST', '/v2/corpora', { key: 'walk', name: 'Walk', description: 'the walker corpus', filter_attributes: [{ name: 'lang', level: 'document', type: 'text' }, { name: 'year', level: 'part', type: 'integer' }] }), 201);
    expectStatus(await op('createCorpus', 'POST', '/v2/corpora', { key: 'walk', name: 'again' }), 400);
    expectStatus(await op('createCorpus', 'POST', '/v2/corpora', { key: 'bad key!' }), 400);
    expectStatus(await op('createCorpus', 'POST', '/v2/corpora', { key: 'scratch', name: 'Scratch' }), 201);
    expectStatus(await op('listCorpora', 'GET', '/v2/corpora?limit=1'), 200);
    expectStatus(await op('getCorpus', 'GET', '/v2/corpora/walk'), 200);
    expectStatus(await op('getCorpus', 'GET', '/v2/corpora/nope'), 404);
    expectStatus(await op('updateCorpus', 'PATCH', '/v2/corpora/walk', { description: 'walked', save_history: true }), 200);
    expectStatus(await op('computeCorpusSize', 'POST', '/v2/corpora/walk/compute_size'), 200);
    expectStatus(await op('getFilterAttributeStats', 'GET', '/v2/corpora/walk/filter_attribute_stats'), 200);
    expectStatus(await op('replaceFilterAttributes', 'POST', '/v2/corpora/scratch/replace_filter_attributes', { filter_attributes: [{ name: 'lang', level: 'document', type: 'text' }] }), 200);
    expectStatus(await op('resetCorpus', 'POST', '/v2/corpora/scratch/reset'), 204);
    expectStatus(await op('deleteCorpus', 'DELETE', '/v2/corpora/scratch'), 204);
    expectStatus(await op('deleteCorpus', 'DELETE', '/v2/corpora/scratch'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('documents, upload and metadata query', async () => {
    const structured = {
      id: 'otters',
      type: 'structured',
      title: 'Sea otters',
      metadata: { lang: 'eng' },
      sections: [{ title: 'Survey', text: 'Sea otters were counted along the coast. They use kelp to stay in place.', metadata: { year: 2024 }, tables: [TABLE], images: [{ id: 'map', title: 'Survey map', image_data: { data: PNG, mime_type: 'image/png' } }] }],
    };
    expectStatus(await op('createCorpusDocument', 'POST', '/v2/corpora/walk/documents', structured), 201);
    expectStatus(await op('createCorpusDocument', 'POST', '/v2/corpora/walk/documents', { id: 'kelp', type: 'core', metadata: { lang: 'eng' }, document_parts: [{ text: 'Kelp forests shelter fish and otters.', metadata: { year: 2023 } }] }), 201);
    expectStatus(await op('createCorpusDocument', 'POST', '/v2/corpora/walk/documents', { id: 'kelp', type: 'core', document_parts: [{ text: 'again' }] }), 400);
    expectStatus(await op('createCorpusDocument', 'POST', '/v2/corpora/nope/documents', { id: 'x', type: 'core', document_parts: [{ text: 'x' }] }), 404);
    expectStatus(await op('listCorpusDocuments', 'GET', '/v2/corpora/walk/documents?limit=1'), 200);
    expectStatus(await op('getCorpusDocument', 'GET', '/v2/corpora/walk/documents/otters'), 200);
    expectStatus(await op('getCorpusDocument', 'GET', '/v2/corpora/walk/documents/ghost'), 404);
    expectStatus(await op('getImage', 'GET', '/v2/corpora/walk/documents/otters/images/map'), 200);
    expectStatus(await op('getImage', 'GET', '/v2/corpora/walk/documents/otters/images/nope'), 404);
    expectStatus(await op('updateCorpusDocument', 'PATCH', '/v2/corpora/walk/documents/kelp', { metadata: { reviewed: true } }), 200);
    expectStatus(await op('replaceCorpusDocumentMetadata', 'PUT', '/v2/corpora/walk/documents/kelp/metadata', { metadata: { lang: 'eng', reviewed: true } }), 200);
    expectStatus(await op('bulkUpdateCorpusDocumentMetadata', 'PATCH', '/v2/corpora/walk/documents?document_ids=kelp&async=false', { metadata: { bulk: 1 } }), 200);
    expectStatus(await op('bulkUpdateCorpusDocumentMetadata', 'PATCH', '/v2/corpora/walk/documents?document_ids=kelp', { metadata: { bulk: 2 } }), 202);
    expectStatus(await op('queryMetadata', 'POST', '/v2/corpora/walk/metadata_query', { queries: [{ field: 'lang', query: 'eng' }] }), 200);
    expectStatus(await op('queryMetadata', 'POST', '/v2/corpora/walk/metadata_query', { level: 'document' }), 400);

    const form = new FormData();
    form.append('file', new Blob(['# Otters\n\nOtters hold hands while sleeping.\n'], { type: 'text/markdown' }), 'otters-notes.md');
    form.append('metadata', JSON.stringify({ lang: 'eng' }));
    const upload = await fetch(`${app.url}/v2/corpora/walk/upload_file`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form });
    expectStatus(record('uploadFile', upload.status, await upload.json(), { status: upload.status, body: null }), 201);
    const noFile = await fetch(`${app.url}/v2/corpora/walk/upload_file`, { method: 'POST', headers: { 'x-api-key': app.key }, body: new FormData() });
    expectStatus(record('uploadFile', noFile.status, await noFile.json(), { status: noFile.status, body: null }), 400);

    expectStatus(await op('createCorpusDocument', 'POST', '/v2/corpora/walk/documents', { id: 'doomed', type: 'core', document_parts: [{ text: 'to be deleted' }] }), 201);
    upstream.enqueue({ content: 'Otters were counted; they use kelp.' });
    expectStatus(await op('summarizeCorpusDocument', 'POST', '/v2/corpora/walk/documents/otters/summarize', { llm_name: 'walker-llm' }), 200);
    upstream.enqueue({ content: 'Otters use kelp.' });
    expectStatus(await stream('summarizeCorpusDocument', '/v2/corpora/walk/documents/otters/summarize', { llm_name: 'walker-llm', stream_response: true }), 200);
    expectStatus(await op('summarizeCorpusDocument', 'POST', '/v2/corpora/walk/documents/ghost/summarize', { llm_name: 'walker-llm' }), 404);
    expectStatus(await op('deleteCorpusDocument', 'DELETE', '/v2/corpora/walk/documents/doomed'), 204);
    expectStatus(await op('deleteCorpusDocument', 'DELETE', '/v2/corpora/walk/documents/doomed'), 404);
    expectStatus(await op('createCorpusDocument', 'POST', '/v2/corpora/walk/documents', { id: 'doomed2', type: 'core', document_parts: [{ text: 'to be deleted in bulk' }] }), 201);
    expectStatus(await op('bulkDeleteCorpusDocuments', 'DELETE', '/v2/corpora/walk/documents?document_ids=doomed2&async=false'), 200);
    expect(mismatches()).toEqual([]);
  });

  it('queries', async () => {
    const search = { corpora: [{ corpus_key: 'walk', metadata_filter: "doc.lang = 'eng'" }], limit: 5, context_configuration: { sentences_before: 1, sentences_after: 1 } };
    expectStatus(await op('query', 'POST', '/v2/query', { query: 'How do otters use kelp?', search }), 200);
    upstream.enqueue({ content: 'Otters use kelp to stay in place [1].' });
    expectStatus(await op('query', 'POST', '/v2/query', { query: 'How do otters use kelp?', search, generation: { generation_preset_name: 'rag-default', max_used_search_results: 2, enable_factual_consistency_score: true } }), 200);
    upstream.enqueue({ content: 'Otters use kelp [1].' });
    expectStatus(await stream('query', '/v2/query', { query: 'How do otters use kelp?', search, stream_response: true, generation: { max_used_search_results: 2, enable_factual_consistency_score: true } }), 200);
    upstream.enqueue({ content: 'Kelp [1].' });
    expectStatus(await stream('queryCorpus', '/v2/corpora/walk/query', { query: 'kelp', stream_response: true, generation: {} }), 200);
    expectStatus(await op('query', 'POST', '/v2/query', { query: 'x'.repeat(1001), search }), 400);
    expectStatus(await op('query', 'POST', '/v2/query', { query: 'otters', search: { corpora: [{ corpus_key: 'nope' }] } }), 404);
    expectStatus(await op('queryCorpus', 'POST', '/v2/corpora/walk/query', { query: 'otters', search: { limit: 3 } }), 200);
    expectStatus(await op('searchCorpus', 'GET', '/v2/corpora/walk/query?query=otters&limit=3'), 200);
    expectStatus(await op('searchCorpus', 'GET', '/v2/corpora/nope/query?query=otters'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('chats and query history', async () => {
    const search = { corpora: [{ corpus_key: 'walk' }] };
    upstream.enqueue({ content: 'They hold on to kelp [1].' });
    const chat = await op('createChat', 'POST', '/v2/chats', { query: 'How do otters stay in place?', search, generation: { max_used_search_results: 2 } });
    expectStatus(chat, 200);
    expectStatus(await op('createChat', 'POST', '/v2/chats', { query: 'x'.repeat(1001), search }), 400);
    upstream.enqueue({ content: 'Kelp [1].' });
    expectStatus(await stream('createChat', '/v2/chats', { query: 'What do otters use?', search, stream_response: true }), 200);
    const chatId = chat.body.chat_id as string;
    upstream.enqueue({ content: 'So they do not drift [1].' });
    const turn = await op('createChatTurn', 'POST', `/v2/chats/${chatId}/turns`, { query: 'Why?', search });
    expectStatus(turn, 200);
    upstream.enqueue({ content: 'Yes [1].' });
    expectStatus(await stream('createChatTurn', `/v2/chats/${chatId}/turns`, { query: 'Really?', search, stream_response: true }), 200);
    expectStatus(await op('createChatTurn', 'POST', '/v2/chats/cht_nope/turns', { query: 'Why?', search }), 404);
    expectStatus(await op('listChats', 'GET', '/v2/chats?limit=1'), 200);
    expectStatus(await op('getChat', 'GET', `/v2/chats/${chatId}`), 200);
    expectStatus(await op('getChat', 'GET', '/v2/chats/cht_nope'), 404);
    expectStatus(await op('listChatTurns', 'GET', `/v2/chats/${chatId}/turns`), 200);
    expectStatus(await op('getChatTurn', 'GET', `/v2/chats/${chatId}/turns/${turn.body.turn_id}`), 200);
    expectStatus(await op('getChatTurn', 'GET', `/v2/chats/${chatId}/turns/trn_nope`), 404);
    expectStatus(await op('updateChatTurn', 'PATCH', `/v2/chats/${chatId}/turns/${turn.body.turn_id}`, { enabled: false }), 200);
    expectStatus(await op('updateChatTurn', 'PATCH', `/v2/chats/${chatId}/turns/${turn.body.turn_id}`, { enabled: 'no' }), 400);
    expectStatus(await op('deleteChatTurn', 'DELETE', `/v2/chats/${chatId}/turns/${turn.body.turn_id}`), 204);
    expectStatus(await op('deleteChatTurn', 'DELETE', `/v2/chats/${chatId}/turns/${turn.body.turn_id}`), 404);

    // The walk corpus saves its queries (updated above), so the queries and turns asked on it are in the history.
    const history = await op('getQueryHistories', 'GET', '/v2/queries?corpus_key=walk&limit=2');
    expectStatus(history, 200);
    expect(history.body.queries.length).toBeGreaterThan(0);
    expectStatus(await op('getQueryHistories', 'GET', `/v2/queries?chat_id=${chatId}`), 200);
    expectStatus(await op('getQueryHistory', 'GET', `/v2/queries/${history.body.queries[0].id}`), 200);
    expectStatus(await op('getQueryHistory', 'GET', '/v2/queries/qry_nope'), 404);
    expectStatus(await op('deleteChat', 'DELETE', `/v2/chats/${chatId}`), 204);
    expectStatus(await op('deleteChat', 'DELETE', `/v2/chats/${chatId}`), 404);
    expect(mismatches()).toEqual([]);
  });

  it('models: LLMs, chat completions, presets, encoders, rerankers, table extractors, evaluation, hallucination correctors', async () => {
    expectStatus(await op('listLLMs', 'GET', '/v2/llms'), 200);
    const created = await op('createLLM', 'POST', '/v2/llms', { type: 'openai-compatible', name: 'walker-2', model: 'm', uri: `${upstream.baseURL}/chat/completions`, auth: { type: 'bearer', token: 'sk-walker' } });
    expectStatus(created, 201);
    expectStatus(await op('createLLM', 'POST', '/v2/llms', { type: 'openai-compatible', name: 'walker-2', model: 'm', uri: `${upstream.baseURL}/chat/completions` }), 400);
    expectStatus(await op('getLLM', 'GET', `/v2/llms/${created.body.id}`), 200);
    expectStatus(await op('getLLM', 'GET', '/v2/llms/llm_nope'), 404);
    expectStatus(await op('updateLLM', 'PATCH', `/v2/llms/${created.body.id}`, { description: 'walked' }), 200);
    expectStatus(await op('deleteLLM', 'DELETE', `/v2/llms/${created.body.id}`), 204);
    upstream.enqueue({ content: 'Hello.' });
    expectStatus(await op('createChatCompletion', 'POST', '/v2/llms/chat/completions', { model: 'walker-llm', messages: [{ role: 'user', content: 'Hi' }] }), 200);
    expectStatus(await op('createChatCompletion', 'POST', '/v2/llms/chat/completions', { model: 'walker-llm' }), 400);
    upstream.enqueue({ content: 'Hello there.' });
    expectStatus(await stream('createChatCompletion', '/v2/llms/chat/completions', { model: 'walker-llm', stream: true, messages: [{ role: 'user', content: 'Hi' }] }), 200);

    expectStatus(await op('listGenerationPresets', 'GET', '/v2/generation_presets'), 200);
    const preset = { name: 'walker-preset', llm_name: 'walker-llm', prompt_template: '[{"role": "user", "content": "$esc.java(${vectaraQuery})"}]', description: 'walks' };
    const createdPreset = await op('createGenerationPreset', 'POST', '/v2/generation_presets', preset);
    expectStatus(createdPreset, 201);
    expectStatus(await op('replaceGenerationPreset', 'PUT', `/v2/generation_presets/${createdPreset.body.id}`, { ...preset, description: 'walked' }), 200);
    expectStatus(await op('deleteGenerationPreset', 'DELETE', `/v2/generation_presets/${createdPreset.body.id}`), 204);
    expectStatus(await op('deleteGenerationPreset', 'DELETE', `/v2/generation_presets/${createdPreset.body.id}`), 404);

    const encoder = { type: 'openai-compatible', name: 'walker-embed', description: 'walks', uri: `${upstream.baseURL}/embeddings`, model: 'embed', auth: { type: 'bearer', token: 'sk-embed' } };
    expectStatus(await op('createEncoder', 'POST', '/v2/encoders', encoder), 201);
    expectStatus(await op('createEncoder', 'POST', '/v2/encoders', { ...encoder, uri: 'not a url' }), 400);
    expectStatus(await op('listEncoders', 'GET', '/v2/encoders'), 200);
    expectStatus(await op('listRerankers', 'GET', '/v2/rerankers'), 200);
    expectStatus(await op('listTableExtractors', 'GET', '/v2/table_extractors'), 200);
    expectStatus(await op('evaluateFactualConsistency', 'POST', '/v2/evaluate_factual_consistency', { generated_text: 'Otters use kelp.', source_texts: ['Sea otters use kelp to stay in place.'] }), 200);
    expectStatus(await op('evaluateFactualConsistency', 'POST', '/v2/evaluate_factual_consistency', { generated_text: 'x' }), 400);
    expectStatus(await op('listHallucinationCorrectors', 'GET', '/v2/hallucination_correctors'), 200);
    upstream.enqueue({ content: JSON.stringify({ corrected_text: 'Otters use kelp.', corrections: [] }) });
    const corrected = await op('correctHallucinations', 'POST', '/v2/hallucination_correctors/correct_hallucinations', { generated_text: 'Otters use kelp.', documents: [{ text: 'Sea otters use kelp to stay in place.' }], model_name: 'walker-llm' });
    expectStatus(corrected, 200);
    expect(mismatches()).toEqual([]);
  });

  it('jobs, users, API keys, app clients and tokens', async () => {
    const jobs = await op('listJobs', 'GET', '/v2/jobs');
    expectStatus(jobs, 200);
    expectStatus(await op('getJob', 'GET', `/v2/jobs/${jobs.body.jobs[0].id}`), 200);
    expectStatus(await op('getJob', 'GET', '/v2/jobs/job_nope'), 404);

    expectStatus(await op('createUser', 'POST', '/v2/users', { email: 'walker@example.com', username: 'walker', api_roles: ['corpus_administrator'] }), 201);
    expectStatus(await op('listUsers', 'GET', '/v2/users'), 200);
    expectStatus(await op('getUser', 'GET', '/v2/users/walker'), 200);
    expectStatus(await op('getUser', 'GET', '/v2/users/nobody'), 404);
    expectStatus(await op('updateUser', 'PATCH', '/v2/users/walker', { description: 'walks' }), 200);
    expectStatus(await op('resetUserPassword', 'POST', '/v2/users/nobody/reset_password'), 404);
    expectStatus(await op('deleteUser', 'DELETE', '/v2/users/walker'), 204);

    const key = await op('createApiKey', 'POST', '/v2/api_keys', { name: 'walker key', api_key_role: 'serving', corpus_keys: ['walk'] });
    expectStatus(key, 201);
    expectStatus(await op('listApiKeys', 'GET', '/v2/api_keys'), 200);
    expectStatus(await op('getApiKey', 'GET', `/v2/api_keys/${key.body.id}`), 200);
    expectStatus(await op('getApiKey', 'GET', '/v2/api_keys/aky_nope'), 404);
    expectStatus(await op('updateApiKey', 'PATCH', `/v2/api_keys/${key.body.id}`, { enabled: false }), 200);
    expectStatus(await op('deleteApiKey', 'DELETE', `/v2/api_keys/${key.body.id}`), 204);

    const client = await op('createAppClient', 'POST', '/v2/app_clients', { type: 'client_credentials', name: 'walker client', api_roles: ['corpus_administrator'] });
    expectStatus(client, 201);
    expectStatus(await op('listAppClient', 'GET', '/v2/app_clients'), 200);
    expectStatus(await op('getAppClient', 'GET', `/v2/app_clients/${client.body.id}`), 200);
    expectStatus(await op('updateAppClient', 'PATCH', `/v2/app_clients/${client.body.id}`, { description: 'walks' }), 200);
    const token = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.body.client_id, client_secret: client.body.client_secret }) });
    expectStatus(record('getOAuthToken', token.status, await token.json(), { status: token.status, body: null }), 200);
    const bad = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.body.client_id, client_secret: 'wrong' }) });
    expectStatus(record('getOAuthToken', bad.status, await bad.json(), { status: bad.status, body: null }), 401);
    expectStatus(await op('deleteAppClient', 'DELETE', `/v2/app_clients/${client.body.id}`), 204);

    expectStatus(await op('listCorpora', 'GET', '/v2/corpora', undefined, { 'x-api-key': 'zut_not_a_key' }), 401);
    expect(mismatches()).toEqual([]);
  });

  it('leaves no operation of the retrieval half unwalked', () => {
    const retrieval = reference.operations().filter((o) => RETRIEVAL_TAGS.includes(reference.tagOf(o.operationId)));
    expect(retrieval).toHaveLength(71);
    const unwalked = retrieval.map((o) => o.operationId).filter((id) => !walked.has(id));
    expect(unwalked).toEqual([]);
  });
});
