import type { Projection } from '@lib/platform/projections';
import { agentsProjection } from './agents/agents.projection';
import { sessionsProjection } from './agents/sessions.projection';
import { toolConfigurationsProjection } from './agents/tool-configurations.projection';
import { toolServersProjection } from './agents/tool-servers.projection';
import { glossariesProjection } from './agents/glossaries.projection';
import { userToolsProjection } from './agents/user-tools.projection';
import { schedulesProjection } from './agents/schedules.projection';
import { pipelinesProjection } from './agents/pipelines.projection';
import { aliasesProjection } from './agents/aliases.projection';
import { authProjection } from './auth/auth.projection';
import { corporaProjection } from './corpora/corpora.projection';
import { documentsProjection } from './documents/documents.projection';
import { instructionsProjection } from './instructions/instructions.projection';
import { jobsProjection } from './jobs/jobs.projection';
import { llmsProjection } from './llms/llms.projection';
import { generationPresetsProjection } from './llms/generation-presets.projection';
import { searchProjection } from './search/search.projection';

export * from './agents/agents.projection';
export * from './agents/sessions.projection';
export * from './agents/tool-configurations.projection';
export * from './agents/tool-servers.projection';
export * from './agents/glossaries.projection';
export * from './agents/user-tools.projection';
export * from './agents/schedules.projection';
export * from './agents/pipelines.projection';
export * from './agents/aliases.projection';
export * from './auth/auth.projection';
export * from './corpora/corpora.projection';
export * from './documents/documents.projection';
export * from './instructions/instructions.projection';
export * from './jobs/jobs.projection';
export * from './llms/llms.projection';
export * from './llms/generation-presets.projection';
export * from './search/search.projection';

/** Every projection the service runs. */
export const ALL_PROJECTIONS: readonly Projection[] = [corporaProjection, documentsProjection, searchProjection, authProjection, jobsProjection, llmsProjection, agentsProjection, sessionsProjection, instructionsProjection, toolConfigurationsProjection, toolServersProjection, glossariesProjection, userToolsProjection, schedulesProjection, pipelinesProjection, aliasesProjection, generationPresetsProjection];
