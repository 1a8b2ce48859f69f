import type { ComponentChildren, FormHTMLAttributes, InputHTMLAttributes } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

/**
 * A labelled input with its error, if any, read out with it (aria-describedby). `inline`: the label
 * wraps the input on one line, as a toolbar's filters are (no hint, no error there).
 */
export function Field(
  props: { label: string; error?: string | undefined; hint?: string; inline?: boolean } & InputHTMLAttributes,
) {
  const { label, error, hint, inline, ...input } = props;
  const id = useId();
  if (inline) {
    return (
      <label>
        {label} <input {...input} />
      </label>
    );
  }
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

/** One choice of a select: a value shown as it is, or a value and what it says. */
type Option<Value extends string> = Value | readonly [value: Value, text: string];

/**
 * A labelled choice among `options`, with its error read out with it. `inline`: the label wraps the
 * select on one line, as a toolbar's filters are.
 */
export function SelectField<Value extends string>(props: {
  label: string;
  value: Value;
  options: readonly Option<Value>[];
  onChange: (value: Value) => void;
  error?: string | undefined;
  inline?: boolean;
}) {
  const id = useId();
  const select = (
    <select
      id={id}
      value={props.value}
      aria-invalid={props.error ? "true" : undefined}
      aria-describedby={props.error ? `${id}-error` : undefined}
      // The select holds only the options' values.
      onChange={(event) => props.onChange(event.currentTarget.value as Value)}
    >
      {props.options.map((option) => {
        const [value, text] = typeof option === "string" ? [option, option] : option;
        return (
          <option key={value} value={value}>
            {text}
          </option>
        );
      })}
    </select>
  );
  if (props.inline) {
    return (
      <label for={id}>
        {props.label} {select}
      </label>
    );
  }
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {select}
      {props.error && (
        <span id={`${id}-error`} class="error">
          {props.error}
        </span>
      )}
    </div>
  );
}

/** A checkbox with its label beside it. */
export function Checkbox(props: { label: string; checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <label class="inline">
      <input
        type="checkbox"
        checked={props.checked}
        onChange={(event) => props.onChange(event.currentTarget.checked)}
      />
      {props.label}
    </label>
  );
}

/**
 * A checkbox for each of `values` under a legend, and the group's error; `onChange` gets the checked
 * values in the group's order.
 */
export function CheckboxGroup<Value extends string>(props: {
  legend: string;
  values: readonly Value[];
  checked: readonly Value[];
  onChange: (checked: Value[]) => void;
  error?: string | undefined;
}) {
  const toggle = (value: Value, on: boolean) =>
    props.onChange(props.values.filter((one) => (one === value ? on : props.checked.includes(one))));
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {props.values.map((value) => (
        <Checkbox
          key={value}
          label={value}
          checked={props.checked.includes(value)}
          onChange={(on) => toggle(value, on)}
        />
      ))}
      {props.error && <span class="error">{props.error}</span>}
    </fieldset>
  );
}

/**
 * A form the API checks (`noValidate`: the API's words are what a person reads, not the browser's),
 * sent by `onSubmit` without leaving the page.
 */
export function Form(props: Omit<FormHTMLAttributes<HTMLFormElement>, "onSubmit"> & { onSubmit: () => unknown }) {
  const { onSubmit, children, ...form } = props;
  return (
    <form
      noValidate
      {...form}
      onSubmit={(event) => {
        event.preventDefault();
        void onSubmit();
      }}
    >
      {children}
    </form>
  );
}

/**
 * A form that creates something (a project, a key, an endpoint): in a card, under its heading, its
 * fields, the form-wide failure, and the `submit` button beside `Cancel`.
 */
export function CreationForm(props: {
  heading: string;
  submit: string;
  problem: string | null;
  onSubmit: () => unknown;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  return (
    <Form class="card" onSubmit={props.onSubmit}>
      <h2>{props.heading}</h2>
      {props.children}
      <Problem message={props.problem} />
      <div class="actions">
        <button type="submit" class="primary">
          {props.submit}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </Form>
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
