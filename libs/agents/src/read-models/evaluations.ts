import { collection } from '@lib/platform/projections';
import type { EvaluationMode, EvaluationStatus } from '../domain/evaluation';

/** One row per evaluation (projections/agents/evaluations): what a list shows and what the runner's sweep finds. */
export type EvaluationRow = {
  readonly id: string;
  readonly agent_id: string;
  readonly agent_key: string;
  readonly name: string | null;
  readonly status: EvaluationStatus;
  readonly candidate_revision: number;
  readonly mode: EvaluationMode;
  readonly total: number;
  readonly scored: number;
  readonly failed: number;
  readonly created_at: string;
  readonly started_at: string | null;
  readonly finished_at: string | null;
};

export const EVALUATIONS = collection<EvaluationRow>('agent_evaluations');

/** An evaluation as a list shows it. */
export function evaluationSummaryView(row: EvaluationRow): Record<string, unknown> {
  return {
    id: row.id,
    agent_key: row.agent_key,
    ...(row.name !== null ? { name: row.name } : {}),
    status: row.status,
    candidate_revision: row.candidate_revision,
    mode: row.mode,
    progress: { total: row.total, scored: row.scored, failed: row.failed },
    created_at: row.created_at,
    ...(row.started_at ? { started_at: row.started_at } : {}),
    ...(row.finished_at ? { finished_at: row.finished_at } : {}),
  };
}
