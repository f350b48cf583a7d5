/**
 * Calls a subscriber's or availability listener. One that throws must neither keep the message from
 * the listeners after it nor unwind into the code delivering it (for Redis, ioredis's reply parser,
 * which it would leave mid-reply). Its error is thrown again on its own, as an uncaught exception,
 * which is what a throwing EventEmitter listener would have caused: a listener bug is not hidden.
 */
export function callListener<Value>(listener: (value: Value) => void, value: Value): void {
  try {
    listener(value);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
