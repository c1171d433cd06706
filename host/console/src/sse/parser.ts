// An incremental parser of server-sent events (the HTML "event stream
// interpretation"): feed it text as it arrives, in any chunking, and it
// returns the events completed so far. Lines end with \n, \r\n or \r;
// lines starting with ":" are comments; "data" lines join with \n; one
// space after the colon is dropped; an event without data is not
// dispatched; an id containing NUL is ignored; the last id persists.

export interface SSEEvent {
  /** The last event id seen so far (the stream's, not only this event's). */
  id: string;
  /** The event type; "message" when none was given. */
  event: string;
  data: string;
}

export class SSEParser {
  private buf = '';
  private data: string[] = [];
  private event = '';
  private sawCR = false;
  /** The last event id, kept across events as the spec says. */
  lastEventId = '';
  /** The reconnection time the server asked for, in ms, if any. */
  retry: number | undefined;

  feed(chunk: string): SSEEvent[] {
    const out: SSEEvent[] = [];
    if (chunk === '') return out;
    let s = chunk;
    // A \r at the end of the last chunk may be half of a \r\n.
    if (this.sawCR && s.startsWith('\n')) s = s.slice(1);
    this.sawCR = false;
    this.buf += s;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      if (m[0] === '\r' && m.index === this.buf.length - 1) {
        // Maybe the start of \r\n: take the line, drop a \n that follows.
        this.sawCR = true;
      }
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  /** Ends the stream: an unterminated event is discarded, as the spec says. */
  end() {
    this.buf = '';
    this.data = [];
    this.event = '';
    this.sawCR = false;
  }

  private line(line: string): SSEEvent | null {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return null;
      }
      const ev = { id: this.lastEventId, event: this.event || 'message', data: this.data.join('\n') };
      this.data = [];
      this.event = '';
      return ev;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
    }
    return null;
  }
}
