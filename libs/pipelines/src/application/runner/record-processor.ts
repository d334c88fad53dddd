import { createHash } from 'node:crypto';
import { Clock, CommandContext, DomainError } from '@lib/platform';
import { ActiveRun, FetchedRecord, PIPELINE_MAX_ATTEMPTS } from '../../domain/pipeline-run';
import { type AgentRuns, NO_SINK } from '@lib/agents/runs';
import type { RunLog } from './run-log';

const hash = (s: string, n = 24) => createHash('sha256').update(s).digest('hex').slice(0, n);
/** One dead letter per pipeline and source record. */
export const deadLetterId = (pipelineId: string, recordId: string) => `pdl_${hash(`${pipelineId}\n${recordId}`, 32)}`;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** What the agent reads: the record's id, title and metadata, then its text. */
function inputText(pipelineKey: string, record: FetchedRecord, metadata: Record<string, unknown>): string {
  return [`A record from the pipeline "${pipelineKey}".`, `source_record_id: ${record.recordId}`, `title: ${record.title ?? ''}`, `metadata: ${JSON.stringify(metadata)}`, '', record.text].join('\n');
}

interface AttemptOutcome {
  readonly status: 'completed' | 'failed';
  readonly sessionKey: string | null;
  readonly reason: string | null;
}

/** What a record's attempts use: the agent's sessions (created, read) and inputs, through the run-an-agent port. */
type Runs = { sessions: Pick<AgentRuns, 'create' | 'active'>; inputs: Pick<AgentRuns, 'input'> };

/**
 * One record through the pipeline's agent (docs/pipelines.md, Runs): each attempt in its own session whose key
 * and input id derive from (run, record, attempt), so an attempt resumed after a crash finds its session and
 * input instead of running again. An attempt is cut at `record_timeout_minutes`; retries stop at three attempts
 * or when the record's budget (twice the timeout, from its first attempt) is spent; then one dead letter.
 */
/** `leaseSignal` aborts the attempt in progress (another worker may hold the run); `stopping` only stops retries (shutdown). */
export async function processRecord(deps: Runs & { clock: Clock; ctx: (step: string) => CommandContext }, log: RunLog, recordId: string, leaseSignal: AbortSignal, stopping: AbortSignal = new AbortController().signal): Promise<void> {
  const run = log.state as ActiveRun;
  const { runId, pipelineId, pipelineKey, agentKey, processingOptions, sourceRecordMetadata } = run.created;
  const record = await log.record(recordId);
  if (!record) return; // Done already (or never fetched by this run): nothing to attempt.
  const timeoutMs = processingOptions.record_timeout_minutes * 60_000;
  const dl = deadLetterId(pipelineId, recordId);
  for (;;) {
    const progress = (log.state as ActiveRun).records[recordId];
    if (progress.done || leaseSignal.aborted || stopping.aborted) return;
    const attempt = progress.attempts + 1;
    const startedAt = deps.clock.now();
    const firstAt = progress.firstAttemptAt ? Date.parse(progress.firstAttemptAt) : startedAt.getTime();
    const remaining = 2 * timeoutMs - (deps.clock.now().getTime() - firstAt);
    const started = Date.now();
    const outcome = remaining <= 0 ? null : await attemptOnce(deps, { runId, pipelineKey, agentKey, attempt, record, metadata: { ...sourceRecordMetadata, ...record.metadata } }, Math.min(timeoutMs, remaining), leaseSignal);
    if (leaseSignal.aborted) return; // Lost the lease or stopping: whoever takes the run over goes on from the log.
    const at = deps.clock.now();
    if (outcome) {
      const spent = at.getTime() - firstAt >= 2 * timeoutMs;
      const final = outcome.status === 'failed' && (attempt >= PIPELINE_MAX_ATTEMPTS || spent);
      await log.write(
        (s) => (s.status === 'absent' || s.records[recordId]?.attempts >= attempt ? [] : [{ type: 'PipelineRecordAttempted', data: { runId, pipelineId, recordId, deadLetterId: dl, attempt, status: outcome.status, final, sessionKey: outcome.sessionKey, durationMs: Date.now() - started, reason: outcome.reason, startedAt: startedAt.toISOString(), at: at.toISOString() } }]),
        deps.ctx(`attempt|${recordId}|${attempt}`),
      );
      if (outcome.status === 'completed' || !final) continue;
    }
    const reason = outcome?.reason ?? `no time left: the record's budget of ${2 * processingOptions.record_timeout_minutes} minutes across attempts was spent`;
    const attempts = (log.state as ActiveRun).records[recordId].attempts;
    await log.write((s) => (s.status === 'absent' || s.records[recordId]?.done ? [] : [{ type: 'PipelineRecordDeadLettered', data: { runId, pipelineId, pipelineKey, recordId, deadLetterId: dl, attempts, reason, at: at.toISOString() } }]), deps.ctx(`dead|${recordId}`));
    return;
  }
}

