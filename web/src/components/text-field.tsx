import type { InputHTMLAttributes } from 'react';

/** A form error from the API: its message, and the field it names (`param`, e.g. `limits.rpm`). */
export interface FormError {
  message: string;
  param: string | null;
}

type TextFieldProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange' | 'value' | 'id'> & {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** The API's name of the field, to be marked when an error names it. */
  param: string;
  error: FormError | null;
  hint?: string;
};

export function TextField({ id, label, value, onChange, param, error, hint, ...input }: TextFieldProps) {
  const invalid = error !== null && error.param === param;
  const described = [hint === undefined ? null : `${id}-hint`, invalid ? `${id}-error` : null].filter((item) => item !== null).join(' ');
  return (
    <div className={`field ${invalid ? 'field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="text"
        {...input}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={invalid || undefined}
        aria-describedby={described === '' ? undefined : described}
      />
      {hint !== undefined && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
      {invalid && (
        <p id={`${id}-error`} className="field-error">
          {error.message.startsWith(`${param}: `) ? error.message.slice(param.length + 2) : error.message}
        </p>
      )}
    </div>
  );
}
