import { collection } from '@lib/platform/projections';
import type { TracePartRow, TraceRow } from '../domain/traces';

export * from '../domain/traces';

/** One row per turn of a session (projections/agents/traces.projection.ts). */
export const TRACES = collection<TraceRow>('agent_traces');

/** What each event of a turn recorded towards its spans; the spans are assembled from them on read (docs/traces.md). */
export const TRACE_PARTS = collection<TracePartRow>('agent_trace_parts');
