import { useState } from 'preact/hooks';
import { ErrorBox, Field, Json } from '../ui';

/** A tool call the session waits to have approved (`GET …/pending_approvals`). */
export interface PendingApproval {
  id: string;
  tool_call_id: string;
  tool_name: string;
  tool_configuration_name: string;
  arguments: Record<string, unknown>;
  approvers: string;
  created_at: string;
  expires_at: string;
}

/** The body of a `tool_approval` input. */
export interface ApprovalDecision {
  type: 'tool_approval';
  tool_call_id: string;
  decision: 'approve' | 'deny';
  arguments?: Record<string, unknown>;
  reason?: string;
}

/**
 * The calls waiting for a person's decision, each with Approve, Deny (with a reason) and Edit (the arguments as
 * JSON, approved as edited). `decide` sends the input; a refusal (403 for a non-approver, 400 for arguments that
 * do not fit the tool, 409 once decided or expired) shows next to the call.
 */
export function PendingApprovals({ approvals, decide }: { approvals: PendingApproval[]; decide: (d: ApprovalDecision) => Promise<void> }) {
  if (!approvals.length) return null;
  return (
    <section class="card approvals" aria-label="Tool calls waiting for approval">
      <h2>Waiting for approval</h2>
      <ul>
        {approvals.map((a) => (
          <ApprovalItem key={a.tool_call_id} approval={a} decide={decide} />
        ))}
      </ul>
    </section>
  );
}

function ApprovalItem({ approval, decide }: { approval: PendingApproval; decide: (d: ApprovalDecision) => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const [args, setArgs] = useState(JSON.stringify(approval.arguments, null, 2));
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  async function send(decision: 'approve' | 'deny') {
    setError(undefined);
    let edited: Record<string, unknown> | undefined;
    if (decision === 'approve' && editing) {
      try {
        edited = JSON.parse(args) as Record<string, unknown>;
      } catch {
        setError(new Error('The arguments are not valid JSON'));
        return;
      }
    }
    setBusy(true);
    try {
      await decide({ type: 'tool_approval', tool_call_id: approval.tool_call_id, decision, ...(edited ? { arguments: edited } : {}), ...(reason.trim() ? { reason: reason.trim() } : {}) });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <li class="approval" data-tool-call-id={approval.tool_call_id}>
      <p>
        <strong>{approval.tool_configuration_name}</strong> ({approval.tool_name}) · decided by {approval.approvers === 'session_user' ? 'the session user' : 'agent administrators'} · expires <time>{approval.expires_at}</time>
      </p>
      {editing ? <Field label="Arguments (JSON)">{(id) => <textarea id={id} rows={6} class="wide" value={args} onInput={(e) => setArgs(e.currentTarget.value)} />}</Field> : <Json value={approval.arguments} />}
      <Field label="Reason (optional)">{(id) => <input id={id} class="wide" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />}</Field>
      <div class="row">
        <button type="button" disabled={busy} onClick={() => send('approve')}>
          {editing ? 'Approve as edited' : 'Approve'}
        </button>
        <button type="button" disabled={busy} onClick={() => send('deny')}>
          Deny
        </button>
        <button type="button" class="small" disabled={busy} aria-pressed={editing} onClick={() => setEditing(!editing)}>
          {editing ? 'Keep the arguments' : 'Edit'}
        </button>
      </div>
      <ErrorBox error={error} />
    </li>
  );
}
