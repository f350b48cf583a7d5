import type { ReactNode } from 'react';
import type { LimitTexts } from '../lib/limits';
import { LimitFields } from './limit-fields';
import { ScopeFields } from './scope-fields';
import { TextField, type FormError } from './text-field';

/** What a token's form says of its access, as typed: scopes, models, limits and expiry. */
export interface TokenFieldValues {
  scopes: string[];
  models: string;
  limits: LimitTexts;
  expiresIn: string;
}

interface TokenFieldsProps {
  idPrefix: string;
  values: TokenFieldValues;
  onChange: (change: Partial<TokenFieldValues>) => void;
  error: FormError | null;
  expiresHint: string;
  expiresDisabled?: boolean;
  /** Shown beside the expiry field. */
  children?: ReactNode;
}

/** The fields the create and edit dialogs share: scopes, models, limits, expires in. */
export function TokenFields({ idPrefix, values, onChange, error, expiresHint, expiresDisabled, children }: TokenFieldsProps) {
  return (
    <>
      <ScopeFields idPrefix={idPrefix} selected={values.scopes} onChange={(scopes) => onChange({ scopes })} error={error} />
      <div className="form-grid">
        <TextField
          id={`${idPrefix}-models`}
          label="Models"
          param="models"
          error={error}
          value={values.models}
          onChange={(models) => onChange({ models })}
          autoComplete="off"
          hint="Comma-separated; empty = all models."
        />
      </div>
      <LimitFields
        idPrefix={idPrefix}
        values={values.limits}
        onChange={(limit, value) => onChange({ limits: { ...values.limits, [limit]: value } })}
        error={error}
      />
      <div className="form-grid">
        <TextField
          id={`${idPrefix}-expires`}
          label="Expires in"
          param="expires_in"
          error={error}
          value={values.expiresIn}
          onChange={(expiresIn) => onChange({ expiresIn })}
          autoComplete="off"
          placeholder="30d"
          disabled={expiresDisabled}
          hint={expiresHint}
        />
        {children}
      </div>
    </>
  );
}

/** A token form's buttons: Cancel, and its submit button, disabled while the request is out. */
export function FormActions({ submitLabel, busy, onCancel }: { submitLabel: string; busy: boolean; onCancel: () => void }) {
  return (
    <div className="dialog-actions">
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      <button type="submit" className="primary" disabled={busy} aria-busy={busy}>
        {submitLabel}
      </button>
    </div>
  );
}
