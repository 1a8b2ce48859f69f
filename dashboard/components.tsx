import type { ComponentChildren, InputHTMLAttributes } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

/** A labelled input with its error, if any, read out with it (aria-describedby). */
export function Field(props: { label: string; error?: string | undefined; hint?: string } & InputHTMLAttributes) {
  const { label, error, hint, ...input } = props;
  const id = useId();
  const described = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(" ");
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} aria-invalid={error ? "true" : undefined} aria-describedby={described || undefined} {...input} />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {error && (
        <span id={`${id}-error`} class="error">
          {error}
        </span>
      )}
    </div>
  );
}

/** A labelled choice among `options` (value and what it says), with its error read out with it. */
export function SelectField(props: {
  label: string;
  value: string;
  options: readonly (readonly [value: string, text: string])[];
  onChange: (value: string) => void;
  error?: string | undefined;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        aria-invalid={props.error ? "true" : undefined}
        aria-describedby={props.error ? `${id}-error` : undefined}
        onChange={(event) => props.onChange(event.currentTarget.value)}
      >
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      {props.error && (
        <span id={`${id}-error`} class="error">
          {props.error}
        </span>
      )}
    </div>
  );
}

/** A form-wide failure, announced when it appears. */
export function Problem(props: { message: string | null | undefined }) {
  if (!props.message) return null;
  return (
    <p class="error" role="alert">
      {props.message}
    </p>
  );
}

/** A confirmation in a modal dialog: `confirm` is the name of the button that goes ahead (e.g. `Delete`). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirm: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={props.onCancel} onClose={props.onCancel}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** Copies text to the clipboard, and says whether it did. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A read-only value with a `Copy` button beside it (a new key or secret, an embed code). */
export function CopyField(props: { label: string; value: string; note?: string }) {
  const id = useId();
  const status = useRef<HTMLSpanElement>(null);
  const copy = async () => {
    const done = await copyText(props.value);
    if (status.current) status.current.textContent = done ? "Copied." : "Select the text and copy it.";
  };
  return (
    <div class="field copy">
      <label for={id}>{props.label}</label>
      <div class="row">
        <input id={id} readOnly value={props.value} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      {props.note && <small class="hint">{props.note}</small>}
      <span ref={status} class="hint" role="status" />
    </div>
  );
}
