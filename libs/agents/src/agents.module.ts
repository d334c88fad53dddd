import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '@lib/platform';
import { GetAgentHandler, ListAgentsHandler } from './application/agent-queries/agent-queries';
import { AGENT_REFERENCE_CHECKS, AgentWriter, ReferenceCheck } from './application/agent-writer';
import { CreateAgentHandler, DeleteAgentHandler, UpdateAgentHandler } from './application/agents/agent-commands';
import { GetInstructionHandler, ListInstructionsHandler, TestInstructionHandler } from './application/instruction-queries/instruction-queries';
import { instructionReferenceCheck } from './application/instruction-references';
import { InstructionTexts } from './application/instruction-texts';
import { InstructionWriter } from './application/instruction-writer';
import { CreateInstructionHandler, DeleteInstructionHandler, DeleteInstructionVersionHandler, UpdateInstructionHandler } from './application/instructions/instruction-commands';

/** Agents and their sessions. Ports come from the platform module; models from the llms module. */
@Module({})
export class AgentsModule {
  static forRoot(): DynamicModule {
    const referenceChecks = (reads: ReadStore): ReferenceCheck[] => [instructionReferenceCheck(reads)];
    return {
      module: AgentsModule,
      imports: [CqrsModule],
      providers: [
        { provide: AGENT_REFERENCE_CHECKS, useFactory: referenceChecks, inject: [READ_STORE] },
        AgentWriter,
        CreateAgentHandler,
        UpdateAgentHandler,
        DeleteAgentHandler,
        GetAgentHandler,
        ListAgentsHandler,
        InstructionWriter,
        InstructionTexts,
        CreateInstructionHandler,
        UpdateInstructionHandler,
        DeleteInstructionHandler,
        DeleteInstructionVersionHandler,
        GetInstructionHandler,
        ListInstructionsHandler,
        TestInstructionHandler,
      ],
      exports: [AgentWriter, InstructionTexts],
    };
  }
}
