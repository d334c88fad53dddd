import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, EVENT_STORE, EventStore, READ_STORE, ReadStore } from '@lib/platform';
import { ChatCompletions, FactualConsistency, findLlm } from '@lib/llms';
import { UserTools } from '@lib/tools';
import { scorerListProblem, ScorerSpec, ScoreResult } from '../../domain/scorers';
import { parseJudgeAnswer, sameToolCalls, TurnRecord, turnRecordOf } from '../../domain/turn-record';
import type { SessionEvent } from '../../domain/session-events';
import { AgentRevisions } from '../revisions/agent-revisions';
import { structuredProblem } from '../turn/turn-parts';
import type { TurnRef, TurnScoring } from '../runs/turn-scoring.port';

const JUDGE_PROMPT =
  'You judge one answer of an AI agent by a RUBRIC. Read the INPUT the agent was given, the TOOL CALLS it made and its ANSWER, then answer only one JSON object and nothing else: {"score": <a number from 0 to 1, 1 fully meeting the rubric>, "reason": "<one short sentence>"}';

/** A lambda scorer gets at most this long per turn. */
const LAMBDA_SECONDS = 30;

/**
 * The turn scorers (docs/agents.md, "Scorers"): one finished turn, read from its session's events, scored by each
 * scorer of a list, optionally against a baseline turn. A scorer that cannot score (a malformed judge answer, a
 * model or sandbox that fails) gives a result with `error` and a null score: a list is always scored whole.
 */
