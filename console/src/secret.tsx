import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A secret the API returns once (an API key, an app client's secret, a new user's first key): shown in a box with
 * a copy button and a warning, held only in this component's state (never in storage, never logged), and gone
 * when the user dismisses it, leaves the page or reloads. Lists show the API's masked form from then on.
 */
let boxes = 0;

export function SecretOnce({ title, label, value, onDone, children, kept = 'the service keeps only a digest' }: { title: string; label: string; value: string; onDone: () => void; children?: ComponentChildren; kept?: string }) {
  const [copied, setCopied] = useState<string>();
  const input = useRef<HTMLInputElement>(null);
  // Several boxes may be open at once (a user's first key and a new API key): each its own id.
  const [id] = useState(() => `secret-once-${++boxes}`);
  // Focus moves to the secret, selected, so that a keyboard or screen-reader user meets it first.
  useEffect(() => input.current?.focus(), [value]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: select the text so that Ctrl+C copies it.
      input.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  }

  return (
    <div class="card secret" role="region" aria-label={title}>
      <h3>{title}</h3>
      <p class="warning">
        <strong>Copy it now.</strong> This is the only time it is shown: {kept}, and this page forgets it when you press Done, leave or reload.
      </p>
      {children}
      <div class="row">
        <div class="field wide-field">
          <label for={id}>{label}</label>
          <input id={id} ref={input} class="wide" readOnly value={value} onFocus={(e) => e.currentTarget.select()} autoComplete="off" spellcheck={false} />
        </div>
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
      <p role="status" class="status">
        {copied ?? ''}
      </p>
    </div>
  );
}
