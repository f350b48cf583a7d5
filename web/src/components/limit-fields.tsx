import { LIMIT_NAMES, type LimitName } from '../api/types';
import { LIMITS, type LimitTexts } from '../lib/limits';
import { TextField, type FormError } from './text-field';

interface LimitFieldsProps {
  idPrefix: string;
  values: LimitTexts;
  onChange: (name: LimitName, value: string) => void;
  error: FormError | null;
}

export function LimitFields({ idPrefix, values, onChange, error }: LimitFieldsProps) {
  return (
    <fieldset className="limits">
      <legend>Limits</legend>
      <p className="hint">Empty means no limit of this token's own (its team's and project's still apply).</p>
      <div className="limit-grid">
        {LIMIT_NAMES.map((name) => (
          <TextField
            key={name}
            id={`${idPrefix}-limit-${name}`}
            label={LIMITS[name].label}
            param={`limits.${name}`}
            error={error}
            inputMode={LIMITS[name].dollars ? 'decimal' : 'numeric'}
            autoComplete="off"
            value={values[name]}
            onChange={(value) => onChange(name, value)}
          />
        ))}
      </div>
    </fieldset>
  );
}
