import type { OffModel } from '../providers/provider-adapter.js';
import type { ModelType } from '../config/index.js';

/** What a worker of `serve --workers` tells the primary once it listens: what the banner shows. */
export interface ListeningMessage {
  type: 'switchyard:listening';
  url: string;
  consoleUrl: string | null;
  consoleOff: string;
  models: Array<{ id: string; type: ModelType }>;
  offModels: OffModel[];
}

/** What the primary tells every worker whenever it changes: whether all of them listen (`/ready`). */
export interface PeersMessage {
  type: 'switchyard:peers';
  listening: boolean;
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'switchyard:listening';
}

export function isPeersMessage(message: unknown): message is PeersMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'switchyard:peers';
}

/** A worker asks the primary for every worker's metrics added up (a scrape of its `/metrics`). */
export interface ScrapeRequest {
  type: 'switchyard:metrics-scrape';
  id: number;
}

/** The primary's answer to a `ScrapeRequest`: the exposition, or why there is none. */
export interface ScrapeAnswer {
  type: 'switchyard:metrics-text';
  id: number;
  text?: string;
  error?: string;
}

export function isScrapeRequest(message: unknown): message is ScrapeRequest {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'switchyard:metrics-scrape';
}

export function isScrapeAnswer(message: unknown): message is ScrapeAnswer {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'switchyard:metrics-text';
}
