import { givenEvents } from '@lib/testing';
import { AgentBundle, agentSecretNames, bundleProblems, BundledInstruction, sameJson, toolNames, withMcpToolIds } from './agent-bundle';
import { decideImportGlossary, decideImportInstruction, glossaryOutcome, instructionOutcome } from './bundle-import';
import { glossaryFold } from './glossary';
import { InstructionEvent, instructionFold } from './instruction';

const NOW = new Date('2026-12-02T20:00:00Z');
const version = (n: number, template = `text ${n}`): BundledInstruction => ({ id: 'ins_1', version: n, name: 'voice', description: '', template_type: 'velocity', template, metadata: {}, enabled: true });
const bundle = (over: Record<string, unknown> = {}) => ({ format: 'agent-bundle', version: 1, exported_at: NOW.toISOString(), agent: { key: 'helper', config: { name: 'Helper' } }, ...over });
const created = (n: number, template = `text ${n}`, supersedes?: number): InstructionEvent => ({
  type: 'InstructionVersionCreated',
  data: { instructionId: 'ins_1', version: n, ...(supersedes ? { supersedes } : {}), name: 'voice', description: '', templateType: 'velocity', template, metadata: {}, enabled: true, instructionCreatedAt: NOW.toISOString(), createdAt: NOW.toISOString() },
});

