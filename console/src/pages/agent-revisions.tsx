import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, Json, Loading, useLoad, when } from '../ui';

interface RevisionRow {
  revision: number;
  created_at: string;
  created_by: string | null;
  changed: string[];
  restored_from?: number;
}

interface Operation {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

type Against = 'previous' | 'current';

/**
 * The agent's revisions (`GET …/revisions`, newest first), the RFC 6902 diff of a chosen one from the one before it
 * (or from it to the current one), and Restore (`POST …/revisions/{n}/restore`: a new revision, answered as the agent).
 */
export function AgentRevisions({ path, saves, onRestored }: { path: string; saves: number; onRestored: () => void }) {
  const list = useLoad(() => api<{ revisions: RevisionRow[] }>('GET', `${path}/revisions?limit=100`), [path, saves]);
  const [chosen, setChosen] = useState<number>();
  const [against, setAgainst] = useState<Against>('previous');
  const [error, setError] = useState<unknown>();
  const [note, setNote] = useState('');
  const current = list.data?.revisions[0]?.revision;
  const diff = useLoad(async () => {
    if (chosen === undefined || current === undefined) return undefined;
    if (against === 'current') return api<{ diff: Operation[] }>('GET', `${path}/revisions/${current}?diff_from=${chosen}`);
    return chosen === 0 ? api<{ diff?: Operation[] }>('GET', `${path}/revisions/0`) : api<{ diff: Operation[] }>('GET', `${path}/revisions/${chosen}?diff_from=${chosen - 1}`);
  }, [path, chosen, against, current]);

  async function restore(revision: number) {
    setError(undefined);
    setNote('');
    try {
      const agent = await api<{ revision: number }>('POST', `${path}/revisions/${revision}/restore`);
      setNote(agent.revision === current ? `Revision ${revision} is the current configuration: nothing to restore.` : `Restored revision ${revision} as revision ${agent.revision}.`);
      setChosen(agent.revision);
      list.reload();
      onRestored();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="revisions-title">
      <h2 id="revisions-title">Revisions</h2>
      <button type="button" class="link" onClick={list.reload}>
        Refresh revisions
      </button>
      <ErrorBox error={error ?? list.error} />
      {note && <p role="status">{note}</p>}
      {list.loading && !list.data && <Loading what="the revisions" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Revision</th>
              <th scope="col">Made</th>
              <th scope="col">By</th>
              <th scope="col">Changed</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data.revisions.map((r) => (
              <tr key={r.revision} aria-current={r.revision === chosen ? 'true' : undefined}>
                <td>
                  {r.revision}
                  {r.revision === current ? ' (current)' : ''}
                  {r.restored_from !== undefined ? ` ← restored ${r.restored_from}` : ''}
                </td>
                <td>{when(r.created_at)}</td>
                <td>{r.created_by ?? ''}</td>
                <td>{r.changed.join(', ')}</td>
                <td>
                  <button type="button" class="link" onClick={() => setChosen(r.revision)}>
                    Diff of revision {r.revision}
                  </button>{' '}
                  {r.revision !== current && (
                    <button type="button" onClick={() => restore(r.revision)}>
                      Restore revision {r.revision}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {chosen !== undefined && (
        <div aria-label="Revision diff">
          <fieldset class="row">
            <legend>Diff of revision {chosen}</legend>
            <label>
              <input type="radio" name="against" checked={against === 'previous'} onChange={() => setAgainst('previous')} /> from the revision before it
            </label>
            <label>
              <input type="radio" name="against" checked={against === 'current'} onChange={() => setAgainst('current')} /> to the current revision
            </label>
          </fieldset>
          <ErrorBox error={diff.error} />
          {diff.data && <DiffView chosen={chosen} against={against} body={diff.data} />}
        </div>
      )}
    </section>
  );
}

function DiffView({ chosen, against, body }: { chosen: number; against: Against; body: { diff?: Operation[] } & Record<string, unknown> }) {
  if (!body.diff) return (
    <>
      <p>Revision 0 is the creation: its whole configuration.</p>
      <Json value={body} />
    </>
  );
  if (!body.diff.length) return <p>No difference{against === 'current' ? ` between revision ${chosen} and the current one` : ''}.</p>;
  return (
    <ul class="diff" aria-label="Diff operations">
      {body.diff.map((op, i) => (
        <li key={i} class={`diff-${op.op}`}>
          <code>
            {op.op} {op.path}
            {op.from ? ` from ${op.from}` : ''}
          </code>
          {op.value !== undefined && <Json value={op.value} />}
        </li>
      ))}
    </ul>
  );
}
