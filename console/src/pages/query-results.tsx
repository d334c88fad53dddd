import type { ComponentChildren } from 'preact';

export interface SearchResult {
  text: string;
  score: number;
  document_id: string;
  corpus_key?: string;
  part_metadata?: Record<string, unknown>;
  document_metadata?: Record<string, unknown>;
}

/** Tags the query asks the service to put around the matching sentence inside its context window. */
export const START_TAG = '\u0002';
export const END_TAG = '\u0003';

/** The result's text with the matched sentence highlighted, as the service marked it. */
export function Snippet({ text }: { text: string }) {
  const out: ComponentChildren[] = [];
  let rest = text;
  for (let i = 0; ; i++) {
    const start = rest.indexOf(START_TAG);
    if (start < 0) break;
    const end = rest.indexOf(END_TAG, start);
    if (end < 0) break;
    out.push(rest.slice(0, start), <mark key={i}>{rest.slice(start + 1, end)}</mark>);
    rest = rest.slice(end + 1);
  }
  out.push(rest);
  return <p>{out}</p>;
}

function focusResult(n: number) {
  const el = document.getElementById(`result-${n}`);
  el?.scrollIntoView({ block: 'center' });
  el?.focus();
}

/** The generated answer with each `[n]` citation a link to result n (a button: the URL hash is the route). */
export function Answer({ text }: { text: string }) {
  const parts = text.split(/(\[\d+\])/);
  return (
    <p class="answer">
      {parts.map((p, i) => {
        const m = /^\[(\d+)\]$/.exec(p);
        return m ? (
          <button type="button" class="citation" key={i} aria-label={`Citation ${m[1]}: go to result ${m[1]}`} onClick={() => focusResult(Number(m[1]))}>
            [{m[1]}]
          </button>
        ) : (
          p
        );
      })}
    </p>
  );
}

export function Results({ results }: { results: SearchResult[] }) {
  return (
    <ol class="results">
      {results.map((r, i) => (
        <li key={i} id={`result-${i + 1}`} tabIndex={-1}>
          <p class="meta">
            <strong>[{i + 1}]</strong> score <span class="score">{r.score.toFixed(4)}</span> · {r.corpus_key ? `${r.corpus_key} / ` : ''}
            {r.document_id}
          </p>
          <Snippet text={r.text} />
        </li>
      ))}
    </ol>
  );
}

/**
 * The request as a shell command: the key stays a variable, so the copied text holds no secret. The console's own
 * highlight marks (control characters, which no text holds) become `<mark>` tags: in a terminal the escaped
 * `\u0002` and `\u0003` were noise a person would delete by hand.
 */
export function curlOf(path: string, body: unknown): string {
  const readable = JSON.parse(JSON.stringify(body, (_k, v: unknown) => (v === START_TAG ? '<mark>' : v === END_TAG ? '</mark>' : v))) as unknown;
  const json = JSON.stringify(readable, null, 2).replace(/'/g, "'\\''");
  return `curl -N -X POST "${location.origin}${path}" \\\n  -H "x-api-key: $API_KEY" \\\n  -H "content-type: application/json" \\\n  -d '${json}'`;
}
