import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

export interface Loaded<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly loading: boolean;
  reload(): void;
}

/**
 * Runs `load` when `deps` change and on reload(); a late answer for old deps is dropped. With `keepOnError`, a
 * refused load keeps the last data beside its error (a mistyped filter should not empty the page).
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], keepOnError = false): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState((s) => ({ ...(keepOnError ? { data: s.data } : {}), error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.status ? `${error.status}: ` : ''}${error.message}` : error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

let fieldCounter = 0;
/** A labelled control with its error beside it (the reference's `field_errors`, keyed by the field's path). */
export function Field({ label, error, hint, children }: { label: string; error?: string; hint?: string; children: (id: string, describedBy?: string) => ComponentChildren }) {
  const [id] = useState(() => `f${++fieldCounter}`);
  const note = error ? `${id}-error` : hint ? `${id}-hint` : undefined;
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children(id, note)}
      {error ? (
        <span class="field-error" id={`${id}-error`} role="alert">
          {error}
        </span>
      ) : hint ? (
        <span class="hint" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

export const Loading = ({ what }: { what: string }) => <p aria-live="polite">Loading {what}…</p>;

const SECRET_KEY = /secret|password|token|api_?key|authorization|credential/i;

/** Masks values under secret-looking keys, whatever the server sent: a screen is easily shared or recorded. */
export function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && typeof v === 'string' && v !== '' ? '****' : masked(v)]));
  }
  return value;
}

// Focusable: a long value scrolls inside its box (max-height), and a keyboard user must be able to scroll it (axe's
// scrollable-region-focusable failed on a long tool output in the chat and the history).
export const Json = ({ value }: { value: unknown }) => (
  <pre class="json" tabIndex={0}>
    {JSON.stringify(masked(value), null, 2)}
  </pre>
);

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

export function when(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Console`;
  }, [title]);
  return (
    <section aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title">{title}</h1>
        {actions}
      </header>
      {children}
    </section>
  );
}