describe('agent bundles', () => {
  it('names each wrong field of a bundle under bundle.<part>[i]', () => {
    expect(bundleProblems('zip')).toEqual({ bundle: expect.any(String) });
    expect(bundleProblems(bundle({ format: 'tar' }))).toEqual({ 'bundle.format': 'must be "agent-bundle"' });
    expect(bundleProblems(bundle({ version: 2 }))).toEqual({ 'bundle.version': 'this service reads version 1' });
    const { template: _t, ...noTemplate } = version(1);
    expect(Object.keys(bundleProblems(bundle({ instructions: [noTemplate] })))).toEqual(['bundle.instructions[0].template']);
    expect(Object.keys(bundleProblems(bundle({ instructions: [version(1), version(1)] })))).toEqual(['bundle.instructions[1].version']);
    expect(Object.keys(bundleProblems(bundle({ tool_configurations: [{ key: 'k', config: { name: 'K', type: 'client' } }] })))).toEqual(['bundle.tool_configurations[0].config.type']);
    expect(Object.keys(bundleProblems(bundle({ tool_configurations: [{ key: 'k', config: { name: 'K', type: 'web_get', metadata: 'x' } }] })))).toEqual(['bundle.tool_configurations[0].config.metadata']);
    expect(Object.keys(bundleProblems(bundle({ tools: [{ id: 'tol_other', type: 'lambda', name: 'x', description: 'd', code: 'c' }] })))).toEqual(['bundle.tools[0].id']);
    expect(Object.keys(bundleProblems(bundle({ tools: [{ id: 'tol_x', type: 'lambda', name: 'x', description: 'd' }] })))).toEqual(['bundle.tools[0].code']);
    expect(Object.keys(bundleProblems(bundle({ glossaries: [{ key: 'g', name: 'G', entries: { SLA: '' } }] })))).toEqual(['bundle.glossaries[0].entries.SLA']);
    expect(Object.keys(bundleProblems(bundle({ glossaries: [{ key: 'g', name: 'G', entries: {} }, { key: 'g', name: 'H', entries: {} }] })))).toEqual(['bundle.glossaries[1].key']);
    expect(Object.keys(bundleProblems(bundle({ secrets: { agent: 'jira' } })))).toEqual(['bundle.secrets.agent']);
    expect(bundleProblems(bundle({ instructions: [version(1)], tools: [{ id: 'tol_x', type: 'client', name: 'x', description: 'd' }] }))).toEqual({});
  });

  it('finds what tools name and every agent secret they send, at any depth', () => {
    const tools = {
      r: { type: 'reference' as const, tool_configuration_key: 'fetcher' },
      l: { type: 'lambda' as const, tool_id: 'tol_l' },
      m: { type: 'mcp' as const, tool_id: 'tol_srv_x' },
      g: { type: 'glossary_put_entries' as const, argument_override: { glossary_key: 'acme', auth: [{ $ref: 'agent.secrets.deep' }] } },
      c: { type: 'client' as const, argument_override: { token: { $ref: 'agent.secrets.jira' }, other: { $ref: 'session.secrets.no' } } },
    };
    expect(toolNames(tools)).toEqual({ toolConfigurations: ['fetcher'], userTools: ['tol_l'], mcpTools: ['tol_srv_x'], glossaries: ['acme'] });
    expect([...agentSecretNames(tools)].sort()).toEqual(['deep', 'jira']);
  });

  it('replaces MCP tool ids wherever the agent reaches them, and nothing else', () => {
    const mcp = { type: 'mcp', tool_id: 'tol_a_x' };
    const given = { ...bundle(), agent: { key: 'k', config: { tool_configurations: { m: mcp, w: { type: 'web_get' } } } }, tool_configurations: [{ key: 'c', config: { name: 'C', ...mcp } }], tools: [{ id: 'tol_l', type: 'lambda', name: 'l', tool_configurations: { m: mcp, n: { type: 'mcp', tool_id: 'tol_other' } } }] } as unknown as AgentBundle;
    const out = withMcpToolIds(given, new Map([['tol_a_x', 'tol_b_x']]));
    expect(out.agent.config.tool_configurations).toEqual({ m: { type: 'mcp', tool_id: 'tol_b_x' }, w: { type: 'web_get' } });
    expect(out.tool_configurations[0].config).toEqual({ name: 'C', type: 'mcp', tool_id: 'tol_b_x' });
    expect(out.tools[0].tool_configurations).toEqual({ m: { type: 'mcp', tool_id: 'tol_b_x' }, n: { type: 'mcp', tool_id: 'tol_other' } });
    expect(withMcpToolIds(given, new Map())).toBe(given);
  });

  it('compares JSON whatever the key order', () => {
    expect(sameJson({ a: 1, b: { c: [1, { d: 2, e: 3 }] } }, { b: { c: [1, { e: 3, d: 2 }] }, a: 1 })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
  });

  it('imports an instruction under its id and version numbers, the highest the latest', () => {
    givenEvents(instructionFold, [])
      .when((s) => decideImportInstruction(s, 'ins_1', [version(3), version(1)], NOW))
      .then([created(1), created(3, 'text 3', 1)]);
    givenEvents(instructionFold, [created(1)])
      .when((s) => decideImportInstruction(s, 'ins_1', [version(1)], NOW))
      .thenFails({ code: 'instruction.id_taken' });
  });

  it('reuses an identical instruction, and calls a conflict what differs (a version, its text, the latest followed)', () => {
    const there = givenEvents(instructionFold, [created(1), created(2, 'text 2', 1)]).state;
    expect(instructionOutcome(instructionFold.initialState, [version(1)], new Set())).toEqual({ outcome: 'create' });
    expect(instructionOutcome(there, [version(1), version(2)], new Set([2]))).toEqual({ outcome: 'reuse' });
    expect(instructionOutcome(there, [version(1)], new Set())).toEqual({ outcome: 'reuse' });
    expect(instructionOutcome(there, [version(1)], new Set([1]))).toMatchObject({ outcome: 'conflict', reason: expect.stringContaining('latest') });
    expect(instructionOutcome(there, [version(2, 'changed')], new Set())).toMatchObject({ outcome: 'conflict', reason: expect.stringContaining('version 2 differs') });
    expect(instructionOutcome(there, [version(5)], new Set())).toMatchObject({ outcome: 'conflict', reason: expect.stringContaining('no version 5') });
  });

  it('imports a glossary with all its entries in one append, and compares entries', () => {
    const g = { key: 'acme', name: 'ACME', entries: Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`t${i}`, `e${i}`])) };
    const events = decideImportGlossary(glossaryFold.initialState, g, NOW);
    expect(events.map((e) => e.type)).toEqual(['GlossaryCreated', 'GlossaryEntriesUpserted', 'GlossaryEntriesUpserted']);
    const state = events.reduce(glossaryFold.evolve, glossaryFold.initialState);
    expect(glossaryOutcome(state, new Map(Object.entries(g.entries)), g)).toEqual({ outcome: 'reuse' });
    expect(glossaryOutcome(state, new Map([['t0', 'other']]), g)).toMatchObject({ outcome: 'conflict' });
    expect(glossaryOutcome(state, new Map(Object.entries(g.entries)), { ...g, name: 'Other' })).toMatchObject({ outcome: 'conflict' });
    expect(() => decideImportGlossary(state, g, NOW)).toThrow(/already exists/);
  });
});
