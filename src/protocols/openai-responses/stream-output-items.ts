import type { QualifiedToolName } from './chat-tool-names.js';
import type { IncompleteReason, ResponseOutputContent, ResponseOutputItem } from './response-object.js';
import type { ItemStatus } from './responses-types.js';

/** An event without its `sequence_number`, which the stream adds as it sends it. */
export type OutputEvent = { type: string } & Record<string, unknown>;

type PartType = 'output_text' | 'refusal';

interface ItemBase {
  outputIndex: number;
  id: string;
  /** Deltas received while an earlier item was still being sent, held until this item's turn. */
  held: string[];
  opened: boolean;
  /** No more deltas will be added to it. */
  sealed: boolean;
  status: ItemStatus;
}

interface MessageItem extends ItemBase {
  kind: 'message';
  partType: PartType;
  text: string;
}

interface CallItem extends ItemBase {
  kind: 'function_call';
  callId: string;
  name: string;
  /** The Responses name, when the upstream gave it (a Responses upstream); else made from `name` by `toolName`. */
  qualified: QualifiedToolName | undefined;
  arguments: string;
}

type StreamItem = MessageItem | CallItem;

export interface ToolCallDelta {
  id?: string;
  name?: string;
  /** The call's name and namespace as a Responses upstream gives them: not mapped from a chat name. */
  qualified?: QualifiedToolName;
  arguments?: string;
}

/**
 * The output items of a streamed response, built from deltas (of chat chunks, or of a Responses
 * upstream's events, read into the same calls). OpenAI sends items one after
 * another (added, deltas, done, then the next), and clients build their snapshot in that order.
 * Chat deltas do not say when a tool call is over, and an upstream may interleave the arguments
 * of parallel calls; so the item being sent streams live, a later item holds its deltas until the
 * ones before it are done, and tool calls are done only when the completion ends. Text is done as
 * soon as a tool call follows it: text that comes after the calls opens a new message.
 */
export class StreamOutputItems {
  private readonly items: StreamItem[] = [];
  /** The first item whose events are not all sent. */
  private head = 0;
  private readonly calls = new Map<number, CallItem>();
  private message: MessageItem | undefined;

  constructor(
    private readonly emit: (event: OutputEvent) => void,
    private readonly newId: (prefix: 'msg' | 'fc' | 'call') => string,
    /** A call's Responses name (and namespace) from the name the upstream called it by. */
    private readonly toolName: (chatName: string) => QualifiedToolName = (name) => ({ name }),
  ) {}

  text(delta: string, partType: PartType): void {
    let message = this.message;
    if (message === undefined || message.sealed || message.partType !== partType) {
      if (message !== undefined) message.sealed = true;
      message = { kind: 'message', partType, text: '', ...this.base('msg') };
      this.message = message;
      this.items.push(message);
    }
    message.text += delta;
    message.held.push(delta);
    this.advance();
  }

  toolCall(chatIndex: number, delta: ToolCallDelta): void {
    let call = this.calls.get(chatIndex);
    if (call === undefined) {
      if (this.message !== undefined) this.message.sealed = true;
      call = {
        kind: 'function_call',
        callId: delta.id ?? '',
        name: delta.qualified?.name ?? delta.name ?? '',
        qualified: delta.qualified,
        arguments: '',
        ...this.base('fc'),
      };
      this.calls.set(chatIndex, call);
      this.items.push(call);
    }
    // A call announced before its id arrived keeps the id it was announced with (the client may
    // already use it); a name that comes late still reaches the done events, which clients keep.
    if (!call.opened && call.callId === '' && delta.id) call.callId = delta.id;
    if (call.name === '' && delta.name) call.name = delta.name;
    if (delta.arguments) {
      call.arguments += delta.arguments;
      call.held.push(delta.arguments);
    }
    this.advance();
  }