@Injectable()
export class TurnScorers implements TurnScoring {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly revisions: AgentRevisions,
    private readonly fcs: FactualConsistency,
    private readonly chat: ChatCompletions,
    private readonly userTools: UserTools,
  ) {}

  async problem(scorers: unknown, prefix = 'scorers'): Promise<readonly [string, string] | undefined> {
    const shape = scorerListProblem(scorers, prefix);
    if (shape) return shape;
    for (const [i, s] of (scorers as ScorerSpec[]).entries()) {
      if (s.type === 'llm_judge' && !(await findLlm(this.reads, s.llm_name))) return [`${prefix}[${i}].llm_name`, `no LLM "${s.llm_name}" (GET /v2/llms)`];
      if (s.type === 'lambda') {
        const found = await this.userTools.get(s.tool_id).then((t) => t.type === 'lambda', () => false);
        if (!found) return [`${prefix}[${i}].tool_id`, `no lambda tool "${s.tool_id}" (GET /v2/tools)`];
      }
    }
    return undefined;
  }

  async score(ref: TurnRef, scorers: readonly ScorerSpec[], ctx: CommandContext, baselineRef?: TurnRef): Promise<ScoreResult[]> {
    const turn = await this.record(ref);
    const baseline = baselineRef ? await this.record(baselineRef) : undefined;
    const out: ScoreResult[] = [];
    for (const s of scorers) {
      try {
        out.push(await this.one(s, turn, baseline, ctx));
      } catch (e) {
        out.push({ type: s.type, score: null, error: e instanceof DomainError ? e.message : `the scorer failed: ${(e as Error).message}` });
      }
    }
    return out;
  }

  private async record(ref: TurnRef): Promise<TurnRecord> {
    const events = (await this.events.readStream(ref.sessionStream)) as unknown as SessionEvent[];
    const turn = turnRecordOf(events, ref.turnId);
    if (!turn) throw new DomainError('not_found', 'scoring.turn_not_found', `No finished turn "${ref.turnId}" in ${ref.sessionStream}`);
    return turn;
  }

  private async one(s: ScorerSpec, turn: TurnRecord, baseline: TurnRecord | undefined, ctx: CommandContext): Promise<ScoreResult> {
    switch (s.type) {
      case 'factual_consistency': {
        if (!turn.retrievedTexts.length) return { type: s.type, score: null, reason: 'the turn retrieved no texts to check the answer against' };
        if (turn.answer === null) return { type: s.type, score: null, reason: 'the turn gave no text answer' };
        const r = await this.fcs.evaluate({ generatedText: turn.answer, sourceTexts: turn.retrievedTexts }, ctx);
        return { type: s.type, score: r.score, reason: `judged by ${r.scorer} against ${turn.retrievedTexts.length} retrieved texts` };
      }
      case 'llm_judge':
        return this.judge(s, turn, ctx);
      case 'same_tool_calls': {
        if (!baseline) return { type: s.type, score: null, reason: 'no baseline turn to compare with' };
        return { type: s.type, ...sameToolCalls(turn.toolCalls, baseline.toolCalls) };
      }
      case 'structured_output_valid':
        return this.structured(turn);
      case 'lambda':
        return this.lambda(s, turn, baseline, ctx);
      default: {
        const _exhaustive: never = s;
        return _exhaustive;
      }
    }
  }

  private async judge(s: Extract<ScorerSpec, { type: 'llm_judge' }>, turn: TurnRecord, ctx: CommandContext): Promise<ScoreResult> {
    const answer = turn.answer ?? (turn.structured ? JSON.stringify(turn.structured.content) : '(no answer)');
    const calls = turn.toolCalls.map((c) => `${c.name} ${JSON.stringify(c.arguments)}`).join('\n') || '(none)';
    const completion = await this.chat.complete({ model: s.llm_name, temperature: 0, messages: [{ role: 'system', content: JUDGE_PROMPT }, { role: 'user', content: `RUBRIC:\n${s.rubric}\n\nINPUT:\n${turn.input}\n\nTOOL CALLS:\n${calls}\n\nANSWER:\n${answer}` }] }, ctx);
    const parsed = parseJudgeAnswer(completion.choices[0]?.message?.content ?? '');
    if ('error' in parsed) return { type: s.type, score: null, error: `llm_judge "${s.llm_name}": ${parsed.error}` };
    return { type: s.type, score: parsed.score, ...(parsed.reason ? { reason: parsed.reason } : {}) };
  }

  /** Against the schema of the step the turn answered in, as of the revision the turn ran. */
  private async structured(turn: TurnRecord): Promise<ScoreResult> {
    const config = await this.revisions.configAt(turn.agentKey, turn.agentRevision);
    const step = config.steps[turn.step];
    if (!step || step.output_parser.type !== 'structured') return { type: 'structured_output_valid', score: null, reason: `step "${turn.step}" asks no structured output` };
    if (!turn.structured) return { type: 'structured_output_valid', score: 0, reason: 'the step asks a structured output and the turn gave none' };
    const problem = structuredProblem(JSON.stringify(turn.structured.content), step.output_parser.json_schema.schema);
    return problem ? { type: 'structured_output_valid', score: 0, reason: problem } : { type: 'structured_output_valid', score: 1, reason: `matches ${step.output_parser.json_schema.name}` };
  }

  /** The lambda gets `{turn, baseline}` and answers `{"score": 0..1 | null, "reason"?}`. */
  private async lambda(s: Extract<ScorerSpec, { type: 'lambda' }>, turn: TurnRecord, baseline: TurnRecord | undefined, ctx: CommandContext): Promise<ScoreResult> {
    const ran = await this.userTools.test(s.tool_id, { turn: lambdaView(turn), baseline: baseline ? lambdaView(baseline) : null }, LAMBDA_SECONDS, undefined, ctx);
    if (ran.type !== 'success') return { type: s.type, score: null, error: `lambda "${s.tool_id}" failed: ${JSON.stringify((ran.error as { message?: string })?.message ?? ran.error)}` };
    const output = ran.output as Record<string, unknown>;
    const score = output?.score;
    if (score === null) return { type: s.type, score: null, reason: typeof output.reason === 'string' ? output.reason : 'not applicable' };
    if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return { type: s.type, score: null, error: `lambda "${s.tool_id}" answered no "score" between 0 and 1` };
    return { type: s.type, score, ...(typeof output.reason === 'string' ? { reason: output.reason } : {}) };
  }
}

const lambdaView = (t: TurnRecord) => ({ input: t.input, answer: t.answer, structured_output: t.structured?.content ?? null, tool_calls: t.toolCalls, retrieved_texts: t.retrievedTexts, outcome: t.outcome });
