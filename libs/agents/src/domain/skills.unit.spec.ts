import { configFromRequest, decideUpdateAgent, agentFold, mergeAgentPatch } from './agent';
import { validateAgentConfig } from './agent-config';
import { historyMessages } from './history';
import { ActiveSession, sessionFold, SessionState } from './session';
import type { SessionEvent } from './session-events';
import { decideInputMessage } from './session-input';
import { invokeSkillDefinition, skillProblems, skillRefusal, skillsPrompt, stepSkills } from './skills';

const at = '2026-12-02T10:00:00.000Z';
const review = { description: 'Reviews code', when_to_use: 'When asked to review', content: 'Check for bugs, then for style.' };
const translate = { description: 'Translates', content: 'Translate word by word.' };
const agent = (extra: Record<string, unknown> = {}, step: Record<string, unknown> = {}) =>
  configFromRequest({ name: 'A', model: { name: 'm' }, first_step_name: 'main', steps: { main: { instructions: [], ...step }, other: { instructions: [], allowed_skills: [] } }, skills: { review, translate }, ...extra } as never);
const problemsOf = (f: () => void): Record<string, string> => {
  try {
    f();
  } catch (e) {
    return (e as { details: { fieldErrors: Record<string, string> } }).details.fieldErrors;
  }
  return {};
};

describe('agent skills: configuration', () => {
  it('takes skills and allowed_skills that name them', () => {
    expect(() => validateAgentConfig(agent({}, { allowed_skills: ['review'] }))).not.toThrow();
  });

  it('refuses each wrong field by its path: lengths, required fields, unknown fields, names, counts, unknown allowed skills, a tool named invoke_skill', () => {
    expect(problemsOf(() => validateAgentConfig(agent({ skills: { review: { ...review, description: 'x'.repeat(501) } } })))).toEqual({ 'skills.review.description': 'must be at most 500 characters' });
    expect(problemsOf(() => validateAgentConfig(agent({ skills: { review: { ...review, when_to_use: 'x'.repeat(501) } } })))).toEqual({ 'skills.review.when_to_use': 'must be at most 500 characters' });
    expect(problemsOf(() => validateAgentConfig(agent({ skills: { review: { ...review, content: 'x'.repeat(50_001) } } })))).toEqual({ 'skills.review.content': 'must be at most 50000 characters' });
    expect(problemsOf(() => validateAgentConfig(agent({ skills: { review: { description: 'd' } } })))).toEqual({ 'skills.review.content': 'is required' });
    expect(problemsOf(() => validateAgentConfig(agent({ skills: { review: { ...review, tags: [] } } })))).toEqual({ 'skills.review.tags': 'is not a field of a skill (description, when_to_use, content)' });
    expect(problemsOf(() => validateAgentConfig(agent({ skills: { 'bad name': review } })))).toEqual({ 'skills.bad name': 'a skill name is 1 to 64 letters, digits, underscores or hyphens' });
    expect(problemsOf(() => validateAgentConfig(agent({ skills: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`s${i}`, review])) })))).toEqual({ skills: 'at most 100 skills' });
    expect(problemsOf(() => validateAgentConfig(agent({}, { allowed_skills: ['review', 'cook'] })))).toEqual({ 'steps.main.allowed_skills': "cook is not one of the agent's skills (review, translate)" });
    expect(problemsOf(() => validateAgentConfig(agent({ tool_configurations: { invoke_skill: { type: 'client' } } })))).toEqual({ 'tool_configurations.invoke_skill': 'invoke_skill is the built-in tool that loads skills: name this tool configuration otherwise' });
    expect(skillProblems('x', {}, [])).toEqual({ skills: 'must be a map of skill names to skills' });
  });

  it('merges a PATCH by skill: a value replaces that skill, null deletes it, skills: null clears them all', () => {
    const base = agent();
    const edited = { ...review, content: 'New content' };
    expect(mergeAgentPatch(base, { skills: { review: edited, translate: null } }).skills).toEqual({ review: edited });
    expect(mergeAgentPatch(base, { skills: null }).skills).toBeUndefined();
    expect(mergeAgentPatch(base, { steps: { main: { allowed_skills: ['translate'] } } }).steps.main.allowed_skills).toEqual(['translate']);
    expect(mergeAgentPatch(mergeAgentPatch(base, { steps: { main: { allowed_skills: ['translate'] } } }), { steps: { main: { allowed_skills: null } } }).steps.main.allowed_skills).toBeUndefined();
    // Deleting a skill a step still allows is refused, nothing changed.
    const state = agentFold.evolve(agentFold.initialState, { type: 'AgentCreated', data: { agentId: 'agt_1', agentKey: 'a', config: agent({}, { allowed_skills: ['review'] }), createdAt: at } });
    expect(problemsOf(() => decideUpdateAgent(state, 'a', (c) => mergeAgentPatch(c, { skills: { review: null } }), false, new Date(at)))).toEqual({ 'steps.main.allowed_skills': "review is not one of the agent's skills (translate)" });
  });
});