  /** Ends every item; the one the model was writing when stopped is incomplete. */
  finish(incompleteReason: IncompleteReason | null): void {
    const last = this.items.at(-1);
    if (incompleteReason !== null && last !== undefined) last.status = 'incomplete';
    for (const item of this.items) item.sealed = true;
    this.advance();
  }

  /** The output as it stands: for the final response, or a failed one (unfinished items incomplete). */
  output(): ResponseOutputItem[] {
    return this.items.map((item, index) => this.snapshot(item, index < this.head ? item.status : 'incomplete'));
  }

  private base(prefix: 'msg' | 'fc'): ItemBase {
    return { outputIndex: this.items.length, id: this.newId(prefix), held: [], opened: false, sealed: false, status: 'completed' };
  }

  private advance(): void {
    for (let item = this.items[this.head]; item !== undefined; item = this.items[this.head]) {
      if (!item.opened) this.open(item);
      for (const delta of item.held) this.sendDelta(item, delta);
      item.held = [];
      if (!item.sealed) return;
      this.close(item);
      this.head += 1;
    }
  }

  private open(item: StreamItem): void {
    item.opened = true;
    if (item.kind === 'function_call' && item.callId === '') item.callId = this.newId('call');
    const announced = { ...this.snapshot(item, 'in_progress'), ...(item.kind === 'message' ? { content: [] } : { arguments: '' }) };
    this.emit({ type: 'response.output_item.added', output_index: item.outputIndex, item: announced });
    if (item.kind === 'message') this.emit({ type: 'response.content_part.added', ...this.partPosition(item), part: emptyPart(item.partType) });
  }

  private sendDelta(item: StreamItem, delta: string): void {
    if (item.kind === 'function_call') {
      this.emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: item.outputIndex, delta });
    } else if (item.partType === 'refusal') {
      this.emit({ type: 'response.refusal.delta', ...this.partPosition(item), delta });
    } else {
      this.emit({ type: 'response.output_text.delta', ...this.partPosition(item), delta, logprobs: [] });
    }
  }

  private close(item: StreamItem): void {
    const done = this.snapshot(item, item.status);
    if (item.kind === 'function_call') {
      this.emit({
        type: 'response.function_call_arguments.done',
        item_id: item.id,
        output_index: item.outputIndex,
        name: this.qualifiedName(item).name,
        arguments: item.arguments,
      });
    } else {
      const part = messagePart(item);
      if (part.type === 'refusal') this.emit({ type: 'response.refusal.done', ...this.partPosition(item), refusal: part.refusal });
      else this.emit({ type: 'response.output_text.done', ...this.partPosition(item), text: part.text, logprobs: [] });
      this.emit({ type: 'response.content_part.done', ...this.partPosition(item), part });
    }
    this.emit({ type: 'response.output_item.done', output_index: item.outputIndex, item: done });
  }

  private qualifiedName(item: CallItem): QualifiedToolName {
    const qualified = item.qualified ?? this.toolName(item.name);
    return qualified.namespace === undefined ? { name: qualified.name } : { namespace: qualified.namespace, name: qualified.name };
  }

  private partPosition(item: MessageItem): { item_id: string; output_index: number; content_index: number } {
    return { item_id: item.id, output_index: item.outputIndex, content_index: 0 };
  }

  private snapshot(item: StreamItem, status: ItemStatus): ResponseOutputItem {
    if (item.kind === 'function_call') {
      return { type: 'function_call', id: item.id, call_id: item.callId, ...this.qualifiedName(item), arguments: item.arguments, status };
    }
    return { type: 'message', id: item.id, status, role: 'assistant', content: [messagePart(item)] };
  }
}

function emptyPart(partType: PartType): ResponseOutputContent {
  return partType === 'refusal' ? { type: 'refusal', refusal: '' } : { type: 'output_text', text: '', annotations: [], logprobs: [] };
}

function messagePart(item: MessageItem): ResponseOutputContent {
  return item.partType === 'refusal' ? { type: 'refusal', refusal: item.text } : { type: 'output_text', text: item.text, annotations: [], logprobs: [] };
}
