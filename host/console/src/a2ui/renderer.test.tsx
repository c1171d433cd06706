import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { allIntegers, axisTicks, Chart, chartLabel, labelLines, niceMax, slicePath } from './Chart';
import { Markdown, parseInline, parseMarkdown, safeHref } from './markdown';
import { normalizeDocument } from './normalize';
import { A2uiSurface } from './Renderer';

function render(components: unknown[]): string {
  const r = normalizeDocument({ v: 1, surface: 'test', components });
  if (!r.ok) throw new Error(r.error);
  return renderToStaticMarkup(<A2uiSurface doc={r.doc} />);
}

const md = (s: string) => renderToStaticMarkup(<Markdown source={s} />);

describe('renderer: every component type', () => {
  it('text with tones', () => {
    const html = render([
      { id: 'a', type: 'text', props: { value: 'Hello <b>x</b>', tone: 'success' } },
      { id: 'b', type: 'text', props: { value: 'Muted', tone: 'muted' } },
      { id: 'c', type: 'text', props: { value: 'Bad', tone: 'critical' } },
      { id: 'd', type: 'text', props: { value: 'Plain' } },
    ]);
    expect(html).toContain('<p class="a2ui-text tone-success" data-testid="a2ui-text" data-tone="success">Hello &lt;b&gt;x&lt;/b&gt;</p>');
    expect(html).toContain('tone-muted');
    expect(html).toContain('tone-critical');
    expect(html).toContain('data-tone="normal">Plain');
  });

  it('markdown', () => {
    const html = render([{ id: 'm', type: 'markdown', props: { value: '# Title\n\nSome **bold** text' } }]);
    expect(html).toContain('<div class="a2ui-markdown" data-testid="a2ui-markdown"><h3>Title</h3><p>Some <strong>bold</strong> text</p></div>');
  });

  it('lists, ordered and not', () => {
    const html = render([
      { id: 'u', type: 'list', props: { items: ['a', 2, { k: true }] } },
      { id: 'o', type: 'list', props: { ordered: true, items: ['x'] } },
    ]);
    expect(html).toContain('<ul class="a2ui-list" data-testid="a2ui-list"><li>a</li><li>2</li><li>{&quot;k&quot;:true}</li></ul>');
    expect(html).toContain('<ol class="a2ui-list" data-testid="a2ui-list"><li>x</li></ol>');
  });

  it('table with column headers and the first column as row header', () => {
    const html = render([{ id: 't', type: 'table', props: { columns: ['Label', 'Value'], rows: [['a', 1], ['b']] } }]);
    expect(html).toContain('<th scope="col">Label</th><th scope="col">Value</th>');
    expect(html).toContain('<tr><th scope="row">a</th><td>1</td></tr>');
    expect(html).toContain('<tr><th scope="row">b</th><td></td></tr>');
  });

  it.each([
    ['bar', 'chart-bar', 3],
    ['line', 'chart-point', 3],
    ['pie', 'chart-slice', 3],
  ])('%s chart: an image with a label and a hidden data table', (kind, mark, n) => {
    const html = render([{ id: 'c', type: 'chart', props: { title: 'Sales', kind, series: [{ label: 'a', value: 1 }, { label: 'b', value: 2 }, { label: 'c', value: 3 }] } }]);
    expect(html).toContain(`data-kind="${kind}"`);
    expect(html).toContain(`role="img" aria-label="Sales: ${kind} chart of 3 values: a 1, b 2, c 3"`);
    expect(html.split(`data-testid="${mark}"`).length - 1).toBe(n);
    expect(html).toContain('<table class="visually-hidden" data-testid="chart-data"><caption>Sales: data</caption>');
    expect(html).toContain('<tr><th scope="row">b</th><td>2</td></tr>');
  });

  it('a pie of one value is a full circle, a pie of zeros says so', () => {
    expect(render([{ id: 'c', type: 'chart', props: { kind: 'pie', series: [{ label: 'a', value: 5 }] } }])).toContain('<circle');
    expect(render([{ id: 'c', type: 'chart', props: { kind: 'pie', series: [{ label: 'a', value: 0 }] } }])).toContain('data-testid="chart-empty"');
    expect(render([{ id: 'c', type: 'chart', props: { series: [] } }])).toContain('No data');
  });

  it('form with every field type, labelled', () => {
    const html = render([
      {
        id: 'f',
        type: 'form',
        props: {
          title: 'Add a row',
          submit_label: 'Add',
          fields: [
            { id: 'label', type: 'text', label: 'Label', required: true, placeholder: 'name', hint: 'Shown in the table' },
            { id: 'mail', type: 'email', label: 'Mail' },
            { id: 'value', type: 'number', label: 'Value', min: 0, max: 1000, step: 0.5, default: 2 },
            { id: 'kind', type: 'select', label: 'Kind', options: [{ label: 'Bar', value: 'bar' }, { label: 'Pie', value: 'pie' }], default: 'pie', required: true },
            { id: 'ok', type: 'checkbox', label: 'OK', default: true, required: true },
          ],
        },
      },
    ]);
    expect(html).toContain('<h3');
    expect(html).toContain('>Add a row</h3>');
    const label = /<label for="([^"]+)">Label<span aria-hidden="true"> \*<\/span><\/label><input ([^>]*)\/>/.exec(html);
    expect(label).not.toBeNull();
    const attrs = label![2];
    expect(attrs).toContain(`id="${label![1]}"`);
    expect(attrs).toContain('type="text"');
    expect(attrs).toContain('required=""');
    expect(attrs).toContain('placeholder="name"');
    expect(attrs).toContain(`aria-describedby="${label![1]}-hint"`);
    expect(html).toContain(`<small id="${label![1]}-hint" class="hint">Shown in the table</small>`);
    expect(html).toContain('type="email"');
    expect(html).toMatch(/<input type="number"[^>]*min="0" max="1000" step="0.5"[^>]*value="2"/);
    expect(html).toContain('<option value="pie" selected="">Pie</option>');
    expect(html).toMatch(/<select[^>]*data-testid="a2ui-field-kind"(?![^>]*required)/);
    expect(html).toMatch(/<input type="checkbox"[^>]*checked=""/);
    expect(html).not.toMatch(/type="checkbox"[^>]*required/);
    expect(html).toContain('<button type="submit" disabled="" data-testid="a2ui-submit">Add</button>'); // no handler: nothing to submit to
  });

  it('shows a placeholder for unknown components and keeps going', () => {
    const html = render([
      { id: 'v', type: 'video', props: { src: 'x' } },
      { id: 't', type: 'text', props: { value: 'after' } },
    ]);
    expect(html).toContain('data-testid="a2ui-unknown"');
    expect(html).toContain('Unsupported component “video”');
    expect(html).toContain('after');
  });
});

