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
