import { agentsBench } from './agents';
import { agentsVsLanggraphBench } from './agents-vs-langgraph';
import { apiParityBench } from './api-parity';
import { pipelinesBench } from './pipelines';
import { telemetryBench } from './telemetry';
import { toolsBench } from './tools';
import { appendBench } from './append';
import { chatBench } from './chat';
import { connectorsBench } from './connectors';
import { ingestBench } from './ingest';
import { ingestHealthBench } from './ingest-health';
import { parseBench } from './parse';
import { authBench } from './auth';
import { encodersBench } from './encoders';
import { projectionLagBench } from './projection-lag';
import { queryLatencyBench } from './query-latency';
import { rebuildBench } from './rebuild';
import { scifactBench } from './scifact-query';
import { scifactLayoutsBench } from './scifact-layouts';
import { scifactBlendBench } from './scifact-blend';
import { resultCostBench } from './result-cost';
import { lexicalSweepBench } from './lexical-sweep';
import { uploadStallBench } from './upload-stall';
import { annBench } from './ann';
import { manyCorporaBench } from './many-corpora';
import { lexicalIndexBench } from './lexical-index';
import { lexicalVocabularyBench } from './lexical-vocabulary';
import { lexicalHostileBench } from './lexical-hostile';
import { lexicalDirBench } from './lexical-dir';
import { lexicalHttpBench } from './lexical-http';
import { scaleBench } from './scale';
import { hostileUploadsBench } from './hostile-uploads';
import { hostileRequestsBench } from './hostile-requests';
import { agentAttacksBench } from './agent-attacks';
import { replayBench } from './replay';
import { compactionBench } from './compaction';
import { guardrailsBench } from './guardrails';
import { memoryBench } from './memory';
import { recallBench } from './recall';
import { postgresBench } from './postgres';
import { readStorePgBench } from './read-store-pg';

