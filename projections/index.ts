import type { Projection, ProjectionSink } from '@lib/platform/projections';
import { agentsProjection } from './agents/agents.projection';
import { sessionsProjection } from './agents/sessions.projection';
import { tracesProjection } from './agents/traces.projection';
import { evaluationsProjection } from './agents/evaluations.projection';
import { toolConfigurationsProjection } from './tools/tool-configurations.projection';
import { toolServersProjection } from './tools/tool-servers.projection';
import { glossariesProjection } from './agents/glossaries.projection';
import { userToolsProjection } from './tools/user-tools.projection';
import { schedulesProjection } from './schedules/schedules.projection';
import { pipelinesProjection } from './pipelines/pipelines.projection';
import { pipelineRunsProjection } from './pipelines/pipeline-runs.projection';
import { aliasesProjection } from './aliases/aliases.projection';
import { connectorsProjection } from './connectors/connectors.projection';
import { authProjection } from './auth/auth.projection';
import { corporaProjection } from './corpora/corpora.projection';
import { documentsProjection } from './documents/documents.projection';
import { instructionsProjection } from './instructions/instructions.projection';
import { jobsProjection } from './jobs/jobs.projection';
import { llmsProjection } from './llms/llms.projection';
import { generationPresetsProjection } from './llms/generation-presets.projection';
import { encodersProjection } from './llms/encoders.projection';
import { searchProjection } from './search/search.projection';
import { chatsProjection } from './chats/chats.projection';
import { queryHistoryProjection } from './query-history/query-history.projection';
import { webhooksProjection } from './webhooks/webhooks.projection';
import { metricsProjection } from './metrics/metrics.projection';
import { sessionRecallProjection } from './agents/session-recall.projection';

export * from './agents/agents.projection';
export * from './agents/sessions.projection';
export * from './agents/traces.projection';
export * from './agents/evaluations.projection';
export * from './tools/tool-configurations.projection';
export * from './tools/tool-servers.projection';
export * from './agents/glossaries.projection';
export * from './tools/user-tools.projection';
export * from './schedules/schedules.projection';
export * from './pipelines/pipelines.projection';
export * from './pipelines/pipeline-runs.projection';
export * from './aliases/aliases.projection';
export * from './connectors/connectors.projection';
export * from './auth/auth.projection';
export * from './corpora/corpora.projection';
export * from './documents/documents.projection';
export * from './instructions/instructions.projection';
export * from './jobs/jobs.projection';
export * from './llms/llms.projection';
export * from './llms/generation-presets.projection';
export * from './llms/encoders.projection';
export * from './search/search.projection';
export * from './chats/chats.projection';
export * from './query-history/query-history.projection';
export * from './webhooks/webhooks.projection';
export * from './metrics/metrics.projection';
export * from './agents/session-recall.projection';

/** Every projection the service runs. */
export const ALL_PROJECTIONS: readonly Projection[] = [corporaProjection, documentsProjection, searchProjection, authProjection, jobsProjection, llmsProjection, agentsProjection, sessionsProjection, tracesProjection, evaluationsProjection, instructionsProjection, toolConfigurationsProjection, toolServersProjection, glossariesProjection, userToolsProjection, schedulesProjection, pipelinesProjection, pipelineRunsProjection, aliasesProjection, connectorsProjection, generationPresetsProjection, chatsProjection, queryHistoryProjection, encodersProjection, webhooksProjection, metricsProjection, sessionRecallProjection];

/**
 * Which sink a projection writes: the read store, the corpora's search index, or the recall index. A search sink keeps
 * one active generation for all it holds, so a second search projection needs a sink of its own (a rebuild of one
 * would otherwise drop the other's indexes).
 */
export function sinkOf(projection: Projection, sinks: { readonly reads: ProjectionSink<never>; readonly search: ProjectionSink<never>; readonly recall: ProjectionSink<never> }): ProjectionSink<unknown> {
  if (projection.target === 'read') return sinks.reads as ProjectionSink<unknown>;
  return (projection.name === sessionRecallProjection.name ? sinks.recall : sinks.search) as ProjectionSink<unknown>;
}
