import { LIMIT_NAMES, type LimitName, type Limits } from '../api/types';
import { compactNumber } from './format';

interface LimitInfo {
  label: string;
  /** How the table's compact summary names it. */
  short: string;
  dollars: boolean;
}

export const LIMITS: Record<LimitName, LimitInfo> = {
  rpm: { label: 'Requests per minute', short: 'rpm', dollars: false },
  tpm: { label: 'Tokens per minute', short: 'tpm', dollars: false },
  max_concurrent: { label: 'Max concurrent', short: 'concurrent', dollars: false },
  tokens_per_day: { label: 'Tokens per day', short: 'tok/day', dollars: false },
  tokens_per_month: { label: 'Tokens per month', short: 'tok/month', dollars: false },
  tokens_total: { label: 'Tokens total', short: 'tok total', dollars: false },
  usd_per_day: { label: 'USD per day', short: '$/day', dollars: true },
  usd_per_month: { label: 'USD per month', short: '$/month', dollars: true },
};

/** "rpm 60 · tpm 10k · $/day 5" */
export function limitsSummary(limits: Limits): string {
  const parts = LIMIT_NAMES.flatMap((name) => {
    const value = limits[name];
    if (value === undefined) return [];
    return [`${LIMITS[name].short} ${LIMITS[name].dollars ? value : compactNumber(value)}`];
  });
  return parts.length === 0 ? 'none' : parts.join(' · ');
}

export type LimitTexts = Record<LimitName, string>;

export function limitTexts(limits: Limits): LimitTexts {
  return Object.fromEntries(LIMIT_NAMES.map((name) => [name, limits[name] === undefined ? '' : String(limits[name])])) as LimitTexts;
}

/** A typed limit: null when empty, undefined when it is not a number (the form says so itself). */
export function parseLimit(text: string): number | null | undefined {
  const cleaned = text.trim().replace(/[\s,_]/g, '');
  if (cleaned === '') return null;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : undefined;
}