describe('agent skills: the prompt and the tool', () => {
  it('lists the step’s skills by name, description and when to use, never their content; none in a step that allows none', () => {
    const config = agent({}, { allowed_skills: ['review'] });
    const text = skillsPrompt(stepSkills(config.skills, config.steps.main.allowed_skills));
    expect(text).toContain('- review: Reviews code When to use: When asked to review');
    expect(text).not.toContain('translate');
    expect(text).not.toContain(review.content);
    expect(stepSkills(config.skills, undefined).map(([n]) => n)).toEqual(['review', 'translate']);
    expect(skillsPrompt(stepSkills(config.skills, config.steps.other.allowed_skills))).toBe('');
    expect(invokeSkillDefinition(stepSkills(config.skills, ['review'])).function.parameters).toMatchObject({ properties: { skill_name: { enum: ['review'] } } });
  });

  it('says why a skill cannot load: unknown, not allowed in the step, no name', () => {
    expect(skillRefusal({ review }, undefined, 'main', 'cook')).toBe('there is no skill named cook (the skills are review)');
    expect(skillRefusal(undefined, undefined, 'main', 'cook')).toBe('there is no skill named cook (the agent has no skills)');
    expect(skillRefusal({ review }, [], 'main', 'review')).toBe('skill review is not allowed in step main');
    expect(skillRefusal({ review }, undefined, 'main', 7)).toBe('skill_name must name a skill');
    expect(skillRefusal({ review }, ['review'], 'main', 'review')).toBeUndefined();
  });
});

describe('agent skills: the skill input and the history', () => {
  const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'a', sessionKey: 's', name: 's', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at } };
  const fresh = sessionFold.evolve(sessionFold.initialState, created);
  let n = 0;
  const command = (messages: never[], entryStep?: string) => ({ agentKey: 'a', sessionKey: 's', newEventId: () => `aev_${++n}`, now: new Date(at), messages, steps: agent().steps, firstStep: 'main', skills: agent().skills, ...(entryStep ? { entryStep } : {}) });

  it('stores the input, then a skill_load with the skill’s content for each skill part', () => {
    const decided = decideInputMessage(fresh, command([{ type: 'text', content: 'Look at this' }, { type: 'skill', skill_name: 'review' }] as never[]));
    expect(decided.kind).toBe('start');
    const events = (decided as { events: SessionEvent[] }).events;
    expect(events.map((e) => e.type)).toEqual(['SessionInputReceived', 'SessionSkillLoaded']);
    expect(events[1].data).toMatchObject({ skillName: 'review', content: review.content, step: 'main' });
  });

  it('refuses an unknown skill, or one the entered step does not allow, naming the part', () => {
    expect(problemsOf(() => decideInputMessage(fresh, command([{ type: 'skill', skill_name: 'cook' }] as never[])))).toEqual({ 'messages[0].skill_name': 'there is no skill named cook (the skills are review, translate)' });
    expect(problemsOf(() => decideInputMessage(fresh, command([{ type: 'text', content: 'x' }, { type: 'skill', skill_name: 'review' }] as never[], 'other')))).toEqual({ 'messages[1].skill_name': 'skill review is not allowed in step other' });
  });

  it('gives the model the skill content as a user message: after the input, and after the invoke_skill output', () => {
    const events: SessionEvent[] = [
      created,
      { type: 'SessionInputReceived', data: { eventId: 'aev_i', createdAt: at, messages: [{ type: 'skill', skill_name: 'review' }], step: 'main' } },
      { type: 'SessionSkillLoaded', data: { eventId: 'aev_l', createdAt: at, skillName: 'review', content: review.content, step: 'main' } },
      { type: 'SessionToolCalled', data: { eventId: 'aev_c', createdAt: at, toolCallId: 'c1', modelCallId: 'm1', toolConfigurationName: 'invoke_skill', toolName: 'invoke_skill', toolInput: { skill_name: 'translate' }, arguments: '{"skill_name":"translate"}', step: 'main' } },
      { type: 'SessionSkillLoaded', data: { eventId: 'aev_l2', createdAt: at, skillName: 'translate', content: translate.content, step: 'main', toolCallId: 'c1' } },
      { type: 'SessionToolReturned', data: { eventId: 'aev_r', createdAt: at, toolCallId: 'c1', toolConfigurationName: 'invoke_skill', toolName: 'invoke_skill', toolOutput: { loaded: true }, error: false, step: 'main' } },
    ];
    const session = events.reduce<SessionState>((s, e) => sessionFold.evolve(s, e), sessionFold.initialState) as ActiveSession;
    const messages = historyMessages(session, agent().steps, () => '');
    expect(messages.map((m) => [m.role, typeof m.content === 'string' ? m.content : null])).toEqual([
      ['user', review.content],
      ['assistant', null],
      ['tool', '{"loaded":true}'],
      ['user', translate.content],
    ]);
  });
});