async function attemptOnce(
  deps: Runs & { ctx: (step: string) => CommandContext },
  a: { runId: string; pipelineKey: string; agentKey: string; attempt: number; record: FetchedRecord; metadata: Record<string, unknown> },
  limitMs: number,
  leaseSignal: AbortSignal,
): Promise<AttemptOutcome> {
  // Session names are unique per agent, like keys: the name carries the key.
  const sessionKey = `pl-${hash(`${a.runId}\n${a.record.recordId}\n${a.attempt}`)}`;
  const ctx = deps.ctx(`session|${sessionKey}`);
  try {
    await deps.sessions.create(a.agentKey, { key: sessionKey, name: `${cut(`${a.pipelineKey}: ${a.record.title ?? a.record.recordId}`, 200)} (${sessionKey})`, metadata: { ...a.metadata, pipeline: { pipeline_key: a.pipelineKey, run_id: a.runId, source_record_id: a.record.recordId, attempt: a.attempt } } }, ctx);
  } catch (e) {
    // Made by this attempt before a crash: go on with it (its input is not sent twice, see below).
    if (!(e instanceof DomainError && e.code === 'session.key_taken')) return { status: 'failed', sessionKey: null, reason: (e as Error).message };
  }
  const timeout = AbortSignal.timeout(limitMs);
  try {
    const result = await deps.inputs.input(a.agentKey, sessionKey, { type: 'input_message', messages: [{ type: 'text', content: inputText(a.pipelineKey, a.record, a.metadata) }], external_id: `pipeline-record-${hash(sessionKey)}` }, ctx, NO_SINK, false, AbortSignal.any([timeout, leaseSignal]));
    if (timeout.aborted) return { status: 'failed', sessionKey, reason: `timed out after ${Math.round(limitMs / 1000)} s` };
    if (result.error) return { status: 'failed', sessionKey, reason: result.error.message };
    if (result.outcome === undefined) return resumed(deps, a.agentKey, sessionKey);
    if (result.outcome !== 'answered') return { status: 'failed', sessionKey, reason: `the agent's turn ended ${result.outcome}` };
    const answer = [...result.events].reverse().find((e) => e.type === 'agent_output') as { content?: string } | undefined;
    return { status: 'completed', sessionKey, reason: answer?.content ? cut(answer.content, 1000) : null };
  } catch (e) {
    return { status: 'failed', sessionKey, reason: timeout.aborted ? `timed out after ${Math.round(limitMs / 1000)} s` : (e as Error).message };
  }
}

/** The input was stored before a crash: the session says how its turn went (an answer, or nothing). */
async function resumed(deps: Pick<Runs, 'sessions'>, agentKey: string, sessionKey: string): Promise<AttemptOutcome> {
  const { session } = await deps.sessions.active(agentKey, sessionKey);
  const answer = [...session.events].reverse().find((e) => e.type === 'SessionAgentOutput');
  if (!session.turn && answer) return { status: 'completed', sessionKey, reason: cut(String((answer.data as { content?: string }).content ?? ''), 1000) || null };
  return { status: 'failed', sessionKey, reason: 'the attempt was cut short by a restart before the agent answered' };
}
