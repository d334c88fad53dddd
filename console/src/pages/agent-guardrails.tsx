import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox, Field } from '../ui';

type Kind = 'pattern' | 'judge' | 'grounding';

export interface Guardrail {
  type: Kind;
  name?: string;
  on?: string;
  action: string;
  patterns?: string[];
  llm_name?: string;
  policy?: string;
  threshold?: number;
  check?: string;
}

interface Row {
  type: Kind;
  name: string;
  on: string;
  action: string;
  patterns: string;
  llm_name: string;
  policy: string;
  threshold: string;
  check: string;
}

const ACTIONS: Record<Kind, Record<string, string[]>> = {
  pattern: { input: ['flag', 'block', 'redact'], output: ['flag', 'block', 'redact'], tool_call: ['flag', 'block'] },
  judge: { input: ['flag', 'block'], output: ['flag', 'block', 'regenerate'], tool_call: ['flag', 'block'] },
  grounding: { output: ['flag', 'block', 'regenerate'] },
};

const rowOf = (g: Guardrail): Row => ({
  type: g.type,
  name: g.name ?? '',
  on: g.type === 'grounding' ? 'output' : (g.on ?? 'output'),
  action: g.action,
  patterns: (g.patterns ?? []).join('\n'),
  llm_name: g.llm_name ?? '',
  policy: g.policy ?? '',
  threshold: g.threshold === undefined ? '' : String(g.threshold),
  check: g.check ?? '',
});

const blank = (): Row => ({ type: 'pattern', name: '', on: 'output', action: 'redact', patterns: '', llm_name: '', policy: '', threshold: '', check: '' });

/** A row as the API takes it: only the fields of its type. */
function guardrailOf(r: Row): Guardrail {
  const common = { type: r.type, ...(r.name.trim() ? { name: r.name.trim() } : {}), action: r.action, ...(r.on === 'output' && r.check ? { check: r.check } : {}) };
  const threshold = r.threshold.trim() === '' ? {} : { threshold: Number(r.threshold) };
  if (r.type === 'pattern') return { ...common, on: r.on, patterns: r.patterns.split('\n').filter((p) => p.trim() !== '') };
  if (r.type === 'judge') return { ...common, on: r.on, llm_name: r.llm_name.trim(), policy: r.policy, ...threshold };
  return { ...common, ...threshold };
}

/**
 * The agent's guardrails (issue 46, docs/guardrails.md) as a form: one box per guardrail with its type, where it
 * runs, its action (only those its type and place take) and its fields (patterns one per line; a judge's model and
 * policy; a threshold). Saved whole by `PATCH {guardrails}` (the API replaces the list); each `guardrails[i].…`
 * error sits at its field in box i, a refused pattern (`guardrails[i].patterns[j]`) at the patterns with its line.
 */
