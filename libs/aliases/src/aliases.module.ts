import { Module } from '@nestjs/common';
import { Aliases } from './application/aliases/aliases';
import { EndUserSessions } from './application/aliases/end-user-sessions';
import { Canaries } from './application/canary/canaries';

/**
 * Agent aliases, their routing and end-user sessions (docs/aliases.md, docs/end-user-sessions.md). The agents are
 * reached through `@lib/agents/runs` (AGENT_RUNS, CONDITION_COMPILER, TURN_SCORING, provided by the global AgentsModule).
 */
@Module({
  providers: [Aliases, EndUserSessions, Canaries],
  exports: [Aliases, EndUserSessions, Canaries],
})
export class AliasesModule {}
