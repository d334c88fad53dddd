/**
 * Source of the worker thread that runs an ONNX model with onnxruntime-node (its bundled CPU library) and
 * tokenises with @huggingface/tokenizers. Plain JavaScript kept as a string so that one file works under
 * ts-jest, ts-node and the compiled build alike. A forward pass is synchronous CPU work of tens to hundreds of
 * milliseconds per batch: on the main thread it would stall every HTTP request.
 *
 * workerData: { ortModule, tokenizersModule, modelPath, tokenizerPath, tokenizerConfig, task: 'embed' | 'score',
 * settings: OnnxModelSettings, intraOpThreads }.
 * Protocol: `{ ready, dimensions, loadMs }` (or `{ error }`) once loaded and probed; then `{ id, texts }` (embed)
 * or `{ id, query, texts }` (score) → `{ id, vectors }` (flat rows, or one score per text) or `{ id, error }`.
 */
export const ONNX_WORKER_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const started = performance.now();
const s = w.settings;

function cutToLength(e) {
  // Keeps the last token (the closing special token of every BERT/RoBERTa template) so the model sees an end.
  if (e.ids.length <= s.maxTokens) return e;
  const keep = (a) => a.slice(0, s.maxTokens - 1).concat(a[a.length - 1]);
  return { ids: keep(e.ids), attention_mask: keep(e.attention_mask), token_type_ids: e.token_type_ids && keep(e.token_type_ids) };
}

(async () => {
  let ort, tokenizer, session, output;
  try {
    ort = require(w.ortModule);
    const { Tokenizer } = require(w.tokenizersModule);
    tokenizer = new Tokenizer(JSON.parse(readFileSync(w.tokenizerPath, 'utf8')), w.tokenizerConfig);
    session = await ort.InferenceSession.create(w.modelPath, { intraOpNumThreads: w.intraOpThreads, interOpNumThreads: 1 });
    if (!session.inputNames.includes('input_ids')) throw new Error('the graph has no input_ids input (inputs: ' + session.inputNames.join(', ') + ')');
    output = w.task === 'score' ? session.outputNames[0] : (session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : session.outputNames[0]);
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e) });
    return;
  }

  const encodeOne = (text) => cutToLength(tokenizer.encode(text, { return_token_type_ids: true }));
  function encodePair(query, doc) {
    let e = tokenizer.encode(query, { text_pair: doc, return_token_type_ids: true });
    // Cut the document, not the query: shorten it in proportion to the excess a few times, then cut tokens.
    for (let i = 0; i < 4 && e.ids.length > s.maxTokens && doc.length > 0; i++) {
      doc = doc.slice(0, Math.floor(doc.length * (s.maxTokens / e.ids.length) * 0.95));
      e = tokenizer.encode(query, { text_pair: doc, return_token_type_ids: true });
    }
    return cutToLength(e);
  }

  function feeds(encodings) {
    const rows = encodings.length;
    const width = Math.max(...encodings.map((e) => e.ids.length));
    const columns = { input_ids: 'ids', attention_mask: 'attention_mask', token_type_ids: 'token_type_ids' };
    const out = {};
    for (const name of session.inputNames) {
      const key = columns[name];
      if (!key) throw new Error('the graph wants an input this runner does not give: ' + name);
      const data = new BigInt64Array(rows * width);
      encodings.forEach((e, r) => (e[key] || []).forEach((v, c) => (data[r * width + c] = BigInt(v))));
      out[name] = new ort.Tensor('int64', data, [rows, width]);
    }
    return { feeds: out, width };
  }

  async function embed(texts) {
    const encodings = texts.map(encodeOne);
    const { feeds: f, width } = feeds(encodings);
    const t = (await session.run(f, [output]))[output];
    const data = t.data;
    if (t.dims.length === 2) return { rows: texts.length, dims: t.dims[1], flat: Float32Array.from(data) };
    if (t.dims.length !== 3) throw new Error('output ' + output + ' has shape [' + t.dims.join(', ') + ']; expected [batch, tokens, dims] or [batch, dims]');
    const dims = t.dims[2];
    const flat = new Float32Array(texts.length * dims);
    encodings.forEach((e, r) => {
      const row = flat.subarray(r * dims, (r + 1) * dims);
      if (s.pooling === 'cls') row.set(data.subarray(r * width * dims, r * width * dims + dims));
      else {
        let n = 0;
        e.attention_mask.forEach((m, c) => {
          if (!m) return;
          n++;
          const at = (r * width + c) * dims;
          for (let k = 0; k < dims; k++) row[k] += data[at + k];
        });
        if (n > 0) for (let k = 0; k < dims; k++) row[k] /= n;
      }
      if (s.normalize) {
        let sum = 0;
        for (let k = 0; k < dims; k++) sum += row[k] * row[k];
        const norm = Math.sqrt(sum);
        if (norm > 0) for (let k = 0; k < dims; k++) row[k] /= norm;
      }
    });
    return { rows: texts.length, dims, flat };
  }

  async function score(query, texts) {
    const { feeds: f } = feeds(texts.map((t) => encodePair(query, t)));
    const t = (await session.run(f, [output]))[output];
    const perRow = t.data.length / texts.length;
    if (!Number.isInteger(perRow) || perRow < 1 || perRow > 2) throw new Error('output ' + output + ' has shape [' + t.dims.join(', ') + ']; expected one or two logits per pair');
    // Two logits: a classifier's (not relevant, relevant); the second, as a probability, is the score.
    return Float32Array.from({ length: texts.length }, (_, i) => {
      const x = perRow === 2 ? t.data[i * 2 + 1] - t.data[i * 2] : t.data[i];
      return s.activation === 'sigmoid' ? 1 / (1 + Math.exp(-x)) : x;
    });
  }

  let dimensions = 0;
  try {
    // A probe proves the graph runs with this tokenizer and tells the vector length.
    if (w.task === 'score') await score('probe', ['probe']);
    else dimensions = (await embed(['probe'])).dims;
  } catch (e) {
    parentPort.postMessage({ error: 'the model does not run: ' + String((e && e.message) || e) });
    return;
  }
  parentPort.postMessage({ ready: true, dimensions, loadMs: performance.now() - started });

  let chain = Promise.resolve();
  parentPort.on('message', (msg) => {
    // One batch at a time: onnxruntime already uses the thread's cores; interleaving would only add memory.
    chain = chain.then(async () => {
      try {
        const vectors = w.task === 'score' ? await score(msg.query, msg.texts) : (await embed(msg.texts)).flat;
        parentPort.postMessage({ id: msg.id, vectors }, [vectors.buffer]);
      } catch (e) {
        parentPort.postMessage({ id: msg.id, error: String((e && e.message) || e) });
      }
    });
  });
})();
`;
