import { DynamicModule, Module } from '@nestjs/common';
import { Pipelines } from './application/pipelines/pipelines';
import { PipelineRuns } from './application/runs/pipeline-runs';
import { SOURCE_CATALOGUE } from './application/sources.port';
import { SOURCE_CLIENTS } from './adapters/sources/sources';

export interface PipelinesModuleOptions {
  /** The LlmsModule instance of the process, for its SecretBox (a source credential is sealed with it). */
  readonly llms: DynamicModule;
}

/**
 * Pipelines and their runs (docs/pipelines.md). The agents they run are reached through the run-an-agent entry
 * (`@lib/agents/runs`, provided by the global AgentsModule); the runner is composed by the worker wing.
 */
@Module({})
export class PipelinesModule {
  static forRoot(options: PipelinesModuleOptions): DynamicModule {
    return {
      module: PipelinesModule,
      // Global: the worker wing's PipelineRunner uses the pipelines and the source catalogue of this module.
      global: true,
      imports: [options.llms],
      // The source catalogue (one client per source type) behind the use cases' port.
      providers: [Pipelines, PipelineRuns, { provide: SOURCE_CATALOGUE, useValue: SOURCE_CLIENTS }],
      exports: [Pipelines, PipelineRuns, SOURCE_CATALOGUE],
    };
  }
}
