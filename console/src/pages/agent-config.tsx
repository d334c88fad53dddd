import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox, Field, useLoad } from '../ui';
import { AllowedSkills, SkillsEditor } from './agent-skills';
import { Allowed, allowedOf, Skill, skillRows, skillsPatch, withAllowedSkills } from './skills-form';

export interface Agent {
  key: string;
  name: string;
  description?: string | null;
  model: { name: string; parameters?: Record<string, unknown> };
  first_step_name?: string;
  steps?: Record<string, unknown>;
  tool_configurations?: Record<string, unknown>;
  skills?: Record<string, Skill>;
  guardrails?: import('./agent-guardrails').Guardrail[] | null;
  updated_at?: string;
}

const JSON_FIELDS = ['steps', 'tool_configurations'] as const;
const pretty = (v: unknown) => JSON.stringify(v ?? {}, null, 2);
/** Steps as JSON without `allowed_skills`: the skills section below sets them. */
const prettySteps = (steps: Record<string, unknown> | undefined) => pretty(Object.fromEntries(Object.entries(steps ?? {}).map(([n, s]) => [n, Object.fromEntries(Object.entries(s as object).filter(([k]) => k !== 'allowed_skills'))])));

/**
 * The agent's configuration as a form: plain fields as inputs, steps (with their instructions) and tools as
 * JSON, skills as rows and the skills each step may use as ticks. A refused PATCH shows each field error at the control its path starts with (`steps.main.instructions`
 * under Steps), with the full path in the text.
 */
export function AgentConfig({ agent, onSaved }: { agent: Agent; onSaved?: () => void }) {
  const [name, setName] = useState(agent.name);
  const [description, setDescription] = useState(agent.description ?? '');
  const [model, setModel] = useState(agent.model.name);
  const llms = useLoad(() => api<{ llms: { name: string }[] }>('GET', '/v2/llms?limit=100').then((r) => r.llms.map((l) => l.name)), []);
  const [firstStep, setFirstStep] = useState(agent.first_step_name ?? '');
  const [json, setJson] = useState({ steps: prettySteps(agent.steps), tool_configurations: pretty(agent.tool_configurations) });
  const [skills, setSkills] = useState(skillRows(agent.skills));
  const [storedSkills, setStoredSkills] = useState(Object.keys(agent.skills ?? {}));
  const [allowed, setAllowed] = useState<Allowed>(allowedOf(agent.steps));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);

  /** The form shows what the service stored (with its defaults filled in), not what was typed. */
  function show(a: Agent) {
    setName(a.name);
    setDescription(a.description ?? '');
    setModel(a.model.name);
    setFirstStep(a.first_step_name ?? '');
    setJson({ steps: prettySteps(a.steps), tool_configurations: pretty(a.tool_configurations) });
    setSkills(skillRows(a.skills));
    setStoredSkills(Object.keys(a.skills ?? {}));
    setAllowed(allowedOf(a.steps));
  }

  const at = (field: string) =>
    Object.entries(errors)
      .filter(([k]) => k === field || k.startsWith(`${field}.`) || k.startsWith(`${field}[`))
      .map(([k, v]) => (k === field ? v : `${k}: ${v}`))
      .join('; ') || undefined;

  async function save(e: Event) {
    e.preventDefault();
    setError(undefined);
    setSaved(false);
    const parsed: Record<string, unknown> = {};
    const local: Record<string, string> = {};
    for (const f of JSON_FIELDS) {
      try {
        parsed[f] = JSON.parse(json[f]);
      } catch (err) {
        local[f] = `not valid JSON: ${(err as Error).message}`;
      }
    }
    const names = skills.map((r) => r.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) local.skills = `two skills are named "${twice}"`;
    setErrors(local);
    if (Object.keys(local).length) return;
    if (parsed.steps && typeof parsed.steps === 'object') parsed.steps = withAllowedSkills(parsed.steps as Record<string, unknown>, allowed, names);
    const skillChanges = skillsPatch(skills, storedSkills);
    try {
      const body = { name, description: description || null, model: { ...agent.model, name: model }, ...(firstStep ? { first_step_name: firstStep } : {}), ...parsed, ...(skillChanges ? { skills: skillChanges } : {}) };
      const stored = await api<Agent>('PATCH', `/v2/agents/${encodeURIComponent(agent.key)}`, body);
      show(stored);
      setSaved(true);
      onSaved?.();
    } catch (err) {
      if (err instanceof ApiError) setErrors(err.fieldErrors);
      setError(err);
    }
  }

  return (
    <form class="card" onSubmit={save} aria-labelledby="config-title">
      <h2 id="config-title">Configuration</h2>
      <div class="row">
        <Field label="Name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} aria-invalid={!!at('name')} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Model" error={at('model')}>
          {(id, d) =>
            // The registered models as a list, as the create form offers them; the current one stays listed even if it
            // is no longer registered (the service says so at the field). Free text when the list may not be read.
            llms.data?.length ? (
              <select id={id} aria-describedby={d} aria-invalid={!!at('model')} value={model} onChange={(e) => setModel(e.currentTarget.value)}>
                {[...new Set([model, ...llms.data])].map((n) => (
                  <option key={n}>{n}</option>
                ))}
              </select>
            ) : (
              <input id={id} aria-describedby={d} aria-invalid={!!at('model')} value={model} onInput={(e) => setModel(e.currentTarget.value)} />
            )
          }
        </Field>
        <Field label="First step" error={at('first_step_name')}>
          {(id, d) => <input id={id} aria-describedby={d} aria-invalid={!!at('first_step_name')} value={firstStep} onInput={(e) => setFirstStep(e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label="Description" error={at('description')}>
        {(id, d) => <input id={id} aria-describedby={d} class="wide" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
      </Field>
      <Field label="Steps and their instructions (JSON)" error={at('steps') ?? at('first_step')}>
        {(id, d) => <textarea id={id} aria-describedby={d} aria-invalid={!!at('steps')} rows={10} spellcheck={false} value={json.steps} onInput={(e) => setJson({ ...json, steps: e.currentTarget.value })} />}
      </Field>
      <Field label="Tools (JSON)" error={at('tool_configurations')}>
        {(id, d) => (
          <textarea id={id} aria-describedby={d} aria-invalid={!!at('tool_configurations')} rows={8} spellcheck={false} value={json.tool_configurations} onInput={(e) => setJson({ ...json, tool_configurations: e.currentTarget.value })} />
        )}
      </Field>
      <SkillsEditor rows={skills} onChange={setSkills} errors={errors} />
      <AllowedSkills steps={Object.keys(allowed)} skills={skills.map((r) => r.name).filter(Boolean)} allowed={allowed} onChange={setAllowed} />
      <ErrorBox error={error} />
      {saved && <p role="status">Saved.</p>}
      <button type="submit">Save configuration</button>
    </form>
  );
}
