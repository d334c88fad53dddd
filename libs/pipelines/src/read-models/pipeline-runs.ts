import { collection } from '@lib/platform/projections';

/** One row per run (projections/pipelines/pipeline-runs); `open` until it ends (the runner's sweep takes open ones). */
export type PipelineRunRow = {
  readonly id: string;
  readonly pipeline_key: string;
  readonly pipeline_id: string;
  readonly agent_key: string;
  readonly status: 'running' | 'completed' | 'failed' | 'cancelled';
  readonly trigger_type: string;
  readonly records_fetched: number;
  readonly records_processed: number;
  readonly records_failed: number;
  readonly error: string | null;
  readonly started_at: string | null;
  readonly completed_at: string | null;
  readonly created_at: string;
  readonly open: boolean;
};

/** One row per API event of a run, `seq` the run stream's revision (monotonic per run). */
export type PipelineRunEventRow = {
  readonly id: string;
  readonly run_id: string;
  readonly seq: number;
  readonly type: string;
  readonly source_record_id: string | null;
  readonly body: Readonly<Record<string, unknown>>;
  readonly occurred_at: string;
};

/** One row per dead letter, keyed by its id (one per pipeline and source record: upserted, never duplicated). */
export type PipelineDeadLetterRow = {
  readonly id: string;
  readonly pipeline_id: string;
  readonly pipeline_key: string;
  readonly source_record_id: string;
  readonly status: 'pending' | 'retrying';
  readonly error_message: string | null;
  readonly last_run_id: string | null;
  readonly attempt_count: number;
  readonly origin: 'pipeline' | 'manual';
  readonly created_at: string;
  readonly updated_at: string | null;
};

export const PIPELINE_RUNS = collection<PipelineRunRow>('pipeline_runs');
export const PIPELINE_RUN_EVENTS = collection<PipelineRunEventRow>('pipeline_run_events');
export const PIPELINE_DEAD_LETTERS = collection<PipelineDeadLetterRow>('pipeline_dead_letters');

export const pipelineRunView = (r: PipelineRunRow): Record<string, unknown> => ({
  id: r.id,
  pipeline_key: r.pipeline_key,
  agent_key: r.agent_key,
  status: r.status,
  trigger_type: r.trigger_type,
  records_fetched: r.records_fetched,
  records_processed: r.records_processed,
  records_failed: r.records_failed,
  error: r.error,
  started_at: r.started_at,
  completed_at: r.completed_at,
  created_at: r.created_at,
});

export const pipelineRunEventView = (r: PipelineRunEventRow): Record<string, unknown> => ({ id: `evt_${r.seq}`, occurred_at: r.occurred_at, type: r.type, ...r.body });

export const deadLetterView = (r: PipelineDeadLetterRow): Record<string, unknown> => ({
  id: r.id,
  source_record_id: r.source_record_id,
  status: r.status,
  error_message: r.error_message,
  last_run_id: r.last_run_id,
  attempt_count: r.attempt_count,
  origin: r.origin,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
