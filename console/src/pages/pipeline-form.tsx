import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox, Field, useLoad } from '../ui';

/** A pipeline as the API answers it (credentials already `****`). */
export interface PipelineSettings {
  key: string;
  name: string;
  description?: string | null;
  enabled?: boolean;
  source?: { type?: string; [k: string]: any };
  trigger?: { type?: string; duration?: string; expression?: string };
  transform?: { type?: string; agent_key?: string };
}

type SourceType = 'web' | 's3' | 'other';
type Credential = 'none' | 'bearer' | 'header';

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((l) => l.trim())
    .filter(Boolean);

/**
 * Create or edit a pipeline (docs/pipelines.md): the common sources as forms (web site, S3), any other as JSON;
 * the trigger (manual, interval, cron) and the agent each record goes through. Credentials are write-only: the
 * inputs start empty, an empty one on an edit keeps the stored secret (the request leaves it out), and what the
 * API answers (`****`) is never put back in an input. The API's `field_errors` are shown at their controls.
 */
export function PipelineForm({ existing, onSaved }: { existing?: PipelineSettings; onSaved: (key: string) => void }) {
  const agents = useLoad(() => api<{ agents: { key: string; name: string }[] }>('GET', '/v2/agents?limit=100'), []);
  const src = existing?.source ?? {};
  const pages = (src.pages_source ?? {}) as { type?: string; urls?: string[]; sitemap_urls?: string[]; max_depth?: number };
  const [key, setKey] = useState('');
  const [name, setName] = useState(existing?.name ?? '');
  const [description, setDescription] = useState(existing?.description ?? '');
  const [type, setType] = useState<SourceType>(!existing ? 'web' : src.type === 'web' || src.type === 's3' ? src.type : 'other');
  const [discovery, setDiscovery] = useState(pages.type === 'sitemap' || pages.type === 'sitemap_crawl' ? pages.type : 'crawl');
  const [urls, setUrls] = useState((pages.urls ?? []).join('\n'));
  const [sitemaps, setSitemaps] = useState((pages.sitemap_urls ?? []).join('\n'));
  const [depth, setDepth] = useState(String(pages.max_depth ?? 1));
  const [rate, setRate] = useState(String(src.requests_per_second ?? 1));
  const storedCredential: Credential = src.type === 'web' && src.auth?.type === 'header' ? 'header' : src.type === 'web' && src.auth?.type === 'bearer' ? 'bearer' : 'none';
  const [credential, setCredential] = useState<Credential>(storedCredential);
  const [header, setHeader] = useState<string>(src.auth?.header ?? '');
  const [secret, setSecret] = useState('');
  const [bucket, setBucket] = useState<string>(src.type === 's3' ? (src.bucket ?? '') : '');
  const [region, setRegion] = useState<string>(src.type === 's3' ? (src.region ?? '') : '');
  const [endpoint, setEndpoint] = useState<string>(src.type === 's3' ? (src.endpoint_url ?? '') : '');
  const [prefixes, setPrefixes] = useState<string>(src.type === 's3' ? ((src.prefixes as string[] | undefined) ?? []).join(', ') : '');
  const [accessKey, setAccessKey] = useState('');
  const [secretKey, setSecretKey] = useState('');
  // Another source type's settings as the API shows them: its secrets are `****`, which the API reads as "keep".
  const [other, setOther] = useState(existing && type === 'other' ? JSON.stringify(src, null, 2) : '{\n  "type": "confluence"\n}');
  const [trigger, setTrigger] = useState(existing?.trigger?.type ?? 'manual');
  const [cadence, setCadence] = useState(existing?.trigger?.duration ?? existing?.trigger?.expression ?? '');
  const [agent, setAgent] = useState(existing?.transform?.agent_key ?? '');
  const [enabled, setEnabled] = useState(existing?.enabled !== false);
  const [error, setError] = useState<unknown>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const shown: string[] = [];
  /** The first field error under one of `prefixes` (a field's path starts with its control's). */
  const at = (...prefixes: string[]) => {
    shown.push(...prefixes);
    return Object.entries(fields).find(([k]) => prefixes.some((p) => k === p || k.startsWith(`${p}.`) || k.startsWith(`${p}[`)))?.[1];
  };
  const chosenAgent = agent || agents.data?.agents[0]?.key || '';
  const keeping = (stored: boolean) => (existing && stored ? 'stored: leave empty to keep it' : undefined);

  function source(): Record<string, unknown> {
    if (type === 'other') return JSON.parse(other) as Record<string, unknown>;
    if (type === 's3') {
      return {
        type: 's3',
        bucket,
        region,
        ...(endpoint ? { endpoint_url: endpoint } : {}),
        prefixes: lines(prefixes),
        ...(accessKey ? { access_key_id: accessKey } : {}),
        ...(secretKey ? { secret_access_key: secretKey } : {}),
      };
    }
    // The stored discovery's other settings (same-domain, link filters) are kept when its type stays.
    const kept = src.type === 'web' && pages.type === discovery ? pages : {};
    const pagesSource =
      discovery === 'sitemap'
        ? { ...kept, type: 'sitemap', sitemap_urls: lines(sitemaps) }
        : discovery === 'sitemap_crawl'
          ? { ...kept, type: 'sitemap_crawl', sitemap_urls: lines(sitemaps), urls: lines(urls), max_depth: Number(depth) }
          : { ...kept, type: 'crawl', urls: lines(urls), max_depth: Number(depth) };
    // No new secret and the same kind of credential: leave `auth` out, so the stored one is kept.
    const keep = existing && credential === storedCredential && !secret && (credential !== 'header' || header === src.auth?.header);
    const auth = credential === 'none' ? (storedCredential !== 'none' ? null : undefined) : keep ? undefined : credential === 'bearer' ? { type: 'bearer', token: secret } : { type: 'header', header, value: secret };
    return { type: 'web', pages_source: pagesSource, requests_per_second: Number(rate), ...(auth !== undefined ? { auth } : {}) };
  }

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    let body: Record<string, unknown>;
    try {
      body = {
        name: name || key,
        description: description || (existing ? null : undefined),
        source: source(),
        trigger: trigger === 'interval' ? { type: 'interval', duration: cadence } : trigger === 'cron' ? { type: 'cron', expression: cadence } : { type: 'manual' },
        transform: { type: 'agent', agent_key: chosenAgent },
        enabled,
      };
    } catch (err) {
      setError(new ApiError(0, [], { source: `is not JSON: ${(err as Error).message}` }));
      return;
    }
    try {
      const path = existing ? `/v2/pipelines/${encodeURIComponent(existing.key)}` : '/v2/pipelines';
      const answer = await api<PipelineSettings>(existing ? 'PATCH' : 'POST', path, existing ? body : { key, ...body });
      // Written once, never shown again: the inputs of secrets are emptied.
      setSecret('');
      setAccessKey('');
      setSecretKey('');
      onSaved(answer.key);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="pipeline-form">
      <h2 id="pipeline-form">{existing ? 'Edit this pipeline' : 'Create a pipeline'}</h2>
      <div class="row">
        {!existing && (
          <Field label="Pipeline key" error={at('key')} hint="letters, digits, _ and -">
            {(id, d) => <input id={id} aria-describedby={d} required value={key} onInput={(e) => setKey(e.currentTarget.value)} />}
          </Field>
        )}
        <Field label="Pipeline name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} value={name} required={!!existing} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Description" error={at('description')}>
          {(id, d) => <input id={id} aria-describedby={d} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
      </div>
      <h3 class="section">Source</h3>
      <div class="row">
        <Field label="Source type" error={at('source.type')}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={type} onChange={(e) => setType(e.currentTarget.value as SourceType)}>
              <option value="web">Web site</option>
              <option value="s3">S3 bucket</option>
              <option value="other">Another source (JSON)</option>
            </select>
          )}
        </Field>
        {type === 'web' && (
          <>
            <Field label="Discovery" error={at('source.pages_source.type')}>
              {(id, d) => (
                <select id={id} aria-describedby={d} value={discovery} onChange={(e) => setDiscovery(e.currentTarget.value)}>
                  <option value="crawl">Crawl from pages</option>
                  <option value="sitemap">Sitemaps</option>
                  <option value="sitemap_crawl">Sitemaps, then crawl</option>
                </select>
              )}
            </Field>
            {discovery !== 'sitemap' && (
              <Field label="Crawl depth" error={at('source.pages_source.max_depth')}>
                {(id, d) => <input id={id} aria-describedby={d} type="number" min={0} max={10} value={depth} onInput={(e) => setDepth(e.currentTarget.value)} />}
              </Field>
            )}
            <Field label="Requests per second" error={at('source.requests_per_second')}>
              {(id, d) => <input id={id} aria-describedby={d} type="number" step="any" value={rate} onInput={(e) => setRate(e.currentTarget.value)} />}
            </Field>
          </>
        )}
      </div>
      {type === 'web' && (
        <>
          {discovery !== 'crawl' && (
            <Field label="Sitemap URLs" error={at('source.pages_source.sitemap_urls')} hint="one per line">
              {(id, d) => <textarea id={id} aria-describedby={d} rows={2} value={sitemaps} onInput={(e) => setSitemaps(e.currentTarget.value)} />}
            </Field>
          )}
          {discovery !== 'sitemap' && (
            <Field label="Start URLs" error={at('source.pages_source.urls')} hint={discovery === 'crawl' ? 'one per line' : 'optional, one per line'}>
              {(id, d) => <textarea id={id} aria-describedby={d} rows={2} value={urls} onInput={(e) => setUrls(e.currentTarget.value)} />}
            </Field>
          )}
          <div class="row">
            <Field label="Credential" error={at('source.auth.type', 'source.auth')}>
              {(id, d) => (
                <select id={id} aria-describedby={d} value={credential} onChange={(e) => setCredential(e.currentTarget.value as Credential)}>
                  <option value="none">None</option>
                  <option value="bearer">Bearer token</option>
                  <option value="header">A header</option>
                </select>
              )}
            </Field>
            {credential === 'header' && (
              <Field label="Header name" error={at('source.auth.header')}>
                {(id, d) => <input id={id} aria-describedby={d} value={header} onInput={(e) => setHeader(e.currentTarget.value)} />}
              </Field>
            )}
            {credential !== 'none' && (
              <Field label={credential === 'bearer' ? 'Token' : 'Header value'} error={at('source.auth.token', 'source.auth.value')} hint={keeping(credential === storedCredential)}>
                {(id, d) => <input id={id} aria-describedby={d} type="password" autoComplete="off" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />}
              </Field>
            )}
          </div>
        </>
      )}
      {type === 's3' && (
        <>
          <div class="row">
            <Field label="Bucket" error={at('source.bucket')}>
              {(id, d) => <input id={id} aria-describedby={d} value={bucket} onInput={(e) => setBucket(e.currentTarget.value)} />}
            </Field>
            <Field label="Region" error={at('source.region')}>
              {(id, d) => <input id={id} aria-describedby={d} value={region} onInput={(e) => setRegion(e.currentTarget.value)} />}
            </Field>
            <Field label="Endpoint URL" error={at('source.endpoint_url')} hint="empty: Amazon S3">
              {(id, d) => <input id={id} aria-describedby={d} value={endpoint} onInput={(e) => setEndpoint(e.currentTarget.value)} />}
            </Field>
            <Field label="Key prefixes" error={at('source.prefixes', 'source.prefix')} hint="comma-separated; empty: all">
              {(id, d) => <input id={id} aria-describedby={d} value={prefixes} onInput={(e) => setPrefixes(e.currentTarget.value)} />}
            </Field>
          </div>
          <div class="row">
            <Field label="Access key id" error={at('source.access_key_id')} hint={keeping(src.type === 's3')}>
              {(id, d) => <input id={id} aria-describedby={d} type="password" autoComplete="off" value={accessKey} onInput={(e) => setAccessKey(e.currentTarget.value)} />}
            </Field>
            <Field label="Secret access key" error={at('source.secret_access_key')} hint={keeping(src.type === 's3')}>
              {(id, d) => <input id={id} aria-describedby={d} type="password" autoComplete="off" value={secretKey} onInput={(e) => setSecretKey(e.currentTarget.value)} />}
            </Field>
          </div>
        </>
      )}
      {type === 'other' && (
        <Field label="Source settings (JSON)" error={at('source')} hint="fields as in docs/pipelines.md; a secret left as **** is kept">
          {(id, d) => <textarea id={id} aria-describedby={d} rows={6} value={other} onInput={(e) => setOther(e.currentTarget.value)} />}
        </Field>
      )}
      <h3 class="section">Trigger and agent</h3>
      <div class="row">
        <Field label="Trigger" error={at('trigger.type')}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={trigger} onChange={(e) => setTrigger(e.currentTarget.value)}>
              <option value="manual">Manual (Run now)</option>
              <option value="interval">Every interval</option>
              <option value="cron">Cron schedule (UTC)</option>
            </select>
          )}
        </Field>
        {trigger !== 'manual' && (
          <Field label={trigger === 'interval' ? 'Interval' : 'Cron expression'} error={at('trigger')} hint={trigger === 'interval' ? 'ISO 8601, e.g. PT6H, P1D' : 'e.g. 0 7 * * 1-5'}>
            {(id, d) => <input id={id} aria-describedby={d} value={cadence} onInput={(e) => setCadence(e.currentTarget.value)} />}
          </Field>
        )}
        <Field label="Agent" error={at('transform')}>
          {(id, d) =>
            agents.data ? (
              <select id={id} aria-describedby={d} value={chosenAgent} onChange={(e) => setAgent(e.currentTarget.value)}>
                {agents.data.agents.map((a) => (
                  <option key={a.key} value={a.key}>
                    {a.name} ({a.key})
                  </option>
                ))}
              </select>
            ) : (
              // The agents list may be refused to a credential that may still name an agent it uses.
              <input id={id} aria-describedby={d} value={agent} onInput={(e) => setAgent(e.currentTarget.value)} />
            )
          }
        </Field>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
        </label>
      </div>
      <ErrorBox error={error && !Object.keys(fields).some((k) => shown.some((p) => k === p || k.startsWith(`${p}.`) || k.startsWith(`${p}[`))) ? error : undefined} />
      <button type="submit">{existing ? 'Save pipeline' : 'Create pipeline'}</button>
    </form>
  );
}
