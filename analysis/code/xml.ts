/**
 * A small XML element reader for build manifests (pom.xml, *.csproj), hand-written because no
 * XML library is a runtime dependency. Comments, CDATA, processing instructions and DOCTYPE are
 * blanked (line breaks kept), then tags are matched with a regular expression and nested with a
 * stack. Namespace prefixes are dropped from element names. Text content is entity-decoded.
 * Mismatched closing tags are recovered from and reported in `errors`. It never throws.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
  /** 1-based line of the start tag and of the end tag. */
  line: number;
  endLine: number;
}

export interface XmlDocument {
  root: XmlElement | null;
  errors: string[];
}

function blank(s: string): string {
  return s.replace(/[^\n]/g, ' ');
}

function decode(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_m, d: string) => String.fromCodePoint(Math.min(Number(d), 0x10ffff)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, h: string) =>
      String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff)),
    )
    .replace(/&amp;/g, '&');
}

function localName(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

export function readXml(input: string): XmlDocument {
  const errors: string[] = [];
  const text = input
    .replace(/^\uFEFF/, '')
    .replace(/<!--[\s\S]*?(?:-->|$)/g, blank)
    .replace(/<!\[CDATA\[[\s\S]*?(?:\]\]>|$)/g, blank)
    .replace(/<\?[\s\S]*?(?:\?>|$)/g, blank)
    .replace(/<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>/gi, blank);

  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const lineAt = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };

  const docRoot: XmlElement = {
    name: '#document',
    attrs: {},
    children: [],
    text: '',
    line: 1,
    endLine: 1,
  };
  const stack: XmlElement[] = [docRoot];
  const tagRe =
    /<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*(\/?)>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = tagRe.exec(text)) !== null) {
    const top = stack[stack.length - 1] as XmlElement;
    top.text += decode(text.slice(last, m.index));
    last = tagRe.lastIndex;
    const closing = m[1] === '/';
    const name = localName(m[2] ?? '');
    const line = lineAt(m.index);
    if (closing) {
      let idx = stack.length - 1;
      while (idx > 0 && (stack[idx] as XmlElement).name !== name) idx--;
      if (idx === 0) {
        errors.push(`line ${line}: unexpected </${name}>`);
        continue;
      }
      if (idx !== stack.length - 1) errors.push(`line ${line}: unclosed element before </${name}>`);
      while (stack.length - 1 > idx) {
        const open = stack.pop() as XmlElement;
        open.endLine = line;
      }
      const el = stack.pop() as XmlElement;
      el.endLine = line;
      continue;
    }
    const attrs: Record<string, string> = {};
    const attrRe = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
    let a: RegExpExecArray | null;
    while ((a = attrRe.exec(m[3] ?? '')) !== null) {
      attrs[localName(a[1] ?? '')] = decode(a[2] ?? a[3] ?? a[4] ?? '');
    }
    const el: XmlElement = { name, attrs, children: [], text: '', line, endLine: line };
    top.children.push(el);
    if (m[4] !== '/') stack.push(el);
  }
  if (stack.length > 1) {
    errors.push(`unclosed element <${(stack[stack.length - 1] as XmlElement).name}>`);
    const endLine = lineAt(text.length);
    for (const el of stack.slice(1)) el.endLine = endLine;
  }
  const root = docRoot.children[0] ?? null;
  if (!root) errors.push('no root element');
  return { root, errors };
}

export function child(el: XmlElement | null | undefined, name: string): XmlElement | undefined {
  return el?.children.find((c) => c.name === name);
}

export function children(el: XmlElement | null | undefined, name: string): XmlElement[] {
  return el ? el.children.filter((c) => c.name === name) : [];
}

export function childText(el: XmlElement | null | undefined, name: string): string | null {
  const c = child(el, name);
  return c ? c.text.trim() : null;
}