export function AgentGuardrails({ agent, guardrails, onSaved }: { agent: string; guardrails?: Guardrail[] | null; onSaved?: () => void }) {
  const [rows, setRows] = useState<Row[]>((guardrails ?? []).map(rowOf));
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState<string>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const at = (i: number, ...names: string[]) =>
    Object.entries(fields)
      .filter(([k]) => names.some((n) => k === `guardrails[${i}].${n}` || k.startsWith(`guardrails[${i}].${n}[`)))
      .map(([k, v]) => {
        const line = /\.patterns\[(\d+)\]$/.exec(k);
        return line ? `line ${Number(line[1]) + 1}: ${v}` : v;
      })
      .join('; ') || undefined;
  const known = ['type', 'name', 'on', 'action', 'patterns', 'llm_name', 'policy', 'threshold', 'check'];
  const placed = (k: string) => rows.some((_, i) => known.some((n) => k === `guardrails[${i}].${n}` || k.startsWith(`guardrails[${i}].${n}[`)));
  const elsewhere = error && !(Object.keys(fields).length && Object.keys(fields).every(placed));

  const set = (i: number, patch: Partial<Row>) =>
    setRows((rs) =>
      rs.map((r, j) => {
        if (j !== i) return r;
        const next = { ...r, ...patch };
        // A type or place that does not take the action picks the first one it takes.
        const places = ACTIONS[next.type];
        if (!places[next.on]) next.on = Object.keys(places)[0];
        if (!places[next.on].includes(next.action)) next.action = places[next.on][0];
        return next;
      }),
    );

  async function save(e: Event) {
    e.preventDefault();
    setError(undefined);
    setStatus(undefined);
    try {
      const saved = await api<{ guardrails?: Guardrail[] | null }>('PATCH', `/v2/agents/${encodeURIComponent(agent)}`, { guardrails: rows.length ? rows.map(guardrailOf) : null });
      setRows((saved.guardrails ?? []).map(rowOf));
      setStatus(`Saved ${saved.guardrails?.length ?? 0} guardrail${saved.guardrails?.length === 1 ? '' : 's'}.`);
      // A save is a new revision of the agent: the Revisions panel reads its list again.
      onSaved?.();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form class="card" onSubmit={save} aria-labelledby="guardrails">
      <h2 id="guardrails">Guardrails</h2>
      <p class="meta">Run in this order on what the model reads (input), what it asks a tool (tool_call) and what the user gets (output). Patterns are RE2 regular expressions, one per line.</p>
      {rows.map((r, i) => (
        <fieldset key={i} class="card guardrail" aria-label={`Guardrail ${i + 1}`}>
          <legend>
            Guardrail {i + 1}
            {r.name ? `: ${r.name}` : ''}
          </legend>
          <div class="row">
            <Field label="Type" error={at(i, 'type')}>
              {(id, d) => (
                <select id={id} aria-describedby={d} value={r.type} onChange={(e) => set(i, { type: e.currentTarget.value as Kind })}>
                  <option value="pattern">pattern</option>
                  <option value="judge">judge</option>
                  <option value="grounding">grounding</option>
                </select>
              )}
            </Field>
            <Field label="Name" error={at(i, 'name')} hint="optional">
              {(id, d) => <input id={id} aria-describedby={d} value={r.name} onInput={(e) => set(i, { name: e.currentTarget.value })} />}
            </Field>
            <Field label="On" error={at(i, 'on')}>
              {(id, d) => (
                <select id={id} aria-describedby={d} value={r.on} onChange={(e) => set(i, { on: e.currentTarget.value })}>
                  {Object.keys(ACTIONS[r.type]).map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Action" error={at(i, 'action')}>
              {(id, d) => (
                <select id={id} aria-describedby={d} value={r.action} onChange={(e) => set(i, { action: e.currentTarget.value })}>
                  {(ACTIONS[r.type][r.on] ?? []).map((a) => (
                    <option key={a} value={a}>
                      {a}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {r.type !== 'pattern' && (
              <Field label="Threshold" error={at(i, 'threshold')} hint="0 to 1, default 0.5">
                {(id, d) => <input id={id} aria-describedby={d} inputMode="decimal" size={6} value={r.threshold} onInput={(e) => set(i, { threshold: e.currentTarget.value })} />}
              </Field>
            )}
            {r.on === 'output' && (
              <Field label="Check" error={at(i, 'check')}>
                {(id, d) => (
                  <select id={id} aria-describedby={d} value={r.check} onChange={(e) => set(i, { check: e.currentTarget.value })}>
                    <option value="">the whole answer</option>
                    <option value="sentence">each sentence</option>
                  </select>
                )}
              </Field>
            )}
          </div>
          {r.type === 'pattern' && (
            <Field label="Patterns" error={at(i, 'patterns')} hint="one regular expression a line, up to 20">
              {(id, d) => <textarea id={id} aria-describedby={d} rows={Math.max(2, r.patterns.split('\n').length)} value={r.patterns} onInput={(e) => set(i, { patterns: e.currentTarget.value })} />}
            </Field>
          )}
          {r.type === 'judge' && (
            <>
              <Field label="Judge model" error={at(i, 'llm_name')} hint="a registered model's name">
                {(id, d) => <input id={id} aria-describedby={d} value={r.llm_name} onInput={(e) => set(i, { llm_name: e.currentTarget.value })} />}
              </Field>
              <Field label="Policy" error={at(i, 'policy')}>
                {(id, d) => <textarea id={id} aria-describedby={d} rows={2} value={r.policy} onInput={(e) => set(i, { policy: e.currentTarget.value })} />}
              </Field>
            </>
          )}
          <button type="button" class="small" onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))} aria-label={`Remove guardrail ${i + 1}`}>
            Remove
          </button>
        </fieldset>
      ))}
      {!rows.length && <p>No guardrails.</p>}
      <ErrorBox error={elsewhere ? error : undefined} />
      {status && <p role="status">{status}</p>}
      <div class="row">
        <button type="button" class="small" onClick={() => setRows((rs) => [...rs, blank()])}>
          Add a guardrail
        </button>
        <button type="submit">Save guardrails</button>
      </div>
    </form>
  );
}
