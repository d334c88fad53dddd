import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { GetAgentHandler, ListAgentsHandler } from './application/agent-queries/agent-queries';
import { AGENT_REFERENCE_CHECKS, AgentWriter, ReferenceCheck } from './application/agent-writer';
import { CreateAgentHandler, DeleteAgentHandler, UpdateAgentHandler } from './application/agents/agent-commands';

/** Agents and their sessions. Ports come from the platform module; models from the llms module. */
@Module({})
export class AgentsModule {
  static forRoot(): DynamicModule {
    const referenceChecks: ReferenceCheck[] = [];
    return {
      module: AgentsModule,
      imports: [CqrsModule],
      providers: [
        { provide: AGENT_REFERENCE_CHECKS, useValue: referenceChecks },
        AgentWriter,
        CreateAgentHandler,
        UpdateAgentHandler,
        DeleteAgentHandler,
        GetAgentHandler,
        ListAgentsHandler,
      ],
      exports: [AgentWriter],
    };
  }
}