const SCENARIOS: Record<string, { run: (args: string[]) => Promise<void>; usage: string }> = {
  append: { run: appendBench, usage: 'append [singles=2000] [batched=100000] [runs=5]' },
  'projection-lag': { run: projectionLagBench, usage: 'projection-lag [rate=1000] [seconds=10]' },
  'read-store-pg': { run: readStorePgBench, usage: 'read-store-pg [rows=10000] [lookups=3000] [rounds=3] (embedded SqliteReadStore beside PostgresReadStore; POSTGRES_URL or a throwaway local cluster)' },
  rebuild: { run: rebuildBench, usage: 'rebuild [events=1000000]' },
  'query-latency': { run: queryLatencyBench, usage: 'query-latency [rounds=3]' },
  auth: { run: authBench, usage: 'auth [requests=5000]' },
  ingest: { run: ingestBench, usage: 'ingest [documents=all] [encoder=default|none]' },
  'ingest-health': { run: ingestHealthBench, usage: 'ingest-health [documents=all] [encoder=default|none]' },
  parse: { run: parseBench, usage: 'parse [seconds-per-format=2]' },
  encoders: { run: encodersBench, usage: 'encoders [glove-6b-100d|universal-sentence-encoder-lite] [titled-sentences|sentences|whole] [threads=2] [documents=all]' },
  chat: { run: chatBench, usage: 'chat [requests=2000]' },
  tools: { run: toolsBench, usage: 'tools [calls=2000]' },
  telemetry: { run: telemetryBench, usage: 'telemetry [turns=1000] [rounds=2] (the service in its own process, OTLP export off and on, alternating)' },
  'api-parity': { run: apiParityBench, usage: 'api-parity <the other build dist directory> [this build dist directory]' },
  compaction: { run: compactionBench, usage: 'compaction [rounds=10] (compacting a history ten times a 4,096-token window in pieces, and one that fits)' },
  memory: { run: memoryBench, usage: 'memory [turns=300] [chars-per-block=1500] (a turn with 20 memory blocks against one without, alternated; reading the blocks in process)' },
  replay: { run: replayBench, usage: 'replay [rounds=50] (a recorded replay of a 10-turn session, per recorded turn)' },
  guardrails: { run: guardrailsBench, usage: 'guardrails [rounds=200] [stream-rounds=20] (the added latency of each guardrail type; first-byte latency held vs sentence)' },
  recall: { run: recallBench, usage: 'recall [sessions=10000] [rounds=300] [hybrid] (session_recall over past sessions of 10 messages each: p50/p99 per scope; hybrid: messages embedded with the default encoder)' },
  postgres: { run: postgresBench, usage: 'postgres [rounds=2] [singles=2000] [batched=20000] [appenders=50] [lag-rate=1000] [lag-seconds=10] [turns=300] [concurrent-seconds=10] [documents=1000] [encoder=none] (issue 47: each figure on the embedded log and on PostgreSQL, alternated; POSTGRES_URL or a throwaway cluster, fsync on)' },
  agents: { run: agentsBench, usage: 'agents [turns=1000] [concurrent-seconds=10] [idle-sessions=2000]' },
  'agents-vs-langgraph': { run: agentsVsLanggraphBench, usage: 'agents-vs-langgraph [turns=300] [conversations=50] [rounds=3] [another build\'s dist, measured alongside] (the peer installs into bench/peers on first use)' },
  connectors: { run: connectorsBench, usage: 'connectors [messages=300] [concurrency=8]' },
  pipelines: { run: pipelinesBench, usage: 'pipelines [pages=500] [requests-per-second=50] [fetchers=4]' },
  'upload-stall': { run: uploadStallBench, usage: 'upload-stall [uploads=6]' },
  'hostile-uploads': { run: hostileUploadsBench, usage: 'hostile-uploads [docx-paragraphs=86000] [zip-bomb-bytes=400000000]' },
  'hostile-requests': { run: hostileRequestsBench, usage: 'hostile-requests' },
  'agent-attacks': { run: agentAttacksBench, usage: 'agent-attacks [words picking attacks by name] (LAMBDA_MAX_SANDBOXES=4 unless set)' },
  'scifact-layouts': { run: scifactLayoutsBench, usage: 'scifact-layouts [test|train] [extra lexical_interpolation values, comma-separated] [layouts=a,b]' },
  'scifact-blend': { run: scifactBlendBench, usage: 'scifact-blend dump [dir] | scifact-blend sweep [dir] [train|test] [fusion names, comma-separated]' },
  'result-cost': { run: resultCostBench, usage: 'result-cost [a|b] [rounds=1] [dir=/tmp/result-cost-<layout>]' },
  'lexical-sweep': { run: lexicalSweepBench, usage: "lexical-sweep [train|test] [layouts=a,bs] ['[[mu,partPool,docPool,partTitleWeight,docTitleWeight],…]'] [dir]" },
  scale: { run: scaleBench, usage: 'scale [chunks=100000] [graph|exact] [keep=DIR] [rebuild=no] [clients=thread] [more=N]' },
  ann: { run: annBench, usage: 'ann [chunks=100000] [all|defaults]' },
  'lexical-index': { run: lexicalIndexBench, usage: 'lexical-index [chunks=100000] [fts5-queries=300]' },
  'lexical-vocabulary': { run: lexicalVocabularyBench, usage: 'lexical-vocabulary [rare-terms=200000] [rows-each=2] (with --expose-gc)' },
  'lexical-hostile': { run: lexicalHostileBench, usage: 'lexical-hostile [parts=20000] [distinct-words-per-part=40]' },
  'lexical-http': { run: lexicalHttpBench, usage: 'lexical-http DIR (a kept scale dir) [rounds=2]' },
  'lexical-dir': { run: lexicalDirBench, usage: 'lexical-dir DIR (a copy of a kept scale dir) [index=scale] [rounds=3]' },
  'many-corpora': { run: manyCorporaBench, usage: 'many-corpora [corpora=2000] [step=250]' },
  scifact: { run: scifactBench, usage: 'scifact [test|train] [extra lexical_interpolation values, comma-separated] [latency rounds=3]' },
};

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const scenario = name ? SCENARIOS[name] : undefined;
  if (!scenario) {
    process.stderr.write(`usage: npm run bench -- <scenario> [args]\n${Object.values(SCENARIOS).map((s) => `  ${s.usage}`).join('\n')}\n`);
    process.exit(2);
  }
  await scenario.run(args);
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
