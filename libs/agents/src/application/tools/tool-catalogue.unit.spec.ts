import { builtinTools, CorporaSearchTool, SUPPORTED_TOOL_TYPES, TOOL_TYPE_CHECKS, toolProblems } from '@lib/tools';
import type { Tool } from '@lib/tools';
import { TOOL_PROVIDERS, TOOL_TYPE_ENTRIES, toolCallHasSideEffects, toolRegistry } from './tool-catalogue';

/** A stand-in for each provider's instance, telling which provider it stands for. */
const fakes = (): (Tool & { provider: string })[] =>
  TOOL_PROVIDERS.map((p) => ({
    provider: p.name,
    definition: (name) => ({ type: 'function', function: { name, description: `${p.name} ${name}`, parameters: { type: 'object' } } }),
    run: () => Promise.resolve({ output: {}, error: false }),
  }));

describe('tool type entries', () => {
  it('give every type the domain accepts exactly one entry, and no other type one', () => {
    const types = TOOL_TYPE_ENTRIES.map((e) => e.type);
    expect(new Set(types).size).toBe(types.length);
    expect([...types].sort()).toEqual([...SUPPORTED_TOOL_TYPES].sort());
  });

  it("name each type's own checks, the ones the domain's validation runs", () => {
    for (const e of TOOL_TYPE_ENTRIES) expect([e.type, e.check]).toEqual([e.type, TOOL_TYPE_CHECKS[e.type]]);
    expect(toolProblems('t', 't', { type: 'web_get', max_body_bytes: 1 }, 'agent')).toEqual({ 't.max_body_bytes': 'must be an integer from 1024 to 4194304' });
  });

  it('list each Tool provider once, however many types it runs', () => {
    expect(new Set(TOOL_PROVIDERS).size).toBe(TOOL_PROVIDERS.length);
    expect(TOOL_PROVIDERS.filter((p) => p === CorporaSearchTool)).toHaveLength(1);
  });
});

describe('the tool registry', () => {
  const registry = toolRegistry(fakes());

  it('maps every type with a Tool to its provider instance, and leaves client tools to the caller', () => {
    const run = TOOL_TYPE_ENTRIES.filter((e) => e.tool);
    expect([...registry.keys()]).toEqual(run.map((e) => e.type));
    for (const e of run) expect((registry.get(e.type) as unknown as { provider: string }).provider).toBe(e.tool!.name);
    expect(registry.has('client')).toBe(false);
    expect(registry.get('corpora_search')).toBe(registry.get('corpora_search_20260608'));
  });

  it('refuses instances that do not match the providers', () => {
    expect(() => toolRegistry(fakes().slice(1))).toThrow(/no instance of/);
  });

  it('carries the built-in catalogue of the entries that have one, in their order', () => {
    expect(registry.catalogue.map((c) => c.type)).toEqual(TOOL_TYPE_ENTRIES.filter((e) => e.catalogue).map((e) => e.type));
    expect(builtinTools(registry).map((t) => t.id)).toEqual([
      'tol_builtin_corpora_search',
      'tol_builtin_corpora_search_20260608',
      'tol_builtin_get_document',
      'tol_builtin_get_document_text',
      'tol_builtin_document_index',
      'tol_builtin_web_get',
      'tol_builtin_web_search',
      'tol_builtin_artifact_read',
      'tol_builtin_artifact_grep',
      'tol_builtin_artifact_jq',
      'tol_builtin_image_read',
      'tol_builtin_image_analysis',
      'tol_builtin_scratch_pad',
      'tol_builtin_schedule_wakeup',
      'tol_builtin_glossary_put_entries',
      'tol_builtin_glossary_delete_entries',
      'tol_builtin_session_recall',
      'tol_builtin_sub_agent',
    ]);
    expect(builtinTools(registry)[1]).toMatchObject({ type: 'dynamic_vectara', name: 'corpora_search_20260608', lineage: 'corpora_search', version: '20260608', description: 'CorporaSearchTool corpora_search_20260608' });
  });
});

describe('side effects per tool type (replays refuse them unless allowed)', () => {
  const has = (tool: Record<string, unknown>, args: Record<string, unknown> = {}) => toolCallHasSideEffects(tool as never, args);

  it('marks the tools that change something outside the session, and only those', () => {
    const marked = TOOL_TYPE_ENTRIES.filter((e) => e.sideEffects === true).map((e) => e.type);
    expect(marked.sort()).toEqual(['client', 'document_index', 'glossary_delete_entries', 'glossary_put_entries', 'mcp', 'schedule_wakeup', 'sub_agent'].sort());
    expect(has({ type: 'corpora_search' })).toBe(false);
    expect(has({ type: 'artifact_read' })).toBe(false);
  });

  it('decides web_get by the request method, and lambda by its configuration', () => {
    expect(has({ type: 'web_get' }, {})).toBe(false);
    expect(has({ type: 'web_get' }, { method: 'head' })).toBe(false);
    expect(has({ type: 'web_get' }, { method: 'POST' })).toBe(true);
    expect(has({ type: 'lambda', tool_id: 't' })).toBe(false);
    expect(has({ type: 'lambda', tool_id: 't', side_effects: true })).toBe(true);
    expect(toolProblems('t', 't', { type: 'lambda', tool_id: 'x', side_effects: 'yes' }, 'agent')).toEqual({ 't.side_effects': 'must be true or false' });
  });

  it('counts an unknown type as side-effecting', () => {
    expect(has({ type: 'teleport' })).toBe(true);
  });
});