describe('markdown', () => {
  it.each([
    ['h1 to h4', '# a\n## b\n### c\n#### d', '<h3>a</h3><h4>b</h4><h5>c</h5><h6>d</h6>'],
    ['h5 is text', '##### e', '<p>##### e</p>'],
    ['dash list', '- a\n- b', '<ul><li>a</li><li>b</li></ul>'],
    ['star list', '* a\n* b', '<ul><li>a</li><li>b</li></ul>'],
    ['ordered list', '1. a\n2. b', '<ol><li>a</li><li>b</li></ol>'],
    ['lists switch', '- a\n1. b', '<ul><li>a</li></ul><ol><li>b</li></ol>'],
    ['paragraphs', 'a\nb\n\nc', '<p>a b</p><p>c</p>'],
    ['inline code', 'run `rm -rf` now', '<p>run <code>rm -rf</code> now</p>'],
    ['bold and italic', '**b** *i* __B__ _I_', '<p><strong>b</strong> <em>i</em> <strong>B</strong> <em>I</em></p>'],
    ['snake_case stays', 'a_b_c', '<p>a_b_c</p>'],
    ['unclosed markers', '**x *y `z', '<p>**x *y `z</p>'],
    ['https link', '[docs](https://example.org/a?b=1)', '<p><a href="https://example.org/a?b=1" rel="noopener noreferrer nofollow" target="_blank">docs</a></p>'],
    ['mailto link', '[mail](mailto:a@b.org)', '<p><a href="mailto:a@b.org" rel="noopener noreferrer nofollow" target="_blank">mail</a></p>'],
    ['relative link', '[skill](/skills/x)', '<p><a href="/skills/x">skill</a></p>'],
    ['javascript: link is text', '[click](javascript:alert(1))', '<p>click</p>'],
    ['JavaScript: any case', '[x](JaVaScRiPt:alert(1))', '<p>x</p>'],
    ['data: link is text', '[x](data:text/html,<script>alert(1)</script>)', '<p>x</p>'],
    ['protocol-relative is text', '[x](//evil.example)', '<p>x</p>'],
    ['vbscript is text', '[x](vbscript:msgbox)', '<p>x</p>'],
    ['script tag is text', '<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
    ['raw html is text', '<img src=x onerror=alert(1)> <b>hi</b>', '<p>&lt;img src=x onerror=alert(1)&gt; &lt;b&gt;hi&lt;/b&gt;</p>'],
    ['html in a heading', '# <i>x</i>', '<h3>&lt;i&gt;x&lt;/i&gt;</h3>'],
    ['html in a link text', '[<b>x</b>](https://a.org)', '<p><a href="https://a.org" rel="noopener noreferrer nofollow" target="_blank">&lt;b&gt;x&lt;/b&gt;</a></p>'],
    ['CRLF', '# a\r\n- b\r\n', '<h3>a</h3><ul><li>b</li></ul>'],
  ])('%s', (_, src, html) => {
    expect(md(src)).toBe(html);
  });

  it('never emits a script element or an event handler attribute', () => {
    const html = md('<script>x</script>\n[a](javascript:x)\n<a href="javascript:x" onclick="y">z</a>\n**<script>**');
    expect(html).not.toMatch(/<script|<a [^>]*href="javascript|<[a-z]+ [^>]*onclick=/i);
  });

  it.each([
    ['http://a.org', true],
    ['https://a.org/x', true],
    ['mailto:x@y.org', true],
    ['/relative', true],
    ['//evil', false],
    ['/\\evil', false],
    ['javascript:alert(1)', false],
    [' javascript:alert(1)', false],
    ['ftp://a.org', false],
    ['relative/no-slash', false],
    ['', false],
  ])('safeHref(%j) is %s', (href, ok) => {
    expect(safeHref(href)).toBe(ok);
  });

  it('parses nested inline markup and limits depth', () => {
    expect(parseInline('**a *b***')).toEqual([{ t: 'strong', c: [{ t: 'text', v: 'a ' }, { t: 'em', c: [{ t: 'text', v: 'b' }] }] }]);
    const deep = '**'.repeat(40) + 'x' + '**'.repeat(40);
    expect(() => parseInline(deep)).not.toThrow();
    expect(parseMarkdown('')).toEqual([]);
  });
});

describe('chart helpers', () => {
  it.each([
    [0, 1],
    [1, 1],
    [3, 5],
    [7, 10],
    [12, 20],
    [450, 500],
    [1_000_000, 1_000_000],
  ])('niceMax(%d) = %d', (n, want) => {
    expect(niceMax(n)).toBe(want);
  });

  it.each([
    [0, true, [0, 1]],
    [1, true, [0, 1]],
    [3, true, [0, 1, 2, 3]],
    [4, true, [0, 1, 2, 3, 4]],
    [5, true, [0, 2, 4, 6]],
    [7, true, [0, 2, 4, 6, 8]],
    [10, true, [0, 5, 10]],
    [450, true, [0, 200, 400, 600]],
    [1, false, [0, 0.5, 1]],
    [0.3, false, [0, 0.1, 0.2, 0.3]],
    [2.5, false, [0, 1, 2, 3]],
  ])('axisTicks(%d, integer %s) = %j', (max, integer, want) => {
    expect(axisTicks(max, integer)).toEqual(want);
  });

  it('axisTicks gives counts whole-number ticks that reach the highest value', () => {
    for (let max = 1; max <= 1000; max++) {
      const t = axisTicks(max, true);
      expect(t.every(Number.isInteger), `max ${max}: ${t}`).toBe(true);
      expect(t[t.length - 1]).toBeGreaterThanOrEqual(max);
      expect(t.length).toBeLessThanOrEqual(6);
    }
  });

  it('allIntegers tells counts from measures', () => {
    expect(allIntegers([{ label: 'a', value: 3 }, { label: 'b', value: 0 }])).toBe(true);
    expect(allIntegers([{ label: 'a', value: 3 }, { label: 'b', value: 2.5 }])).toBe(false);
  });

  it.each([
    ['palyra.echo', 20, ['palyra.echo'], false],
    ['palyra.echo', 8, ['palyra.', 'echo'], false],
    ['abcdefghijklmnop', 10, ['abcdefghij', 'klmnop'], false],
    ['palyra.kv_counter.increment', 12, ['palyra.kv_', 'counter.inc…'], true],
  ])('labelLines(%j, %d)', (label, width, lines, truncated) => {
    expect(labelLines(label, width)).toEqual({ lines, truncated });
  });

  it('draws counts with whole-number ticks, and a cut label with its whole text as a title', () => {
    const long = 'palyra.kv_counter.increment_by_a_lot_of_steps';
    const html = renderToStaticMarkup(
      <Chart
        title="Calls by tool"
        kind="bar"
        series={[
          { label: 'palyra.echo', value: 3 },
          { label: 'palyra.upper', value: 5 },
          { label: long, value: 10 },
          { label: 'd', value: 1 },
          { label: 'e', value: 7 },
          { label: 'f', value: 2 },
        ]}
      />,
    );
    const ticks = [...html.matchAll(/data-testid="chart-value-tick">([^<]*)</g)].map((m) => m[1]);
    expect(ticks).toEqual(['0', '5', '10']);
    expect(html).toContain(`<title>${long}</title>`);
    // A label a bit wider than its bar goes on two lines, whole, without a title.
    expect(html).toMatch(/>palyra\.<\/tspan><tspan [^>]*>echo<\/tspan>/);
    expect(html).toContain('>d</tspan>');
    expect(html.match(/<title>/g)).toHaveLength(1);
  });

  it('slicePath draws large arcs with the large-arc flag', () => {
    expect(slicePath(0, 0, 10, 0, Math.PI / 2)).toContain(' 0 0 1 ');
    expect(slicePath(0, 0, 10, 0, (3 * Math.PI) / 2)).toContain(' 0 1 1 ');
  });

  it('chartLabel names the values', () => {
    expect(chartLabel('T', 'bar', [{ label: 'a', value: 1.5 }])).toBe('T: bar chart of 1 value: a 1.5');
  });
});
