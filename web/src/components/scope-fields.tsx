import { SCOPES } from '../api/types';
import type { FormError } from './text-field';

interface ScopeFieldsProps {
  idPrefix: string;
  selected: readonly string[];
  onChange: (scopes: string[]) => void;
  error: FormError | null;
}

/** One checkbox per scope; scopes the token has that this console does not know are kept. */
export function ScopeFields({ idPrefix, selected, onChange, error }: ScopeFieldsProps) {
  const unknown = selected.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  const toggle = (scope: string, on: boolean) => onChange(on ? [...selected, scope] : selected.filter((item) => item !== scope));
  const invalid = error !== null && (error.param === 'scopes' || (error.param?.startsWith('scopes[') ?? false));
  return (
    <fieldset className={`scopes ${invalid ? 'field-invalid' : ''}`} aria-invalid={invalid || undefined}>
      <legend>Scopes</legend>
      <div className="checks">
        {[...SCOPES, ...unknown].map((scope) => (
          <label key={scope} className="check">
            <input
              type="checkbox"
              id={`${idPrefix}-scope-${scope}`}
              checked={selected.includes(scope)}
              onChange={(event) => toggle(scope, event.target.checked)}
            />
            <span>{scope}</span>
          </label>
        ))}
      </div>
      {invalid && <p className="field-error">{error.message}</p>}
    </fieldset>
  );
}
