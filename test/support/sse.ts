/** One event of a Server-Sent Events stream, as Tollgate frames it (`id`, `event`, JSON `data`). */
export interface SseFrame<D = any> {
  id: number;
  event: string;
  data: D;
}

/** Reads an SSE body to its end (or until aborted), pushing each frame with an id onto `frames` as it arrives. */
export async function collectSseFrames<D>(body: ReadableStream<Uint8Array>, frames: SseFrame<D>[]): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      if (field('id'))
        frames.push({ id: Number(field('id')), event: field('event')!, data: JSON.parse(field('data')!) });
    }
  }
}
