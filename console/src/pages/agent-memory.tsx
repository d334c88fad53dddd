import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { ErrorBox, Field, useLoad, when } from '../ui';

interface Block {
  key: string;
  scope: string;
  description?: string;
  value: string;
  chars: number;
  limit_chars: number;
  read_only: boolean;
  revision: number;
}

interface Change {
  revision: number;
  operation: string;
  value: string;
  reverted_to?: number;
  changed_at: string;
  changed_by?: { actor?: { type: string; id: string }; session_key?: string };
}

const byWhom = (c: Change) => (c.changed_by?.session_key ? `the agent in session ${c.changed_by.session_key}` : c.changed_by?.actor ? `${c.changed_by.actor.type} ${c.changed_by.actor.id}` : 'the configuration');

/**
 * The agent's memory blocks (issue 46, docs/agents.md "Memory"): each block's value as a form (its size against
 * `limit_chars`; a refused value's error at the field), its history newest first, and a revert to any revision
 * (a new revision with that value). Reads need `agent.view`, writes `agent.develop`: the API's 403 is shown as it is.
 */
export function AgentMemory({ agent }: { agent: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/memory`;
  const list = useLoad(() => api<{ blocks: Block[] }>('GET', base), [base]);
  return (
    <section aria-labelledby="memory">
      <h2 id="memory">Memory</h2>
      {forbidden(list.error) ? (
        <p class="notice" role="status">
          This credential may not read this agent's memory (the service answered 403).
        </p>
      ) : (
        <>
          <ErrorBox error={list.error} />
          {list.data?.blocks.length ? (
            list.data.blocks.map((b) => <MemoryBlock key={b.key} base={`${base}/${encodeURIComponent(b.key)}`} block={b} onChanged={list.reload} />)
          ) : (
            list.data && <p>This agent has no agent-scoped memory blocks (its configuration's `memory.blocks`).</p>
          )}
        </>
      )}
    </section>
  );
}

function MemoryBlock({ base, block, onChanged }: { base: string; block: Block; onChanged: () => void }) {
  const [value, setValue] = useState(block.value);
  // A new revision (this form's save, a revert, the agent's own write) shows the stored value; the status stays.
  useEffect(() => setValue(block.value), [block.revision, block.value]);
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState<string>();
  const [showHistory, setShowHistory] = useState(false);
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const atValue = fields.value;
  const elsewhere = error && !atValue;

  async function save(e: Event) {
    e.preventDefault();
    setError(undefined);
    setStatus(undefined);
    try {
      const saved = await api<Block>('PUT', base, { value });
      setStatus(`Saved revision ${saved.revision}.`);
      onChanged();
    } catch (err) {
      setError(err);
    }
  }

  const over = value.length > block.limit_chars;
  return (
    <form class="card" onSubmit={save} aria-label={`Memory block ${block.key}`}>
      <h3>
        {block.key} <small class="meta">({block.scope}{block.read_only ? ', read-only for the agent' : ''}, revision {block.revision})</small>
      </h3>
      {block.description && <p class="meta">{block.description}</p>}
      <Field label={`Value of ${block.key}`} error={atValue} hint={`${value.length} of ${block.limit_chars} characters (limit_chars)`}>
        {(id, d) => (
          <textarea
            id={id}
            aria-describedby={d}
            rows={3}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            // Enter saves (the form's submit), Shift+Enter starts a new line, as in the chat.
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
          />
        )}
      </Field>
      {over && !atValue && <p class="meta">Longer than the block's limit: the service will refuse it.</p>}
      <ErrorBox error={elsewhere ? error : undefined} />
      {status && <p role="status">{status}</p>}
      <div class="row">
        <button type="submit">Save {block.key}</button>
        <button type="button" class="small" aria-expanded={showHistory} onClick={() => setShowHistory(!showHistory)}>
          History of {block.key}
        </button>
      </div>
      {showHistory && (
        <History
          base={base}
          block={block.key}
          onReverted={(rev) => {
            setStatus(`Reverted to revision ${rev}.`);
            onChanged();
          }}
        />
      )}
    </form>
  );
}

function History({ base, block, onReverted }: { base: string; block: string; onReverted: (revision: number) => void }) {
  const history = useLoad(() => api<{ changes: Change[] }>('GET', `${base}/history?limit=50`), [base]);
  const [error, setError] = useState<unknown>();
  async function revert(revision: number) {
    setError(undefined);
    try {
      await api('POST', `${base}/revert`, { revision });
      onReverted(revision);
    } catch (err) {
      setError(err);
    }
  }
  return (
    <div role="region" aria-label={`History of ${block}`}>
      <ErrorBox error={error ?? history.error} />
      {history.data?.changes.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Revision</th>
              <th scope="col">Change</th>
              <th scope="col">Value</th>
              <th scope="col">When, by whom</th>
              <th scope="col">Revert</th>
            </tr>
          </thead>
          <tbody>
            {history.data.changes.map((c, i) => (
              <tr key={c.revision}>
                <td>{c.revision}</td>
                <td>
                  {c.operation}
                  {c.reverted_to !== undefined ? ` to ${c.reverted_to}` : ''}
                </td>
                <td class="answer">{c.value}</td>
                <td>
                  {when(c.changed_at)}, {byWhom(c)}
                </td>
                <td>
                  {i > 0 && (
                    <button type="button" class="small" onClick={() => revert(c.revision)} aria-label={`Revert ${block} to revision ${c.revision}`}>
                      Revert
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        history.data && <p>No changes yet: the block holds its initial value (revision 0).</p>
      )}
    </div>
  );
}
