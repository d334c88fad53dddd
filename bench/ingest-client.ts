import { type ScaleDocument, scaleDocuments } from './synthetic-corpus';

/**
 * The scale bench's ingest client (bench/scale.ts, `clients=process`, the default), as a process of its own: it
 * makes the synthetic corpus and sends it, so the service process's RSS is the service's alone. Arguments: base URL,
 * API key, chunks, parts per document, documents per round, concurrency, and optionally the documents' id prefix and
 * seed (synthetic-corpus.ts). After each round it tells its parent how
 * many chunks were acknowledged; it exits 1 with the first failure's text on stderr.
 */
async function main(): Promise<void> {
  const [baseUrl, apiKey, nArg, partsArg, roundArg, concurrencyArg, prefix = 'd', seedArg = '19'] = process.argv.slice(2);
  const [n, partsPerDocument, perRound, concurrency] = [nArg, partsArg, roundArg, concurrencyArg].map(Number);
  const documents = scaleDocuments(n, partsPerDocument, prefix, Number(seedArg));
  let sent = 0;
  for (;;) {
    const round: ScaleDocument[] = [];
    while (round.length < perRound) {
      const d = documents.next();
      if (d.done) break;
      round.push(d.value);
    }
    if (round.length === 0) break;
    sent += round.length;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < round.length) {
          const body = round[next++];
          const res = await fetch(`${baseUrl}/v2/corpora/scale/documents?wait_for=indexed`, {
            method: 'POST',
            headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          const text = await res.text();
          if (res.status >= 300) throw new Error(`POST document ${body.id}: ${res.status} ${text.slice(0, 300)}`);
        }
      }),
    );
    process.send?.({ acknowledged: Math.min(n, sent * partsPerDocument) });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
